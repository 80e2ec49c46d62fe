"""Text shown on a terminal: what a model, a proposal file or a note wrote is data,
never a command to the terminal.

A string printed as is can move the cursor, clear the screen, retitle the window or
rewrite what was printed before (ESC, CR, backspace, C1 controls), or reorder what
the reader sees (bidirectional overrides, the "Trojan Source" characters).
:func:`visible` shows each such character as its escape (``\\x1b``, ``\\u202e``)
and leaves every other character as it is. A backslash typed in the text is left as
it is: the aim is a terminal that cannot be driven, not a reversible encoding.
"""

from __future__ import annotations

from typing import TextIO

BIDI_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""Arabic letter mark, LRM/RLM, embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069)."""

LINE_SEPARATORS = (0x2028, 0x2029)
"""Unicode line and paragraph separators: some terminals break the line on them."""


def escaped(code: int) -> str:
    """The escape that shows code point ``code`` (``\\x1b``, ``\\u202e``, ``\\U0001fffe``)."""
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _table(keep_newlines: bool) -> dict[int, str]:
    codes = [*range(0x20), 0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS, *LINE_SEPARATORS]
    kept = {0x0A, 0x09} if keep_newlines else set()
    return {code: escaped(code) for code in codes if code not in kept}


_ONE_LINE = _table(keep_newlines=False)
_LINES = _table(keep_newlines=True)


def visible(text: str, keep_newlines: bool = False) -> str:
    """``text`` with every C0/C1 control character, DEL, bidi control and line
    separator shown as its escape. ``keep_newlines`` keeps line feeds and tabs (a
    block of text printed as lines); a carriage return is always escaped, since it
    rewrites the line on screen."""
    return text.translate(_LINES if keep_newlines else _ONE_LINE)


def show(out: TextIO, text: str) -> None:
    """Print one line of ``text`` made visible; its leading blank lines are the
    caller's layout and are kept."""
    blank = len(text) - len(text.lstrip("\n"))
    print("\n" * blank + visible(text[blank:]), file=out)
