"""Cross-file checks on a loaded corpus: references between files, categories (INV-11),
unique ids, assets. Pure: corpus in, problems out."""

from __future__ import annotations

from collections.abc import Iterable

from generator.corpus.fields import MAX_NAME_BYTES, MAX_SLUG, SLUG_PATTERN, slug_too_long
from generator.corpus.model import Corpus, NoteType, SourceRef
from generator.problems import Problem, Severity


def validate_corpus(corpus: Corpus) -> list[Problem]:
    problems: list[Problem] = []
    _check_bases(corpus, problems)
    _check_memberships(corpus, problems)
    _check_notebook_orders(corpus, problems)
    _check_unique_ids(corpus, problems)
    _check_media(corpus, problems)
    _check_proposals(corpus, problems)
    _check_aliases(corpus, problems)
    _check_asset_names(corpus, problems)
    return problems


def _check_asset_names(corpus: Corpus, problems: list[Problem]) -> None:
    """An asset is published under its NFC name, which may be longer than the one on disk
    (or come from a file system allowing longer names): a part past 255 bytes could not
    be written."""
    for asset in sorted(corpus.assets):
        longest = max(asset.split("/"), key=lambda part: len(part.encode("utf-8")))
        size = len(longest.encode("utf-8"))
        if size > MAX_NAME_BYTES:
            problems.append(Problem(
                asset, None, "name-too-long",
                f"{longest[:24] + '…'!r} is {size} bytes long once Unicode-normalised (NFC), the name it is "
                f"published under; a file name holds at most {MAX_NAME_BYTES} bytes",
                f"Rename it with a shorter name (at most {MAX_NAME_BYTES} bytes in UTF-8; an accented letter "
                "takes 2, most other scripts 3) and update the links to it."))


def _check_aliases(corpus: Corpus, problems: list[Problem]) -> None:
    seen: dict[str, str] = {}
    for note in corpus.notes.values():
        for alias in note.aliases:
            line = note.field_lines.get("aliases", 1)
            if not SLUG_PATTERN.match(alias):
                problems.append(Problem(note.source.file, line, "invalid-slug", f"alias {alias!r} is not a slug",
                                        "An alias is a former slug: lowercase letters, digits and hyphens."))
            elif (too_long := slug_too_long(alias, "alias")) is not None:  # its redirect page notes/<alias>.html
                problems.append(Problem(note.source.file, line, "name-too-long", too_long,
                                        f"Shorten the alias to at most {MAX_SLUG} characters, or remove it."))
            elif alias in corpus.notes:
                problems.append(Problem(note.source.file, line, "duplicate-slug",
                                        f"alias {alias!r} is the slug of an existing note", "Remove the alias."))
            elif alias in seen:
                problems.append(Problem(note.source.file, line, "duplicate-slug",
                                        f"alias {alias!r} is already an alias of {seen[alias]!r}", "Keep one."))
            else:
                seen[alias] = note.slug


def _check_proposals(corpus: Corpus, problems: list[Problem]) -> None:
    for proposal in corpus.proposals:
        target = corpus.notes.get(proposal.target)
        if target is None or target.type is not NoteType.WIKI:
            problems.append(Problem(proposal.file, None, "unknown-target",
                                    f"the proposal targets {proposal.target!r}, which is not a wiki article",
                                    "Section operations apply to wiki articles ('type: wiki')."))
        if proposal.pending:  # a warning: CI's --strict build says that text waits for a person
            method = proposal.provenance.get("method", "?")
            problems.append(Problem(
                proposal.file, None, "pending-proposal",
                f"proposal {proposal.id!r} to {proposal.target!r} ({len(proposal.operations)} operation(s), "
                f"method {method}) waits for review: the site shows it as pending, without its text",
                "Read it with 'carnet review' on this file, then accept what holds with 'carnet apply' "
                "(--only N for some operations), or delete the file.", Severity.WARNING))


def _known(known: Iterable[str], limit: int = 12) -> str:
    names = list(known)
    shown = ", ".join(names[:limit]) + (" …" if len(names) > limit else "")
    return shown or "(none yet)"


def _check_bases(corpus: Corpus, problems: list[Problem]) -> None:
    for base in corpus.bases.values():
        for notebook in base.notebooks:
            if notebook not in corpus.notebooks:
                problems.append(Problem(
                    base.source.file, base.line_of("notebooks", notebook), "unknown-notebook",
                    f"base {base.slug!r} lists notebook {notebook!r}, which does not exist",
                    f"Create notebooks/{notebook}.yaml or fix the name; notebooks: {_known(corpus.notebooks)}."))


def _check_memberships(corpus: Corpus, problems: list[Problem]) -> None:
    # each axis's categories as a set, made once: a notebook's thousands of notes each look theirs up
    known_of: dict[tuple[str, str], frozenset[str]] = {}
    for note in corpus.notes.values():
        file = note.source.file
        if not note.memberships:
            problems.append(Problem(
                file, note.field_lines.get("notebooks", 1), "no-notebook", f"note {note.slug!r} belongs to no notebook",
                "Add 'notebooks:' to its front matter with at least one notebook; "
                "a note in no notebook would never be reachable."))
        for membership in note.memberships:
            notebook = corpus.notebooks.get(membership.notebook)
            if notebook is None:
                problems.append(Problem(
                    file, membership.line, "unknown-notebook",
                    f"note {note.slug!r} is placed in notebook {membership.notebook!r}, which does not exist",
                    f"Fix the name or create notebooks/{membership.notebook}.yaml; "
                    f"notebooks: {_known(corpus.notebooks)}."))
                continue
            for axis_key, categories in membership.categories.items():
                line = membership.axis_lines.get(axis_key, membership.line)
                axis = notebook.axis(axis_key)
                if axis is None:
                    problems.append(Problem(
                        file, line, "unknown-axis",
                        f"notebook {notebook.slug!r} has no axis {axis_key!r}",
                        f"Use one of its axes ({_known(a.key for a in notebook.axes)}) "
                        f"or add the axis to {notebook.source.file}."))
                    continue
                known = known_of.get((notebook.slug, axis_key))
                if known is None:
                    known = known_of[notebook.slug, axis_key] = frozenset(axis.categories)
                for category in categories:
                    if category not in known:
                        problems.append(Problem(
                            file, line, "unknown-category",
                            f"category {category!r} is not in axis {axis_key!r} of notebook {notebook.slug!r}",
                            f"Use one of: {_known(axis.categories)} — or add it to {notebook.source.file}. "
                            "Categories belong to each notebook (a note may be 'Budget' in one and "
                            "'Subvention' in another)."))


def _check_notebook_orders(corpus: Corpus, problems: list[Problem]) -> None:
    for notebook in corpus.notebooks.values():
        if not notebook.pinned and not notebook.order:
            continue  # nothing named: its members are not listed
        members = {note.slug for note in corpus.notes_of(notebook.slug)}
        for key, slugs in (("pinned", notebook.pinned), ("order", notebook.order)):
            seen: set[str] = set()
            for slug in slugs:
                if slug in seen:
                    problems.append(Problem(
                        notebook.source.file, notebook.line_of(key, slug), "duplicate-entry",
                        f"{slug!r} appears twice in '{key}' of notebook {notebook.slug!r}", "Keep one."))
                seen.add(slug)
                if slug not in members:
                    where = "does not exist" if slug not in corpus.notes else "is not in this notebook"
                    problems.append(Problem(
                        notebook.source.file, notebook.line_of(key, slug), "unknown-note",
                        f"'{key}' of notebook {notebook.slug!r} names note {slug!r}, which {where}",
                        "Fix the slug, or add the notebook to the note's 'notebooks:'."))


def _check_unique_ids(corpus: Corpus, problems: list[Problem]) -> None:
    # no id given twice, told by counting (the corpus's holders are made once a build anyway,
    # for the audits): the common case, 100,000 ids at 50,000 extractions, walks them only once
    if corpus.holders.unique:
        return
    # where each id is first given, worded only for a duplicate
    extraction_at: dict[str, SourceRef] = {}
    comment_at: dict[str, SourceRef] = {}
    for note in corpus.notes.values():
        for extraction in note.extractions:
            first = extraction_at.get(extraction.id)
            if first is None:
                extraction_at[extraction.id] = extraction.source
            else:
                problems.append(Problem(
                    extraction.source.file, extraction.source.line, "duplicate-id",
                    f"extraction id {extraction.id!r} is already used at {first.file}:{first.line}",
                    "Give this extraction another id: ids are unique across the whole content, "
                    "since citations name them."))
            for comment in extraction.comments:
                seen = comment_at.get(comment.id)
                if seen is None:
                    comment_at[comment.id] = comment.source
                else:
                    problems.append(Problem(
                        comment.source.file, comment.source.line, "duplicate-id",
                        f"comment id {comment.id!r} is already used at {seen.file}:{seen.line}",
                        "Give this comment another id: ids are unique across the whole content."))


def _check_media(corpus: Corpus, problems: list[Problem]) -> None:
    for note in corpus.notes.values():
        if note.media is None:
            continue
        line = note.field_lines.get("media", 1)
        if not note.media.startswith("assets/"):
            problems.append(Problem(
                note.source.file, line, "invalid-path", f"media {note.media!r} is not under assets/",
                "Put audio, video and other files under content/assets/ and point to them from there."))
        elif note.media not in corpus.assets:
            problems.append(Problem(
                note.source.file, line, "missing-asset", f"media file {note.media!r} does not exist",
                "Add the file under content/assets/ or fix the path (relative to the note)."))
        if note.type is not NoteType.NOTE:
            problems.append(Problem(
                note.source.file, line, "invalid-value", f"a {note.type.value} cannot carry media",
                "Only ordinary notes (transcripts) have media."))
