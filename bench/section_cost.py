"""What a wiki update costs the model, versus regenerating the article (not a test).

Tokens are *estimated* as characters / 4 (no tokenizer is downloaded; a server's
``usage`` gives the real count when a model runs). An update sends what
``carnet propose --provider llm`` sends: the article's sections with each request of the
perimeter's uncited evidence, group by group; it receives operations;
a full regeneration sends every piece of evidence of the perimeter and receives the
whole article.

    python -m bench.section_cost                  # the example corpus and a generated notebook
    python -m bench.section_cost --notes 800
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from bench.anchoring import _paragraph
from generator.commands.proposals import MAX_OPERATIONS, OPERATION_TOKENS, _extractive, _requests
from generator.llm.plan import Limits
from generator.llm.prompts import load_prompt
from generator.llm.schema import answer_tokens
from generator.pipeline import check_content
from generator.synthesis.sections import sections

CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def costs(content: Path, wiki: str) -> tuple[int, int, int, int]:
    analysis = check_content(content)
    note = analysis.corpus.notes[wiki]
    audit = analysis.articles[wiki]
    lines = note.body.split("\n")
    parts = [{"heading": s.heading, "text": "\n".join(lines[s.start + (s.heading is not None):s.end]).strip()}
             for s in sections(note.body)]
    uncited = list(audit.discarded or [])[: MAX_OPERATIONS * 3]
    # as carnet propose --provider llm sends them: every uncited piece, group by group, over requests
    template = load_prompt("propose_sections", analysis.corpus.settings.language)
    room = Limits().room(answer_tokens(MAX_OPERATIONS, OPERATION_TOKENS))
    prompt = "".join(template.render(title=note.title, sections=parts, evidence=list(request.evidence),
                                     groups=list(request.groups), max_operations=MAX_OPERATIONS)
                     for request in _requests(analysis, wiki, room)[0])
    answer = "\n".join(o.content for o in _extractive(analysis, wiki, uncited, MAX_OPERATIONS))
    quotes = {e.id: e.quote for n in analysis.corpus.notes.values() for e in n.extractions}
    everything = "\n".join(f"- [[ext:{i}]] « {quotes[i]} »" for i in audit.perimeter_extractions or [])
    regenerate_prompt = f"Réécris l'article « {note.title} » à partir de ces pièces :\n{everything}"
    return tokens(prompt), tokens(answer), tokens(regenerate_prompt), tokens(note.body) + tokens(answer)


def generated_notebook(root: Path, notes: int, seed: int = 11) -> Path:
    rng = random.Random(seed)
    (root / "notebooks").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "carnet.yaml").write_text("title: Banc\nbase_url: https://banc.example.org/\nlicence: CC0\n", "utf-8")
    (root / "notebooks" / "banc.yaml").write_text("title: Banc\naxes:\n  theme:\n    categories: [Budget]\n", "utf-8")
    cited = []
    for index in range(notes):
        paragraphs = [_paragraph(rng) for _ in range(rng.randint(3, 8))]
        body = "\n\n".join(paragraphs)
        (root / "notes" / f"n{index}.md").write_text(
            f"---\ntitle: Séance {index}\ndate: 2025-01-01\nnotebooks:\n  banc:\n    theme: [Budget]\n---\n{body}\n",
            "utf-8")
        items = []
        for number, paragraph in enumerate(paragraphs[:3]):
            ext = f"n{index}-{number}"
            items.append(f"  - id: {ext}\n    quote: {paragraph!r}\n    author: Banc\n".replace("\\'", "''"))
            if rng.random() < 0.1:
                cited.append(ext)
        (root / "notes" / f"n{index}.extractions.yaml").write_text("extractions:\n" + "".join(items), "utf-8")
    claims = "\n\n".join(f"Une affirmation du banc d'essai numéro {i} [[ext:{ext}]]." for i, ext in enumerate(cited))
    (root / "notes" / "wiki.md").write_text(
        "---\ntitle: Article du banc\ntype: wiki\nnotebooks:\n  banc:\n    theme: [Budget]\n---\n"
        f"Chapeau de l'article.\n\n## Synthèse\n\n{claims}\n", "utf-8")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=400)
    args = parser.parse_args(argv)
    rows = [("example corpus, cvl-wiki-budget", Path("content"), "cvl-wiki-budget")]
    with tempfile.TemporaryDirectory() as tmp:
        rows.append((f"generated notebook, {args.notes} notes", generated_notebook(Path(tmp) / "c", args.notes), "wiki"))
        print("estimated tokens (characters / 4)      update: sent + received   regeneration: sent + received   ratio")
        for label, content, wiki in rows:
            sent, received, full_sent, full_received = costs(content, wiki)
            ratio = (full_sent + full_received) / (sent + received)
            print(f"{label:<40} {sent:>8} + {received:<8}        {full_sent:>9} + {full_received:<8}        "
                  f"{ratio:5.1f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
