"""``carnet ask --save SLUG``: an answer kept as a reviewable note of type ``answer``.

The file, ``content/notes/answers/<slug>.md``, records what cannot be recomputed: the
question, how the passages reached the model, the notebooks searched, every passage the
model was given (its perimeter, with each one's hash), the anchored quotes (id, passage,
the note's own words, the hash of the elements they land in) and who answered, with what
model and at what cost. The body is the statements, each followed by its
``[[quote:ID]]`` markers; a statement the model wrote with no anchored quote is kept,
and the build marks it unsourced. Refused quotes are no citations: they are kept apart
(``asked: refused:``), with why, and listed as refused on the answer's page.
The judge's verdicts, when it ran, go to ``content/verdicts/<slug>.yaml``.

Nothing is overwritten: a slug that a note already has is refused. Before anything is
written the new file is read back by the build's own reader, and its statements by the
claims reader: what the build will find is exactly what was meant (INV-19).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import yaml

from generator.answering.answer import Answer, quote_id
from generator.corpus.fields import MAX_SLUG, SLUG_PATTERN
from generator.corpus.verdicts import text_hash
from generator.markup import make_parser
from generator.problems import SettingsError
from generator.synthesis.audit import passage_hash
from generator.synthesis.claims import claim_text, read_claims
from generator.writes import PlannedWrite, WriteRefused, appended, write_content

ANSWERS_DIR = "notes/answers"
"""Where saved answers live: notes (published, listed and checked as notes are), apart."""
MAX_TITLE_CHARS = 160

_INLINE = re.compile(r"([\\`*_\[\]<>&!|~])")
"""The characters that can start inline markup (emphasis, code, links, markers, HTML,
entities, strikethrough, tables); CommonMark lets each be escaped with a backslash."""
_BLOCK_START = re.compile(r"^(?:([#>+=-])|(\d+)([.)]))")
"""What would start a block (heading, quotation, list item) at a paragraph's start."""


def answer_rel(slug: str) -> str:
    return f"{ANSWERS_DIR}/{slug}.md"


def check_slug(slug: str, existing: set[str], content: Path) -> None:
    """Refuse a slug that is no note slug, that a note already has, or whose file exists."""
    if not SLUG_PATTERN.match(slug) or len(slug) > MAX_SLUG:
        raise SettingsError(f"--save {slug!r}: a slug is lowercase letters and digits separated by single hyphens "
                            f"or underscores, at most {MAX_SLUG} characters (e.g. --save budget-du-foyer)")
    if slug in existing or (content / answer_rel(slug)).exists():
        raise SettingsError(f"--save {slug!r}: a note already has this slug ({answer_rel(slug)} or another); "
                            "nothing is overwritten: choose another slug, or delete the old answer first")


def markdown_text(text: str) -> str:
    """``text`` as markdown that renders (and reads back as a claim) as exactly itself: what
    could start markup escaped, so that no model's words become markup, links or markers."""
    escaped = _INLINE.sub(r"\\\1", " ".join(text.split()))
    return _BLOCK_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), escaped)


def answer_file(answer: Answer, slug: str, day: dt.date, elements_of: dict[str, Any],
                passage_texts: dict[str, str], listed: list[str],
                categories: tuple[tuple[str, str], ...] = ()) -> tuple[str, dict[str, Any]]:
    """The body and front matter of the answer's file (pure). ``elements_of``: note → its
    elements (to hash what each quote lands in); ``passage_texts``: retrieved id → text;
    ``listed``: the notebooks the answer is listed in; ``categories``: those asked for."""
    title = " ".join(answer.question.split())
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS - 1].rstrip() + "…"
    asked: dict[str, Any] = {"mode": answer.mode.value, "searched": list(answer.searched)}
    if categories:
        asked["categories"] = {axis: [v for a, v in categories if a == axis] for axis in dict.fromkeys(a for a, _ in categories)}
    asked["not_in_corpus"] = answer.not_in_corpus
    asked["retrieved"] = [{"passage": p, "sha256": text_hash(passage_texts[p])}
                          for p in answer.retrieved if p in passage_texts]
    asked["quotes"] = [{"id": quote_id(c.number), "passage": f"{c.note}#{c.element}", "quote": c.text,
                        "sha256": passage_hash(elements_of[c.note], (p.element for p in c.portions))}
                       for c in answer.citations]
    if answer.refused:  # the model's words that are no citation: kept for review, shown as refused
        asked["refused"] = [{"statement": r.statement, "passage": r.passage, "quote": r.quote,
                             "refusal": r.refusal.value} for r in answer.refused]
    asked["provenance"] = dict(answer.provenance)
    front: dict[str, Any] = {"title": title, "type": "answer", "date": day,
                             "notebooks": {nb: {} for nb in listed}, "question": answer.question, "asked": asked}
    paragraphs = []
    if not answer.not_in_corpus:
        for statement in answer.statements:
            markers = " ".join(f"[[quote:{quote_id(n)}]]" for n in statement.citations)
            paragraphs.append(markdown_text(statement.text) + (f" {markers}" if markers else ""))
    body = "\n\n".join(paragraphs) + ("\n" if paragraphs else "")
    return body, front


def note_bytes(front: dict[str, Any], body: str) -> bytes:
    meta = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=float("inf"), default_flow_style=False)
    return f"---\n{meta}---\n{body}".encode()


def save_answer(content: Path, answer: Answer, slug: str, day: dt.date, elements_of: dict[str, Any],
                passage_texts: dict[str, str], listed: list[str],
                categories: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """Write the answer (and its verdicts) into ``content``; the files written."""
    if not answer.not_in_corpus and not answer.statements:  # :func:`ask` refuses it first; never an empty page
        raise WriteRefused(f"{answer_rel(slug)}: refused to write an answer with no statement that does not say "
                           "not_in_corpus; nothing was written")
    body, front = answer_file(answer, slug, day, elements_of, passage_texts, listed, categories)
    rel = answer_rel(slug)
    data = note_bytes(front, body)
    _check_claims(rel, body, answer)
    writes = [PlannedWrite(rel, data, {"front_matter": front, "body": body})]
    if answer.verdicts:
        writes.append(appended(content, f"verdicts/{slug}.yaml", "verdicts", list(answer.verdicts),
                               comment=f"Verdicts on the (statement, quote) pairs of the answer {slug!r}, "
                                       "keyed by their hashes (carnet ask --save)."))
    write_content(content, f"carnet ask --save {slug}", *writes)
    return [w.rel for w in writes]


def _check_claims(rel: str, body: str, answer: Answer) -> None:
    """The statements as the build will read them: each one claim, its text the statement's,
    its markers the quotes it cites. Refused otherwise (nothing written)."""
    if answer.not_in_corpus:
        return
    tokens = make_parser().parse(body)
    claims = read_claims("answer", tokens, 1)
    read = [(c.text, tuple(m.key for m in c.markers)) for c in claims]
    meant = [(claim_text(s.text), tuple(quote_id(n) for n in s.citations)) for s in answer.statements]
    # a statement too short to be a claim (under five words, no marker) is not read as one
    meant = [m for m in meant if m[1] or any(r[0] == m[0] for r in read)]
    if read != meant:
        raise WriteRefused(f"{rel}: refused to write: its statements would not read back as the answer's "
                           "(the claims reader finds something else); nothing was written")
