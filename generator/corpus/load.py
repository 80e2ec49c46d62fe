"""Content directory → :class:`Corpus`, with every problem collected.

The I/O edge of ``corpus/``: it lists and reads files, then hands text to pure
parsing functions (one per content kind). Cross-file checks live in
:mod:`generator.corpus.validate`.
"""

from __future__ import annotations

import datetime as dt
import errno
import functools
import hashlib
import os
import posixpath
import re
import stat as stat_module
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from generator.corpus.article import ANSWER_KEYS, ArticleSpec, parse_answer, parse_article
from generator.corpus.assets import AssetRefusal, asset_refusal, shown_name
from generator.corpus.fields import ID_PATTERN, MAX_SLUG, SLUG_PATTERN, Fields, slug_too_long
from generator.corpus.model import (
    AuthorRule,
    Axis,
    Base,
    Comment,
    Corpus,
    Extraction,
    Licence,
    Membership,
    Note,
    Notebook,
    NoteType,
    SiteSettings,
    SourceRef,
    Stance,
    Visibility,
    Withdrawal,
    corpus_patched,
)
from generator.corpus.oppositions import OppositionRecord, parse_oppositions
from generator.corpus.proposal import parse_proposal
from generator.corpus.source import YamlList, YamlMap, parse_yaml, split_front_matter
from generator.corpus.verdicts import VerificationRecords, parse_contestations, parse_verdicts
from generator.files import decode_text
from generator.markup import comment_ranges, link_is_safe, site_address_problem, without_comments
from generator.problems import Problem, Severity
from generator.text import FORBIDDEN_CHARACTERS, category_slug, without_forbidden

T = TypeVar("T")
R = TypeVar("R")

SETTINGS_FILE = "carnet.yaml"
EXTRACTIONS_SUFFIX = ".extractions.yaml"
STANCES = tuple(Stance)
MAX_AXES = 3
MAX_FILE_BYTES = 8 * 1024 * 1024

class FileKind(StrEnum):
    """What a content file holds: the :class:`ContentFiles` field it goes in, by that name."""

    SETTINGS = "settings"
    BASES = "bases"
    NOTEBOOKS = "notebooks"
    NOTES = "notes"
    EXTRACTIONS = "extractions"
    PROPOSALS = "proposals"
    VERDICTS = "verdicts"
    CONTESTATIONS = "contestations"
    OPPOSITIONS = "oppositions"
    ASSETS = "assets"


HELD_KINDS = (FileKind.NOTES, FileKind.EXTRACTIONS)  # the kinds a file of may be left Unread

# Top-level folders later stages own; the loader leaves them alone.
RESERVED_DIRS = ("proposals", "verdicts", "oppositions", "contestations", "cache")


@dataclass(frozen=True)
class Unread:
    """A note or sidecar file the build cache knows unchanged since it digested it (same
    size, modification time and inode): named by its digest, read only if it must be parsed
    (a rebuild recalls all but the edited notes: 5,000 reads it need not make)."""

    path: str
    sha: str

    def read(self) -> bytes:
        return _bytes_of(self.path)


KnownFiles = Callable[[str, os.stat_result], "str | None"]
"""``known(absolute path, its stat)``: the sha256 of the file's bytes when the build cache
digested it with that very size, modification time and inode, else ``None``."""


def _key(rel: str, data: bytes | Unread, sidecar_rel: str | None, sidecar: bytes | Unread | None) -> str:
    """A note's parse is a pure function of its two files: keyed by their names and digests."""
    return _key_of(rel, sidecar_rel, content_digest(data), content_digest(sidecar) if sidecar is not None else None)


@functools.lru_cache(maxsize=1 << 16)
def _key_of(rel: str, sidecar_rel: str | None, digest: str, sidecar_digest: str | None) -> str:
    """Remembered: a rebuild keys its 5,000 notes carried unread again (10 ms of sha256 an edit)."""
    return hashlib.sha256(repr((rel, sidecar_rel, digest, sidecar_digest)).encode("utf-8")).hexdigest()


class Unreadable(Exception):
    """A file read late is gone, or is not the bytes its digest was taken of: ``problem`` says so."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _read(rel: str, data: bytes | Unread) -> bytes:
    """A file's bytes, read now if it was left unread."""
    if not isinstance(data, Unread):
        return data
    try:
        return data.read()
    except OSError as exc:
        raise Unreadable(_unreadable(rel, exc)) from exc


def _verified(rel: str, data: bytes | Unread) -> bytes:
    """As :func:`_read`, refused unless they are the bytes the file was digested as."""
    read = _read(rel, data)
    if isinstance(data, Unread) and hashlib.sha256(read).hexdigest() != data.sha:
        raise Unreadable(Problem(rel, None, "unreadable-file", "changed while the build was reading it",
                                  "Build again."))
    return read


def _unreadable(rel: str, exc: OSError) -> Problem:
    return Problem(rel, None, "unreadable-file", f"could not be read: {exc.strerror or exc}",
                   "It was moved or deleted while the build was reading the content: build again.")


def content_digest(data: bytes | Unread) -> str:
    return data.sha if isinstance(data, Unread) else hashlib.sha256(data).hexdigest()


@dataclass
class ContentFiles:
    """What the content directory holds, by kind (content-relative POSIX paths → bytes;
    a note or sidecar known unchanged may be left :class:`Unread`). ``walk`` is how the walk
    found them, directory by directory, for :func:`patch_content_files` (``None`` for files
    gathered otherwise, which cannot be patched)."""

    settings: bytes | None = None
    bases: dict[str, bytes] = field(default_factory=dict)
    notebooks: dict[str, bytes] = field(default_factory=dict)
    notes: dict[str, bytes | Unread] = field(default_factory=dict)
    extractions: dict[str, bytes | Unread] = field(default_factory=dict)
    proposals: dict[str, bytes] = field(default_factory=dict)
    verdicts: dict[str, bytes] = field(default_factory=dict)
    contestations: dict[str, bytes] = field(default_factory=dict)
    oppositions: dict[str, bytes] = field(default_factory=dict)
    assets: set[str] = field(default_factory=set)
    asset_paths: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    walk: ContentWalk | None = field(default=None, compare=False, repr=False)

    def besides_notes(self) -> tuple[object, ...]:
        """All it holds but its notes and their sidecars, and its problems: what a patch of the
        parse takes as it was (:func:`parse_patched`)."""
        return (self.settings, self.bases, self.notebooks, self.proposals, self.verdicts, self.contestations,
                self.oppositions, self.assets, self.asset_paths, self.problems)


class _Found(NamedTuple):
    """One file as the walk read it, before names are matched across directories
    (:func:`_gathered`): a problem, or what it holds (``kind``: the :class:`ContentFiles`
    field it goes in; ``None`` for a file a later command owns), never both."""

    rel: str  # its path NFC-normalised: the name readers and links know
    on_disk: str
    linked: bool  # a symbolic link: said, and never a name taken
    problem: Problem | None
    kind: FileKind | None
    data: bytes | Unread | None


@dataclass
class _Listing:
    """One directory as the walk listed it, each part in on-disk name order."""

    error: Problem | None = None  # it could not be listed: nothing under it is published
    links: dict[str, Problem] = field(default_factory=dict)  # its links to directories, said
    files: dict[str, _Found] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)  # its subdirectories walked

    def copy(self) -> _Listing:
        return _Listing(self.error, dict(self.links), dict(self.files), list(self.dirs))


@dataclass(frozen=True)
class ContentWalk:
    """The content directory as the walk found it: each directory walked, by its on-disk
    content-relative path ('' for the root, then 'notes/', …). Never changed once made: a
    patch copies the listings it changes."""

    root: str  # absolute
    listings: dict[str, _Listing]
    held: frozenset[str]  # the notes and sidecars whose bytes are held (on-disk paths)
    links: frozenset[str]  # its symbolic links (on-disk paths): what they are depends on their target


class _Entry(Protocol):
    """What the walk asks of a directory entry: an :class:`os.DirEntry`, or a path named by a
    watcher (:class:`_Looked`)."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...

    def is_dir(self, *, follow_symlinks: bool = True) -> bool: ...

    def is_symlink(self) -> bool: ...

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result: ...


class _Looked:
    """A path looked at alone (its ``lstat``), answering as its directory entry would."""

    def __init__(self, name: str, path: str, info: os.stat_result) -> None:
        self.name, self.path, self.info = name, path, info

    def is_symlink(self) -> bool:
        return stat_module.S_ISLNK(self.info.st_mode)

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        info = os.stat(self.path) if follow_symlinks and self.is_symlink() else self.info
        return stat_module.S_ISDIR(info.st_mode)

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return os.stat(self.path) if follow_symlinks and self.is_symlink() else self.info


def read_content_dir(root: Path, known: KnownFiles | None = None) -> ContentFiles:
    """List and read the content directory. Symlinks are never followed. With ``known``,
    a note or sidecar it knows is left :class:`Unread`."""
    absolute = os.path.abspath(root)
    listings: dict[str, _Listing] = {}
    _walk(absolute, "", known, listings)
    return _gathered(root, absolute, listings)


def patch_content_files(last: ContentFiles, root: Path, edited: Collection[str],
                        known: KnownFiles | None = None) -> ContentFiles | None:
    """What :func:`read_content_dir` would give now, from what it (or this) gave ``last`` and
    the paths changed since (``carnet serve``: its watcher's): each path in ``edited``
    (content-relative POSIX, on-disk names; a file or a folder, changed, added or removed)
    is looked at again, a folder with all it holds, and the rest is taken from ``last``
    without a look (5,000 notes: 2.5 ms, where a walk lists and stats them in 40–55 ms). Its
    notes and sidecars carried are :class:`Unread` by their digest, which
    :func:`parse_content` then takes for free (5,000 sha256 an edit otherwise).

    A path outside the content, once normalised (``..``, absolute elsewhere), is no content
    and changes nothing; ``.`` names the whole content. A path under a directory that is no
    longer one (removed, now a file or a link) looks at that directory; a name given in
    another Unicode form than the file's on disk looks at the files of the same name once
    NFC-normalised. Names equal once normalised, across folders too, and the directories'
    own problems are matched up again over the whole patched listing, as the walk does.

    ``None`` (the caller walks) when it cannot be patched: ``last`` was not made by a walk
    of ``root`` (no :attr:`ContentFiles.walk`, or another directory's), or a path named could
    not be looked at for another reason than being gone (unreadable, too long a path)."""
    walk = last.walk
    absolute = os.path.abspath(root)
    if walk is None or walk.root != absolute:
        return None
    listings = dict(walk.listings)
    owned: set[str] = set()

    def own(rel_dir: str) -> _Listing:
        """The listing of ``rel_dir`` this patch may change (``last``'s is never changed)."""
        if rel_dir not in owned:
            listings[rel_dir] = listings[rel_dir].copy()
            owned.add(rel_dir)
        return listings[rel_dir]

    composed_names: dict[str, dict[str, list[str]]] = {}

    def same_name(rel_dir: str, name: str) -> list[str]:
        """The entries of ``rel_dir`` whose name is ``name`` once NFC-normalised (indexed once a patch:
        a checkout adding 5,000 notes is not 5,000 scans of 5,000 names)."""
        index = composed_names.get(rel_dir)
        if index is None:
            index = composed_names[rel_dir] = {}
            listing = listings[rel_dir]
            for other, found in listing.files.items():
                index.setdefault(found.rel, []).append(other)
            for other in [*listing.links, *listing.dirs]:
                index.setdefault(unicodedata.normalize("NFC", f"{rel_dir}{other}"), []).append(other)
        return index.get(unicodedata.normalize("NFC", f"{rel_dir}{name}"), [])

    try:
        # a link is looked at again whatever is named: its target, anywhere, may have become a folder or gone
        named = [*edited, *walk.links]
        units = {unit for path in named if (unit := _looked_at(absolute, path, listings)) is not None}
        looked: set[str] = set()
        for unit in sorted(units):
            parts = unit.split("/")
            if "" in looked or any("/".join(parts[:i]) in looked for i in range(1, len(parts))):
                continue  # under a folder looked at whole
            looked.add(unit)
            if unit == "":
                listings.clear()
                _walk(absolute, "", known, listings)
                continue
            parent, _, name = unit.rpartition("/")
            rel_dir = f"{parent}/" if parent else ""
            if rel_dir not in listings:  # looked at whole under another Unicode form of its name
                continue
            if name.startswith("."):  # hidden: never content (an editor's swap file)
                continue
            listing = listings[rel_dir]
            names = [name]
            if not (name in listing.files or name in listing.links or name in listing.dirs) \
                    or not os.path.lexists(os.path.join(absolute, unit)):
                # named in another Unicode form than on disk: the entries of that name once normalised
                names += [other for other in same_name(rel_dir, name) if other != name]
            _look_again(absolute, rel_dir, sorted(names), own(rel_dir), known, listings)
    except (OSError, ValueError):  # a path that cannot be looked at (a NUL byte: ValueError): walked
        return None

    def fresh(on_disk: str) -> bool:
        parts = on_disk.split("/")
        return "" in looked or any("/".join(parts[:i]) in looked for i in range(1, len(parts) + 1))

    for on_disk in walk.held:  # carried unread from now on: their digest is never taken again
        if fresh(on_disk):
            continue
        parent, _, name = on_disk.rpartition("/")
        rel_dir = f"{parent}/" if parent else ""
        holding = listings.get(rel_dir)
        found = holding.files.get(name) if holding is not None else None
        if found is not None and isinstance(found.data, bytes):
            data = Unread(os.path.join(absolute, on_disk), hashlib.sha256(found.data).hexdigest())
            own(rel_dir).files[name] = found._replace(data=data)
    return _gathered(root, absolute, listings)


def _looked_at(absolute: str, path: str, listings: dict[str, _Listing]) -> str | None:
    """The content-relative path to look at again for a change of ``path``: itself, or the
    highest directory above it no longer walked as it was ('' for the whole content);
    ``None`` outside the content."""
    norm = posixpath.normpath(path)
    if norm.startswith("/"):  # an absolute path: under the content as named, or as its real path (a watcher's)
        norm = posixpath.relpath(norm, absolute)
        if norm == ".." or norm.startswith("../"):
            norm = posixpath.relpath(posixpath.normpath(path), os.path.realpath(absolute))
    if norm == ".." or norm.startswith("../"):
        return None
    root = listings.get("")
    if norm == "." or root is None or root.error is not None:
        return ""
    parts = norm.split("/")
    for index in range(1, len(parts)):
        above = "/".join(parts[:index])
        listing = listings.get(f"{above}/")
        if listing is None or listing.error is not None:
            return above  # not walked last time (new, a link, hidden, reserved, unreadable)
        try:
            info = os.lstat(os.path.join(absolute, above))
        except FileNotFoundError:
            return above
        if not stat_module.S_ISDIR(info.st_mode):  # now a file or a link: not walked through
            return above
    return norm


def _look_again(absolute: str, rel_dir: str, names: list[str], listing: _Listing, known: KnownFiles | None,
                listings: dict[str, _Listing]) -> None:
    """``listing`` (of ``rel_dir``) with its entries ``names`` as they are now: each taken again
    as the walk takes an entry, in the place of what the walk made of it. Raises OSError when
    one cannot be looked at."""
    grown = False
    for name in names:
        path = os.path.join(absolute, f"{rel_dir}{name}")
        inside = f"{rel_dir}{name}/"
        for gone in [walked for walked in listings if walked.startswith(inside)]:
            del listings[gone]  # walked again below if still a folder
        now = _Listing()
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            pass  # removed
        else:
            _take(_Looked(name, path, info), rel_dir, now, known, listings)
        grown |= _replaced(listing.files, now.files, name)
        grown |= _replaced(listing.links, now.links, name)
        if name in now.dirs and name not in listing.dirs:
            listing.dirs.append(name)
            grown = True
        elif name not in now.dirs and name in listing.dirs:
            listing.dirs.remove(name)
    if grown:  # the walk lists in name order: a new entry goes in its place
        listing.files = dict(sorted(listing.files.items()))
        listing.links = dict(sorted(listing.links.items()))
        listing.dirs.sort()


def _replaced(part: dict[str, R], now: dict[str, R], name: str) -> bool:
    """``part[name]`` as ``now`` has it (kept in its place, or removed); whether it is new."""
    if name not in now:
        part.pop(name, None)
        return False
    new = name not in part
    part[name] = now[name]
    return new


def _walk(directory: str, rel_dir: str, known: KnownFiles | None, listings: dict[str, _Listing]) -> None:
    """One directory's entries in name order, as os.walk lists them top down; each file's type
    from its directory entry and one stat (not a path object, a check for a link and a second
    stat per file: 10,000 at 5,000 notes)."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:  # nothing under it is published: said, never silently left out
        listings[rel_dir] = _Listing(error=Problem(
            rel_dir.rstrip("/") or ".", None, "unreadable-directory",
            f"this directory cannot be read ({exc.strerror or exc}): nothing under it is published",
            "Make it readable, or shorten its path (a path longer than the system allows, 4,096 bytes "
            "on Linux, cannot be opened)." if exc.errno == errno.ENAMETOOLONG else "Make it readable.",
            Severity.WARNING))
        return
    listing = listings[rel_dir] = _Listing()
    for entry in entries:
        _take(entry, rel_dir, listing, known, listings)


def _take(entry: _Entry, rel_dir: str, listing: _Listing, known: KnownFiles | None,
          listings: dict[str, _Listing]) -> None:
    """One entry of the directory ``rel_dir`` into its listing: a link to a directory said,
    a directory walked, a file read; hidden ones skipped."""
    name = entry.name
    if name.startswith("."):
        return
    top = rel_dir.split("/")[0]
    reserved = top in RESERVED_DIRS and top not in ("proposals", "verdicts", "contestations", "oppositions")
    if _is_dir(entry):
        if entry.is_symlink():
            listing.links[name] = Problem(
                f"{rel_dir}{name}", None, "symlink", "symbolic link to a directory not followed",
                "Move the directory into the content directory instead of linking to it.", Severity.WARNING)
        elif not reserved:
            listing.dirs.append(name)
            _walk(entry.path, f"{rel_dir}{name}/", known, listings)
    elif not reserved:
        listing.files[name] = _read_entry(entry, f"{rel_dir}{name}", top, known)


def _read_entry(entry: _Entry, on_disk: str, top: str, known: KnownFiles | None) -> _Found:
    rel = unicodedata.normalize("NFC", on_disk)
    if entry.is_symlink():
        return _Found(rel, on_disk, True, Problem(
            rel, None, "symlink", "symbolic link not followed",
            "Copy the file into the content directory instead of linking to it.", Severity.WARNING), None, None)

    def problem(found: Problem) -> _Found:
        return _Found(rel, on_disk, False, found, None, None)

    def holding(kind: FileKind | None, data: bytes | Unread | None = None) -> _Found:
        return _Found(rel, on_disk, False, None, kind, data)

    path = entry.path
    if top == "assets":
        refusal = _asset_refusal(rel, Path(path))
        if refusal is not None:
            return problem(Problem(shown_name(rel), refusal.line, refusal.kind.value,  # one line, escaped
                                   f"this asset is not published: {refusal.reason}", refusal.hint))
        return holding(FileKind.ASSETS)
    if top in ("verdicts", "contestations", "oppositions"):
        if rel.endswith(".yaml") and rel.count("/") == 1:
            return holding(FileKind(top), _bytes_of(path))
        return holding(None)
    if top == "proposals":
        if rel.startswith("proposals/sections/") and rel.endswith(".yaml") and rel.count("/") == 3:
            return holding(FileKind.PROPOSALS, _bytes_of(path))
        return holding(None)  # other kinds belong to later commands
    kind = _kind_of(rel)
    if kind is None:
        return problem(Problem(
            rel, None, "unexpected-file", "this file is not part of any content kind and is ignored",
            "Notes go in notes/ (.md), notebooks in notebooks/, bases in bases/, "
            "other files (images, audio, PDFs) in assets/.", Severity.WARNING))
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:  # gone since it was listed
        return problem(_unreadable(rel, exc))
    size = info.st_size
    if size > MAX_FILE_BYTES:
        return problem(Problem(
            rel, None, "file-too-large", f"{size} bytes is more than a content file may hold "
            f"({MAX_FILE_BYTES} bytes)", "Split the note, or move binary data to assets/."))
    sha = known(path, info) if known and kind in HELD_KINDS else None
    if sha is not None:
        return holding(kind, Unread(path, sha))
    try:
        return holding(kind, _bytes_of(path))
    except OSError as exc:  # gone or unreadable since it was listed: said, not a traceback
        return problem(_unreadable(rel, exc))


def _gathered(root: Path, absolute: str, listings: dict[str, _Listing]) -> ContentFiles:
    """The walk's listings → files by kind, problems in the walk's order, names matched
    across directories (café.md composed here, decomposed there: the first taken)."""
    from generator.journal import JOURNAL, interrupted

    files = ContentFiles()
    command = interrupted(root)
    if command is not None:  # a killed command's half-made change: never published as if whole
        files.problems.append(Problem(
            JOURNAL, None, "interrupted-change",
            f"'{command}' was interrupted and left a change half made: some files hold its new text, others not",
            "Run any command that writes content (run the interrupted one again): it puts the files back first.",
            Severity.WARNING))
    seen: dict[str, str] = {}  # NFC name → the name on disk
    held: list[str] = []
    links: list[str] = []

    def gather(rel_dir: str) -> None:
        listing = listings[rel_dir]
        if listing.error is not None:
            files.problems.append(listing.error)
            return
        files.problems += listing.links.values()
        links.extend(f"{rel_dir}{name}" for name in listing.links)
        for found in listing.files.values():
            rel, on_disk = found.rel, found.on_disk
            if found.linked:
                links.append(on_disk)
                files.problems += [found.problem] if found.problem is not None else []
                continue
            # café.md written once composed, once decomposed: one name to readers and links (the other
            # was read all the same: a patch removing the first publishes it without reading it again)
            if rel in seen:
                files.problems.append(Problem(
                    rel, None, "name-collision",
                    f"two files have this name once Unicode-normalised (NFC): {seen[rel]!r} and {on_disk!r}; "
                    "only one could be published",
                    "Rename or remove one of them (they differ only in how accents are encoded)."))
                continue
            seen[rel] = on_disk
            if found.problem is not None:
                files.problems.append(found.problem)
            elif found.kind is FileKind.ASSETS:
                files.assets.add(rel)
                files.asset_paths[rel] = on_disk
            elif found.kind is FileKind.SETTINGS:
                files.settings = found.data if isinstance(found.data, bytes) else None
            elif found.kind is not None:
                getattr(files, found.kind.value)[rel] = found.data
                if found.kind in HELD_KINDS and isinstance(found.data, bytes):
                    held.append(on_disk)
        for name in listing.dirs:
            gather(f"{rel_dir}{name}/")

    gather("")
    files.walk = ContentWalk(absolute, listings, frozenset(held), frozenset(links))
    return files


def _is_dir(entry: _Entry) -> bool:
    """As os.walk tells a directory: a link to one is one (and is then not followed)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _bytes_of(path: str) -> bytes:
    with open(path, "rb") as stream:
        return stream.read()


def _asset_refusal(rel: str, path: Path) -> AssetRefusal | None:
    with path.open("rb") as file:
        head = file.read(512)
    return asset_refusal(rel, head, path.read_bytes)


def _kind_of(rel: str) -> FileKind | None:
    if rel == SETTINGS_FILE:
        return FileKind.SETTINGS
    parts = rel.split("/")
    if len(parts) == 2 and parts[0] == "bases" and rel.endswith(".yaml"):
        return FileKind.BASES
    if len(parts) == 2 and parts[0] == "notebooks" and rel.endswith(".yaml"):
        return FileKind.NOTEBOOKS
    if parts[0] == "notes" and rel.endswith(EXTRACTIONS_SUFFIX):
        return FileKind.EXTRACTIONS
    if parts[0] == "notes" and rel.endswith(".md"):
        return FileKind.NOTES
    return None


@dataclass(frozen=True)
class NoteFiles:
    """One note's files as the loader found them: what its parse is a pure function of.

    Attributes:
        rel: the note's content-relative path.
        slug: its slug (its file name).
        data: its bytes, or :class:`Unread` (known unchanged: read only if it must be parsed).
        sidecar_rel: its extractions file's path, if it has one.
        sidecar: that file's bytes (or :class:`Unread`).
        digest: the digest of both, by name and content: the note's source digest
            (:attr:`Corpus.sources`), and the key its parse is remembered by.
    """

    rel: str
    slug: str
    data: bytes | Unread
    sidecar_rel: str | None
    sidecar: bytes | Unread | None
    digest: str

    @classmethod
    def of(cls, rel: str, slug: str, data: bytes | Unread, sidecar_rel: str | None,
           sidecar: bytes | Unread | None) -> NoteFiles:
        return cls(rel, slug, data, sidecar_rel, sidecar, _key(rel, data, sidecar_rel, sidecar))

    def read(self) -> NoteFiles:
        """The same files with their bytes, read now where they were left unread (keyed by the
        bytes read: a file may have changed since it was digested). Raises :class:`Unreadable`."""
        if not isinstance(self.data, Unread) and not isinstance(self.sidecar, Unread):
            return self
        sidecar = _read(self.sidecar_rel, self.sidecar) if self.sidecar_rel and self.sidecar is not None else None
        return NoteFiles.of(self.rel, self.slug, _read(self.rel, self.data), self.sidecar_rel, sidecar)


class ParsedNote(NamedTuple):
    """A note's parse.

    Attributes:
        note: the note, ``None`` when its files cannot be read as one.
        problems: what its files hold that is wrong.
        digest: the digest of the files parsed (:attr:`NoteFiles.digest` of the bytes read).
    """

    note: Note | None
    problems: list[Problem]
    digest: str

NotesParser = Callable[[Sequence[NoteFiles]], list["ParsedNote | Problem"]]
"""``parser(notes)`` gives each note's :func:`parse_note_files`, in order, or the problem that
kept its files from being read; made however the caller likes (the build's engine recalls
the notes its cache holds and parses the others in worker processes: :mod:`generator.engine`)."""


def parse_note_files(files: NoteFiles) -> ParsedNote:
    """A note's parse, a pure function of its files (one left unread is read now, and refused
    with :class:`Unreadable` unless it is the bytes it was digested as)."""
    found: list[Problem] = []
    sidecar = None
    text = _verified(files.rel, files.data)
    if files.sidecar_rel is not None and files.sidecar is not None:
        readable, value = _read_yaml(files.sidecar_rel, _verified(files.sidecar_rel, files.sidecar), found)
        if readable:
            sidecar = (files.sidecar_rel, value)
    return ParsedNote(_parse_note(files.rel, files.slug, text, sidecar, found), found, files.digest)


def parse_each(notes: Sequence[NoteFiles]) -> list[ParsedNote | Problem]:
    """Every note parsed here, one after the other (the :data:`NotesParser` of a plain load)."""
    parsed: list[ParsedNote | Problem] = []
    for files in notes:
        try:
            parsed.append(parse_note_files(files.read()))
        except Unreadable as exc:  # moved or deleted since it was listed: said, never remembered
            parsed.append(exc.problem)
    return parsed


def load_corpus(root: Path, parser: NotesParser = parse_each,
                known: KnownFiles | None = None) -> tuple[Corpus, list[Problem]]:
    """Read and parse every content file under ``root``. Never raises on bad content.
    With ``known`` (a build cache's), a note whose files are unchanged is left unread
    (:class:`Unread`) for ``parser``, which may recall its parse."""
    files = read_content_dir(root, known)
    return parse_content(files, parser)


def parse_content(files: ContentFiles, parser: NotesParser = parse_each) -> tuple[Corpus, list[Problem]]:
    """The pure half of loading: bytes by kind → model + problems; the notes are parsed by
    ``parser``, their results taken in file order."""
    loaded = parse_loaded(files, parser)
    return loaded.corpus, loaded.problems


@dataclass(frozen=True)
class Loaded:
    """What :func:`parse_content` made of ``files``, its problems in the parts a patch takes
    apart (:func:`parse_patched`): those of the files, settings, bases and notebooks
    (``head``), of the notes' names (``slugs``), of each note's parse (``notes``: note
    path → its problems, in file order) and of the rest (``tail``: sidecars alone, records)."""

    files: ContentFiles
    corpus: Corpus
    head: list[Problem]
    slugs: list[Problem]
    notes: dict[str, list[Problem]]
    tail: list[Problem]

    @property
    def problems(self) -> list[Problem]:
        return [*self.head, *self.slugs, *(p for found in self.notes.values() for p in found), *self.tail]


def parse_patched(last: Loaded, files: ContentFiles, parser: NotesParser = parse_each) -> Loaded | None:
    """:func:`parse_loaded` of ``files``, from what it made of ``last.files`` when they differ
    in their notes' or sidecars' bytes alone (``carnet serve``: a note edited): those notes are
    parsed (by ``parser``) and put in the place of their last parse, every other part taken
    as it was; the corpus unchanged itself (its indices made already) when none differs.
    ``None`` (the caller parses all) when anything else differs: a file added, removed or
    renamed, the settings, a base, a notebook, a record, a sidecar without its note, a
    problem of the files' names."""
    old = last.files
    if last.slugs or files.notes.keys() != old.notes.keys() or files.extractions.keys() != old.extractions.keys() \
            or files.besides_notes() != old.besides_notes():
        return None

    def same(one: bytes | Unread, other: bytes | Unread) -> bool:  # a file carried is the very object
        return one is other or content_digest(one) == content_digest(other)

    sidecars = {rel[: -len(EXTRACTIONS_SUFFIX)]: rel for rel in files.extractions}
    changed = {stem for stem, rel in sidecars.items() if not same(files.extractions[rel], old.extractions[rel])}
    if any(f"{stem}.md" not in files.notes for stem in changed):
        return None  # a sidecar without its note: said in the tail
    changed.update(rel[: -len(".md")] for rel, data in files.notes.items() if not same(data, old.notes[rel]))
    if not changed:
        return Loaded(files, last.corpus, last.head, last.slugs, last.notes, last.tail)
    wanted = []
    for stem in sorted(changed):
        sidecar_rel = sidecars.get(stem)
        wanted.append(NoteFiles.of(f"{stem}.md", posixpath.basename(stem), files.notes[f"{stem}.md"], sidecar_rel,
                                   files.extractions[sidecar_rel] if sidecar_rel is not None else None))
    notes, sources, problems = dict(last.corpus.notes), dict(last.corpus.sources), dict(last.notes)
    listed = True  # the same notes in the corpus: in their places, in order
    for note_files, parsed in zip(wanted, parser(wanted), strict=True):
        slug = note_files.slug
        if isinstance(parsed, Problem) or parsed.note is None:
            listed &= slug not in notes
            notes.pop(slug, None)
            sources.pop(slug, None)
            problems[note_files.rel] = [parsed] if isinstance(parsed, Problem) else parsed.problems
            continue
        listed &= slug in notes
        notes[slug], sources[slug] = parsed.note, parsed.digest
        problems[note_files.rel] = parsed.problems
    if not listed:
        notes, sources = dict(sorted(notes.items())), dict(sorted(sources.items()))
    corpus = corpus_patched(last.corpus, notes, sources, [files.slug for files in wanted])
    return Loaded(files, corpus, last.head, last.slugs, problems, last.tail)


def parse_loaded(files: ContentFiles, parser: NotesParser = parse_each) -> Loaded:
    """:func:`parse_content`, its problems in parts (:class:`Loaded`)."""
    problems = list(files.problems)
    settings = _parse_settings(files.settings, problems)
    bases = _parse_keyed(files.bases, "base", _parse_base, problems)
    notebooks = _parse_keyed(files.notebooks, "notebook", _parse_notebook, problems)
    head = len(problems)

    sidecars = {rel[: -len(EXTRACTIONS_SUFFIX)]: rel for rel in sorted(files.extractions)}
    notes: dict[str, Note] = {}
    note_files: dict[str, str] = {}
    sources: dict[str, str] = {}
    wanted: list[NoteFiles] = []
    slugs: dict[str, str] = {}
    for rel, data in sorted(files.notes.items()):
        stem = rel[: -len(".md")]
        slug = posixpath.basename(stem)
        sidecar_rel = sidecars.pop(stem, None)
        if not _valid_slug(slug, rel, "note", problems):
            continue
        if slug in slugs:
            problems.append(Problem(
                rel, None, "duplicate-slug",
                f"another note already has the slug {slug!r} ({slugs[slug]})",
                "Rename one of the files: a note's slug is its file name and must be unique."))
            continue
        slugs[slug] = rel
        wanted.append(NoteFiles.of(rel, slug, data, sidecar_rel,
                                   files.extractions[sidecar_rel] if sidecar_rel is not None else None))
    named, problems = problems, []  # the files', settings', bases', notebooks' then names'; now the rest's
    each: dict[str, list[Problem]] = {}
    for note_files_of, parsed in zip(wanted, parser(wanted), strict=True):
        if isinstance(parsed, Problem):
            each[note_files_of.rel] = [parsed]
            continue
        each[note_files_of.rel] = parsed.problems
        if parsed.note is not None:
            notes[note_files_of.slug] = parsed.note
            note_files[note_files_of.slug] = note_files_of.rel
            sources[note_files_of.slug] = parsed.digest
    for stem, rel in sorted(sidecars.items()):
        try:
            data = _read(rel, files.extractions[rel])
        except Unreadable as exc:
            problems.append(exc.problem)
            continue
        readable, _value = _read_yaml(rel, data, problems)
        if readable:
            problems.append(Problem(
                rel, None, "orphan-extractions", f"no note {stem}.md goes with this extractions file",
                "Rename it after its note (<note>.extractions.yaml, beside the note) or delete it."))

    proposals = []
    for rel, data in sorted(files.proposals.items()):
        readable, value = _read_yaml(rel, data, problems)
        if readable and value is not None:
            proposal = parse_proposal(rel, value, problems)
            if proposal is not None:
                proposals.append(proposal)
    records = VerificationRecords()
    for rel, data in sorted(files.verdicts.items()):
        readable, value = _read_yaml(rel, data, problems)
        if readable:
            parse_verdicts(rel, value, problems, records)
    for rel, data in sorted(files.contestations.items()):
        readable, value = _read_yaml(rel, data, problems)
        if readable:
            parse_contestations(rel, value, problems, records)
    oppositions: dict[str, OppositionRecord] = {}
    for rel, data in sorted(files.oppositions.items()):
        readable, value = _read_yaml(rel, data, problems)
        if readable:
            record = parse_oppositions(rel, value, problems)
            if record is not None and record.wiki in oppositions:  # one would silently hide the other
                problems.append(Problem(
                    rel, None, "duplicate-oppositions",
                    f"the oppositions of {record.wiki!r} are already recorded in {oppositions[record.wiki].file}",
                    "Keep one oppositions file per wiki: move these pairs into that file."))
            elif record is not None:
                oppositions[record.wiki] = record
    corpus = Corpus(
        settings=settings,
        bases=dict(sorted(bases.items())),
        notebooks=dict(sorted(notebooks.items())),
        notes=dict(sorted(notes.items())),
        assets=frozenset(files.assets),
        asset_paths=dict(sorted(files.asset_paths.items())),
        proposals=tuple(proposals),
        verification=records,
        oppositions=oppositions,
        sources=dict(sorted(sources.items())),
    )
    return Loaded(files, corpus, named[:head], named[head:], each, problems)


def _read_yaml(rel: str, data: bytes, problems: list[Problem]) -> tuple[bool, Any]:
    """Decode and parse one YAML file; ``(False, None)`` when it cannot be read at all."""
    text, decode_problems = decode_text(data, rel)
    problems += decode_problems
    if text is None:
        return False, None
    value, yaml_problems = parse_yaml(text, rel)
    problems += yaml_problems
    return not (value is None and yaml_problems), value


def _valid_slug(slug: str, rel: str, what: str, problems: list[Problem]) -> bool:
    if SLUG_PATTERN.match(slug):
        too_long = slug_too_long(slug, f"slug of this {what}")
        if too_long is not None:  # an error, yet the file is read: its other problems are reported too
            problems.append(Problem(rel, None, "name-too-long", too_long,
                                    f"Shorten the file name to at most {MAX_SLUG} characters before "
                                    f"{posixpath.splitext(rel)[1]}, and every place that names it."))
        return True
    problems.append(Problem(
        rel, None, "invalid-slug", f"{slug!r} cannot be the slug of a {what}",
        "Rename the file with lowercase letters and digits, separated by single hyphens or underscores "
        "(e.g. cr-2024-09-12.md)."))
    return False


def _parse_keyed(sources: dict[str, bytes], what: str, parse: Callable[[str, str, Any, list[Problem]], T],
                 problems: list[Problem]) -> dict[str, T]:
    parsed: dict[str, T] = {}
    for rel, data in sorted(sources.items()):
        slug = posixpath.basename(rel)[: -len(".yaml")]
        if not _valid_slug(slug, rel, what, problems):
            continue
        readable, value = _read_yaml(rel, data, problems)
        if not readable:
            continue
        parsed[slug] = parse(rel, slug, value, problems)
    return parsed


def _parse_settings(data: bytes | None, problems: list[Problem]) -> SiteSettings:
    fallback = SiteSettings(title="Carnet", base_url="/", language="fr", licence=Licence("all rights reserved"))
    if data is None:
        problems.append(Problem(
            SETTINGS_FILE, None, "missing-settings", "the content directory has no carnet.yaml",
            "Create carnet.yaml with at least 'title:', 'base_url:', 'language:' and 'licence:'."))
        return fallback
    text, decode_problems = decode_text(data, SETTINGS_FILE)
    problems += decode_problems
    if text is None:
        return fallback
    value, yaml_problems = parse_yaml(text, SETTINGS_FILE)
    problems += yaml_problems
    f = Fields(value, SETTINGS_FILE, "carnet.yaml", problems)
    base_url = f.text("base_url", hint="Add 'base_url: https://…/', the address the site is published at.")
    if base_url and not base_url.endswith("/"):
        base_url += "/"
    address_problem = site_address_problem(base_url) if base_url else None
    if address_problem is not None:
        f.error("base_url", "invalid-value", f"base_url {base_url!r} cannot be the site's address: {address_problem}",
                "Write the full address the site is published at, e.g. https://example.org/wiki/: canonical "
                "links and annotation identifiers are absolute.")
        base_url = ""
    licence = _parse_licence(f)
    extra_keys = ("llm", "embeddings", "verification", "selection", "crawlers", "outputs", "csp")
    f.check_known(("title", "base_url", "language", "licence", "description", "contest_url", *extra_keys))
    contest_url = f.text("contest_url", "")
    if contest_url and (not contest_url.startswith(("http://", "https://", "mailto:")) or "{claim}" not in contest_url
                        or not link_is_safe(contest_url) or any(ch <= " " or ch == "\x7f" for ch in contest_url)):
        f.error("contest_url", "invalid-value", "contest_url must be an http(s) or mailto: URL holding {claim}, with no space or control character "
                "(percent-encode them)",
                "e.g. 'mailto:cvl@example.org?subject=Contestation%20{claim}' or an issue tracker's "
                "'https://…/issues/new?title={claim}'.")
        contest_url = ""
    _check_outputs(f)
    _check_csp(f)
    _check_selection(f)
    language = f.text("language", "fr")
    if not LANGUAGE_TAG.fullmatch(language):  # it names the UI strings' file and the pages' lang attribute
        f.error("language", "invalid-value", f"language {language[:80]!r} is not a language tag",
                "Write a BCP 47 tag such as 'fr', 'en' or 'fr-CA'.")
        language = "fr"
    return SiteSettings(
        title=f.text("title", hint="Add 'title: …', the site's name."),
        base_url=base_url or "/",
        language=language,
        licence=licence,
        description=f.text("description", ""),
        contest_url=contest_url,
        extra={key: f.data[key] for key in extra_keys if key in f.data},
    )


IMAGE_HOST = re.compile(r"(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
"""A host name as ``csp: img_hosts`` lists it (lower case; ``*.`` for every subdomain)."""

LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}")
"""A BCP 47 language tag, as far as a site needs one (language, script, region, variants)."""

OUTPUT_SIZES = {"llms_full_cap": "bytes", "page_budget_kb": "KB, gzipped", "feed_entries": "entries of each feed"}
"""The sizes ``outputs:`` sets (each a whole number above 0), and their unit."""
_OUTPUT_EXAMPLES = {"llms_full_cap": 5000000, "page_budget_kb": 60, "feed_entries": 50}


def _check_outputs(f: Fields) -> None:
    """``outputs:``: a mapping of the sizes the emitters read (a bad one stops the build here,
    at its line, rather than later without one)."""
    value = f.data.get("outputs")
    if value is None:
        return
    if not isinstance(value, YamlMap):
        f.error("outputs", "wrong-type", "'outputs' must be a mapping",
                "e.g. 'outputs:' then '  page_budget_kb: 60' on the next line.")
        return
    sub = Fields(value, f.file, "outputs", f.problems, line=f.line_of("outputs"))
    sub.check_known((*OUTPUT_SIZES, "raw_html"))
    if "raw_html" in value and not isinstance(value.get("raw_html"), bool):
        sub.error("raw_html", "invalid-value", f"outputs.raw_html must be true or false, not {value.get('raw_html')!r}",
                  "Write 'raw_html: false' to show every raw HTML tag of the notes as text, or remove it "
                  "(the few allowed tags, such as <a name> and <br>, are then written as HTML).")
    for key, unit in OUTPUT_SIZES.items():
        size = value.get(key)
        if key in value and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
            sub.error(key, "invalid-value", f"outputs.{key} must be a whole number above 0 ({unit}), not {size!r}",
                      f"Write e.g. '{key}: {_OUTPUT_EXAMPLES[key]}', or remove it for the default.")


def _check_csp(f: Fields) -> None:
    """``csp:``: ``img_hosts``, the hosts whose images the site's Content-Security-Policy lets
    pages show (each a host name, ``*.`` before it for its subdomains): they are written into
    every page's policy, so nothing but a host name may stand there."""
    value = f.data.get("csp")
    if value is None:
        return
    if not isinstance(value, YamlMap):
        f.error("csp", "wrong-type", "'csp' must be a mapping",
                "e.g. 'csp:' then '  img_hosts: [images.example.org]' on the next line.")
        return
    sub = Fields(value, f.file, "csp", f.problems, line=f.line_of("csp"))
    sub.check_known(("img_hosts",))
    hosts = value.get("img_hosts")
    if "img_hosts" in value and (not isinstance(hosts, list) or not all(
            isinstance(host, str) and IMAGE_HOST.fullmatch(host) for host in hosts)):
        sub.error("img_hosts", "invalid-value", f"csp.img_hosts must be a list of host names, not {hosts!r}",
                  "Write each host alone, without scheme or path: 'img_hosts: [images.example.org, "
                  "*.githubusercontent.com]'.")


def _check_selection(f: Fields) -> None:
    """``selection:``: a mapping whose ``threshold``, when given, is a number from 0 to 100
    (left out: each perimeter gets the automatic rule's)."""
    value = f.data.get("selection")
    if value is None:
        return
    if not isinstance(value, YamlMap):
        f.error("selection", "wrong-type", "'selection' must be a mapping",
                "e.g. 'selection:' then '  threshold: 40' on the next line, or remove it for the automatic threshold.")
        return
    threshold = value.get("threshold")
    if "threshold" in value and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                 or not 0 <= threshold <= 100):
        sub = Fields(value, f.file, "selection", f.problems, line=f.line_of("selection"))
        sub.error("threshold", "invalid-value", f"selection.threshold must be a number from 0 to 100, not {threshold!r}",
                  "Write e.g. 'threshold: 40', or remove it: each perimeter then gets the threshold of the automatic "
                  "rule (the largest at which no group of three or more chains).")


def _parse_licence(f: Fields) -> Licence:
    value = f.data.get("licence")
    if isinstance(value, YamlMap):
        sub = Fields(value, f.file, "licence", f.problems)
        sub.check_known(("name", "url"))
        url = sub.text("url", "") or None
        if url is not None and (not link_is_safe(url) or not url.startswith(("http://", "https://"))):
            sub.error("url", "invalid-value", f"licence url {url!r} is not an http(s) address",
                      "Link the licence's text with its full address, e.g. "
                      "https://creativecommons.org/licenses/by-sa/4.0/ (javascript:, data: and other schemes are "
                      "refused: the link is on every page).")
            url = None
        return Licence(sub.text("name"), url)
    if not f.has("licence"):
        f.error(None, "missing-field", "carnet.yaml has no 'licence'",
                "Say under which licence the content is published, e.g. 'licence: CC BY-SA 4.0'.")
        return Licence("all rights reserved")
    return Licence(f.text("licence"))


def _parse_base(rel: str, slug: str, value: Any, problems: list[Problem]) -> Base:
    f = Fields(value, rel, f"base {slug!r}", problems)
    f.check_known(("title", "description", "notebooks"))
    notebooks = f.text_list("notebooks")
    return Base(slug, f.text("title"), f.text("description", ""), tuple(notebooks), SourceRef(rel, f.line),
                _item_lines({"notebooks": notebooks}))


def _item_lines(lists: dict[str, YamlList]) -> dict[tuple[str, str], int]:
    return {(key, value): values.line_of(index)
            for key, values in lists.items() for index, value in enumerate(values)}


def _parse_notebook(rel: str, slug: str, value: Any, problems: list[Problem]) -> Notebook:
    f = Fields(value, rel, f"notebook {slug!r}", problems)
    f.check_known(("title", "description", "writing_guide", "axes", "pinned", "order", "visibility",
                   "authors", "pseudonym_prefix", "pseudonyms"))
    axes = _parse_axes(f)
    pseudonyms: dict[str, str] = {}
    raw_pseudonyms = f.data.get("pseudonyms")
    if isinstance(raw_pseudonyms, YamlMap):
        for name, shown in raw_pseudonyms.items():
            if isinstance(name, str) and isinstance(shown, str) and shown.strip():
                pseudonyms[name.strip()] = shown.strip()
            else:
                f.error(None, "wrong-type", f"pseudonym of {name!r} must be a non-empty string",
                        "Write 'Full Name: Pseudonym' lines.", line=raw_pseudonyms.line_of(name))
    elif raw_pseudonyms is not None:
        f.error("pseudonyms", "wrong-type", "'pseudonyms' must be a mapping of names to pseudonyms",
                "Write 'Full Name: Pseudonym' lines under 'pseudonyms:'.")
    pinned, order = f.text_list("pinned"), f.text_list("order")
    return Notebook(
        slug=slug,
        title=f.text("title"),
        description=f.text("description", ""),
        writing_guide=f.text("writing_guide", ""),
        axes=axes,
        pinned=tuple(pinned),
        order=tuple(order),
        visibility=f.choice("visibility", Visibility, Visibility.PUBLIC),
        author_rule=f.choice("authors", AuthorRule, AuthorRule.FULL_NAME),
        pseudonym_prefix=f.text("pseudonym_prefix", "Participant·e"),
        pseudonyms=pseudonyms,
        source=SourceRef(rel, f.line),
        item_lines=_item_lines({"pinned": pinned, "order": order}),
    )


def _parse_axes(f: Fields) -> tuple[Axis, ...]:
    raw = f.data.get("axes")
    if raw is None:
        return ()
    if not isinstance(raw, YamlMap):
        f.error("axes", "wrong-type", "'axes' must map each axis key to its title and categories",
                "See docs/content-format.md, section Notebooks.")
        return ()
    if len(raw) > MAX_AXES:
        f.error("axes", "too-many-axes", f"{len(raw)} axes; a notebook has at most {MAX_AXES}",
                "Merge axes, or move a list of categories to another notebook.")
    axes = []
    for key, spec in raw.items():
        line = raw.line_of(key)
        if not isinstance(key, str) or not SLUG_PATTERN.match(key):
            f.error(None, "invalid-slug", f"axis key {key!r} is not a slug",
                    "Use lowercase letters, digits and hyphens (e.g. theme, school-year).", line=line)
            continue
        too_long = slug_too_long(key, "axis key")  # the folder of its category pages
        if too_long is not None:
            f.error(None, "name-too-long", too_long,
                    f"Shorten the key to at most {MAX_SLUG} characters (its title can stay long).", line=line)
        sub = Fields(spec, f.file, f"axis {key!r}", f.problems, line=line)
        sub.check_known(("title", "categories"))
        categories = sub.text_list("categories")
        if not categories:
            sub.error(None, "missing-field", f"axis {key!r} has no categories",
                      "List its categories under 'categories:'.")
        seen: dict[str, str] = {}
        for index, category in enumerate(categories):
            folded = category_slug(category)  # the page's address, as category_path writes it
            if folded in seen:
                sub.error(None, "duplicate-category",
                          f"categories {seen[folded]!r} and {category!r} of axis {key!r} have the same address",
                          "Remove one, or make their names differ by more than case or accents.",
                          line=categories.line_of(index))
            seen[folded] = category
        axes.append(Axis(key, sub.text("title", key), tuple(categories)))
    return tuple(axes)


def _forbidden_left_out(text: str, rel: str, problems: list[Problem]) -> str:
    """A note's text without the characters no page may hold (a DEL pasted from a terminal,
    a form feed): each line holding some is named in a warning, and the rest of the text
    is published as it is. Lines keep their numbers: no line feed is ever forbidden."""
    if FORBIDDEN_CHARACTERS.search(text) is None:
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        found = sorted(set(FORBIDDEN_CHARACTERS.findall(line)))
        if found:
            named = ", ".join(f"U+{ord(character):04X}" for character in found)
            problems.append(Problem(
                rel, number, "control-character",
                f"this line holds {named}, a character no web page or feed may hold: it is left out of the site",
                "Delete it (an editor showing invisible characters finds it), or write what it stood for.",
                severity=Severity.WARNING))
    return without_forbidden(text)


def _comments_left_out(body: str, body_line: int, rel: str, problems: list[Problem]) -> str:
    """A note's body without its HTML comments (what markdown reads as ``<!-- … -->``, never
    one in code): hidden text is published nowhere and counted in no coverage. Lines keep
    their numbers. A comment never closed hides the rest of the note: said, at its line."""
    ranges = comment_ranges(body)
    for start, end in ranges:
        if not body[start:end].endswith("-->"):
            problems.append(Problem(
                rel, body_line + body.count("\n", 0, start), "unclosed-comment",
                "this HTML comment ('<!--') is never closed: everything after it is hidden and left out of the site",
                "Close it with '-->' where the hidden text ends.", severity=Severity.WARNING))
    return without_comments(body, ranges)


def _parse_note(rel: str, slug: str, data: bytes, sidecar: tuple[str, Any] | None,
                problems: list[Problem]) -> Note | None:
    text, decode_problems = decode_text(data, rel)
    problems += decode_problems
    if text is None:
        return None
    text = _forbidden_left_out(text, rel, problems)
    doc = split_front_matter(text, rel)
    problems += doc.problems
    if doc.meta is None and doc.problems:
        return None
    body = _comments_left_out(doc.body, doc.body_line, rel, problems)
    f = Fields(doc.meta, rel, f"note {slug!r}", problems, line=2)
    note_type = f.choice("type", NoteType, NoteType.NOTE)
    article_keys = ("perimeter", "proposed", "adoption", "history", "supersedes")
    answer_keys = ANSWER_KEYS
    later_keys = ("generated",)
    if "extractions" in f.data:
        f.error("extractions", "misplaced-extractions", "extractions are not read from the front matter",
                f"Move them to {slug}.extractions.yaml beside the note (see docs/content-format.md).")
    f.check_known(("title", "date", "type", "authors", "summary", "notebooks", "media", "duration", "extractions", "aliases",
                   *article_keys, *answer_keys, *later_keys))
    if note_type is NoteType.ANSWER:
        article: ArticleSpec | None = parse_answer(f, body)
        misplaced = dict.fromkeys(article_keys, "an answer's perimeter is the passages it retrieved ('asked: retrieved:'): remove the field")
    elif note_type is NoteType.NOTE:
        article = None
        misplaced = dict.fromkeys(article_keys, "it belongs to wiki articles and syntheses: set 'type: wiki' or 'type: synthesis', " "or remove the field")
    else:
        article = parse_article(f)
        # a wiki is living: it has no frozen perimeter, adoption or lifecycle
        misplaced = {key: "a wiki article is living: make it a directed synthesis ('type: synthesis') to freeze "
                          "and adopt it" for key in ("proposed", "adoption", "history", "supersedes")
                     if note_type is NoteType.WIKI}
    if note_type is not NoteType.ANSWER:
        misplaced.update(dict.fromkeys(answer_keys, "it belongs to saved answers ('type: answer', written by carnet ask --save): " "remove the field"))
    for key, hint in misplaced.items():
        if key in f.data:
            f.error(key, "invalid-value", f"{key!r} does not belong to a {note_type.value}",
                    hint[0].upper() + hint[1:] + ".")
    media = f.text("media", "") or None
    if media is not None:
        media = _resolve_relative(rel, media)
        if media is None:
            f.error("media", "invalid-path", "'media' must be a relative path inside the content directory",
                    "Write a path relative to the note, e.g. ../../assets/seance.ogg.")
    extractions: tuple[Extraction, ...] = ()
    if sidecar is not None:
        extractions = _parse_extractions(sidecar[0], slug, sidecar[1], problems)
    return Note(
        slug=slug,
        title=f.text("title", hint="Add 'title: …' to the front matter."),
        type=note_type,
        date=f.date("date", required=note_type is not NoteType.WIKI),  # a wiki is living: undated
        authors=tuple(f.text_list("authors")),
        summary=f.text("summary", ""),
        memberships=_parse_memberships(f),
        media=media,
        duration=_parse_duration(f),
        body=body,
        body_line=doc.body_line,
        extractions=extractions,
        source=SourceRef(rel, 1),
        extra={key: f.data[key] for key in later_keys if key in f.data},
        article=article,
        field_lines={str(key): line for key, line in f.data.key_lines.items()},
        aliases=tuple(f.text_list("aliases")),
    )


def _parse_duration(f: Fields) -> float | None:
    """``duration: 104.6`` (seconds) or ``duration: "00:01:44.6"``."""
    if not f.has("duration"):
        return None
    value = f.data["duration"]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    if isinstance(value, str):
        parts = value.strip().split(":")
        try:
            numbers = [float(p) for p in parts]
        except ValueError:
            numbers = []
        if 1 <= len(numbers) <= 3 and all(n >= 0 for n in numbers):
            seconds = 0.0
            for number in numbers:
                seconds = seconds * 60 + number
            if seconds > 0:
                return seconds
    f.error("duration", "wrong-type", f"'duration' of {f.what} is not a length: {value!r}",
            "Write the recording's length in seconds (104.6) or as hh:mm:ss.")
    return None


def _resolve_relative(from_file: str, target: str) -> str | None:
    """A path written relative to ``from_file`` → content-relative path, or ``None``
    when it is absolute or climbs out of the content directory."""
    if not target or target.startswith("/") or "\\" in target or ":" in target.split("/")[0]:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(from_file), target))
    if joined.startswith("../") or joined == "..":
        return None
    return unicodedata.normalize("NFC", joined)


def _parse_memberships(f: Fields) -> tuple[Membership, ...]:
    raw = f.data.get("notebooks")
    if raw is None:
        return ()
    if isinstance(raw, str):  # one notebook, no categories
        single = YamlList([raw])
        single.line, single.item_lines = f.line_of("notebooks"), [f.line_of("notebooks")]
        raw = single
    if isinstance(raw, YamlList):  # a plain list of notebooks, no categories
        raw_map = YamlMap()
        raw_map.line, raw_map.key_lines = raw.line, {}
        for index, item in enumerate(raw):
            if isinstance(item, str):
                raw_map[item] = None
                raw_map.key_lines[item] = raw.line_of(index)
            else:
                f.error(None, "wrong-type", "each notebook of the list must be a notebook slug",
                        "Write 'notebooks:' as a mapping: notebook slug → its categories.",
                        line=raw.line_of(index))
        raw = raw_map
    if not isinstance(raw, YamlMap):
        f.error("notebooks", "wrong-type", "'notebooks' must map each notebook to the note's categories in it",
                "Write e.g. 'notebooks:\\n  cvl:\\n    theme: [Budget]'.")
        return ()
    memberships = []
    for notebook, spec in raw.items():
        line = raw.line_of(notebook)
        categories: dict[str, tuple[str, ...]] = {}
        if spec is not None:
            sub = Fields(spec, f.file, f"the membership in {notebook!r}", f.problems, line=line)
            for axis in sub.data:
                categories[str(axis)] = tuple(sub.text_list(axis))
            categories_lines = {str(axis): sub.line_of(axis) for axis in sub.data}
        else:
            categories_lines = {}
        memberships.append(Membership(str(notebook), categories, line, categories_lines))
    return tuple(memberships)


def _parse_extractions(rel: str, note: str, value: Any, problems: list[Problem]) -> tuple[Extraction, ...]:
    f = Fields(value, rel, "the extractions file", problems)
    f.check_known(("extractions",))
    raw = f.data.get("extractions")
    if raw is None:
        return ()
    if not isinstance(raw, YamlList):
        f.error("extractions", "wrong-type", "'extractions' must be a list", "Write one '- id: …' per extraction.")
        return ()
    extractions = []
    for index, item in enumerate(raw):
        e = Fields(item, rel, f"extraction {index + 1}", problems, line=raw.line_of(index))
        e.check_known(("id", "quote", "prefix", "suffix", "occurrence", "kind", "author", "date",
                       "masked", "comments"))
        ext_id = e.text("id", hint="Give the extraction a stable id, unique in the whole content.")
        if ext_id and not ID_PATTERN.match(ext_id):
            e.error("id", "invalid-id", f"extraction id {ext_id!r} has characters ids cannot use",
                    "Use letters, digits, '-', '_' and '.' (e.g. cvl-2024-09-budget-1).")
            ext_id = ""
        e.what = f"extraction {ext_id!r}" if ext_id else e.what
        quote = e.text("quote", hint="Copy the exact passage of the note under 'quote:'.")
        comments = _parse_comments(e, ext_id)
        if not ext_id or not quote:
            continue
        extractions.append(Extraction(
            id=ext_id, note=note, quote=quote,
            prefix=e.text("prefix", ""), suffix=e.text("suffix", ""),
            occurrence=e.integer("occurrence"),
            kind=e.text("kind", "passage"),
            author=e.text("author", hint="Say who marked the passage ('author: …')."),
            date=e.date("date"),
            masked=e.flag("masked", False),
            comments=comments,
            source=SourceRef(rel, e.line),
            quote_span=e.data.value_spans.get("quote"),
        ))
    return tuple(extractions)


def _parse_comments(e: Fields, extraction: str) -> tuple[Comment, ...]:
    raw = e.data.get("comments")
    if raw is None:
        return ()
    if not isinstance(raw, YamlList):
        e.error("comments", "wrong-type", "'comments' must be a list", "Write one '- id: …' per comment.")
        return ()
    comments = []
    for index, item in enumerate(raw):
        c = Fields(item, e.file, f"comment {index + 1} of {e.what}", e.problems, line=raw.line_of(index))
        c.check_known(("id", "author", "date", "stance", "text", "text_sha256", "withdrawn"))
        comment_id = c.text("id", hint="Give the comment a stable id, unique in the whole content.")
        if comment_id and not ID_PATTERN.match(comment_id):
            c.error("id", "invalid-id", f"comment id {comment_id!r} has characters ids cannot use",
                    "Use letters, digits, '-', '_' and '.'.")
            comment_id = ""
        c.what = f"comment {comment_id!r}" if comment_id else c.what
        stance = c.text("stance", "neutral")
        if stance not in STANCES:
            c.error("stance", "invalid-value", f"stance {stance!r} of {c.what} is unknown",
                    f"Use one of: {', '.join(STANCES)}.")
        withdrawn = _parse_withdrawal(c)
        text = c.text("text", "") or None
        text_hash = c.text("text_sha256", "")
        if text is not None:
            computed = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if text_hash and text_hash != computed:
                c.error("text_sha256", "hash-mismatch", f"the text of {c.what} no longer matches its text_sha256",
                        "A comment's text is not edited once recorded: restore it, or remove text_sha256 "
                        "if the comment was never part of an adopted act.")
            text_hash = computed
        elif withdrawn is None:
            c.error(None, "missing-field", f"{c.what} has no 'text'", "Add the comment's text under 'text:'.")
        elif not text_hash:
            c.error(None, "missing-field", f"withdrawn {c.what} keeps neither its text nor its text_sha256",
                    "Keep 'text_sha256:' (the hash of the withdrawn text) for the integrity of adopted acts.")
        date = c.date("date", required=True)
        if not comment_id or date is None:
            continue
        comments.append(Comment(
            id=comment_id, extraction=extraction,
            author=c.text("author", hint="Say who wrote the comment ('author: …')."),
            date=date, stance=Stance(stance) if stance in STANCES else Stance.NEUTRAL, text=text,
            text_sha256=text_hash, withdrawn=withdrawn,
            source=SourceRef(e.file, c.line),
        ))
    return tuple(comments)


def _parse_withdrawal(c: Fields) -> Withdrawal | None:
    raw = c.data.get("withdrawn")
    if raw is None or raw is False:
        return None
    if not isinstance(raw, YamlMap):
        c.error("withdrawn", "wrong-type", f"'withdrawn' of {c.what} must give the date and the reason",
                "Write 'withdrawn:' then, indented, 'date: YYYY-MM-DD' and 'reason: …'.")
        return Withdrawal(dt.date.min, "")
    w = Fields(raw, c.file, f"the withdrawal of {c.what}", c.problems, line=c.line_of("withdrawn"))
    w.check_known(("date", "reason"))
    date = w.date("date", required=True)
    reason = w.text("reason", hint="Say why the comment was withdrawn ('reason: …'); the tombstone shows it.")
    if date is None:
        return None
    return Withdrawal(date, reason)
