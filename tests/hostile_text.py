"""Text a submission controls, as hostile as it gets at a TA's terminal, a log, JUnit XML or a page;
every door out of the grader is fed these (each door's own test module)."""
from __future__ import annotations

import re

# Window title, erase screen and line, cursor up, an OSC 52 clipboard write, an OSC 8 link, 8-bit CSI,
# a bell, backspaces, NUL, a bidi override, a carriage return that rewrites the line, zero-width
# characters, Unicode's line and paragraph separators.
HOSTILE = [
    "\x1b]0;pwned title\x07",
    "\x1b[2J\x1b[H",
    "\x1b[2K\x1b[1A",
    "\x1b]52;c;cm0gLXJmIH4=\x07",
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
    "\x9b2J",
    "\x07\x08\x08\x00",
    "\u202eevil",
    "fake\rPASSED",
    "zero\u200bwidth\ufeff",
    "line\u2028separator\u2029",
]
# All of them in one string, as an exception message or a cell id would carry them.
PAYLOAD = "hostile " + " ".join(HOSTILE) + " end"

_BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def assert_clean(text: str, where: str = "") -> None:
    """No escape byte, C0/C1 control character (line feeds and tabs aside), invisible or bidi character
    in ``text``."""
    found = _BAD.search(text)
    if found is not None:
        around = text[max(0, found.start() - 40):found.end() + 40]
        raise AssertionError(f"{where}: control character {found.group()!r} in {around!r}")
