"""The writes of the edit layer, each one change through the write seam.

An :class:`Editor` belongs to one run of ``carnet serve --edit``: its per-run secret,
the author its records carry, and the history its undo takes back. Every operation
names a note by its slug and records by their ids (never a path), carries the digest
of the note's files the page was built from (:meth:`Editor.page_digest`): a file
changed on disk since is refused, never overwritten. Each write is checked by
:mod:`generator.writes` (read back, compared, no record moved, no new problem) and
made journaled and atomic; a new extraction is confirmed anchored exactly where the
selection lay, or the change is put back. Verdicts and contestations are keyed by the
build's own claims and pairs; proposals are applied, and syntheses adopted, by the
commands' own code (``carnet apply``, ``carnet adopt``).
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import hmac
import json
import secrets
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from generator.anchoring import AnchorStatus, anchor_note
from generator.anchoring.fix import render_scalar
from generator.authoring.membership import Memberships, set_notebooks
from generator.authoring.nested import append_comment, set_masked, withdraw_comment
from generator.authoring.selection import End, Placed, Unplaced, place_selection
from generator.corpus.load import EXTRACTIONS_SUFFIX, SETTINGS_FILE, ContentFiles, load_corpus, parse_content
from generator.corpus.model import Note, Notebook, NoteType, Stance
from generator.files import read_text_file
from generator.journal import Change
from generator.problems import CarnetError
from generator.synthesis.audit import ArticleAudit
from generator.verification.assess import Assessment
from generator.writes import (
    ContentChange,
    PlannedWrite,
    WriteError,
    WriteRefused,
    appended,
    read_back,
    written_records,
)
from generator.yamledit import EditError, block_item

COMMAND = "carnet serve --edit"
MAX_NAME = 200
"""Longest author name, kind or id a request may give."""
MAX_TEXT = 20_000
"""Longest comment or reason a request may give (characters)."""
UNDO_DEPTH = 50
"""Writes of this run that undo can take back, latest first."""


class Status(IntEnum):
    """The HTTP status of a refused operation."""

    BAD_REQUEST = 400
    FORBIDDEN = 403
    NOT_FOUND = 404
    CONFLICT = 409
    UNPROCESSABLE = 422


class EditRefused(CarnetError):
    """An operation refused before anything was written; ``code`` names the reason for the page."""

    def __init__(self, status: Status, message: str, code: str = "refused") -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass(frozen=True)
class Done:
    """What an operation wrote: the files (content-relative) and the record it made or changed."""

    message: str
    files: tuple[str, ...]
    record: str = ""


@dataclass(frozen=True)
class Undo:
    """How to take back one write: each file's bytes before it (None: it did not exist)
    and the digest of what the write left there."""

    what: str
    before: dict[str, bytes | None]
    after: dict[str, str | None]


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _text_field(body: dict[str, Any], key: str, limit: int = MAX_NAME, required: bool = True,
                one_line: bool = True) -> str:
    """A string of the request, NFC and trimmed; a missing, wrong or over-long one refused."""
    value = body.get(key, "")
    if not isinstance(value, str):
        raise EditRefused(Status.BAD_REQUEST, f"'{key}' must be text")
    value = unicodedata.normalize("NFC", value).strip()
    if required and not value:
        raise EditRefused(Status.BAD_REQUEST, f"'{key}' is missing", f"missing-{key}")
    if len(value) > limit:
        raise EditRefused(Status.BAD_REQUEST, f"'{key}' is longer than {limit} characters")
    bad = [c for c in value if (ord(c) < 32 and not (c in "\n\t" and not one_line)) or c in "\x7f\ufeff\u2028\u2029"]
    if bad:
        raise EditRefused(Status.BAD_REQUEST, f"'{key}' holds a control character")
    return value


def _end(body: dict[str, Any], key: str, context: str) -> End:
    value = body.get(key)
    if not isinstance(value, dict):
        raise EditRefused(Status.BAD_REQUEST, f"'{key}' must give the element and the text {context} it")
    element = _text_field(value, "element")
    text = value.get("context", "")
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise EditRefused(Status.BAD_REQUEST, f"'{key}.context' must be text of at most {MAX_TEXT} characters")
    return End(element, unicodedata.normalize("NFC", text))


class Editor:
    """The edit layer of one ``carnet serve --edit`` run over ``content``."""

    def __init__(self, content: Path, author: str | None = None,
                 today: Callable[[], dt.date] = dt.date.today) -> None:
        self.content = content
        self.author = author.strip() if author and author.strip() else None
        self.today = today
        self.secret = secrets.token_urlsafe(32)
        # what the page sends in its request header: derived, so the cookie's secret never reaches a script
        self.token = hmac.new(self.secret.encode(), b"carnet-edit-token", hashlib.sha256).hexdigest()
        self.lock = threading.Lock()  # one write at a time: each reads the files it then writes
        self.history: list[Undo] = []
        self._notes: dict[str, str] = {}

    # --- naming: slug → files ---------------------------------------------------------

    def note_rel(self, slug: str) -> str | None:
        """The note ``slug``'s file (content-relative), found by its name under notes/."""
        rel = self._notes.get(slug)
        if rel is None or not (self.content / rel).is_file():
            notes = self.content / "notes"
            self._notes = {p.stem: p.relative_to(self.content).as_posix()
                           for p in sorted(notes.rglob("*.md")) if p.is_file() and not p.name.startswith(".")} \
                if notes.is_dir() else {}
            rel = self._notes.get(slug)
        return rel

    def page_files(self, slug: str) -> list[str]:
        """The files a note's page is built from that the edit layer writes (its proposals' too)."""
        rel = self.note_rel(slug)
        if rel is None:
            return []
        return [rel, rel.removesuffix(".md") + EXTRACTIONS_SUFFIX, f"verdicts/{slug}.yaml", f"contestations/{slug}.yaml",
                *(p.relative_to(self.content).as_posix()
                  for p in self._proposal_files(slug) + self._proposal_files(slug, "extractions"))]

    def _proposal_files(self, slug: str, kind: str = "sections") -> list[Path]:
        """The proposal files of the note ``slug`` (section operations, or extractions; not the
        fingerprints record of the analyses)."""
        from generator.corpus.analysed import RECORD_NAME

        folder = self.content / "proposals" / kind / slug
        return sorted(p for p in folder.glob("*.yaml") if p.is_file() and not p.name.startswith(".")
                      and p.name != RECORD_NAME) if folder.is_dir() else []

    def page_info(self, slug: str) -> dict[str, Any]:
        """What the page's edit layer needs to know of the note beyond its page: its type, and
        whether it is a synthesis a person may adopt."""
        rel = self.note_rel(slug)
        if rel is None:
            return {}
        try:
            note = self._parsed(rel, rel.removesuffix(".md") + EXTRACTIONS_SUFFIX)
        except EditRefused:
            return {}
        spec = note.article
        adoptable = note.type is NoteType.SYNTHESIS and spec is not None and not spec.adopted \
            and spec.adoption is None
        notebooks = self._notebooks(note)
        shown = [{"slug": m.notebook, "title": notebooks[m.notebook].title,
                  "axes": [{"key": axis.key, "title": axis.title, "categories": list(axis.categories),
                            "checked": list(m.categories.get(axis.key, ()))} for axis in notebooks[m.notebook].axes]}
                 for m in note.memberships if m.notebook in notebooks and notebooks[m.notebook].axes]
        return {"type": note.type.value, "adoptable": adoptable, "notebooks": shown}

    def _notebooks(self, note: Note) -> dict[str, Notebook]:
        """The notebooks ``note`` belongs to, as the build loads them (those whose file is missing left out)."""
        files = ContentFiles(settings=self._read(SETTINGS_FILE))
        for membership in note.memberships:
            rel = f"notebooks/{membership.notebook}.yaml"
            data = self._read(rel) if "/" not in membership.notebook and membership.notebook not in ("", ".", "..") \
                else None
            if data is not None:
                files.notebooks[rel] = data
        corpus, _problems = parse_content(files)
        return corpus.notebooks

    def _read(self, rel: str) -> bytes | None:
        path = self.content / rel
        return path.read_bytes() if path.is_file() else None

    def page_digest(self, slug: str) -> str | None:
        """The digest of the note's files as they are now (None: no such note)."""
        files = self.page_files(slug)
        if not files:
            return None
        digest = hashlib.sha256()
        for rel in files:
            data = self._read(rel)
            digest.update(rel.encode() + b"\0" + (b"-" if data is None else b"+" + hashlib.sha256(data).digest()))
        return digest.hexdigest()

    # --- common checks ----------------------------------------------------------------

    def _who(self, body: dict[str, Any]) -> str:
        if self.author:
            return self.author
        name = _text_field(body, "author", required=False)
        if not name:
            raise EditRefused(Status.BAD_REQUEST, "say who you are: the name your records will carry "
                              "(or start 'carnet serve --edit --as NAME')", "author-needed")
        return name

    def _not_busy(self) -> None:
        """No other command's change under way, or left half made, in the content: its undo
        journal would be overwritten, and what it holds is needed to put its files back."""
        from generator.journal import interrupted

        command = interrupted(self.content)
        if command is not None:
            raise EditRefused(Status.CONFLICT, f"'{command}' is changing the content, or was interrupted and left a "
                              "change half made: nothing was written; wait for it to end (or run it again, which puts "
                              "its files back first), then try again", "busy")

    def _note(self, body: dict[str, Any]) -> tuple[str, str]:
        """The note the request names (slug, file), checked unchanged since the page was loaded."""
        self._not_busy()
        slug = _text_field(body, "note")
        rel = self.note_rel(slug)
        if rel is None:
            raise EditRefused(Status.NOT_FOUND, f"there is no note {slug!r}")
        if body.get("digest") != self.page_digest(slug):
            raise EditRefused(Status.CONFLICT, f"{rel} or its records changed on disk since the page was loaded: "
                              "nothing was written; reload the page and try again", "stale")
        return slug, rel

    def _parsed(self, rel: str, sidecar: str) -> Note:
        files = ContentFiles(settings=self._read(SETTINGS_FILE))
        files.notes[rel] = self._read(rel) or b""
        data = self._read(sidecar)
        if data is not None:
            files.extractions[sidecar] = data
        corpus, _problems = parse_content(files)
        note = next(iter(corpus.notes.values()), None)
        if note is None:
            raise EditRefused(Status.CONFLICT, f"{rel} does not load now; fix it (carnet check) and reload", "broken")
        return note

    def _taken(self) -> set[str]:
        """The ids a new record must not get: the content loaded, not analysed (no anchoring)."""
        from generator.commands.analyse import taken_ids

        return taken_ids(self.content, load_corpus(self.content)[0])

    def _write(self, what: str, write: PlannedWrite, confirm: Callable[[], None] | None = None,
               also: tuple[PlannedWrite, ...] = ()) -> None:
        """``write`` and ``also`` made together (one change: all or none), undone together."""
        writes = (write, *also)
        before = {w.rel: self._read(w.rel) for w in writes}
        try:
            with ContentChange(self.content, f"{COMMAND}: {what}") as change:
                for each in writes:
                    change.write(each)
                if confirm:
                    confirm()
        except WriteError as exc:
            raise EditRefused(Status.CONFLICT, str(exc), "write-refused") from exc
        self.history = [*self.history, Undo(what, before, {w.rel: _digest(w.data) for w in writes})][-UNDO_DEPTH:]

    def _sidecar(self, rel: str) -> tuple[str, bytes, dict[str, Any]]:
        """The note's extractions file: its path, bytes and value (a mapping)."""
        sidecar = rel.removesuffix(".md") + EXTRACTIONS_SUFFIX
        data = self._read(sidecar)
        if data is None:
            raise EditRefused(Status.NOT_FOUND, "the note has no extractions yet")
        value, _problems = read_back(sidecar, data)
        if not isinstance(value, dict) or not isinstance(value.get("extractions"), list):
            raise EditRefused(Status.CONFLICT, f"{sidecar} does not read as a list of extractions now; fix it first")
        return sidecar, data, value

    @staticmethod
    def _find(value: dict[str, Any], extraction: str) -> int:
        index = next((i for i, item in enumerate(value["extractions"])
                      if isinstance(item, dict) and item.get("id") == extraction), None)
        if index is None:
            raise EditRefused(Status.NOT_FOUND, f"the note has no extraction {extraction!r}")
        return index

    @staticmethod
    def _edited(sidecar: str, data: bytes, edit: Callable[[str], str]) -> bytes:
        read, _problems = read_text_file(data, sidecar)
        if read is None:
            raise EditRefused(Status.CONFLICT, f"{sidecar} is not UTF-8 text now; fix it first")
        try:
            return read.encode(edit(read.text))
        except EditError as exc:
            raise EditRefused(Status.CONFLICT, f"{sidecar}: {exc}; nothing was written", "layout") from exc

    @staticmethod
    def _new_id(taken: set[str], stem: str) -> str:
        n = 1
        while f"{stem}-{n}" in taken:
            n += 1
        return f"{stem}-{n}"

    def _comment(self, body: dict[str, Any], author: str, taken: set[str], slug: str) -> dict[str, Any]:
        stance = _text_field(body, "stance", required=False) or Stance.NEUTRAL.value
        if stance not in {s.value for s in Stance}:
            raise EditRefused(Status.BAD_REQUEST, f"stance {stance!r} is not one of {', '.join(s.value for s in Stance)}")
        text = _text_field(body, "text", MAX_TEXT, one_line=False)
        return {"id": self._new_id(taken, f"c-{slug}"), "author": author, "date": self.today(),
                "stance": stance, "text": text}

    # --- operations ---------------------------------------------------------------------

    def extract(self, body: dict[str, Any]) -> Done:
        """A new extraction over the selection the page sent (see :mod:`.selection`)."""
        with self.lock:
            slug, rel = self._note(body)
            author = self._who(body)
            start, end = _end(body, "start", "before"), _end(body, "end", "after")
            kind = _text_field(body, "kind", required=False) or "passage"
            sidecar = rel.removesuffix(".md") + EXTRACTIONS_SUFFIX
            note = self._parsed(rel, sidecar)
            chosen = self._categories(body, note)
            membership = self._membership_write(rel, chosen) if chosen is not None else None
            elements = anchor_note(note)[0].document.elements
            try:
                placed = place_selection(elements, start, end)
            except Unplaced as exc:
                raise EditRefused(Status.UNPROCESSABLE, f"{exc}; nothing was written", "unplaced") from exc
            taken = self._taken()
            record: dict[str, Any] = {"id": self._new_id(taken, slug), "quote": placed.quote}
            if placed.prefix:
                record["prefix"] = placed.prefix
            if placed.occurrence is not None:
                record["occurrence"] = placed.occurrence
            record.update(kind=kind, author=author, date=self.today())
            first = body.get("comment")
            if isinstance(first, dict) and str(first.get("text", "")).strip():
                record["comments"] = [self._comment(first, author, taken | {record["id"]}, slug)]
            try:
                write = appended(self.content, sidecar, "extractions", [record], render=render_extraction)
            except WriteRefused as exc:
                raise EditRefused(Status.CONFLICT, str(exc), "write-refused") from exc
            self._write(f"extract {record['id']}", write,
                        lambda: self._confirm(rel, sidecar, record["id"], placed),
                        also=(membership,) if membership else ())
            if membership:
                return Done(f"extraction {record['id']} recorded, and the note's categories changed", (sidecar, rel),
                            record["id"])
            return Done(f"extraction {record['id']} recorded", (sidecar,), record["id"])

    def _categories(self, body: dict[str, Any], note: Note) -> Memberships | None:
        """The note's memberships with the categories the request checks (``categories``:
        notebook → axis → names, for notebooks the note is in; an axis left out: none checked),
        each checked against the notebook's axes; None when not given or as they are now."""
        given = body.get("categories")
        if given is None:
            return None
        if not isinstance(given, dict):
            raise EditRefused(Status.BAD_REQUEST, "'categories' must map each notebook to its axes' categories",
                              "category")
        current = {m.notebook: m.categories for m in note.memberships}
        notebooks = self._notebooks(note)
        wanted: Memberships = {}
        for slug, axes in given.items():
            if slug not in current or slug not in notebooks:
                raise EditRefused(Status.BAD_REQUEST, f"the note is not in a notebook {slug!r}: nothing was written "
                                  "(add it to the note's 'notebooks:' by hand)", "category")
            if not isinstance(axes, dict):
                raise EditRefused(Status.BAD_REQUEST, f"'categories.{slug}' must map axes to categories", "category")
            known = {axis.key: axis for axis in notebooks[slug].axes}
            checked: dict[str, list[str]] = {}
            for key, names in axes.items():
                if key not in known:
                    raise EditRefused(Status.BAD_REQUEST, f"notebook {slug!r} has no axis {key!r} (its axes: "
                                      f"{', '.join(known) or 'none'}); nothing was written", "category")
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise EditRefused(Status.BAD_REQUEST, f"'categories.{slug}.{key}' must list categories",
                                      "category")
                unknown = [n for n in names if n not in known[key].categories]
                if unknown:
                    raise EditRefused(Status.BAD_REQUEST, f"{unknown[0]!r} is not a category of the axis {key!r} of "
                                      f"notebook {slug!r}; nothing was written", "category")
                checked[key] = names
            wanted[slug] = {key: [n for n in [*current[slug].get(key, ()), *known[key].categories]
                                  if n in checked.get(key, ())] for key in [*current[slug], *known]
                            if key in known}
            wanted[slug] = {key: list(dict.fromkeys(names)) for key, names in wanted[slug].items()}
        if all({k: set(v) for k, v in wanted[slug].items() if v} == {k: set(v) for k, v in current[slug].items() if v}
               for slug in wanted):
            return None
        # an axis without categories is left out (the loader reads both as none)
        return {slug: {k: v for k, v in wanted.get(slug, {k: list(v) for k, v in axes.items()}).items() if v}
                for slug, axes in current.items()}

    def _membership_write(self, rel: str, memberships: Memberships) -> PlannedWrite:
        """The write of the note ``rel`` with ``memberships`` as its ``notebooks:`` (see
        :mod:`.membership`); what it must mean: its front matter so changed, its body as it is."""
        data = self._read(rel)
        value = read_back(rel, data)[0] if data is not None else None
        if data is None or not isinstance(value, dict) or not isinstance(value.get("front_matter"), dict):
            raise EditRefused(Status.CONFLICT, f"{rel} does not read now; fix it (carnet check) and reload", "broken")
        front = value["front_matter"]
        new = self._edited(rel, data, lambda text: set_notebooks(text, front.get("notebooks"), memberships))
        meant = {"front_matter": {**front, "notebooks": memberships}, "body": value["body"]}
        try:
            changes = {r for r in written_records(rel, data) if r[:2] == ("front_matter", "notebooks")}
        except EditError as exc:
            raise EditRefused(Status.CONFLICT, f"{rel}: {exc}; nothing was written", "layout") from exc
        return PlannedWrite(rel, new, meant, frozenset(changes | {("front_matter", "notebooks")}))

    def _confirm(self, rel: str, sidecar: str, extraction: str, placed: Placed) -> None:
        """The new extraction anchors exactly where the selection lay, or the change is put back."""
        anchor = anchor_note(self._parsed(rel, sidecar))[0].anchors.get(extraction)
        if anchor is None or anchor.status is not AnchorStatus.ANCHORED or anchor.portions != placed.portions:
            raise WriteRefused(f"{sidecar}: the new extraction would not land on the selection; nothing was written")

    def comment(self, body: dict[str, Any]) -> Done:
        """A comment (or a reply: a later comment) on one of the note's extractions."""
        with self.lock:
            slug, rel = self._note(body)
            author = self._who(body)
            sidecar, data, value = self._sidecar(rel)
            index = self._find(value, _text_field(body, "extraction"))
            comment = self._comment(body, author, self._taken(), slug)
            meant = copy.deepcopy(value)
            meant["extractions"][index].setdefault("comments", []).append(comment)
            new = self._edited(sidecar, data, lambda text: append_comment(text, index, comment))
            self._write(f"comment {comment['id']}", PlannedWrite(sidecar, new, meant, frozenset({("extractions", index)})))
            return Done(f"comment {comment['id']} recorded", (sidecar,), comment["id"])

    def withdraw(self, body: dict[str, Any]) -> Done:
        """One's own comment withdrawn: its text removed, a tombstone kept (hash, date, reason)."""
        with self.lock:
            _slug, rel = self._note(body)
            author = self._who(body)
            wanted = _text_field(body, "comment")
            reason = _text_field(body, "reason", MAX_TEXT)
            sidecar, data, value = self._sidecar(rel)
            found = next(((i, j) for i, item in enumerate(value["extractions"]) if isinstance(item, dict)
                          for j, said in enumerate(item.get("comments") or []) if isinstance(said, dict)
                          and said.get("id") == wanted), None)
            if found is None:
                raise EditRefused(Status.NOT_FOUND, f"the note has no comment {wanted!r}")
            index, position = found
            model = next(c for e in self._parsed(rel, sidecar).extractions for c in e.comments if c.id == wanted)
            if model.withdrawn is not None:
                raise EditRefused(Status.CONFLICT, f"comment {wanted!r} is already withdrawn")
            if model.author != author:
                raise EditRefused(Status.FORBIDDEN, f"comment {wanted!r} is {model.author}'s: only its author "
                                  "withdraws it", "not-yours")
            withdrawal = {"date": self.today(), "reason": reason}
            meant = copy.deepcopy(value)
            said = meant["extractions"][index]["comments"][position]
            said.pop("text", None)
            said["text_sha256"] = said.get("text_sha256", model.text_sha256)
            said["withdrawn"] = withdrawal
            new = self._edited(sidecar, data, lambda text: withdraw_comment(text, index, position, withdrawal,
                                                                            model.text_sha256))
            self._write(f"withdraw {wanted}", PlannedWrite(sidecar, new, meant, frozenset({("extractions", index)})))
            return Done(f"comment {wanted} withdrawn", (sidecar,), wanted)

    def mask(self, body: dict[str, Any]) -> Done:
        """An extraction masked: it and its comments appear in no output (kept in the file)."""
        with self.lock:
            _slug, rel = self._note(body)
            sidecar, data, value = self._sidecar(rel)
            extraction = _text_field(body, "extraction")
            index = self._find(value, extraction)
            meant = copy.deepcopy(value)
            meant["extractions"][index]["masked"] = True
            new = self._edited(sidecar, data, lambda text: set_masked(text, index))
            self._write(f"mask {extraction}", PlannedWrite(sidecar, new, meant, frozenset({("extractions", index)})))
            return Done(f"extraction {extraction} masked", (sidecar,), extraction)

    def _article(self, slug: str) -> tuple[ArticleAudit, list[Assessment]]:
        """The audit of the article ``slug`` and its pairs (a wiki or a synthesis), as the build makes them."""
        from generator.pipeline import check_content

        analysis = check_content(self.content)
        audit = analysis.articles.get(slug)
        if audit is None:
            raise EditRefused(Status.NOT_FOUND, f"{slug!r} is not a wiki article or a synthesis: it has no citations "
                              "to judge or contest")
        return audit, analysis.assessments.get(slug, [])

    def verdict(self, body: dict[str, Any]) -> Done:
        """A person's verdict on one (claim, source) pair of an article, keyed as the build keys it:
        the claim's and the cited passage's texts and hashes are the build's, never the page's."""
        from generator.corpus.verdicts import VERDICTS

        with self.lock:
            slug, _rel = self._note(body)
            author = self._who(body)
            claim, source = _text_field(body, "claim"), _text_field(body, "source")
            verdict = _text_field(body, "verdict")
            if verdict not in VERDICTS:
                raise EditRefused(Status.BAD_REQUEST, f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
            rationale = _text_field(body, "rationale", MAX_TEXT)
            _audit, pairs = self._article(slug)
            pair = next((p for p in pairs if p.claim.id == claim and p.source == source), None)
            if pair is None:
                raise EditRefused(Status.NOT_FOUND, f"the article has no citation of {source!r} by {claim!r} now; "
                                  "reload the page", "stale")
            record = {"claim": pair.claim.text, "claim_sha256": pair.claim_sha256, "source": pair.source,
                      "source_sha256": pair.source_sha256, "verdict": verdict, "rationale": rationale,
                      "provenance": {"method": "human", "author": author, "date": self.today().isoformat()}}
            rel = f"verdicts/{slug}.yaml"
            self._write(f"verdict on {claim} / {source}", self._appended(rel, "verdicts", record))
            return Done(f"verdict '{verdict}' recorded for {claim} and {source}", (rel,), claim)

    def contest(self, body: dict[str, Any]) -> Done:
        """A person contests a claim of an article (all its sources, or one)."""
        with self.lock:
            slug, _rel = self._note(body)
            author = self._who(body)
            claim = _text_field(body, "claim")
            source = _text_field(body, "source", required=False)
            reason = _text_field(body, "reason", MAX_TEXT)
            audit, pairs = self._article(slug)
            if claim not in {c.id for c in audit.claims}:
                raise EditRefused(Status.NOT_FOUND, f"the article has no claim {claim!r} now; reload the page", "stale")
            if source and not any(p.claim.id == claim and p.source == source for p in pairs):
                raise EditRefused(Status.NOT_FOUND, f"claim {claim!r} does not cite {source!r}", "stale")
            record: dict[str, Any] = {"claim": claim}
            if source:
                record["source"] = source
            record.update(author=author, date=self.today(), reason=reason)
            rel = f"contestations/{slug}.yaml"
            self._write(f"contest {claim}", self._appended(rel, "contestations", record))
            return Done(f"claim {claim} contested", (rel,), claim)

    def _appended(self, rel: str, key: str, record: dict[str, Any]) -> PlannedWrite:
        try:
            return appended(self.content, rel, key, [record])
        except WriteRefused as exc:
            raise EditRefused(Status.CONFLICT, str(exc), "write-refused") from exc

    def _recorded(self, what: str, files: list[str], run: Callable[[], object]) -> None:
        """Run a command's own write (it goes through the write seam itself), and keep what
        undo needs: the files' bytes before, and the digest of what it left."""
        before = {rel: self._read(rel) for rel in files}
        try:
            run()
        except CarnetError as exc:  # the command's refusal: nothing was written
            raise EditRefused(Status.CONFLICT, f"{exc}", "refused") from exc
        after = {rel: _digest(self._read(rel)) for rel in files}
        changed = {rel for rel in files if after[rel] != _digest(before[rel])}
        if changed:
            self.history = [*self.history, Undo(what, {r: before[r] for r in changed},
                                                {r: after[r] for r in changed})][-UNDO_DEPTH:]

    def proposals(self, slug: str) -> list[dict[str, Any]]:
        """The pending section proposals of the article ``slug``, each operation with what it
        would change (as ``carnet review`` shows it: the lines before and after) and whether
        ``carnet apply``'s rules accept it."""
        import difflib

        from generator.commands.proposal_files import ProposalError, load_proposal
        from generator.commands.proposals import _dry_run, sources_for
        from generator.corpus.proposal import Op, Proposal
        from generator.synthesis.sections import apply_operations

        shown: list[dict[str, Any]] = []
        for path in self._proposal_files(slug):
            try:
                content, proposal = load_proposal(path)
            except ProposalError:
                continue  # 'carnet check' reports it
            if not isinstance(proposal, Proposal) or not proposal.pending:
                continue
            analysis, note, _article, stale, _chosen, _body, results = _dry_run(content, proposal, None)
            current, operations = note.body, []
            for result in results:
                op = result.operation
                lines: list[str] = []
                if result.accepted and op.op is not Op.NO_CHANGE:
                    after, _ = apply_operations(current, [op], sources_for(analysis, proposal.target))
                    lines = list(difflib.unified_diff(current.split("\n"), after.split("\n"), lineterm="", n=1))[2:]
                    current = after
                operations.append({"number": result.index + 1, "op": op.op.value, "heading": op.heading,
                                   "after_heading": op.after_heading, "content": op.content,
                                   "applicable": result.accepted, "reason": result.reason, "diff": lines})
            shown.append({"id": proposal.id, "stale": stale, "method": str(proposal.provenance.get("method", "")),
                          "operations": operations})
        return shown

    def extraction_proposals(self, slug: str) -> list[dict[str, Any]]:
        """The pending extraction proposals of the note ``slug`` (``carnet analyse``): each passage
        with where it lands in the note now, by element id and offsets in the element's text
        as quotes are normalised (for the page to highlight it in place), or why it does not."""
        from generator.anchoring.resolve import project, resolve_quote
        from generator.commands.proposal_files import ProposalError, load_proposal
        from generator.corpus.proposal import ExtractionProposal

        rel = self.note_rel(slug)
        if rel is None:
            return []
        elements = anchor_note(self._parsed(rel, rel.removesuffix(".md") + EXTRACTIONS_SUFFIX))[0].document.elements
        projection = project(elements)
        shown: list[dict[str, Any]] = []
        for path in self._proposal_files(slug, "extractions"):
            try:
                _content, proposal = load_proposal(path)
            except ProposalError:
                continue  # 'carnet review' says why
            if not isinstance(proposal, ExtractionProposal) or not proposal.pending:
                continue
            passages = []
            for number, passage in enumerate(proposal.passages, 1):
                anchor = resolve_quote(projection, elements, passage.quote, passage.prefix, "", passage.occurrence)
                places = [{"element": elements[p.element].id, **normalised_span(elements[p.element].text, p.start, p.end)}
                          for p in anchor.portions] if anchor.status is AnchorStatus.ANCHORED else []
                passages.append({"number": number, "quote": passage.quote, "kind": passage.kind,
                                 "categories": {axis: list(names) for axis, names in passage.categories.items()},
                                 "places": places, "reason": "" if places else anchor.reason})
            shown.append({"id": proposal.id, "passages": passages})
        return shown

    def apply(self, body: dict[str, Any]) -> Done:
        """The operations (or passages) a person accepted, applied by ``carnet apply``'s own
        code (:func:`generator.commands.proposals.apply` with ``--only``); the others are
        recorded as not chosen. Accepting none applies nothing (the proposal stays pending)."""
        from generator.commands.proposals import apply

        with self.lock:
            slug, rel = self._note(body)
            wanted = _text_field(body, "proposal")
            path = next((p for p in self._proposal_files(slug) if p.stem == wanted), None)
            if path is None:
                path = next((p for p in self._proposal_files(slug, "extractions") if p.stem == wanted), None)
                rel = rel.removesuffix(".md") + EXTRACTIONS_SUFFIX  # what applying passages writes
            if path is None:
                raise EditRefused(Status.NOT_FOUND, f"the note has no proposal {wanted!r}")
            accepted = body.get("accept")
            if not isinstance(accepted, list) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                         for n in accepted):
                raise EditRefused(Status.BAD_REQUEST, "'accept' must list the numbers of the accepted operations")
            if not accepted:
                raise EditRefused(Status.BAD_REQUEST, "no operation accepted: nothing is applied, and the proposal "
                                  "stays pending", "nothing")
            proposal_rel = path.relative_to(self.content).as_posix()
            numbers = sorted(set(accepted))
            self._recorded(f"apply {wanted}", [rel, proposal_rel],
                           lambda: apply(path, numbers, self.today()))
            return Done(f"proposal {wanted}: operation(s) {', '.join(map(str, numbers))} applied", (rel, proposal_rel),
                        wanted)

    def adopt(self, body: dict[str, Any]) -> Done:
        """The synthesis adopted by the author, as ``carnet adopt --by`` does (its perimeter frozen)."""
        from generator.commands.adopt import adopt

        with self.lock:
            _slug, rel = self._note(body)
            author = self._who(body)
            self._recorded(f"adopt {rel}", [rel], lambda: adopt(self.content / rel, author, self.today()))
            return Done(f"{rel} adopted by {author}", (rel,), _slug)

    def undo(self, body: dict[str, Any]) -> Done:
        """The last write of this run taken back, if its files still hold what it wrote."""
        with self.lock:
            self._not_busy()
            if not self.history:
                raise EditRefused(Status.CONFLICT, "nothing to undo: this run has written nothing (or undid it all)",
                                  "nothing")
            last = self.history[-1]
            moved = [rel for rel, written in last.after.items() if _digest(self._read(rel)) != written]
            if moved:
                raise EditRefused(Status.CONFLICT, f"{', '.join(moved)} changed since '{last.what}': it is not "
                                  "undone (that would lose the later change); nothing was written", "stale")
            try:
                with Change(self.content, f"{COMMAND}: undo {last.what}") as change:
                    for rel, data in sorted(last.before.items()):
                        change.write(rel, data)
            except OSError as exc:
                raise EditRefused(Status.CONFLICT, f"could not undo '{last.what}': {exc.strerror or exc}; "
                                  "the files are as they were", "write-refused") from exc
            self.history = self.history[:-1]
            return Done(f"undone: {last.what}", tuple(sorted(last.before)))


def normalised_span(text: str, start: int, end: int) -> dict[str, int]:
    """``[start, end)`` of an element's text as offsets in its normalised text (what a page,
    whose white space the browser lays out, can find again)."""
    from generator.anchoring.normalise import normalise

    _normal, origin = normalise(text)
    first = next((i for i, at in enumerate(origin) if at >= start), len(origin))
    last = next((i for i in range(len(origin) - 1, -1, -1) if origin[i] < end), first - 1)
    return {"start": first, "end": last + 1}


def render_extraction(record: dict[str, Any], indent: str) -> list[str]:
    """A new extraction as a person would write it: the quote a literal block when it
    spans lines, other text double-quoted, its first comment as a block list."""
    inner = indent + "  "
    lines = [f"{indent}- id: {record['id']}", f"{inner}quote: {render_scalar(record['quote'], len(inner))}"]
    for key in ("prefix", "occurrence", "kind", "author"):
        if key in record:
            lines.append(f"{inner}{key}: {json.dumps(record[key], ensure_ascii=False)}")
    lines.append(f"{inner}date: {record['date'].isoformat()}")
    if record.get("comments"):
        lines.append(f"{inner}comments:")
        lines += [line for comment in record["comments"] for line in block_item(comment, inner + "  ")]
    return lines
