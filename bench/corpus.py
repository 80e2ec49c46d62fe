"""A deterministic generator of benchmark corpora: N notes of realistic sizes (median
about 2 KB, a long tail to about 100 KB) with headings, lists, tables, links and code,
plus configurable densities of extractions, comments, wikis and citations.

The same (notes, seed, densities) always gives the same bytes, so runs on different
days and machines measure the same work. Besides the Carnet content directory it can
write the same plain notes as a Hugo site and as an MkDocs project (one page per
note, a minimal layout) for the comparison in ``bench/builds.py``.

    python -m bench.corpus /tmp/corpus --notes 5000 [--extractions 50000 --wikis 100 --citations 5000]
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

NOTEBOOKS = ("conseil", "veille", "atelier", "reseau")
CATEGORIES = ("Budget", "Vie scolaire", "Locaux", "Sorties", "Communication", "Santé", "Numérique", "Sport")
STANCES = ("agree", "disagree", "nuance", "question", "neutral")
KINDS = ("fait", "décision", "proposition", "question")

MEDIAN_BYTES = 2000
MAX_BYTES = 100_000


@dataclass
class Densities:
    """How much evidence the corpus carries on top of its plain notes.

    Attributes:
        extractions: extractions in total, spread over the notes in proportion to their size.
        comments: comments per extraction (a mean; each extraction gets 0..2×mean).
        wikis: wiki articles, each with a perimeter of one notebook and one category.
        citations: ``[[ext:…]]`` citations in total, spread over the wikis.
        wiki_categories: categories in each wiki's perimeter (its notebook's notes under any of them):
            with one notebook and every category, one perimeter holds every extraction (a large one).
    """

    extractions: int = 0
    comments: float = 0.0
    wikis: int = 0
    citations: int = 0
    wiki_categories: int = 1


@dataclass
class PlainNote:
    slug: str
    title: str
    date: str
    notebook: str
    category: str
    body: str
    sentences: list[str] = field(default_factory=list)  # candidate quotes, each verbatim in the body


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    consonants, vowels = "bcdfglmnprstvz", "aeiouéè"
    words = set()
    while len(words) < size:
        syllables = rng.choice((1, 2, 2, 3, 3, 4))
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables)))
    return sorted(words)


class _Writer:
    def __init__(self, rng: random.Random, words: list[str]) -> None:
        self.rng, self.words = rng, words

    def sentence(self) -> str:
        n = self.rng.randint(8, 22)
        text = " ".join(self.rng.choice(self.words) for _ in range(n))
        return text[0].upper() + text[1:] + self.rng.choice((".", ".", ".", " ?", " !"))

    def paragraph(self) -> tuple[str, list[str]]:
        sentences = [self.sentence() for _ in range(self.rng.randint(2, 6))]
        return " ".join(sentences), sentences


def _note_size(rng: random.Random) -> int:
    # Log-normal around the median with a long tail, clipped to the largest notes seen in practice.
    return int(min(MAX_BYTES, max(300, MEDIAN_BYTES * math.exp(rng.gauss(0.0, 1.0)))))


def plain_notes(count: int, seed: int = 0, notebooks: int = len(NOTEBOOKS)) -> list[PlainNote]:
    """``count`` notes spread in turn over the first ``notebooks`` notebooks, each under one category."""
    rng = random.Random(seed)
    writer = _Writer(rng, _vocabulary(rng))
    notes: list[PlainNote] = []
    slugs = [f"note-{i:05d}" for i in range(count)]
    for i, slug in enumerate(slugs):
        target = _note_size(rng)
        blocks: list[str] = []
        sentences: list[str] = []
        size = 0
        section = 0
        while size < target:
            roll = rng.random()
            if not blocks or roll < 0.12:
                section += 1
                block = f"## Partie {section} : {writer.rng.choice(writer.words)}"
            elif roll < 0.22:
                block = "\n".join(f"- {writer.sentence()}" for _ in range(rng.randint(2, 5)))
            elif roll < 0.27:
                rows = [f"| {rng.choice(writer.words)} | {rng.randint(1, 9999)} € | {rng.choice(writer.words)} |"
                        for _ in range(rng.randint(2, 6))]
                block = "| Poste | Montant | Note |\n|---|---:|---|\n" + "\n".join(rows)
            elif roll < 0.30:
                block = "```\n" + "\n".join(f"{rng.choice(writer.words)} = {rng.randint(0, 99)}"
                                             for _ in range(rng.randint(2, 8))) + "\n```"
            elif roll < 0.38 and count > 1:
                other = slugs[rng.randrange(count)]
                text, said = writer.paragraph()
                block = f"{text} Voir [la séance {other}]({other}.md)."
                sentences += said
            else:
                block, said = writer.paragraph()
                sentences += said
            blocks.append(block)
            size += len(block.encode("utf-8")) + 2
        day = i % 28 + 1
        month = i // 28 % 12 + 1
        notes.append(PlainNote(
            slug=slug, title=f"Séance {i + 1}", date=f"{2020 + i // 336 % 6}-{month:02d}-{day:02d}",
            notebook=NOTEBOOKS[i % notebooks], category=CATEGORIES[i // notebooks % len(CATEGORIES)],
            body="\n\n".join(blocks) + "\n", sentences=sentences))
    return notes


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_carnet(out: Path, notes: list[PlainNote], densities: Densities | None = None, seed: int = 0) -> None:
    """A Carnet content directory: settings, public notebooks, notes, extraction sidecars, wikis."""
    densities = densities or Densities()
    rng = random.Random(seed + 1)
    (out / "notes").mkdir(parents=True, exist_ok=True)
    (out / "notebooks").mkdir(exist_ok=True)
    (out / "carnet.yaml").write_text(
        "title: Banc d'essai\nbase_url: https://bench.example.org/\nlanguage: fr\nlicence: CC BY 4.0\n",
        encoding="utf-8")
    for notebook in sorted({note.notebook for note in notes}):
        categories = ", ".join(_yaml_string(c) for c in CATEGORIES)
        (out / "notebooks" / f"{notebook}.yaml").write_text(
            f"title: Carnet {notebook}\nvisibility: public\nauthors: full\n"
            f"axes:\n  theme:\n    title: Thème\n    categories: [{categories}]\n", encoding="utf-8")
    total_sentences = sum(len(note.sentences) for note in notes) or 1
    span = max(1, min(densities.wiki_categories, len(CATEGORIES)))

    def perimeter_of(note: PlainNote) -> tuple[str, tuple[str, ...]]:
        # the window of ``span`` categories that starts at the note's own, in turn
        first = CATEGORIES.index(note.category) // span * span
        return note.notebook, CATEGORIES[first:first + span]

    by_perimeter: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for note in notes:
        (out / "notes" / f"{note.slug}.md").write_text(
            f"---\ntitle: {note.title}\ndate: {note.date}\nauthors: [Camille Martin]\nnotebooks:\n"
            f"  {note.notebook}:\n    theme: [{_yaml_string(note.category)}]\n---\n{note.body}", encoding="utf-8")
        if not densities.extractions or not note.sentences:
            continue
        wanted = min(len(note.sentences), round(densities.extractions * len(note.sentences) / total_sentences))
        chosen = sorted(rng.sample(range(len(note.sentences)), wanted))
        lines = ["extractions:"]
        for k in chosen:
            ext_id = f"{note.slug}-x{k}"
            by_perimeter.setdefault(perimeter_of(note), []).append(ext_id)
            lines += [f"  - id: {ext_id}", f"    quote: {_yaml_string(note.sentences[k])}",
                      f"    kind: {rng.choice(KINDS)}", "    author: Camille Martin"]
            comments = rng.randint(0, round(2 * densities.comments))
            if comments:
                lines.append("    comments:")
            for c in range(comments):
                lines += [f"      - id: {ext_id}-c{c}", "        author: Alex Durand",
                          f"        date: {note.date}", f"        stance: {rng.choice(STANCES)}",
                          f"        text: {_yaml_string(note.sentences[(k + c + 1) % len(note.sentences)])}"]
        if wanted:
            (out / "notes" / f"{note.slug}.extractions.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    perimeters = sorted(by_perimeter)
    for w in range(densities.wikis):
        if not perimeters:
            break
        notebook, categories = perimeters[w % len(perimeters)]
        pool = by_perimeter[(notebook, categories)]
        cites = densities.citations // densities.wikis + (1 if w < densities.citations % densities.wikis else 0)
        paragraphs = []
        for c in range(cites):
            paragraphs.append(f"Constat {c + 1} de la synthèse {w + 1} [[ext:{pool[rng.randrange(len(pool))]}]].")
        body = "\n\n".join(" ".join(paragraphs[i:i + 3]) for i in range(0, len(paragraphs), 3))
        (out / "notes" / f"wiki-{w:03d}.md").write_text(
            f"---\ntitle: Wiki {w + 1}\ntype: wiki\nnotebooks:\n  {notebook}:\n"
            f"    theme: [{', '.join(_yaml_string(c) for c in categories)}]\n"
            f"---\n## État des lieux\n\n{body}\n", encoding="utf-8")


def write_hugo(out: Path, notes: list[PlainNote]) -> None:
    """A Hugo site with one page per note and a minimal layout: ``hugo.toml`` with code
    highlighting off (like for like: Carnet does not highlight code), ``highlight.toml``
    with Hugo's default highlighting on (as a user has it)."""
    (out / "content" / "notes").mkdir(parents=True, exist_ok=True)
    layouts = out / "layouts" / "_default"
    layouts.mkdir(parents=True, exist_ok=True)
    (out / "hugo.toml").write_text(
        'baseURL = "https://bench.example.org/"\nlanguageCode = "fr"\ntitle = "Banc d\'essai"\n'
        'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT"]\n'
        "[markup.highlight]\ncodeFences = false\n", encoding="utf-8")
    (out / "highlight.toml").write_text(
        'baseURL = "https://bench.example.org/"\nlanguageCode = "fr"\ntitle = "Banc d\'essai"\n'
        'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT"]\n', encoding="utf-8")
    page = ('<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>'
            "<body><main>{{ block \"main\" . }}{{ end }}</main></body></html>\n")
    (layouts / "baseof.html").write_text(page, encoding="utf-8")
    (layouts / "single.html").write_text('{{ define "main" }}<h1>{{ .Title }}</h1>{{ .Content }}{{ end }}\n',
                                         encoding="utf-8")
    (layouts / "list.html").write_text(
        '{{ define "main" }}<ul>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>'
        "{{ end }}</ul>{{ end }}\n", encoding="utf-8")
    for note in notes:
        (out / "content" / "notes" / f"{note.slug}.md").write_text(
            f'---\ntitle: "{note.title}"\ndate: {note.date}\n---\n{note.body}', encoding="utf-8")


MKDOCS_DEFAULT = "mkdocs-default.yml"
"""The MkDocs project's configuration as users have it: MkDocs' own theme and its default
plugin, search (each page lists every page in its navigation)."""


def write_mkdocs(out: Path, notes: list[PlainNote]) -> None:
    """An MkDocs project with one page per note, configured two ways: ``mkdocs.yml``, a
    one-template theme and no plugins (like for like with the minimal Hugo layout); and
    :data:`MKDOCS_DEFAULT`, MkDocs' default theme and plugins, as the figures of issue 23
    measured it."""
    (out / "docs").mkdir(parents=True, exist_ok=True)
    (out / "theme").mkdir(exist_ok=True)
    common = ("site_name: Banc d'essai\nsite_url: https://bench.example.org/\nuse_directory_urls: false\n"
              "validation:\n  links:\n    not_found: ignore\n    unrecognized_links: ignore\n")
    (out / "mkdocs.yml").write_text(common + "theme:\n  name: null\n  custom_dir: theme\nplugins: []\n",
                                    encoding="utf-8")
    (out / MKDOCS_DEFAULT).write_text(common + "theme:\n  name: mkdocs\n", encoding="utf-8")
    (out / "theme" / "main.html").write_text(
        '<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>{{ page.title }}</title></head>'
        "<body><main>{{ page.content }}</main></body></html>\n", encoding="utf-8")
    (out / "docs" / "index.md").write_text("# Banc d'essai\n", encoding="utf-8")
    for note in notes:
        (out / "docs" / f"{note.slug}.md").write_text(f"# {note.title}\n\n{note.body}", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extractions", type=int, default=0)
    parser.add_argument("--comments", type=float, default=0.0)
    parser.add_argument("--wikis", type=int, default=0)
    parser.add_argument("--citations", type=int, default=0)
    parser.add_argument("--notebooks", type=int, default=len(NOTEBOOKS), choices=range(1, len(NOTEBOOKS) + 1),
                        help="notebooks the notes are spread over")
    parser.add_argument("--wiki-categories", type=int, default=1, choices=range(1, len(CATEGORIES) + 1),
                        help="categories in each wiki's perimeter (with --notebooks 1 and 8: one perimeter of all)")
    parser.add_argument("--hugo", type=Path, help="also write the plain notes as a Hugo site here")
    parser.add_argument("--mkdocs", type=Path, help="also write the plain notes as an MkDocs project here")
    args = parser.parse_args(argv)
    notes = plain_notes(args.notes, args.seed, args.notebooks)
    write_carnet(args.out, notes, Densities(args.extractions, args.comments, args.wikis, args.citations,
                                            args.wiki_categories), args.seed)
    if args.hugo:
        write_hugo(args.hugo, notes)
    if args.mkdocs:
        write_mkdocs(args.mkdocs, notes)
    sizes = sorted(len(n.body.encode("utf-8")) for n in notes)
    print(f"{len(notes)} notes, median {sizes[len(sizes) // 2]} B, max {sizes[-1]} B, "
          f"total {sum(sizes) / 1e6:.1f} MB → {args.out}")


if __name__ == "__main__":
    main()
