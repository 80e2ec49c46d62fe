"""The audit of every wiki article and directed synthesis: claims, citation index
(INV-1, INV-2), perimeter and discarded evidence (INV-3, INV-4), coverage of the
perimeter (INV-5), lifecycle and integrity of adopted acts (INV-14). Pure: the
loaded, anchored corpus in; audits and problems out."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple, TypeVar

from generator.anchoring import AnchoredNote, Portion
from generator.anchoring.elements import SEPARATOR, Element
from generator.anchoring.normalise import normalise, normalise_quote
from generator.anchoring.resolve import AnchorStatus, portions_text, project, resolve_quote
from generator.corpus.article import (
    ActStatus,
    AnswerQuote,
    AnswerRecord,
    ArticleSpec,
    FrozenExtraction,
    PerimeterSpec,
    history_problems,
)
from generator.corpus.model import Corpus, Extraction, Note, NoteType
from generator.corpus.verdicts import text_hash
from generator.digest import digest_of
from generator.kinds import WikiKind
from generator.problems import Problem, Severity
from generator.synthesis.claims import Claim, Marker, content_words, quoted_fragments, read_claims
from generator.synthesis.coverage import Coverage, coverage, masked_elements
from generator.synthesis.lifecycle import adoption_hash, quote_hash, superseded_by
from generator.synthesis.perimeter import NotebookIndex, live_perimeter, perimeter_extractions

SAID_HERE_SHARE = 0.6
"""An unsourced claim is 'said here' in an uncovered element holding this share of its words."""


class SourceState(StrEnum):
    """Where a cited source stands (a ``str``: it reads as its value everywhere)."""

    PRESENT = "present"  # its passage is found in its note
    DETACHED = "detached"  # the note is there, the passage no longer lands
    DELETED = "deleted"  # the extraction is gone (a frozen act keeps its quote)


@dataclass(frozen=True)
class CitationLink:
    """One entry of the citation index: a (claim, source) link.

    Attributes:
        state: :class:`SourceState`.
        broken: why the link is refused ("" when it is not): unknown, outside the
            perimeter, into a wiki or synthesis.
        note: the slug of the source note ("" when unknown).
        extraction: the extraction cited, or the one the cited comment is on ("" for
            an answer's quote).
        portions: where the cited passage lies in its note.
        element, text: an answer's quote: the element id it starts in and the note's own
            text over its portions ("" while the quote does not land).
    """

    article: str
    section: str
    rank: int
    claim: str
    claim_text: str
    marker: Marker
    note: str
    extraction: str
    portions: tuple[Portion, ...]
    state: SourceState
    broken: str = ""
    type: str = "cites"
    element: str = ""
    text: str = ""

    @property
    def fragment(self) -> str:
        """Where the link lands on its note's page: the extraction's highlight, the
        comment, or (a saved answer's quote) the element the quote starts in."""
        if self.marker.kind is WikiKind.QUOTE:
            return self.element
        return f"com-{self.marker.key}" if self.marker.kind is WikiKind.COM else f"ext-{self.extraction}"


@dataclass(frozen=True)
class DiscardedItem:
    """Evidence of the perimeter that no citation uses: an extraction, or (for a saved
    answer) a retrieved passage, ``extraction`` then being the passage's element id."""

    extraction: str
    note: str
    quote: str
    exists: bool
    comments: int
    disagreements: int
    passage: bool = False


@dataclass(frozen=True)
class SaidHere:
    """An unsourced claim, and the uncovered places of the perimeter where it is said."""

    claim: Claim
    places: tuple[tuple[str, int], ...]  # (note slug, element index)


@dataclass
class ArticleAudit:
    """Attributes:
        perimeter_notes: the perimeter's notes; ``None`` when unknown (a synthesis
            with no recorded perimeter).
        perimeter_source: ``live`` (recomputed now), ``recorded`` (frozen) or ``unknown``.
        perimeter_extractions: ids in the perimeter (``None`` when unknown).
        discarded: perimeter − cited, or ``None`` (refusal: perimeter unknown).
        changed: cited extractions of an adopted act whose passage changed since.
        numbers: source (kind, id) → display number, by first appearance.
        status: ``wiki``, ``draft``, ``adopted`` or ``superseded``.
    """

    slug: str
    kind: NoteType
    claims: list[Claim]
    links: list[CitationLink]
    numbers: dict[tuple[str, str], int]
    perimeter_notes: list[str] | None
    perimeter_source: str
    perimeter_extractions: list[str] | None
    discarded: list[DiscardedItem] | None
    coverage: dict[str, Coverage]
    said_here: list[SaidHere]
    changed: list[str] = field(default_factory=list)
    status: ActStatus = ActStatus.WIKI
    superseded_by: list[str] = field(default_factory=list)
    supersedes: str | None = None


def default_spec(note: Note) -> PerimeterSpec | None:
    """A perimeter stated nowhere is the article's first notebook, filtered by the
    categories the article has there."""
    if not note.memberships:
        return None
    first = note.memberships[0]
    return PerimeterSpec(first.notebook, dict(first.categories), first.line)


R = TypeVar("R")

Made = Callable[[str, Callable[[], str], Callable[[], R]], R]
"""``made(slug, key, compute)`` is ``compute()``, made however the caller likes: a build recalls
it by ``key()``, the digest of everything it reads (declared here, beside the code that reads
it: :meth:`_Lookup.key`, :meth:`_Lookup.claims`)."""


def made_here(slug: str, key: Callable[[], str], compute: Callable[[], R]) -> R:
    """A :data:`Made` that makes everything, here and now."""
    return compute()


def audit_articles(corpus: Corpus, anchored: Mapping[str, AnchoredNote],
                   audit_of: Made[tuple[ArticleAudit, list[Problem]]] = made_here,
                   claims_of: Made[list[Claim]] = made_here,
                   perimeters: dict[str, str] | None = None) -> tuple[dict[str, ArticleAudit], list[Problem]]:
    """Every article's audit, with the problems it finds. A wiki's or synthesis's audit is made
    by ``audit_of`` with its key (what it reads: :meth:`_Lookup.key`), so that a build can recall
    it and an edit elsewhere neither parses the article nor anchors its perimeter again; its
    claims, by ``claims_of``. ``perimeters`` (when given) receives, for each article whose key
    was taken, the key of its live perimeter's extractions (:meth:`_Lookup._perimeter_holders`)."""
    problems: list[Problem] = []
    extraction_of, comment_of = corpus.holders.extraction, corpus.holders.comment
    articles = {slug: note for slug, note in corpus.notes.items() if note.type is not NoteType.NOTE}
    succession = superseded_by({slug: n.article.supersedes for slug, n in articles.items()
                                if n.type is NoteType.SYNTHESIS and n.article})
    lookup = _Lookup(corpus, claims_of, extraction_of, comment_of, succession)
    audits = {}
    for slug, note in articles.items():
        if note.type is NoteType.ANSWER:
            audits[slug] = _audit_answer(note, corpus, anchored, problems)
            continue

        def compute(note: Note = note) -> tuple[ArticleAudit, list[Problem]]:
            found: list[Problem] = []
            made = _audit(note, lookup.claims(note, anchored), corpus, anchored, extraction_of, comment_of,
                          succession, found, lookup.live)
            return made, found

        audit, found = audit_of(slug, functools.partial(lookup.key, note, anchored), compute)
        if perimeters is not None and slug in lookup.perimeter_keys:
            perimeters[slug] = lookup.perimeter_keys[slug]
        audits[slug] = audit
        problems += found
    return audits, problems


class _Lookup:
    """What the audits of one build share: each perimeter's notes (wikis share perimeters),
    each article's claims and key (read once for both its key and its audit)."""

    def __init__(self, corpus: Corpus, claims_of: Made[list[Claim]], extraction_of: dict[str, tuple[Note, Extraction]],
                 comment_of: dict[str, tuple[Note, Extraction]], succession: dict[str, list[str]]) -> None:
        self.corpus, self.claims_of, self.succession = corpus, claims_of, succession
        self.extraction_of, self.comment_of = extraction_of, comment_of
        self._perimeters: dict[str, list[str]] = {}
        self._indexes: dict[str, NotebookIndex] = {}
        self._claims: dict[str, list[Claim]] = {}
        self._keys: dict[str, str] = {}
        self._held: dict[tuple[str, ...], tuple[set[str], str]] = {}
        self.perimeter_keys: dict[str, str] = {}  # article → its live perimeter's key, as its key is made

    def live(self, spec: PerimeterSpec) -> list[str]:
        """The notes the perimeter holds now (:func:`live_perimeter`), found once a build."""
        shared = repr((spec.notebook, sorted((axis, sorted(values)) for axis, values in spec.categories.items())))
        if shared not in self._perimeters:
            if spec.notebook not in self._indexes:  # one a notebook: the wikis on it share it
                self._indexes[spec.notebook] = NotebookIndex.of(self.corpus, spec.notebook)
            self._perimeters[shared] = live_perimeter(self.corpus, spec, self._indexes[spec.notebook])
        return self._perimeters[shared]

    def claims(self, note: Note, anchored: Mapping[str, AnchoredNote]) -> list[Claim]:
        """The article's claims, read from its body, recalled by its files alone."""
        if note.slug not in self._claims:
            self._claims[note.slug] = self.claims_of(
                note.slug, lambda: digest_of(("claims", note.slug, self.corpus.source_of(note.slug))),
                lambda: read_claims(note.slug, anchored[note.slug].document.tokens, note.body_line))
        return self._claims[note.slug]

    def key(self, note: Note, anchored: Mapping[str, AnchoredNote]) -> str:
        """Everything a wiki's or synthesis's audit reads: its own files; its perimeter's
        notes (live: which notes the definition holds now) and their files; which note holds
        each extraction or comment it cites or that its perimeter or record names, and
        those notes' files; the act it supersedes (its type) and the acts superseding it."""
        if note.slug in self._keys:
            return self._keys[note.slug]
        corpus = self.corpus
        spec: ArticleSpec = note.article
        perimeter = spec.perimeter or default_spec(note)
        known = perimeter.notebook in corpus.notebooks if perimeter else None
        live = self.live(perimeter) if perimeter and known else None
        frozen = [e.id for e in spec.recorded.extractions] if spec.recorded else []
        named = [*((m.kind, m.key) for claim in self.claims(note, anchored) for m in claim.markers),
                 *((WikiKind.EXT, e) for e in frozen)]
        holders = [(kind, key, self._holder(kind, key)) for kind, key in named]
        perimeter_notes, perimeter_key = self._perimeter_holders(live or [])
        if live is not None:
            self.perimeter_keys[note.slug] = perimeter_key
        # the perimeter's notes' files are in its key: only the other notes involved are digested here
        involved = {*(spec.recorded.notes if spec.recorded else ()),
                    *(holder for _kind, _key, holder in holders if holder)} - perimeter_notes
        target = corpus.notes.get(spec.supersedes) if spec.supersedes else None
        self._keys[note.slug] = digest_of((
            "audit", note.slug, note.source.file, corpus.source_of(note.slug), known, live, holders, perimeter_key,
            sorted((slug, corpus.source_of(slug)) for slug in involved if slug in corpus.notes),
            self.succession.get(note.slug), spec.supersedes, target.type if target else None))
        return self._keys[note.slug]

    def _perimeter_holders(self, live: list[str]) -> tuple[set[str], str]:
        """The notes holding or giving a perimeter's extractions (those holding one outside
        it: an id given twice) and the perimeter's key, found once a build for every wiki on
        the perimeter. The key digests the ids, which note holds each, and those notes'
        files: whatever reads the perimeter's extractions by id (their quotes, comments)
        through :attr:`Corpus.extractions`, which gives the holder's, reads nothing else of
        the corpus (a wiki's selection is recalled by it). When no id is given twice in the
        whole corpus, the ids and their holders are a function of the perimeter's notes'
        files: they are not listed."""
        shared = tuple(live)
        if shared not in self._held:
            corpus = self.corpus
            notes = set(live)
            if corpus.holders.unique:  # each id held by the note giving it: ids and holders are the notes'
                held = "unique"
            else:
                ids = perimeter_extractions(corpus, live)
                holders = [self._holder(WikiKind.EXT, e) for e in ids]
                notes |= {h for h in holders if h}
                held = digest_of((ids, holders))
            sources = sorted((slug, corpus.source_of(slug)) for slug in notes if slug in corpus.notes)
            self._held[shared] = (notes, digest_of(("perimeter", held, sources)))
        return self._held[shared]

    def _holder(self, kind: WikiKind, key: str) -> str | None:
        holder = (self.extraction_of if kind is WikiKind.EXT else self.comment_of).get(key)
        return holder[0].slug if holder else None


def passage_hash(elements: list[Element], indexes: Iterable[int]) -> str:
    """The hash of the whole elements a quote lands in (what ``carnet ask --save`` records,
    and what a build compares to tell that a saved answer's cited passage changed)."""
    return text_hash(SEPARATOR.join(elements[i].text for i in sorted(set(indexes))))


def _audit_answer(note: Note, corpus: Corpus, anchored: Mapping[str, AnchoredNote], problems: list[Problem]) -> ArticleAudit:
    """A saved answer's audit: its quotes anchored again, in the notes as they are now
    (INV-6: exactly or not at all); its perimeter the passages it retrieved; discarded,
    the retrieved passages no quote lands in (INV-4)."""
    file = note.source.file
    record: AnswerRecord = note.article.answer
    claims = read_claims(note.slug, anchored[note.slug].document.tokens, note.body_line)
    quotes = {q.id: q for q in record.quotes}
    placed = {q.id: _place(q, note.slug, file, corpus, anchored, problems) for q in record.quotes}
    changed = sorted(q for q, place in placed.items() if place.moved)
    involved = {q.note for q in record.quotes} | {r.note for r in record.retrieved}
    hidden = masked_elements({slug: corpus.notes[slug] for slug in sorted(involved) if slug in corpus.notes}, anchored)
    masked = {q for q, place in placed.items()
              if hidden.get(quotes[q].note, frozenset()) & {p.element for p in place.portions}}
    for quote_id in sorted(masked):
        problems.append(Problem(file, quotes[quote_id].line, "masked-quote",
                                f"quote {quote_id!r} of answer {note.slug!r} lands in a passage of note "
                                f"{quotes[quote_id].note!r} that a masked extraction covers: it is not published",
                                "Ask the question again, or unmask the passage.", Severity.WARNING))
    links: list[CitationLink] = []
    numbers: dict[tuple[str, str], int] = {}
    for claim in claims:
        for marker in claim.markers:
            quote = quotes.get(marker.key) if marker.kind is WikiKind.QUOTE else None
            if quote is None:
                if marker.kind is not WikiKind.QUOTE:
                    problems.append(Problem(file, marker.line, "broken-citation",
                                            f"[[{marker.kind}:{marker.key}]]: an answer cites its own quotes",
                                            "Cite with [[quote:ID]] a quote listed under 'asked: quotes:'.",
                                            Severity.WARNING))
                links.append(CitationLink(note.slug, claim.section, claim.rank, claim.id, claim.text, marker,
                                          "", "", (), SourceState.DELETED, "unknown"))
                continue
            place = placed[quote.id]
            if quote.id in masked:  # the collective masked the passage since: it is cited nowhere (INV-12)
                links.append(CitationLink(note.slug, claim.section, claim.rank, claim.id, claim.text, marker,
                                          quote.note, "", (), SourceState.DELETED, "masked"))
                continue
            numbers.setdefault((marker.kind, marker.key), len(numbers) + 1)
            links.append(CitationLink(note.slug, claim.section, claim.rank, claim.id, claim.text, marker,
                                      quote.note, "", place.portions, place.state, "", element=place.element,
                                      text=place.text))
    # the perimeter: every passage retrieved; discarded: those no quote lands in
    cited = {(link.note, anchored[link.note].document.elements[p.element].id)
             for link in links if link.portions for p in link.portions}
    # and the passages the quotes were saved from, even if they changed since (the flag says so)
    cited |= {(quotes[link.marker.key].note, quotes[link.marker.key].passage.partition("#")[2])
              for link in links if link.marker.kind is WikiKind.QUOTE and link.marker.key in quotes and not link.broken}
    notes = sorted({r.note for r in record.retrieved if r.note in corpus.notes
                    and corpus.notes[r.note].type is NoteType.NOTE})
    items = []
    for item in record.retrieved:
        if (item.note, item.element) in cited:
            continue
        index = _element(anchored, item.note, item.element)
        if index is not None and index in hidden.get(item.note, frozenset()):
            index = None  # masked since: neither its text nor its place is shown
        text = anchored[item.note].document.elements[index].text if index is not None else ""
        items.append(DiscardedItem(item.element, item.note, text, index is not None, 0, 0, passage=True))
    covered = _perimeter_coverage(notes, corpus, anchored)
    said = [SaidHere(claim, _said_here(claim, notes, corpus, anchored, covered))
            for claim in claims if not claim.sourced]
    for quote_id in (q for q in changed if placed[q].state is SourceState.PRESENT):  # the others are said above
        problems.append(Problem(file, quotes[quote_id].line, "changed-evidence",
                                f"the passage quote {quote_id!r} cites changed since the answer was saved",
                                "Check that the answer still stands on it, or ask again.", Severity.WARNING))
    return ArticleAudit(note.slug, note.type, claims, links, numbers, notes, "retrieved",
                        [r.passage for r in record.retrieved], items, covered, said, changed=changed, status=ActStatus.ANSWER)


def _element(anchored: Mapping[str, AnchoredNote], note: str, element_id: str) -> int | None:
    """The index of the element ``element_id`` in ``note`` (``None``: no longer there)."""
    if note not in anchored:
        return None
    return next((i for i, e in enumerate(anchored[note].document.elements) if e.id == element_id), None)


class _Placed(NamedTuple):
    """Where a saved quote lands now: its state, portions, the first element's id, the
    note's text there, and whether its passage changed since the answer was saved."""

    state: SourceState
    portions: tuple[Portion, ...]
    element: str
    text: str
    moved: bool


def _place(quote: AnswerQuote, answer: str, file: str, corpus: Corpus, anchored: Mapping[str, AnchoredNote],
           problems: list[Problem]) -> _Placed:
    """Where a saved quote lands now (see :class:`_Placed`)."""
    source = corpus.notes.get(quote.note)
    if source is None or source.type is not NoteType.NOTE or quote.note not in anchored:
        problems.append(Problem(file, quote.line, "deleted-evidence",
                                f"quote {quote.id!r} of answer {answer!r} cites note {quote.note!r}, "
                                + ("which is no longer there" if source is None else "which is no ordinary note"),
                                "Ask the question again: the answer's evidence is gone.", Severity.WARNING))
        return _Placed(SourceState.DELETED, (), "", "", True)
    elements = anchored[quote.note].document.elements
    anchor = resolve_quote(project(elements), elements, quote.quote)
    if anchor.status is not AnchorStatus.ANCHORED:  # relocated is not the words quoted: never guessed
        problems.append(Problem(file, quote.line, "detached-quote",
                                f"quote {quote.id!r} of answer {answer!r} is no longer found as written in note "
                                f"{quote.note!r} ({anchor.reason or anchor.status.value})",
                                "The note changed: ask the question again, or restore the passage.", Severity.WARNING))
        return _Placed(SourceState.DETACHED, (), "", "", True)
    moved = passage_hash(elements, (p.element for p in anchor.portions)) != quote.sha256
    return _Placed(SourceState.PRESENT, anchor.portions, elements[anchor.portions[0].element].id,
                   portions_text(elements, anchor.portions), moved)


def _audit(note: Note, claims: list[Claim], corpus: Corpus, anchored: Mapping[str, AnchoredNote],
           extraction_of: dict[str, tuple[Note, Extraction]], comment_of: dict[str, tuple[Note, Extraction]],
           succession: dict[str, list[str]], problems: list[Problem],
           live: Callable[[PerimeterSpec], list[str]]) -> ArticleAudit:
    file = note.source.file
    spec: ArticleSpec = note.article
    is_synthesis = note.type is NoteType.SYNTHESIS

    # the perimeter: recorded (frozen) for a synthesis, else recomputed from its definition
    perimeter = spec.perimeter or default_spec(note)
    frozen = {e.id: e for e in spec.recorded.extractions} if spec.recorded else {}
    if perimeter and perimeter.notebook not in corpus.notebooks:
        problems.append(Problem(file, perimeter.line, "unknown-notebook",
                                f"the perimeter names notebook {perimeter.notebook!r}, which does not exist",
                                "Fix the notebook's slug in 'perimeter:'."))
        perimeter = None
    if is_synthesis and spec.recorded is not None:
        perimeter_source = "recorded"
        notes: list[str] | None = list(spec.recorded.notes)
        ids: list[str] | None = [e.id for e in spec.recorded.extractions]
    elif is_synthesis and (spec.adopted or perimeter is None):
        perimeter_source, notes, ids = "unknown", None, None
    elif perimeter is not None:
        perimeter_source = "live"
        notes = list(live(perimeter))
        ids = perimeter_extractions(corpus, notes)
    else:
        perimeter_source, notes, ids = "unknown", None, None
    in_perimeter = set(ids) if ids is not None else None

    # the citation index, rebuilt from the markers (INV-1, INV-2, INV-3)
    links: list[CitationLink] = []
    numbers: dict[tuple[str, str], int] = {}
    for claim in claims:
        for marker in claim.markers:
            holder = extraction_of.get(marker.key) if marker.kind is WikiKind.EXT else comment_of.get(marker.key)
            broken, state, source_note, extraction_id = "", SourceState.PRESENT, "", ""
            portions: tuple[Portion, ...] = ()
            if holder is None:
                if marker.kind is WikiKind.EXT and marker.key in frozen:
                    state, source_note, extraction_id = SourceState.DELETED, frozen[marker.key].note, marker.key
                else:
                    state, broken = SourceState.DELETED, "unknown"
            else:
                source, extraction = holder
                source_note, extraction_id = source.slug, extraction.id
                anchor = anchored[source.slug].anchors[extraction.id]
                state = SourceState.PRESENT if anchor.status.is_live else SourceState.DETACHED
                portions = anchor.portions
                if source.type is not NoteType.NOTE:
                    broken = "article"
                    problems.append(Problem(file, marker.line, "broken-citation",
                                            f"[[{marker.kind}:{marker.key}]] points into {source.type.value} "
                                            f"{source.slug!r}: a synthesis is never a source (INV-3)",
                                            "Cite the extraction of the ordinary note the article relies on.",
                                            Severity.WARNING))
                elif in_perimeter is not None and extraction.id not in in_perimeter and not extraction.masked:
                    broken = "outside"
                    problems.append(Problem(file, marker.line, "broken-citation",
                                            f"[[{marker.kind}:{marker.key}]] is outside the article's perimeter "
                                            f"(note {source.slug!r})",
                                            "Cite evidence from the perimeter, or widen the perimeter.",
                                            Severity.WARNING))
            if not broken:
                numbers.setdefault((marker.kind, marker.key), len(numbers) + 1)
            links.append(CitationLink(note.slug, claim.section, claim.rank, claim.id, claim.text, marker,
                                      source_note, extraction_id, portions, state, broken))

    # discarded = perimeter − cited (INV-4), debated first
    cited = {link.extraction for link in links if link.marker.kind is WikiKind.EXT and not link.broken}
    discarded = None
    if ids is not None:
        items = []
        for extraction_id in ids:
            if extraction_id in cited:
                continue
            holder = extraction_of.get(extraction_id)
            if holder is not None:
                source, extraction = holder
                items.append(DiscardedItem(extraction_id, source.slug, extraction.quote, True,
                                           len(extraction.live_comments), extraction.disagreements))
            elif extraction_id in frozen:
                item = frozen[extraction_id]
                items.append(DiscardedItem(extraction_id, item.note, item.quote, False, 0, 0))
        discarded = sorted(items, key=lambda i: (-i.disagreements, -i.comments, i.note, i.extraction))

    # coverage of the perimeter's notes, and unsourced claims said there but never extracted
    covered = _perimeter_coverage(notes or [], corpus, anchored)
    said = [SaidHere(claim, _said_here(claim, notes or [], corpus, anchored, covered))
            for claim in claims if not claim.sourced]

    audit = ArticleAudit(note.slug, note.type, claims, links, numbers, notes, perimeter_source, ids, discarded,
                         covered, said)
    if is_synthesis:
        _lifecycle(note, audit, frozen, extraction_of, corpus, succession, problems)
    return audit


def _perimeter_coverage(notes: list[str], corpus: Corpus, anchored: Mapping[str, AnchoredNote]) -> dict[str, Coverage]:
    """The coverage of each note of a perimeter by its unmasked extractions (INV-5)."""
    covered: dict[str, Coverage] = {}
    for slug in notes:
        if slug in corpus.notes and slug in anchored:
            live_anchors = [anchored[slug].anchors[e.id] for e in corpus.notes[slug].extractions if not e.masked]
            covered[slug] = coverage(anchored[slug].document.elements, live_anchors)
    return covered


def _said_here(claim: Claim, notes: list[str], corpus: Corpus, anchored: Mapping[str, AnchoredNote],
               covered: dict[str, Coverage]) -> tuple[tuple[str, int], ...]:
    """Uncovered places of the perimeter holding the claim's quoted fragment, or (with no
    fragment) uncovered elements holding most of its content words."""
    fragments = [normalise_quote(f) for f in quoted_fragments(claim.text)]
    words = content_words(claim.text)
    places = []
    for slug in notes:
        if slug not in anchored or slug not in covered:
            continue
        anchors = [anchored[slug].anchors[e.id] for e in corpus.notes[slug].extractions if not e.masked]
        for index, element in enumerate(anchored[slug].document.elements):
            if fragments:
                text, origin = normalise(element.text)
                for fragment in fragments:
                    start = text.find(fragment)
                    if start < 0:
                        continue
                    begin, end = origin[start], origin[start + len(fragment) - 1] + 1
                    if not any(a.status.is_live and p.element == index and p.start < end and begin < p.end
                               for a in anchors for p in a.portions):
                        places.append((slug, index))
                        break
            elif (words and index not in covered[slug].covered
                  and len(words & content_words(element.text)) / len(words) >= SAID_HERE_SHARE):
                places.append((slug, index))
    return tuple(places)


def _lifecycle(note: Note, audit: ArticleAudit, frozen: dict[str, FrozenExtraction],
               extraction_of: dict[str, tuple[Note, Extraction]], corpus: Corpus,
               succession: dict[str, list[str]], problems: list[Problem]) -> None:
    file, spec = note.source.file, note.article
    problems.extend(history_problems(file, spec.history))
    audit.supersedes = spec.supersedes
    audit.superseded_by = succession.get(note.slug, [])
    audit.status = (ActStatus.SUPERSEDED if audit.superseded_by else
                    ActStatus.ADOPTED if spec.adopted else ActStatus.DRAFT)
    if spec.supersedes:
        target = corpus.notes.get(spec.supersedes)
        if target is None or target.type is not NoteType.SYNTHESIS:
            problems.append(Problem(file, note.field_lines.get("supersedes", 1), "unknown-synthesis",
                                    f"'supersedes' names {spec.supersedes!r}, which is not a directed synthesis",
                                    "Name the slug of the synthesis this act replaces."))
        elif spec.supersedes == note.slug:
            problems.append(Problem(file, note.field_lines.get("supersedes", 1), "lifecycle",
                                    "a synthesis cannot supersede itself", "Name the older act."))
    if spec.adopted and spec.adoption is None:
        problems.append(Problem(file, note.field_lines.get("history", 1), "lifecycle",
                                "the history says adopted but the act has no adoption record",
                                "Adopt it with 'carnet adopt', which records who, when and the integrity hash."))
    if spec.adoption is not None and not spec.adopted:
        problems.append(Problem(file, spec.adoption.line, "lifecycle",
                                "the act has an adoption record but its history never says adopted",
                                "Let 'carnet adopt' write both."))
    if spec.adoption is None:
        return
    expected = adoption_hash(note.body, spec.raw.get("perimeter"), spec.raw.get("proposed"),
                             spec.adoption.by, spec.adoption.date)
    if spec.adoption.hash != expected:
        problems.append(Problem(file, spec.adoption.line, "adopted-act-changed",
                                f"the adopted synthesis {note.slug!r} was changed after its adoption "
                                "(its body or adoption block no longer matches the recorded hash)",
                                "Adopted acts are immutable: restore it, and write a new synthesis that "
                                "supersedes it."))
    cited = {link.extraction for link in audit.links if link.marker.kind is WikiKind.EXT}
    for extraction_id, item in sorted(frozen.items()):
        holder = extraction_of.get(extraction_id)
        if holder is None and extraction_id in cited:
            problems.append(Problem(file, spec.recorded.line, "deleted-evidence",
                                    f"extraction {extraction_id!r} cited by the adopted synthesis {note.slug!r} "
                                    f"no longer exists (it was in note {item.note!r})",
                                    "Restore the extraction: the evidence of an adopted act cannot disappear."))
        elif holder is None:
            problems.append(Problem(file, spec.recorded.line, "deleted-evidence",
                                    f"extraction {extraction_id!r}, proposed to the adopted synthesis "
                                    f"{note.slug!r} and left out by it, no longer exists",
                                    "Its frozen quote still shows among the discarded evidence.", Severity.NOTICE))
        elif quote_hash(holder[1].quote) != item.sha256:
            audit.changed.append(extraction_id)
            problems.append(Problem(file, spec.recorded.line, "changed-evidence",
                                    f"the passage of extraction {extraction_id!r} changed since the synthesis "
                                    f"{note.slug!r} was adopted", "Check that the act still stands on it.",
                                    Severity.WARNING))
