"""Content names that the site itself already uses, and who is behind a site path.

Every output file is named after content: a note's slug (``notes/<slug>.html`` and its
siblings), an alias (a redirect page), a notebook's or a base's slug, an axis key (a
folder), a category (its slug), an asset's path. Uniqueness among content is checked
where it is read (one slug per note, aliases apart from slugs, categories apart within
an axis); what is left is content taking a name the site writes for itself, which
would only fail when the build writes the tree. Here it is a problem at its content
file, so ``carnet check`` refuses it too. Pure: the corpus in, problems out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from generator.corpus.model import Base, Corpus, Note, Notebook
from generator.problems import Problem
from generator.site.model import SITE_FEEDS, feed_path


def address_problems(corpus: Corpus) -> list[Problem]:
    """Notebooks named like a site-wide feed. Private ones too: making a notebook public
    must not be what breaks the build."""
    return [Problem(
        notebook.source.file, None, "address-taken",
        f"the feed of notebook {slug!r} would be {feed_path(slug)}, the site-wide feed of "
        f"{'notes' if slug == 'notes' else 'wikis and syntheses'}",
        f"Rename the file (the notebook's slug): {' and '.join(map(repr, SITE_FEEDS))} are taken by the site's "
        "own feeds.")
        for slug, notebook in corpus.notebooks.items() if slug in SITE_FEEDS]


def content_behind(path: str, notes: Mapping[str, Note], notebooks: Mapping[str, Notebook],
                   bases: Mapping[str, Base], assets: Iterable[str]) -> list[str]:
    """The content files whose names make the site path ``path`` (none for the site's own)."""
    top, _, rest = path.partition("/")
    name = rest.split("/")[0].split(".")[0]
    if top == "notes":
        return sorted({note.source.file for note in notes.values() if name == note.slug or name in note.aliases})
    if top in ("notebooks", "feeds") and name in notebooks:
        return [notebooks[name].source.file]
    if top == "bases" and name in bases:
        return [bases[name].source.file]
    return [path] if path in set(assets) else []
