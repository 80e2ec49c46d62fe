"""The finished model is frozen (issue 58): no field can be reassigned, none is typed ``Any``,
and its derived indices (listings, categories, the note graph, selections' notes) are made
once, from the model alone, equal to what a reader recomputes from the publication."""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import pytest

from generator.pipeline import check_content, site_model
from generator.site.model import SiteModel

CONTENT = Path(__file__).resolve().parents[2] / "content"


@pytest.fixture(scope="module")
def site() -> SiteModel:
    return site_model(check_content(CONTENT), CONTENT)


def test_no_field_can_be_reassigned(site: SiteModel) -> None:
    for name in ("publication", "articles", "base_url", "body_templates"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(site, name, None)


def test_no_field_nor_index_is_typed_any() -> None:
    written = {f.name: str(f.type) for f in dataclasses.fields(SiteModel)}
    written.update({name: str(value.func.__annotations__.get("return")) for name, value in vars(SiteModel).items()
                    if isinstance(value, functools.cached_property)})
    typed_any = {name: hint for name, hint in written.items() if re.search(r"\bAny\b|^None$", hint)}
    assert typed_any == {}


def test_listings_are_as_a_reader_orders_them(site: SiteModel) -> None:
    for slug, notebook in site.publication.notebooks.items():
        members = [n for n in site.publication.notes.values() if n.membership(slug) is not None]
        pinned = [s for s in dict.fromkeys((*notebook.pinned, *notebook.order)) if s in {n.slug for n in members}]
        rest = sorted((n for n in members if n.slug not in pinned),
                      key=lambda n: (str(n.date or ""), n.slug), reverse=True)
        assert [n.slug for n in site.listings[slug]] == pinned + [n.slug for n in rest]
        for axis in notebook.axes:
            for category, notes in site.category_members.get((slug, axis.key), {}).items():
                expected = [n.slug for n in site.listings[slug]
                            if category in (n.membership(slug).categories.get(axis.key, ())  # type: ignore[union-attr]
                                            )]
                assert [n.slug for n in notes] == expected


def test_derived_indices_are_made_once(site: SiteModel) -> None:
    assert site.note_graph is site.note_graph
    assert site.listings is site.listings
    assert set(site.selection_notes) == set(site.selections)
