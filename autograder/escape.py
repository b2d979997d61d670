"""Text that leaves the grader, made harmless where it lands.

Student ids, messages and flags carry whatever a submission put in them (a folder name, an
exception's text). Before they reach a spreadsheet or a TA's terminal:

- ``for_csv``: control characters go as for the terminal (a TA may ``cat`` the file), and a cell a
  spreadsheet would read as a formula (starting with ``= + - @``, a tab or a carriage return, or
  with one of ``= + - @`` after spaces) gets a leading single quote;
- ``for_terminal``: escape sequences (ANSI CSI, OSC, other ESC sequences), every other C0 and C1
  control character and the Unicode controls that reorder text are removed; a line break
  becomes a space, so one record stays one line;
- ``for_terminal_lines``: the same, keeping line breaks (``\n``; ``\r\n`` and a lone ``\r`` become
  ``\n``), for a report of several lines (pytest's failure report, a log record's traceback). The
  result is also valid XML 1.0 text (JUnit XML, a page).

- ``for_id``: a name a submission chose (a student's folder), every escape or control character
  shown as its code (``\x1b``), so two ids that differ only in such characters stay two on the
  screen and in a CSV an LMS imports (stripped, ``m\x1b[0mallory`` would pass for ``mallory``).

Every door through which text a submission controls leaves the grader (the ``course`` commands,
pytest's reports, nbgrader's log, Gradescope's output) goes through one of these two.

HTML is escaped by the pages' templates.
"""
from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"              # CSI: colours, cursor moves, erase line
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"       # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"                     # any other escape
    r"|\x9b[0-?]*[ -/]*[@-~]"                # 8-bit CSI
)
# C0 and C1 controls, and the invisible ones: soft hyphen, zero-width characters, marks and overrides that
# reorder text, line and paragraph separators, word joiners, the byte-order mark.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_BREAKS = "\n\r\t\v\f\u2028\u2029"
_SPACES = " \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_EDGE_SPACES = re.compile(f"^[{_SPACES}]+|[{_SPACES}]+$")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def for_terminal(text) -> str:
    """``text`` without escape sequences or control characters, on one line."""
    text = _ESCAPES.sub("", str(text))
    return _CONTROLS.sub(lambda m: " " if m.group() in _BREAKS else "", text)


def for_terminal_lines(text) -> str:
    """``text`` without escape sequences or control characters, its lines kept."""
    text = _ESCAPES.sub("", str(text)).replace("\r\n", "\n")
    lines = re.split("[\r\u2028\u2029\n]", text)
    return "\n".join(for_terminal(line) for line in lines)


def for_id(text) -> str:
    """``text`` with every escape, control or invisible character, and the spaces at its ends,
    written as its code: printable, one line, and as distinct as the id it shows."""
    def code(m: re.Match) -> str:
        return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in m.group())

    return _EDGE_SPACES.sub(code, _CONTROLS.sub(code, str(text)))


def for_csv(value):
    """``value`` as a spreadsheet shows it, never as a formula; numbers and None pass unchanged."""
    if not isinstance(value, str):
        return value
    text = for_terminal(value)
    if value.startswith(_FORMULA) or text.lstrip().startswith(_FORMULA):
        return "'" + text
    return text
