"""The parsed notes of a build, each read from where it is kept only when first asked for."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from generator.anchoring import AnchoredNote
from generator.problems import Problem


class Recalled(Mapping[str, AnchoredNote]):
    """Each note's parsed body and anchors by slug, in the corpus's order. Those the build
    cache holds are read from it when first asked for: a rebuild reads the parsed bodies
    of the notes whose outputs it makes again, not of every note (~0.3 s at 5,000 notes);
    what every build reads of all of them is in their :class:`AnchorFacts`."""

    def __init__(self, loaded: dict[str, AnchoredNote] | None = None,
                 later: dict[str, Callable[[], tuple[AnchoredNote, list[Problem]]]] | None = None,
                 slugs: list[str] | None = None) -> None:
        self._loaded = {} if loaded is None else loaded
        self._later = {} if later is None else later
        self._slugs = [] if slugs is None else slugs
        self._known = set(self._slugs)

    def now(self, slug: str, anchored: AnchoredNote) -> None:
        """``slug``'s parse, at hand (a note known already keeps its place)."""
        self._later.pop(slug, None)
        self._loaded[slug] = anchored
        self._place(slug)

    def later(self, slug: str, load: Callable[[], tuple[AnchoredNote, list[Problem]]]) -> None:
        """``slug``'s parse, read by ``load`` when first asked for (a note known already keeps its place)."""
        self._loaded.pop(slug, None)
        self._later[slug] = load
        self._place(slug)

    def _place(self, slug: str) -> None:
        if slug not in self._known:
            self._slugs.append(slug)
            self._known.add(slug)

    def copy(self) -> Recalled:
        """The same notes, each read from the same place, apart from here on (see :meth:`now`)."""
        return Recalled(dict(self._loaded), dict(self._later), list(self._slugs))

    def at_hand(self) -> list[str]:
        """The notes whose parse was read (or made) already."""
        return list(self._loaded)

    def only(self, slugs: list[str]) -> Recalled:
        """These notes (known ones), read from the same place: each is read once for both."""
        return Recalled(self._loaded, self._later, [slug for slug in slugs if slug in self._known])

    def __getitem__(self, slug: str) -> AnchoredNote:
        if slug not in self._known:
            raise KeyError(slug)
        if slug not in self._loaded:
            self._loaded[slug] = self._later.pop(slug)()[0]
        return self._loaded[slug]

    def __contains__(self, slug: object) -> bool:
        return slug in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._slugs)

    def __len__(self) -> int:
        return len(self._slugs)
