"""`carnet serve` patches the content it read last with the paths its watcher saw change
(:func:`generator.corpus.load.patch_content_files`) rather than walking every note again:
what a patch gives is what a walk gives now — the same files by kind, the same problems in
the same order, the same corpus parsed from them — whatever the change, and a patch looks
at the paths named alone."""

from __future__ import annotations

import os
import random
import shutil
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from generator.corpus import load
from generator.corpus.load import (
    ContentFiles,
    Loaded,
    NoteFiles,
    ParsedNote,
    Unread,
    content_digest,
    parse_content,
    parse_each,
    parse_loaded,
    parse_patched,
    patch_content_files,
    read_content_dir,
)
from generator.corpus.publication import publication_patched, publish
from generator.problems import Problem
from support.corpus import replace, write

EXAMPLE = Path(__file__).resolve().parents[1] / "content"
NOTE = "---\ntitle: {title}\ndate: 2025-01-0{day}\nnotebooks:\n  veille:\n---\n\n{body}\n"
SIDECAR = ("extractions:\n  - id: {id}\n    quote: {quote}\n    author: A\n    date: 2025-01-02\n")


def _note(title: str, body: str = "Un texte.", day: int = 2) -> str:
    return NOTE.format(title=title, body=body, day=day)


def _held(rel: str, data: bytes | Unread) -> tuple[str, bytes]:
    """A note's or sidecar's digest and the bytes the file holds now: a carried digest that is
    no longer the file's is a difference."""
    read = load._read(rel, data)
    return content_digest(data), read


def _view(files: ContentFiles) -> dict[str, Any]:
    """What a walk gives, bytes held or left unread alike."""
    return {  # in order too: a walk's order is its files' order
        "settings": files.settings, "bases": list(files.bases.items()), "notebooks": list(files.notebooks.items()),
        "notes": [(rel, _held(rel, data)) for rel, data in files.notes.items()],
        "extractions": [(rel, _held(rel, data)) for rel, data in files.extractions.items()],
        **{kind: list(getattr(files, kind).items()) for kind in ("proposals", "verdicts", "contestations", "oppositions")},
        "assets": files.assets, "asset_paths": list(files.asset_paths.items()), "problems": files.problems,
    }


def _parsed(files: ContentFiles) -> tuple[Any, list[Problem]]:
    return parse_content(files)


class Tree:
    """A content tree, the walk it was read by, and each change patched in and held to a walk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.last = read_content_dir(root)
        self.seen = _view(self.last)

    def changed(self, *rels: str, same: bool = False) -> ContentFiles:
        patched = patch_content_files(self.last, self.root, rels)
        assert patched is not None, f"{rels}: could not be patched"
        walked = read_content_dir(self.root)
        view = _view(patched)
        assert view == _view(walked), f"after a change of {rels}"
        assert _parsed(patched) == _parsed(walked), f"parsed, after a change of {rels}"
        if same:
            assert view == self.seen, f"{rels} changed nothing, yet the patch differs"
        else:
            assert view != self.seen, f"the change of {rels} was not seen"
        self.last, self.seen = patched, view
        return patched


@pytest.fixture
def tree(small: Path) -> Tree:
    return Tree(small)


def test_a_body_edit_reads_that_note_alone_and_carries_the_others_unread(tree: Tree, monkeypatch: Any) -> None:
    note = tree.root / "notes" / "conseil-b.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nUne phrase de plus.\n", encoding="utf-8")
    read: list[str] = []
    real = load._bytes_of

    def counted(path: str) -> bytes:
        read.append(os.path.relpath(path, tree.root))
        return real(path)

    def forbidden(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a patch for one file lists no folder")

    monkeypatch.setattr(load, "_bytes_of", counted)
    monkeypatch.setattr(os, "scandir", forbidden)
    patched = patch_content_files(tree.last, tree.root, ["notes/conseil-b.md"])
    monkeypatch.undo()
    assert patched is not None
    assert read == ["notes/conseil-b.md"]
    assert isinstance(patched.notes["notes/conseil-b.md"], bytes)
    carried = {rel for rel, data in patched.notes.items() if isinstance(data, Unread)}
    assert carried == set(patched.notes) - {"notes/conseil-b.md"}, "the notes not edited are carried unread"
    assert all(isinstance(data, Unread) for data in patched.extractions.values())
    assert _view(patched) == _view(read_content_dir(tree.root))
    assert _parsed(patched) == _parsed(read_content_dir(tree.root))
    assert patched.notes["notes/conseil-b.md"] != tree.last.notes["notes/conseil-b.md"]


def test_a_carried_note_changed_unseen_is_parsed_as_it_is_now_never_stale(tree: Tree) -> None:
    """A note carried unread is read when it must be parsed, and keyed by the bytes read: a
    change the watcher missed is never published as the bytes of the last walk."""
    patched = patch_content_files(tree.last, tree.root, ["notes/conseil-a.md"])
    assert patched is not None and isinstance(patched.notes["notes/conseil-b.md"], Unread)
    other = tree.root / "notes" / "conseil-b.md"
    other.write_text(other.read_text(encoding="utf-8") + "\nEn douce.\n", encoding="utf-8")
    corpus, problems = parse_content(patched)
    assert "En douce." in corpus.notes["conseil-b"].body
    assert (corpus, problems) == parse_content(read_content_dir(tree.root))


def test_notes_added_removed_and_renamed(tree: Tree) -> None:
    write(tree.root, "notes/nouvelle.md", _note("Nouvelle"))
    tree.changed("notes/nouvelle.md")
    (tree.root / "notes" / "conseil-d.md").unlink()
    tree.changed("notes/conseil-d.md")
    (tree.root / "notes" / "nouvelle.md").rename(tree.root / "notes" / "renommee.md")
    tree.changed("notes/nouvelle.md", "notes/renommee.md")
    write(tree.root, "notes/sous/dossier/profonde.md", _note("Profonde"))  # a new folder: named alone
    tree.changed("notes/sous")
    write(tree.root, "notes/Mal Nommee.md", _note("Mal nommée"))  # a slug refused
    tree.changed("notes/Mal Nommee.md")
    write(tree.root, "notes/sous/renommee.md", _note("Doublon"))  # a slug taken twice
    tree.changed("notes/sous/renommee.md")
    write(tree.root, "notes/cassee.md", b"\xff\xfe\x00 pas du texte")
    tree.changed("notes/cassee.md")
    write(tree.root, "notes/lourde.md", b"x" * (load.MAX_FILE_BYTES + 1))
    tree.changed("notes/lourde.md")
    shutil.rmtree(tree.root / "notes" / "sous")
    tree.changed("notes/sous")


def test_sidecars_added_edited_orphaned_and_removed(tree: Tree) -> None:
    body = (tree.root / "notes" / "conseil-c.md").read_text(encoding="utf-8")
    quote = next(line for line in body.split("\n")[body.split("\n").index("---", 1) + 1:] if line.strip())
    write(tree.root, "notes/conseil-c.extractions.yaml", SIDECAR.format(id="c-1", quote=quote.strip()))
    tree.changed("notes/conseil-c.extractions.yaml")
    write(tree.root, "notes/conseil-c.extractions.yaml", "extractions: [oops\n")
    tree.changed("notes/conseil-c.extractions.yaml")
    (tree.root / "notes" / "conseil-c.md").unlink()  # its sidecar is now an orphan
    tree.changed("notes/conseil-c.md")
    (tree.root / "notes" / "conseil-c.extractions.yaml").unlink()
    tree.changed("notes/conseil-c.extractions.yaml")


def test_settings_bases_and_notebooks(tree: Tree) -> None:
    settings = tree.root / "carnet.yaml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace("Petit carnet de test", "Un autre titre"), encoding="utf-8")
    tree.changed("carnet.yaml")
    settings.unlink()
    tree.changed("carnet.yaml")
    settings.write_text(text, encoding="utf-8")
    tree.changed("carnet.yaml")
    base = tree.root / "bases" / "reseau.yaml"
    base.write_text(base.read_text(encoding="utf-8").replace("veille", "club", 1), encoding="utf-8")
    tree.changed("bases/reseau.yaml")
    write(tree.root, "bases/nouvelle.yaml", "title: Nouvelle\nnotebooks: [club]\n")
    tree.changed("bases/nouvelle.yaml")
    write(tree.root, "notebooks/deux/fois.yaml", "title: Trop profond\n")  # not a notebook: unexpected
    tree.changed("notebooks/deux")
    (tree.root / "notebooks" / "club.yaml").unlink()
    tree.changed("notebooks/club.yaml")


def test_records_of_later_commands(tmp_path: Path) -> None:
    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    tree = Tree(root)
    verdict = next((root / "verdicts").iterdir())
    verdict.write_text(verdict.read_text(encoding="utf-8") + "\n# relu\n", encoding="utf-8")
    tree.changed(f"verdicts/{verdict.name}")
    contestation = next((root / "contestations").iterdir())
    contestation.unlink()
    tree.changed(f"contestations/{contestation.name}")
    write(root, "oppositions/cvl-wiki-budget.yaml", "wiki: cvl-wiki-budget\npairs: []\n")
    tree.changed("oppositions/cvl-wiki-budget.yaml")
    write(root, "oppositions/sous/ignore.yaml", "wiki: x\n")  # a record one folder deeper is no record
    tree.changed("oppositions/sous/ignore.yaml", same=True)
    write(root, "proposals/sections/cvl-wiki-budget/p1.yaml", "pas: [une proposition\n")
    tree.changed("proposals/sections")
    write(root, "proposals/autre.txt", "ignored")  # other files of proposals/ belong to later commands
    tree.changed("proposals/autre.txt", same=True)
    shutil.rmtree(root / "verdicts")
    tree.changed("verdicts")


def test_assets_and_the_reserved_folder(tree: Tree) -> None:
    write(tree.root, "assets/img/a.png", b"\x89PNG\r\n\x1a\n")
    write(tree.root, "assets/img/b.csv", "a,b\n")
    tree.changed("assets/img")  # a folder with files: named by the folder alone
    write(tree.root, "assets/img/page.html", "<html></html>")  # refused
    tree.changed("assets/img/page.html")
    (tree.root / "assets" / "img").rename(tree.root / "assets" / "images")  # a move names both ends
    tree.changed("assets/img", "assets/images")
    write(tree.root, "cache/x/y.bin", b"anything")  # a folder later stages own
    tree.changed("cache/x/y.bin", same=True)
    write(tree.root, "cache/z.bin", b"anything")
    tree.changed("cache/z.bin", same=True)
    os.symlink(tree.root / "assets", tree.root / "cache" / "lien")  # a link to a folder is said, even there
    tree.changed("cache/lien")
    write(tree.root, ".cache-de-l-editeur/n.md", "x")  # hidden: never content
    write(tree.root, "notes/.n.md.swp", "x")
    tree.changed(".cache-de-l-editeur/n.md", "notes/.n.md.swp", same=True)
    write(tree.root, "divers.txt", "x")  # not part of any kind
    tree.changed("divers.txt")


def test_symbolic_links(tree: Tree, tmp_path: Path) -> None:
    outside = tmp_path / "ailleurs"
    write(outside, "secret.md", _note("Secret"))
    write(outside, "images/x.png", b"\x89PNG\r\n\x1a\n")
    note = tree.root / "notes" / "veille-a.md"
    note.unlink()
    os.symlink(outside / "secret.md", note)  # a note now a link: said, never followed
    tree.changed("notes/veille-a.md")
    os.symlink(outside / "images", tree.root / "assets" / "lien")
    tree.changed("assets/lien")
    # a path named under a link is never read through it
    tree.changed("assets/lien/x.png", same=True)
    # what a link is depends on its target, which no watcher of the content sees change
    shutil.rmtree(outside / "images")
    tree.changed()
    # a folder replaced by a link, only a file under it named
    shutil.rmtree(tree.root / "notebooks")
    os.symlink(outside, tree.root / "notebooks")
    tree.changed("notebooks/club.yaml")
    (tree.root / "notebooks").unlink()
    shutil.copytree(Path(__file__).parent / "fixtures" / "small" / "notebooks", tree.root / "notebooks")
    tree.changed("notebooks")


def test_a_folder_replaced_by_a_file_and_a_file_by_a_folder(tree: Tree) -> None:
    shutil.rmtree(tree.root / "bases")
    write(tree.root, "bases", "plus un dossier")
    tree.changed("bases/reseau.yaml")  # only a path that was under it named: the folder is looked at
    (tree.root / "bases").unlink()
    write(tree.root, "bases/ecole.yaml", (Path(__file__).parent / "fixtures" / "small" / "bases" / "ecole.yaml")
          .read_text(encoding="utf-8"))
    tree.changed("bases")
    (tree.root / "notes" / "club-a.md").unlink()
    write(tree.root, "notes/club-a.md/dedans.md", _note("Dedans"))
    tree.changed("notes/club-a.md")
    shutil.rmtree(tree.root / "notes" / "club-a.md")
    write(tree.root, "notes/club-a.md", _note("Club"))
    tree.changed("notes/club-a.md/dedans.md")


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_names_equal_once_normalised(tree: Tree) -> None:
    composed, decomposed = "notes/café.md", _nfd("notes/café.md")
    write(tree.root, composed, _note("Composé"))
    tree.changed(composed)
    write(tree.root, decomposed, _note("Décomposé"))  # the second is refused: one name to readers
    tree.changed(decomposed)
    (tree.root / composed).unlink()  # the other is now published: its bytes are read
    tree.changed(composed)
    (tree.root / decomposed).write_text(_note("Décomposé, revu"), encoding="utf-8")
    tree.changed(composed)  # named composed, as a watcher normalising names would
    os.mkdir(tree.root / "notes" / _nfd("été"))
    write(tree.root, "notes/été/juin.md", _note("Juin"))  # two folders, one name once normalised
    tree.changed("notes/été")
    write(tree.root, _nfd("notes/été/juin.md"), _note("Juin bis"))
    tree.changed(_nfd("notes/été"))
    shutil.rmtree(tree.root / "notes" / "été")
    tree.changed("notes/été")


def test_paths_outside_the_content_change_nothing(tree: Tree, tmp_path: Path) -> None:
    write(tmp_path, "dehors.md", _note("Dehors"))
    tree.changed("../dehors.md", "/etc/passwd", str(tmp_path / "dehors.md"), "notes/../../dehors.md", same=True)
    note = tree.root / "notes" / "conseil-a.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nVu.\n", encoding="utf-8")
    tree.changed("notes/./../notes/conseil-a.md")  # a path written the long way is the same path
    write(tree.root, "notes/ajout.md", _note("Ajout"))
    tree.changed(".")  # the whole content named: it is all looked at


def test_a_path_named_absolute_by_its_real_path_is_the_content_s(tmp_path: Path) -> None:
    """A watcher names real paths; the content may be given through a link."""
    real = tmp_path / "real"
    shutil.copytree(Path(__file__).parent / "fixtures" / "small", real)
    os.symlink(real, tmp_path / "content")
    tree = Tree(tmp_path / "content")
    write(real, "notes/nouvelle.md", _note("Nouvelle"))
    tree.changed(str(real / "notes" / "nouvelle.md"))
    (real / "notes" / "nouvelle.md").unlink()
    tree.changed(str(tmp_path / "content" / "notes" / "nouvelle.md"))


def test_what_cannot_be_patched_says_so(tree: Tree) -> None:
    assert patch_content_files(ContentFiles(), tree.root, ["notes/conseil-a.md"]) is None, "no walk to patch"
    elsewhere = tree.root.parent / "copie"
    shutil.copytree(tree.root, elsewhere)
    assert patch_content_files(tree.last, elsewhere, ["notes/conseil-a.md"]) is None, "another folder's walk"
    assert patch_content_files(tree.last, tree.root, ["notes/a\0.md"]) is None, "a name no file can have"


def test_a_folder_too_deep_to_open_is_walked_again_by_the_caller(tree: Tree) -> None:
    name, descriptor = "d" * 200, os.open(tree.root / "assets", os.O_RDONLY)
    for _ in range(25):  # 25 × 201 bytes: past the 4,096 a path may have (made by descriptor)
        os.mkdir(name, dir_fd=descriptor)
        inner = os.open(name, os.O_RDONLY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    os.close(os.open("figure.csv", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=descriptor))
    os.close(descriptor)
    deep = "/".join([name] * 25)
    tree.changed("assets/" + deep.split("/")[0])
    assert any(p.code == "unreadable-directory" for p in tree.last.problems)
    assert patch_content_files(tree.last, tree.root, [f"assets/{deep}/figure.csv"]) is None
    note = tree.root / "notes" / "conseil-a.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nVu.\n", encoding="utf-8")
    tree.changed("notes/conseil-a.md")  # the rest still patched


def test_the_journal_of_an_interrupted_change_is_seen(tree: Tree) -> None:
    from generator.journal import JOURNAL

    write(tree.root, JOURNAL, '{"command": "carnet apply"}')
    tree.changed(JOURNAL)
    (tree.root / JOURNAL).unlink()
    tree.changed(JOURNAL)


def _random_changes(root: Path, rng: random.Random) -> Iterator[list[str]]:
    """Changes of every kind, each with the paths a watcher names for it."""
    names = ["a", "b", "c", "é", _nfd("é"), "Z"]
    folders = ["notes", "notes/sub", "assets", "assets/sub", "bases", "notebooks", "cache", "verdicts"]
    for _ in range(60):
        folder = rng.choice(folders)
        name = rng.choice(names)
        suffix = rng.choice([".md", ".extractions.yaml", ".yaml", ".png", ".txt"])
        rel = f"{folder}/{name}{suffix}"
        path = root / rel
        action = rng.choice(["write", "write", "write", "remove", "folder", "link", "dir-link"])
        if action == "remove":
            target = rng.choice(folders)
            if (root / target).is_symlink() or (root / target).is_file():
                (root / target).unlink()
            else:
                shutil.rmtree(root / target, ignore_errors=True)
            yield [target]
            continue
        for parent in [path.parent, *path.parent.parents]:
            if parent == root:
                break
            if parent.is_symlink() or parent.is_file():
                parent.unlink()
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.is_symlink() or path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        if action == "write":
            path.write_text(_note(name) if suffix == ".md" else "title: x\n", encoding="utf-8")
        elif action == "folder":
            write(path, "inside.md", _note("Dedans"))
        elif action == "link":
            os.symlink(root / "carnet.yaml", path)
        else:
            os.symlink(root / "notes", path)
        yield [rel]


def test_any_sequence_of_changes(tmp_path: Path) -> None:
    root = tmp_path / "content"
    shutil.copytree(Path(__file__).parent / "fixtures" / "small", root)
    tree = Tree(root)
    rng = random.Random(58)
    for paths in _random_changes(root, rng):
        patched = patch_content_files(tree.last, root, paths)
        assert patched is not None, paths
        walked = read_content_dir(root)
        assert _view(patched) == _view(walked), paths
        assert _parsed(patched) == _parsed(walked), paths
        tree.last = patched


class Parsed:
    """The example's content read and parsed, each change patched into the last parse
    (:func:`parse_patched`) and held to a parse made in full; the notes parsed are counted."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = read_content_dir(root)
        self.loaded = parse_loaded(self.files)
        self.parsed: list[str] = []
        self.carried = 0  # the patches that carried the index of the ids
        assert self.loaded.corpus.holders.unique  # made, as a build makes it: a patch may carry it

    def parser(self, wanted: Sequence[NoteFiles]) -> list[ParsedNote | Problem]:
        self.parsed += [files.rel for files in wanted]
        return parse_each(wanted)

    def changed(self, *rels: str, patched: bool = True) -> Loaded | None:
        files = patch_content_files(self.files, self.root, rels)
        assert files is not None
        self.parsed.clear()
        got = parse_patched(self.loaded, files, self.parser)
        full = parse_loaded(files)
        assert (full.corpus, full.problems) == parse_content(files), "the parts are parse_content's problems"
        if not patched:
            assert got is None, f"{rels}: patched, where it cannot be"
        else:
            assert got is not None, f"{rels}: could not be patched"
            assert (got.corpus, got.problems) == (full.corpus, full.problems), f"after a change of {rels}"
            if "holders" in got.corpus.__dict__:  # carried and patched, not made: in the same order too
                self.carried += 1
                held, made = got.corpus.holders, full.corpus.holders
                assert (list(held.extraction.items()), list(held.comment.items()), held.unique) == (
                    list(made.extraction.items()), list(made.comment.items()), made.unique), rels
        self.files, self.loaded = files, got or full
        assert self.loaded.corpus.holders is not None
        return got


def _edit(root: Path, rel: str, old: str, new: str) -> str:
    """:func:`replace`, naming the file it edited."""
    replace(root, rel, old, new)
    return rel


def test_a_parse_patched_with_the_notes_changed_is_the_parse_made_in_full(tmp_path: Path) -> None:
    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    parsed = Parsed(root)
    note, sidecar = "notes/cvl-2024-09-19.md", "notes/cvl-2024-09-19.extractions.yaml"
    corpus = parsed.loaded.corpus
    assert parsed.changed(note) is not None and parsed.loaded.corpus is corpus and parsed.parsed == [], \
        "nothing changed: the corpus itself, its indices made already"
    parsed.changed(_edit(root, note, "## Présents", "## Présents ce jour"))
    assert parsed.parsed == [note], "the note edited alone is parsed"
    parsed.changed(_edit(root, note, "title: Séance du 19 septembre 2024", "title: Séance du 19/09"))
    parsed.changed(_edit(root, sidecar, "y compris le mercredi.", "y compris le mercredi"))
    assert parsed.parsed == [note], "a sidecar edited: its note parsed again"
    parsed.changed(_edit(root, note, "date: 2024-09-19", "date: 2024-19-19"))  # a problem of the note
    assert any(p.file == note for p in parsed.loaded.problems)
    parsed.changed(_edit(root, note, "date: 2024-19-19", "date: 2024-09-19"))
    assert not any(p.file == note for p in parsed.loaded.problems)
    parsed.changed(_edit(root, note, "---\ntitle", "--\ntitle"))  # no longer a note: out of the corpus
    assert "cvl-2024-09-19" not in parsed.loaded.corpus.notes
    parsed.changed(_edit(root, note, "--\ntitle", "---\ntitle"))  # back, in its place
    assert list(parsed.loaded.corpus.notes) == sorted(parsed.loaded.corpus.notes)
    parsed.changed(_edit(root, sidecar, "extractions:", "extractions: [\n"))  # its sidecar unreadable
    parsed.changed(_edit(root, sidecar, "extractions: [\n", "extractions:"))
    assert parsed.carried >= 4, "an edit that gives the same ids carries their index"
    parsed.changed(_edit(root, sidecar, "id: c-0919-1", "id: c-0919-1b"))  # an id changed: indexed anew
    parsed.changed(_edit(root, sidecar, "id: c-0919-1b", "id: c-1010-1"))  # given twice: indexed anew
    assert not parsed.loaded.corpus.holders.unique
    parsed.changed(_edit(root, sidecar, "id: c-1010-1", "id: c-0919-1"))
    assert parsed.loaded.corpus.holders.unique


def test_a_parse_with_other_changes_is_made_in_full(tmp_path: Path) -> None:
    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    parsed = Parsed(root)
    write(root, "notes/ajout.md", _note("Ajout"))
    parsed.changed("notes/ajout.md", patched=False)  # a note added
    (root / "notes" / "ajout.md").unlink()
    parsed.changed("notes/ajout.md", patched=False)  # removed
    parsed.changed(_edit(root, "carnet.yaml", "title:", "title: Un autre titre\nold_title:"), patched=False)
    parsed.changed(_edit(root, "notebooks/cvl.yaml", "title:", "title: Autre\nold:"), patched=False)
    parsed.changed(_edit(root, "verdicts/cvl-wiki-foyer.yaml", "\n", "\n# un commentaire\n"), patched=False)
    write(root, "notes/seule.extractions.yaml", SIDECAR.format(id="x-1", quote="rien"))
    parsed.changed("notes/seule.extractions.yaml", patched=False)  # a sidecar without its note
    parsed.changed(_edit(root, "notes/seule.extractions.yaml", "rien", "presque rien"), patched=False)
    write(root, "notes/answers/cvl-2024-09-19.md", _note("Homonyme"))  # two notes of one slug
    parsed.changed("notes/answers/cvl-2024-09-19.md", patched=False)
    parsed.changed(_edit(root, "notes/cvl-2024-09-19.md", "## Présents", "## Là"), patched=False)


def test_a_publication_patched_with_the_notes_changed_is_the_one_published_in_full(tmp_path: Path) -> None:
    """The public part patched (:func:`publication_patched`) where the notes edited keep their
    notebooks, date, masked passages and people: names, rules and reports as they were; else
    published in full. Both held to :func:`publish` of the corpus made in full."""
    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    parsed = Parsed(root)
    published = publish(parsed.loaded.corpus)
    assert published.extraction_ids

    def changed(rel: str, patched: bool) -> None:
        nonlocal published
        before = parsed.loaded.corpus
        parsed.changed(rel)
        corpus = parsed.loaded.corpus
        notes = [slug for slug in corpus.notes.keys() | before.notes.keys()
                 if corpus.notes.get(slug) is not before.notes.get(slug)]
        got = publication_patched(published, before, corpus, notes)
        full = publish(corpus)
        if not patched:
            assert got is None, f"{rel}: patched, where it cannot be"
        else:
            assert got is not None, f"{rel}: could not be patched"
            assert got == full and got.reports == full.reports and got.extraction_ids == full.extraction_ids, rel
            assert got.shown_ids == full.shown_ids, rel  # carried while the ids stay, else made again
        published = got or full
        assert published.shown_ids  # made: the next patch carries it

    note, sidecar = "notes/cvl-2024-11-14.md", "notes/cvl-2024-11-14.extractions.yaml"
    changed(_edit(root, note, "title: Séance budgétaire", "title: La séance budgétaire"), patched=True)
    changed(_edit(root, sidecar, "quote: Réserve 800 €", "quote: Réserve"), patched=True)  # a masked one's quote
    changed(_edit(root, sidecar, "id: c-1114-7\n", "id: c-1114-7b\n"), patched=True)  # a comment's id
    changed(_edit(root, note, "authors: [Inès Benali]", "authors: [Inès Benali, Tom Ferrand]"), patched=False)
    changed(_edit(root, note, "date: 2024-11-14", "date: 2024-11-13"), patched=False)  # people numbered by date
    changed(_edit(root, sidecar, "    masked: true\n", ""), patched=False)  # a passage unmasked
    changed(_edit(root, note, "  veille-financement:\n", ""), patched=False)  # a notebook left
    changed(_edit(root, "notes/bureau-2025-03-preparation.md", "\n## ", "\n## Ordre : "), patched=True)  # private


def test_an_anchoring_patched_with_the_notes_changed_is_the_one_made_in_full(tmp_path: Path) -> None:
    """The notes' anchoring patched (:func:`anchors_patched`): the notes a parse carried taken
    as they were, the others anchored again (a quote that no longer lands is a problem, one
    that lands again is not), held to :func:`anchor_notes` of the corpus made in full; notes
    added or removed: anchored in full."""
    from generator.engine.anchors import anchor_notes, anchors_patched
    from generator.engine.memo import NO_MEMO
    from support.memos import CountingMemo

    root = tmp_path / "content"
    shutil.copytree(EXAMPLE, root)
    parsed = Parsed(root)
    memo = CountingMemo()
    memo.keep_all = lambda kind, digests: None  # type: ignore[attr-defined]
    anchored = anchor_notes(parsed.loaded.corpus, memo)  # as a build: each parse remembered, read again when asked

    def changed(rel: str, patched: bool = True, anchored_again: int | None = 1) -> None:
        nonlocal anchored
        before = parsed.loaded.corpus
        parsed.changed(rel, patched=patched)
        corpus = parsed.loaded.corpus
        made_before = dict(memo.made)
        got = anchors_patched(anchored, before, corpus, memo)  # type: ignore[arg-type]
        full = anchor_notes(corpus, NO_MEMO)
        if corpus.notes.keys() != before.notes.keys():
            assert got is None, f"{rel}: patched, where notes were added or removed"
        else:
            assert got is not None, rel
            assert (list(got.anchored), got.facts, got.uses, got.problems, got.keys) == (
                list(full.anchored), full.facts, full.uses, full.problems, full.keys), rel
            assert all(got.anchored[slug].anchors == full.anchored[slug].anchors for slug in full.anchored), rel
            if anchored_again is not None:  # the notes not carried, asked of the memo
                assert memo.made.get("anchors", 0) - made_before.get("anchors", 0) == anchored_again, rel
        anchored = got or full

    note, sidecar = "notes/cvl-2024-09-19.md", "notes/cvl-2024-09-19.extractions.yaml"
    changed(_edit(root, note, "## Présents", "## Présents ce jour"))
    changed(_edit(root, sidecar, "quote: ", "quote: pas dans le texte "))  # no longer lands: problems
    assert any(p.file and "cvl-2024-09-19" in p.file for p in anchored.problems)
    changed(_edit(root, sidecar, "quote: pas dans le texte ", "quote: "), anchored_again=0)  # as it was: recalled
    assert not any(p.file and "cvl-2024-09-19" in p.file for p in anchored.problems)
    changed(_edit(root, "carnet.yaml", "title:", "title: Un autre titre\nold_title:"), patched=False,
            anchored_again=None)  # parsed in full: every note is another, asked of the memo
    write(root, "notes/ajout.md", _note("Ajout"))
    changed("notes/ajout.md", patched=False)
