"""Converts a real public corpus of meeting minutes (the Node.js TSC's, in English) into a
Carnet content directory, for measuring the model stages at real scale (issue 55). The
content it writes is never committed: it is a benchmark input, made again from the minutes.

Get the input (399 markdown minutes, 2014–2026, 2.4 MB, in the ``meetings/`` folder of
https://github.com/nodejs/TSC; the figures below are those of commit 0e35767c, 2026-05-12),
then convert it:

    git clone https://github.com/nodejs/TSC /tmp/nodejs-tsc     # or any clone or bare mirror (--git-dir)
    mkdir -p /tmp/tsc && git -C /tmp/nodejs-tsc archive 0e35767c9666d03c0e9596e636b35623887ffb6f meetings \
        | tar -x -C /tmp/tsc                                    # HEAD works too: newer minutes, other sizes
    python -m bench.meetings /tmp/tsc/meetings --out /tmp/meetings-content
    carnet check /tmp/meetings-content && carnet select wiki-governance --content /tmp/meetings-content

The script reads only that folder (every ``*.md`` under it whose name starts with a date,
``YYYY-MM-DD``; subfolders such as ``node.js/`` and ``io.js/`` hold the older committees'
minutes and give their notes' slug a prefix) and writes ``--out`` (refused when it exists
and is not empty, unless ``--force`` and it holds a ``carnet.yaml``). No network, no clock, no model: the same minutes
give the same bytes. What it writes:

- ``carnet.yaml`` (``language: en``), one base and one public notebook with two axes: ``topic``
  (categories from each meeting's headings and agenda items, by a fixed keyword table) and
  ``year``;
- one note per meeting (title from its first heading, date from its file name, authors when a
  scribe is named), its body the minutes as written;
- extractions: verbatim list items and sentences of 40–300 characters, chosen by rule (spread
  evenly over each meeting) and kept only when the project's anchoring engine places them
  exactly once in the note; their kind from a small English set, by keywords; their author
  :data:`AUTHOR`, a script, and a comment at the top of each extractions file saying so;
- scripted comments with stances (some disagreeing) on a fixed share of them, so that the
  debate order has data; their text says a script wrote them;
- three wiki articles whose perimeters hold about 900–1,000, 1,400–1,500 and 1,700 or more
  extractions (the years kept are cut from the oldest until the size fits; the sizes are
  printed), each citing a few extractions per section, and one directed synthesis (a draft)
  with its perimeter recorded.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import yaml

from generator.anchoring.elements import Element, segment
from generator.anchoring.resolve import AnchorStatus, project, resolve_quote
from generator.corpus.model import Stance
from generator.markup import parse
from generator.synthesis.lifecycle import quote_hash
from generator.text import slugify

T = TypeVar("T")

AUTHOR = "bench/meetings.py (script)"
"""The author of every extraction and comment: a script, named as one (the notebook shows names in full)."""

SCRIPT_DATE = dt.date(2026, 1, 1)
"""The date of the scripted comments: fixed, not the clock, so that the same input gives the same bytes."""

NOTEBOOK = "nodejs-tsc"
BASE = "nodejs"
MIN_QUOTE, MAX_QUOTE = 40, 300
PER_NOTE = 6
"""Extractions per meeting at most (fewer when it has fewer candidates): 2,289 over the TSC's minutes."""

COMMENT_EVERY = 17
"""Every 17th extraction (in slug then file order) gets a scripted comment; stances cycle over :data:`STANCES`."""

STANCES = (Stance.DISAGREE, Stance.AGREE, Stance.NUANCE, Stance.QUESTION, Stance.DISAGREE, Stance.NEUTRAL)

SKIPPED_SECTIONS = frozenset({"links", "present", "participants", "upcoming meetings", "next meeting",
                              "attendees", "invited", "observers"})
"""Sections whose items are attendance and links, not what the meeting said: never quoted."""

BOILERPLATE_MEETINGS = 3
"""A text found in this many meetings is the template's ("Extracted from tsc-agenda labeled issues…"), not quoted."""

_DATED = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z@\"'(*])")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")


class Kind(str, Enum):
    """What an extraction records, by keywords of its text (the first that matches, in this order)."""

    DECISION = "decision"
    ACTION = "action"
    QUESTION = "question"
    PROPOSAL = "proposal"
    FACT = "fact"


_KIND_RULES: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.DECISION, re.compile(r"\b(agreed|consensus|decided|approved|resolved|no objections?|voted?|landed)\b", re.I)),
    (Kind.ACTION, re.compile(r"\b(will|action|to follow up|follow-up|take a look|volunteered|todo)\b", re.I)),
    (Kind.QUESTION, re.compile(r"\?|\b(asked|wondered|unclear|not sure)\b", re.I)),
    (Kind.PROPOSAL, re.compile(r"\b(propos\w*|suggest\w*|should|recommend\w*|idea|could)\b", re.I)),
)


class Topic(str, Enum):
    """The ``topic`` axis: each value is the category as shown; keywords in :data:`TOPIC_KEYWORDS`."""

    RELEASES = "Releases"
    SECURITY = "Security"
    GOVERNANCE = "Governance"
    COMMUNITY = "Community"
    INFRASTRUCTURE = "Build and CI"
    RUNTIME = "Runtime and APIs"
    FUNDING = "Funding"
    ECOSYSTEM = "Ecosystem"
    GENERAL = "General"


TOPIC_KEYWORDS: dict[Topic, re.Pattern[str]] = {
    Topic.RELEASES: re.compile(r"\b(releases?|LTS|backport\w*|semver|changelog|v\d+\.x|release line|end.of.life|EOL)\b", re.I),
    Topic.SECURITY: re.compile(r"\b(security|vulnerabilit\w*|CVE|OpenSSL|HackerOne|bounty|threat model|permission model)\b", re.I),
    Topic.GOVERNANCE: re.compile(r"\b(charter|governance|nominat\w*|voting member|vote|policy|CPC|board|foundation|OpenJS|membership)\b", re.I),
    Topic.COMMUNITY: re.compile(r"\b(summit|moderation|code of conduct|outreach|mentor\w*|survey|diversity|onboarding|spotlight|collaborators?)\b", re.I),
    Topic.INFRASTRUCTURE: re.compile(r"\b(CI|build|jenkins|infra\w*|flaky|benchmark\w*|github actions|machines?|test suite)\b", re.I),
    Topic.RUNTIME: re.compile(r"\b(V8|modules?|ESM|CommonJS|streams?|http2?|buffer|APIs?|deprecat\w*|loaders?|wasm|workers?|N-API|libuv|ICU|TypeScript)\b", re.I),
    Topic.FUNDING: re.compile(r"\b(fund\w*|budget|sponsor\w*|travel|donat\w*|money|costs?)\b", re.I),
    Topic.ECOSYSTEM: re.compile(r"\b(npm|corepack|package managers?|yarn|pnpm|undici|ecosystem|tooling|registry)\b", re.I),
}

MAX_TOPICS = 4
"""A meeting is filed under its strongest topics, at most this many (ties: in the order of :class:`Topic`)."""

MIN_TOPIC_SCORE = 3
"""A topic needs this many keyword hits (a heading counts twice) before a meeting is filed under it."""


@dataclass(frozen=True)
class WikiPlan:
    """A wiki article to write: its topics, and the size its perimeter must reach.

    Attributes:
        slug: the note's slug.
        title: its title.
        topics: its perimeter's topics (OR); the years are then cut from the oldest until it fits.
        low: the fewest extractions its perimeter may hold.
        high: the most (``None``: no bound, every year kept).
    """

    slug: str
    title: str
    topics: tuple[Topic, ...]
    low: int
    high: int | None


WIKIS = (
    WikiPlan("wiki-community-and-ecosystem", "Community and ecosystem", (Topic.COMMUNITY, Topic.ECOSYSTEM), 900, 1000),
    WikiPlan("wiki-releases-and-community", "Releases and community", (Topic.RELEASES, Topic.COMMUNITY), 1400, 1500),
    WikiPlan("wiki-governance", "Governance", (Topic.GOVERNANCE,), 1700, None),
)
"""On the TSC's minutes of 2026-05-12 (commit 0e35767c) every year fits: 945, 1,427 and 1,940 extractions."""

SYNTHESIS = "synthesis-security-recent"
SYNTHESIS_TOPICS = (Topic.SECURITY,)
SYNTHESIS_YEARS = 2
"""The synthesis records the security meetings of the corpus's last two years."""

CITED_PER_SECTION = 4
SECTIONS_PER_WIKI = 3


@dataclass(frozen=True)
class Minutes:
    """One meeting's minutes as read from the input.

    Attributes:
        slug: the note's slug (the subfolder's slug, if any, then the file name's).
        source: the file's path under the input folder (shown in the note's summary).
        title: the first heading's text, or ``Meeting <date>``.
        date: from the file name.
        authors: the scribes named in the attendance list (most minutes name none).
        body: the minutes, as written (line ends LF).
    """

    slug: str
    source: str
    title: str
    date: dt.date
    authors: tuple[str, ...]
    body: str


@dataclass(frozen=True)
class ScriptedComment:
    id: str
    stance: Stance
    text: str


@dataclass(frozen=True)
class Passage:
    """An extraction to write.

    Attributes:
        id: unique in the content.
        quote: the note's text as read, white space folded.
        kind: from :data:`_KIND_RULES`.
        comments: the scripted comments on it.
    """

    id: str
    quote: str
    kind: Kind
    comments: tuple[ScriptedComment, ...] = ()


@dataclass(frozen=True)
class Meeting:
    minutes: Minutes
    topics: tuple[Topic, ...]
    passages: tuple[Passage, ...]

    @property
    def year(self) -> str:
        return str(self.minutes.date.year)


class InputError(Exception):
    """The input cannot be converted: said with the file and what to do."""


# ---------------------------------------------------------------- reading


def read_minutes(folder: Path) -> list[Minutes]:
    """Every dated ``*.md`` under ``folder``, in slug order."""
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder; give the folder of minutes (see the module's docstring)")
    found: dict[str, Minutes] = {}
    for path in sorted(folder.rglob("*.md")):
        dated = _DATED.match(path.name)
        if dated is None or not path.is_file():
            continue
        relative = path.relative_to(folder)
        try:
            date = dt.date(int(dated.group(1)), int(dated.group(2)), int(dated.group(3)))
            text = path.read_bytes().decode("utf-8-sig")
        except (ValueError, UnicodeDecodeError) as error:
            raise InputError(f"{relative}: {error}; fix or remove the file") from error
        prefix = "-".join(slugify(part) for part in relative.parent.parts) or "tsc"
        slug = f"{prefix}-{slugify(path.stem)}"
        if slug in found:
            raise InputError(f"{relative}: its slug {slug!r} is taken by {found[slug].source}; rename one of them")
        body = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
        found[slug] = Minutes(slug, relative.as_posix(), _title(body, date), date, _scribes(body), body)
    if not found:
        raise InputError(f"{folder}: no minutes found (files named YYYY-MM-DD….md)")
    return [found[slug] for slug in sorted(found)]


def _title(body: str, date: dt.date) -> str:
    for line in body.split("\n"):
        if line.startswith("# "):
            title = re.sub(r"[*_`]", "", line[2:]).strip()
            if title:
                return title
    return f"Meeting {date.isoformat()}"


def _scribes(body: str) -> tuple[str, ...]:
    names = []
    for line in body.split("\n"):
        if "(scribe)" in line.lower():
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)  # a linked name: its text
            text = re.sub(r"(?i)\(scribe\)|@\S+|^\s*[*-]\s*", "", text).strip(" *")
            if text:
                names.append(text)
    return tuple(names)


# ---------------------------------------------------------------- choosing


def _elements(body: str) -> list[Element]:
    return segment(parse(body), 1).elements


def _sections(elements: Sequence[Element]) -> Iterable[tuple[Element, str]]:
    """Each element with the title of the H1 or H2 section it lies in (lower case)."""
    section = ""
    for element in elements:
        if element.kind == "heading" and element.level <= 2:
            section = element.text.strip().lower()
        yield element, section


def topics_of(elements: Sequence[Element]) -> tuple[Topic, ...]:
    """The meeting's strongest topics by keyword hits (a heading counts twice), or ``General``."""
    scores = dict.fromkeys(TOPIC_KEYWORDS, 0)
    for element, section in _sections(elements):
        if element.level == 1 or section in SKIPPED_SECTIONS:
            continue  # the title names the committee (and its foundation) at every meeting
        weight = 2 if element.kind == "heading" else 1
        for topic, pattern in TOPIC_KEYWORDS.items():
            scores[topic] += weight * len(pattern.findall(element.text))
    order = list(Topic)
    ranked = sorted((t for t, s in scores.items() if s >= MIN_TOPIC_SCORE), key=lambda t: (-scores[t], order.index(t)))
    chosen = sorted(ranked[:MAX_TOPICS], key=order.index)
    return tuple(chosen) or (Topic.GENERAL,)


def candidates(elements: Sequence[Element]) -> list[str]:
    """Quotable texts in reading order: whole list items and paragraphs of 40–300 characters,
    or their sentences of that length, outside attendance and link sections."""
    found: list[str] = []
    for element, section in _sections(elements):
        if element.kind not in ("paragraph", "list_item", "blockquote") or section in SKIPPED_SECTIONS:
            continue
        text = " ".join(element.text.split())
        pieces = [text] if len(text) <= MAX_QUOTE else _SENTENCE_END.split(text)
        found.extend(piece.strip() for piece in pieces if _quotable(piece.strip()))
    return found


def _quotable(text: str) -> bool:
    if not MIN_QUOTE <= len(text) <= MAX_QUOTE or "[[" in text or "]]" in text:
        return False
    words = _WORD.findall(text)
    return len(words) >= 6 and sum(len(w) for w in words) >= len(text) // 2  # prose, not a list of links


def unique_quotes(elements: list[Element], texts: Iterable[str]) -> list[str]:
    """The texts the anchoring engine places exactly once in the note (each text once)."""
    projection = project(elements)
    kept: list[str] = []
    seen: set[str] = set()
    for text in texts:
        if text in seen:
            continue
        seen.add(text)
        if resolve_quote(projection, elements, text).status is AnchorStatus.ANCHORED:
            kept.append(text)
    return kept


def spread(items: Sequence[T], count: int) -> list[T]:
    """``count`` items spread evenly over ``items`` (all of them when there are fewer)."""
    if len(items) <= count:
        return list(items)
    return [items[(2 * k + 1) * len(items) // (2 * count)] for k in range(count)]


def kind_of(text: str) -> Kind:
    return next((kind for kind, pattern in _KIND_RULES if pattern.search(text)), Kind.FACT)


def meetings_of(minutes: Sequence[Minutes]) -> list[Meeting]:
    """Each meeting's topics and extractions (texts that :data:`BOILERPLATE_MEETINGS` or more
    meetings say are left out), comments on every :data:`COMMENT_EVERY`-th extraction."""
    parsed = [_elements(item.body) for item in minutes]
    found = [candidates(elements) for elements in parsed]
    meetings_saying = Counter(text for texts in found for text in set(texts))
    meetings: list[Meeting] = []
    counter = 0
    for item, elements, texts in zip(minutes, parsed, found, strict=True):
        said = [text for text in texts if meetings_saying[text] < BOILERPLATE_MEETINGS]
        chosen = spread(unique_quotes(elements, said), PER_NOTE)
        passages = []
        for number, quote in enumerate(chosen, start=1):
            identifier = f"{item.slug}-x{number}"
            comments: tuple[ScriptedComment, ...] = ()
            if counter % COMMENT_EVERY == 0:
                comments = _comments(identifier, counter // COMMENT_EVERY)
            passages.append(Passage(identifier, quote, kind_of(quote), comments))
            counter += 1
        meetings.append(Meeting(item, topics_of(elements), tuple(passages)))
    return meetings


def _comments(extraction: str, turn: int) -> tuple[ScriptedComment, ...]:
    stance = STANCES[turn % len(STANCES)]
    made = [ScriptedComment(f"c-{extraction}-1", stance, _comment_text(stance))]
    if turn % 5 == 0:  # a debated passage now and then: a second comment, disagreeing
        made.append(ScriptedComment(f"c-{extraction}-2", Stance.DISAGREE, _comment_text(Stance.DISAGREE)))
    return tuple(made)


def _comment_text(stance: Stance) -> str:
    return (f"Scripted comment (bench/meetings.py), stance {stance.value}: written by the converter so that the "
            "debate order has data; no person said this.")


# ---------------------------------------------------------------- perimeters


def in_perimeter(meeting: Meeting, topics: Iterable[Topic], years: Iterable[str]) -> bool:
    return bool(set(meeting.topics) & set(topics)) and meeting.year in set(years)


def perimeter_size(meetings: Iterable[Meeting], topics: Sequence[Topic], years: Sequence[str]) -> int:
    return sum(len(m.passages) for m in meetings if in_perimeter(m, topics, years))


def fit_years(meetings: Sequence[Meeting], plan: WikiPlan) -> tuple[str, ...]:
    """The years of the plan's perimeter: every year, then the oldest dropped one at a time
    while the perimeter holds more than ``plan.high`` extractions."""
    years = sorted({m.year for m in meetings})
    while plan.high is not None and years and perimeter_size(meetings, plan.topics, years) > plan.high:
        years.pop(0)
    size = perimeter_size(meetings, plan.topics, years)
    if size < plan.low or (plan.high is not None and size > plan.high):
        raise InputError(f"wiki {plan.slug!r}: no run of recent years gives a perimeter of {plan.low} to "
                         f"{plan.high or 'any number of'} extractions (the nearest holds {size}); this input is "
                         "not the TSC's minutes, or they changed: adjust WIKIS in bench/meetings.py")
    return tuple(years)


# ---------------------------------------------------------------- writing


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a repeated date would be written as an alias, which Carnet refuses


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=1000,
                     default_flow_style=False)


def _front_matter(data: dict[str, Any], body: str) -> str:
    return f"---\n{_dump(data)}---\n{body}"


def _note(meeting: Meeting) -> str:
    m = meeting.minutes
    data: dict[str, Any] = {"title": m.title, "date": m.date}
    if m.authors:
        data["authors"] = list(m.authors)
    data["summary"] = f"Minutes of {m.date.isoformat()}, from {m.source} of github.com/nodejs/TSC."
    data["notebooks"] = {NOTEBOOK: {"topic": [t.value for t in meeting.topics], "year": [meeting.year]}}
    return _front_matter(data, m.body)


SIDECAR_HEADER = ("# Extractions and comments made by bench/meetings.py (method: scripted): verbatim list items\n"
                  "# and sentences of the minutes, chosen by rule and placed once by the anchoring engine; no\n"
                  "# model, no person. The comments' stances are scripted too, for the debate order.\n")


def _sidecar(meeting: Meeting) -> str:
    items = []
    for passage in meeting.passages:
        item: dict[str, Any] = {"id": passage.id, "quote": passage.quote, "kind": passage.kind.value,
                                "author": AUTHOR}
        if passage.comments:
            item["comments"] = [{"id": c.id, "author": AUTHOR, "date": SCRIPT_DATE, "stance": c.stance.value,
                                 "text": c.text} for c in passage.comments]
        items.append(item)
    return SIDECAR_HEADER + _dump({"extractions": items})


def _cited(pool: Sequence[tuple[Meeting, Passage]], count: int, taken: set[str]) -> list[tuple[Meeting, Passage]]:
    """``count`` extractions of ``pool`` not cited yet, spread evenly over it (it is in date order)."""
    fresh = [(m, p) for m, p in pool if p.id not in taken]
    chosen = [fresh[i] for i in spread(range(len(fresh)), count)]
    taken.update(p.id for _, p in chosen)
    return chosen


def _claim(meeting: Meeting, passage: Passage) -> str:
    fragment = " ".join(passage.quote.split()[:8]).strip("\"“”«»")
    fragment = re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", fragment)  # markup in the quote stays text in the claim
    article = "an" if passage.kind.value[0] in "aeiou" else "a"
    return (f"- The meeting of {meeting.minutes.date.isoformat()} recorded {article} {passage.kind.value}: "
            f"“{fragment}” [[ext:{passage.id}]]")


SECTION_KINDS = ((Kind.DECISION, "Decisions"), (Kind.ACTION, "Actions"), (Kind.QUESTION, "Open questions"))


def _article_body(lead: str, meetings: Sequence[Meeting], topics: Sequence[Topic]) -> str:
    """The lead, then a section per topic, then sections per kind, :data:`SECTIONS_PER_WIKI` in all,
    each citing up to :data:`CITED_PER_SECTION` extractions of the perimeter."""
    pool = [(m, p) for m in meetings for p in m.passages]
    sections = [(t.value, [(m, p) for m, p in pool if t in m.topics]) for t in topics]
    sections += [(title, [(m, p) for m, p in pool if p.kind is kind]) for kind, title in SECTION_KINDS]
    parts = [lead, ""]
    taken: set[str] = set()
    written = 0
    for title, members in sections:
        chosen = _cited(members, CITED_PER_SECTION, taken) if written < SECTIONS_PER_WIKI else []
        if chosen:
            parts += [f"## {title}", "", *(_claim(m, p) for m, p in chosen), ""]
            written += 1
    return "\n".join(parts)


def _wiki(plan: WikiPlan, meetings: Sequence[Meeting], years: Sequence[str]) -> str:
    inside = [m for m in meetings if in_perimeter(m, plan.topics, years)]
    topics = [t for t in plan.topics if any(t in m.topics for m in inside)]
    data: dict[str, Any] = {
        "title": plan.title,
        "type": "wiki",
        "summary": f"A scripted wiki article over the {plan.title.lower()} of the minutes, written by bench/meetings.py.",
        "notebooks": {NOTEBOOK: {"topic": [t.value for t in topics]}},
        "perimeter": {"notebook": NOTEBOOK, "categories": {"topic": [t.value for t in plan.topics],
                                                          "year": list(years)}},
    }
    lead = (f"This article was written by a script (bench/meetings.py) to give the benchmark a perimeter of "
            f"{sum(len(m.passages) for m in inside)} extractions from {len(inside)} meetings; each claim below "
            "points to one passage.")
    return _front_matter(data, _article_body(lead, inside, topics))


def _synthesis(meetings: Sequence[Meeting]) -> str:
    years = sorted({m.year for m in meetings})[-SYNTHESIS_YEARS:]
    inside = [m for m in meetings if in_perimeter(m, SYNTHESIS_TOPICS, years)]
    last = max((m.minutes.date for m in inside), default=SCRIPT_DATE)
    data: dict[str, Any] = {
        "title": f"Security in {years[0]}–{years[-1]}",
        "type": "synthesis",
        "date": last,
        "summary": "A scripted directed synthesis (a draft) whose perimeter is recorded, written by bench/meetings.py.",
        "notebooks": {NOTEBOOK: {"topic": [t.value for t in SYNTHESIS_TOPICS]}},
        "perimeter": {"notebook": NOTEBOOK, "categories": {"topic": [t.value for t in SYNTHESIS_TOPICS],
                                                          "year": years}},
        "proposed": {
            "notes": [m.minutes.slug for m in inside],
            "extractions": [{"id": p.id, "note": m.minutes.slug, "quote": p.quote, "sha256": quote_hash(p.quote)}
                            for m in inside for p in m.passages],
        },
    }
    lead = ("This draft synthesis was written by a script (bench/meetings.py); its perimeter, the extractions it "
            "was given, is recorded above.")
    return _front_matter(data, _article_body(lead, inside, SYNTHESIS_TOPICS))


@dataclass(frozen=True)
class Converted:
    """What :func:`convert` wrote, for the report.

    Attributes:
        notes: meetings written.
        extractions: extractions written.
        comments: comments written.
        perimeters: wiki slug → (years kept, extractions in its perimeter).
    """

    notes: int
    extractions: int
    comments: int
    perimeters: dict[str, tuple[tuple[str, ...], int]]


def convert(source: Path, out: Path, wikis: Sequence[WikiPlan] = WIKIS) -> Converted:
    """Reads the minutes under ``source``, writes the content directory ``out`` (which must
    not exist, or be empty)."""
    meetings = meetings_of(read_minutes(source))
    perimeters = {plan.slug: fit_years(meetings, plan) for plan in wikis}
    years = sorted({m.year for m in meetings})
    files: dict[str, str] = {
        "carnet.yaml": _dump({
            "title": "Node.js TSC minutes (benchmark)",
            "base_url": "https://example.org/nodejs-tsc/",
            "language": "en",
            "licence": {"name": "as published in github.com/nodejs/TSC", "url": "https://github.com/nodejs/TSC"},
            "description": ("The public minutes of the Node.js Technical Steering Committee, converted by "
                            "bench/meetings.py to measure Carnet at real scale. The extractions, comments and "
                            "articles are scripted: no person and no model chose them."),
        }),
        f"bases/{BASE}.yaml": _dump({"title": "Node.js", "description": "The Node.js project's committees.",
                                     "notebooks": [NOTEBOOK]}),
        f"notebooks/{NOTEBOOK}.yaml": _dump({
            "title": "Node.js TSC meetings",
            "description": "One note per meeting of the TSC (and of the node.js and io.js committees before it).",
            "writing_guide": ("Notes are the minutes as published; extractions and comments are made by "
                              "bench/meetings.py, a script."),
            "visibility": "public",
            "authors": "full",
            "axes": {"topic": {"title": "Topic", "categories": [t.value for t in Topic]},
                     "year": {"title": "Year", "categories": years}},
        }),
    }
    for meeting in meetings:
        files[f"notes/{meeting.minutes.slug}.md"] = _note(meeting)
        if meeting.passages:
            files[f"notes/{meeting.minutes.slug}.extractions.yaml"] = _sidecar(meeting)
    for plan in wikis:
        files[f"notes/{plan.slug}.md"] = _wiki(plan, meetings, perimeters[plan.slug])
    files[f"notes/{SYNTHESIS}.md"] = _synthesis(meetings)
    for name, text in sorted(files.items()):
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return Converted(
        len(meetings), sum(len(m.passages) for m in meetings),
        sum(len(p.comments) for m in meetings for p in m.passages),
        {plan.slug: (perimeters[plan.slug], perimeter_size(meetings, plan.topics, perimeters[plan.slug]))
         for plan in wikis})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("minutes", type=Path, help="the folder of minutes (e.g. /tmp/tsc/meetings)")
    parser.add_argument("--out", type=Path, required=True, help="the content directory to write")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    out: Path = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not (args.force and (out / "carnet.yaml").is_file()):
            print(f"error: {out} exists and is not empty; give another --out, or --force to replace a content "
                  "directory this script wrote (one holding carnet.yaml)", file=sys.stderr)
            return 2
        shutil.rmtree(out)
    try:
        converted = convert(args.minutes, out)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{converted.notes} notes, {converted.extractions} extractions, {converted.comments} comments → {out}")
    for slug, (years, size) in converted.perimeters.items():
        print(f"  {slug}: {size} extractions in its perimeter (years {years[0]}–{years[-1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
