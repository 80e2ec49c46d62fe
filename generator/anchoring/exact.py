"""Exact occurrences of many quotes in one note, in time near-linear in their number.

Looking each quote up with ``str.find`` scans the whole note per quote: 100,000
extractions of an 8 MB note would scan 800 GB. So a note with many extractions gets
an index of its text sampled every :data:`STEP` characters (the :data:`GRAM`
characters there → their positions); a quote long enough to cover a sample wherever
it starts is found through it, exactly — every occurrence, no false one. Shorter
quotes (and repetitive text, where a sample names too many places) are scanned for,
out of a per-note allowance of characters; past it they are refused, never guessed.
Pure: text in, offsets out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GRAM, STEP = 8, 32
"""Sampled substrings: ``GRAM`` characters every ``STEP`` (an index of n/32 entries)."""

MIN_INDEXED = GRAM + STEP - 1
"""A quote at least this long covers a whole sample wherever it starts."""

SAMPLES = 4
"""Samples of each alignment of a quote looked up (the rarest one is kept)."""

MAX_CANDIDATES = 512
"""Sampled places past which a quote is scanned for instead (repetitive text): the work
per quote is at most 32 lookups and this many comparisons."""

INDEX_FROM = 50_000_000
"""Characters that scanning for every quote would read, past which a note is indexed."""

SCAN_ALLOWANCE = 20_000_000_000
"""Characters ``str.find`` may read for one note's quotes: a few seconds at its 5–10 G/s."""


class ScanRefused(Exception):
    """The note's scanning allowance is spent."""


@dataclass
class ExactSearch:
    """Finds quotes in one note's normalised projection ``text``.

    Attributes:
        text: what is searched.
        scan_left: characters scanning may still read (:data:`SCAN_ALLOWANCE`).
        grams: the sampled index, or ``None`` when the note is small enough to scan.
    """

    text: str
    scan_left: int = SCAN_ALLOWANCE
    grams: dict[str, list[int]] | None = field(default=None, repr=False)

    @classmethod
    def for_quotes(cls, text: str, quotes: int) -> ExactSearch:
        """A search for ``quotes`` quotes: indexed when scanning for each would be long."""
        search = cls(text)
        if quotes * len(text) > INDEX_FROM:
            grams: dict[str, list[int]] = {}
            for position in range(0, len(text) - GRAM + 1, STEP):
                grams.setdefault(text[position:position + GRAM], []).append(position)
            search.grams = grams
        return search

    def occurrences(self, needle: str, limit: int) -> list[int]:
        """Where ``needle`` starts in ``text`` (overlapping ones too), in order, at most
        ``limit + 1`` of them. Raises :class:`ScanRefused` when the allowance is spent."""
        if self.grams is not None and len(needle) >= MIN_INDEXED:
            found = self._indexed(needle)
            if found is not None:
                return found[:limit + 1]
        return self._scanned(needle, limit)

    def _indexed(self, needle: str) -> list[int] | None:
        assert self.grams is not None
        grams, text = self.grams, self.text
        # An occurrence at p holds exactly one sample q in [p, p + STEP), at offset
        # q - p of the needle, and then others every STEP: each alignment of the needle
        # is looked up at the rarest of (up to SAMPLES) of its grams, so a gram absent
        # from the note rules the alignment out, and common words cost nothing.
        candidates: list[tuple[int, list[int] | tuple[()]]] = []
        for alignment in range(STEP):
            offsets = range(alignment, min(len(needle) - GRAM + 1, alignment + SAMPLES * STEP), STEP)
            offset, positions = min(((o, grams.get(needle[o:o + GRAM], ())) for o in offsets),
                                    key=lambda hit: len(hit[1]))
            candidates.append((offset, positions))
        if sum(len(positions) for _, positions in candidates) > MAX_CANDIDATES:
            return None
        return sorted({q - offset for offset, positions in candidates for q in positions
                       if q >= offset and text.startswith(needle, q - offset)})

    def _scanned(self, needle: str, limit: int) -> list[int]:
        found: list[int] = []
        start = 0
        while len(found) <= limit:
            if self.scan_left < len(self.text) - start:
                raise ScanRefused
            position = self.text.find(needle, start)
            self.scan_left -= (position if position >= 0 else len(self.text)) - start + len(needle)
            if position < 0:
                break
            found.append(position)
            start = position + 1
        return found
