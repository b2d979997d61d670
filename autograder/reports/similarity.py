"""Which submissions of a set are alike: ``course similarity <set>`` (issue 32).

It informs a TA and never changes a grade: it reads ``submitted/`` (through ``grader_side.submitted``,
the one bounded reader) and writes a page and a CSV into a folder of its own, never the gradebook.

How two submissions are compared (the pure functions below, each tested on its own):

- every cell a student handed in is cut into tokens. Code (``code_tokens``) goes through Python's
  ``tokenize``: every identifier becomes ``N`` and every string ``S``, keywords, operators, numbers
  and line ends stay, comments, blank lines and indentation go. So renaming, re-commenting and
  re-formatting change nothing. A cell that does not tokenize is cut at whitespace instead.
  Free text (markdown and raw cells, and the words of a string of five words or more in code, such
  as ``answer = "..."``) becomes lower-case words (``text_words``).
- ``fingerprints``: hashes of every run of ``CODE_K`` tokens (``TEXT_K`` words), thinned by
  winnowing (the smallest hash of each window of ``CODE_WINDOW`` runs), so that a copied stretch
  leaves the same fingerprints wherever it sits in a cell, and cells can be reordered.
- ``boilerplate``: what the course gave (the released notebooks, the source's read-only cells) never
  counts; ``index`` maps each remaining fingerprint to the students who have it, and one held by
  more than ``max_share`` of the class (a common idiom, everyone's same answer) is ignored too.
- ``pairs``: only students who share a rare fingerprint (held by a few students: ``pairing_limit``)
  are ever paired, so the class is never compared pair by pair (n^2); a pair's score is the share
  of the smaller submission's fingerprints (the common ones left out) that the other has too.
"""
from __future__ import annotations

import csv
import io
import json
import keyword
import re
import tokenize
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from autograder.escape import for_csv, for_id, for_terminal, for_terminal_lines

CODE_K = 12           # tokens per fingerprinted run: a line or two of code, names all alike
CODE_WINDOW = 6       # winnowing window: a copied run of CODE_K + CODE_WINDOW - 1 tokens is always seen
TEXT_K = 4            # words per fingerprinted run of free text
TEXT_WINDOW = 2
MIN_TEXT_WORDS = 5    # a string in code with fewer words is code, not an answer
MAX_SHARE = 0.5       # a fingerprint in more than this share of the class is an idiom, not a copy
MIN_SHARED = 4        # a pair sharing fewer fingerprints is not listed, whatever its score
PAIRING_SHARE = 0.02  # only a fingerprint held by at most this share of the class pairs students ...
MIN_PAIRING = 5       # ... or by at most this many
THRESHOLD = 0.5       # default score from which a pair is listed
MAX_CELLS_SHOWN = 12  # cell pairs shown per pair of students
SHOWN_CHARS = 4_000   # characters of a cell the page shows

_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER}
_WORD = re.compile(r"\w+")
_STRING_PREFIX = re.compile(r"^[rRbBuUfF]*")


# ---- tokens and fingerprints ----------------------------------------------------------------------

def code_tokens(source: str) -> list[str]:
    """The cell ``source`` as normalised tokens: identifiers ``N``, strings ``S``, keywords, operators,
    numbers and ends of statements kept; comments, blank lines, indentation and layout dropped. A cell
    that does not tokenize (a syntax error, an IPython magic ``tokenize`` refuses) is cut at whitespace."""
    return _scan(source)[0]


def text_words(text: str) -> list[str]:
    """Free text as lower-case words: punctuation, case, markup and layout gone."""
    return _WORD.findall(text.lower())


def string_answers(source: str) -> list[str]:
    """The strings of the code cell ``source`` long enough to be a written answer (``MIN_TEXT_WORDS``
    words or more), without their quotes; none when the cell does not tokenize."""
    return _scan(source)[1]


def _scan(source: str) -> tuple[list[str], list[str]]:
    """``code_tokens`` and ``string_answers`` of ``source``, from one pass of ``tokenize``."""
    tokens, answers = [], []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in _DROPPED:
                continue
            if tok.type == tokenize.NAME:
                tokens.append(tok.string if keyword.iskeyword(tok.string) else "N")
            elif tok.type == tokenize.STRING:
                tokens.append("S")
                body = _STRING_PREFIX.sub("", tok.string).strip("'\"")
                if len(text_words(body)) >= MIN_TEXT_WORDS:
                    answers.append(body)
            elif tok.type == tokenize.NEWLINE:
                tokens.append(";")
            else:
                tokens.append(tok.string)
    except (tokenize.TokenError, SyntaxError):   # IndentationError is a SyntaxError
        return source.split(), []
    return tokens, answers


def fingerprints(tokens: list[str], k: int, window: int, kind: str = "code") -> set[int]:
    """The winnowed fingerprints of ``tokens``: the hash of every run of ``k`` tokens, and of those the
    smallest of each ``window`` consecutive ones (the rightmost on a tie). Fewer than ``k`` tokens
    give none. ``kind`` keeps code and text apart. The hashes are the same in every process."""
    if len(tokens) < k:
        return set()
    ids = [_token_id(kind, t) for t in tokens]
    hashes = [hash(tuple(ids[i:i + k])) for i in range(len(ids) - k + 1)]
    if len(hashes) <= window:
        return {min(hashes)}
    chosen = set()
    for start in range(len(hashes) - window + 1):
        part = hashes[start:start + window]
        low = min(part)
        chosen.add(low)
    return chosen


_IDS: dict[tuple[str, str], int] = {}


def _token_id(kind: str, token: str) -> int:
    """A number for a token that is the same in every process (``hash`` of a str is not; of a tuple
    of ints it is)."""
    key = (kind, token)
    found = _IDS.get(key)
    if found is None:
        if len(_IDS) > 1_000_000:
            _IDS.clear()
        found = _IDS[key] = zlib.crc32(f"{kind}\x00{token}".encode("utf-8", "surrogatepass"))
    return found


@dataclass(frozen=True)
class Cell:
    """One cell of a notebook: where it is (``notebook``, ``label``: its grade_id or its position),
    ``kind`` ("code" or "text") and its source."""
    notebook: str
    label: str
    kind: str
    source: str

    @property
    def shown(self) -> str:
        """The source as the page shows it: its first ``SHOWN_CHARS`` characters (a notebook may hold a
        cell of megabytes, and the page repeats a cell for every pair it is in)."""
        if len(self.source) <= SHOWN_CHARS:
            return self.source
        return f"{self.source[:SHOWN_CHARS]}\n... ({len(self.source) - SHOWN_CHARS:,} more characters, not shown)"


def cell_fingerprints(cell: Cell) -> set[int]:
    """A cell's fingerprints: its code's and its answers' words (code), or its words (text)."""
    if cell.kind == "text":
        return fingerprints(text_words(cell.source), TEXT_K, TEXT_WINDOW, "text")
    tokens, answers = _scan(cell.source)
    found = fingerprints(tokens, CODE_K, CODE_WINDOW)
    for answer in answers:
        found |= fingerprints(text_words(answer), TEXT_K, TEXT_WINDOW, "text")
    return found


def boilerplate(cells: Iterable[Cell]) -> set[int]:
    """Every fingerprint of the course's own ``cells`` (release and read-only given cells): these never
    count as shared between students."""
    found: set[int] = set()
    for cell in cells:
        found |= cell_fingerprints(cell)
    return found


# ---- the class --------------------------------------------------------------------------------------

@dataclass
class Submission:
    """A student's cells, or the one-line reason they could not all be read (``problems``)."""
    student: str
    cells: list[Cell] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CellMatch:
    """Two cells, one of each student, and how many fingerprints they share of the smaller's."""
    a: Cell
    b: Cell
    shared: int
    score: float


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    score: float
    shared: int
    cells: tuple[CellMatch, ...] = ()


@dataclass
class Comparison:
    """What ``compare`` found: the pairs at or over ``threshold`` (highest score first), the students
    compared, those whose notebooks could not all be read, and what was counted."""
    assignment: str
    threshold: float
    pairs: list[Pair]
    students: int
    unreadable: dict[str, str]
    ignored_common: int
    candidates: int


def index(prints: Mapping[str, set[int]]) -> dict[int, list[str]]:
    """Fingerprint -> the students who have it (in the order of ``prints``)."""
    found: dict[int, list[str]] = defaultdict(list)
    for student, own in prints.items():
        for fp in own:
            found[fp].append(student)
    return found


def common(by_print: Mapping[int, list[str]], students: int, max_share: float = MAX_SHARE) -> set[int]:
    """The fingerprints held by more than ``max_share`` of the ``students`` (and by more than two): an
    idiom or everyone's same answer, not a copy."""
    limit = max(2, int(max_share * students))
    return {fp for fp, who in by_print.items() if len(who) > limit}


def pairing_limit(students: int) -> int:
    """The most students a fingerprint may be held by and still pair them: ``PAIRING_SHARE`` of the
    class, at least ``MIN_PAIRING``. A copy shares many fingerprints held by the two students alone;
    one held by dozens only says they used the same idiom, and pairing all of them would cost the
    square of their number."""
    return max(MIN_PAIRING, int(PAIRING_SHARE * students))


def pairs(prints: Mapping[str, set[int]], threshold: float = THRESHOLD, max_share: float = MAX_SHARE,
          min_shared: int = MIN_SHARED) -> tuple[list[Pair], set[int], int]:
    """The pairs of students whose score is at least ``threshold`` (highest first), the common
    fingerprints left out, and how many pairs were scored. Only students who share a rare fingerprint
    (``pairing_limit``) are paired, through the inverted ``index``, never every pair of the class; a
    pair's score counts every fingerprint they share but the common ones."""
    by_print = index(prints)
    ignored = common(by_print, len(prints), max_share)
    limit = pairing_limit(len(prints))
    candidates: set[tuple[str, str]] = set()
    for who in by_print.values():
        if 2 <= len(who) <= limit:
            candidates.update(combinations(sorted(who), 2))
    kept = {sid: own - ignored for sid, own in prints.items()}
    found = []
    for a, b in candidates:
        count = len(kept[a] & kept[b])
        smaller = min(len(kept[a]), len(kept[b]))
        if count >= min_shared and smaller and count / smaller >= threshold:
            found.append(Pair(a, b, round(count / smaller, 3), count))
    found.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return found, ignored, len(candidates)


def matching_cells(a: list[tuple[Cell, set[int]]], b: list[tuple[Cell, set[int]]],
                   limit: int = MAX_CELLS_SHOWN) -> tuple[CellMatch, ...]:
    """For each cell of ``a`` that shares fingerprints with a cell of ``b``, the cell of ``b`` it shares
    most with; the best ``limit`` of them, most shared first."""
    found = []
    for cell_a, prints_a in a:
        best = max(((len(prints_a & prints_b), i) for i, (_, prints_b) in enumerate(b)), default=(0, -1))
        if best[0] == 0:
            continue
        cell_b, prints_b = b[best[1]]
        found.append(CellMatch(cell_a, cell_b, best[0], round(best[0] / min(len(prints_a), len(prints_b)), 3)))
    found.sort(key=lambda m: (-m.shared, -m.score))
    return tuple(found[:limit])


def compare(assignment: str, submissions: list[Submission], given: Iterable[Cell], threshold: float = THRESHOLD,
            max_share: float = MAX_SHARE, min_shared: int = MIN_SHARED) -> Comparison:
    """Every pair of ``submissions`` at or over ``threshold``, with their matching cells; the course's
    ``given`` cells are boilerplate."""
    course = boilerplate(given)
    per_cell: dict[str, list[tuple[Cell, set[int]]]] = {}
    for s in submissions:
        if s.cells:
            per_cell[s.student] = [(c, cell_fingerprints(c) - course) for c in s.cells]
    prints = {sid: set().union(*(p for _, p in cells)) for sid, cells in per_cell.items()}
    found, ignored, candidates = pairs(prints, threshold, max_share, min_shared)
    detailed = []
    for p in found:
        keep = lambda cells: [(c, fp - ignored) for c, fp in cells if fp - ignored]  # noqa: E731
        detailed.append(Pair(p.a, p.b, p.score, p.shared, matching_cells(keep(per_cell[p.a]), keep(per_cell[p.b]))))
    unreadable = {s.student: "; ".join(s.problems) for s in submissions if s.problems}
    return Comparison(assignment, threshold, detailed, len(prints), unreadable, len(ignored), candidates)


# ---- reading the course -----------------------------------------------------------------------------

def cells_of(nb, notebook: str) -> list[Cell]:
    """The cells of the parsed notebook ``nb`` (JSON the student controls: whatever is not of a cell's
    shape is skipped). Markdown and raw cells are text; code cells code."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError("it has no list of cells")
    found = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source")
        if isinstance(source, list):
            source = "".join(line for line in source if isinstance(line, str))
        if not isinstance(source, str) or not source.strip():
            continue
        kind = {"code": "code", "markdown": "text", "raw": "text"}.get(cell.get("cell_type"))   # type: ignore[arg-type]
        if kind is None:
            continue
        meta = cell.get("metadata")
        grading = meta.get("nbgrader") if isinstance(meta, dict) else None
        grade_id = grading.get("grade_id") if isinstance(grading, dict) else None
        label = grade_id if isinstance(grade_id, str) and grade_id else f"cell {i + 1}"
        found.append(Cell(notebook, label, kind, source))
    return found


def read_submission(student: str, folder: Path, assignment: str, notebooks: Iterable[str]) -> Submission:
    """A student's cells, read through the bounded reader; a notebook that cannot be read is a
    one-line problem and the others are still read."""
    from autograder.grader_side import submitted

    found = Submission(student)
    for name in notebooks:
        try:
            data = submitted.notebook(folder, assignment, name)
            found.cells += cells_of(json.loads(data.decode("utf-8")), name)
        except submitted.Refused as exc:
            found.problems.append(for_terminal(exc))
        except (ValueError, RecursionError) as exc:   # not UTF-8, not JSON, not a notebook's shape
            found.problems.append(for_terminal(f"{name}.ipynb is not a notebook ({str(exc)[:120]})"))
    return found


def given_cells(a) -> list[Cell]:
    """The course's own cells of assignment ``a``: every cell of its released notebooks
    (``assignments/<set>/*.ipynb``) and the source's read-only cells."""
    found = []
    for name in a.notebooks:
        for released in (True, False):
            for c in a.cells(name, released=released):
                if released or c.locked:
                    found.append(Cell(name, c.grade_id, "code" if c.cell_type == "code" else "text", c.source))
    return found


def run(assignment: str, root: Path, threshold: float = THRESHOLD) -> Comparison:
    """Compare every submission of ``assignment`` in the course at ``root`` (its submitted/ folder)."""
    from autograder.course import Course
    from autograder.grader_side.assignment import Assignment

    a = Assignment(assignment, root)
    given = given_cells(a)
    course = Course.of(root)
    students = course.submissions(course.folder("submitted"), a.name)
    subs = [read_submission(sid, path, a.name, a.notebooks) for sid, path in students.items()]
    return compare(a.name, subs, given, threshold)


# ---- what a TA reads ----------------------------------------------------------------------------------

def table_rows(result: Comparison, limit: int = 20) -> list[list[str]]:
    """The top pairs as rows of text for a terminal (the header first), every id escaped."""
    rows = [["score", "shared", "student", "student", "most alike cells"]]
    for p in result.pairs[:limit]:
        where = ", ".join(f"{m.a.label} ~ {m.b.label}" for m in p.cells[:3])
        rows.append([f"{p.score:.2f}", str(p.shared), for_id(p.a), for_id(p.b), for_terminal(where)])
    return rows


def write_csv(result: Comparison, path: Path) -> Path:
    """One row per listed pair: both students, the score, the shared fingerprints, the matching cells."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["student_a", "student_b", "score", "shared_fingerprints", "matching_cells"])
        for p in result.pairs:
            where = "; ".join(f"{m.a.notebook}:{m.a.label} ~ {m.b.notebook}:{m.b.label} ({m.score:.2f})"
                              for m in p.cells)
            out.writerow([for_csv(for_id(p.a)), for_csv(for_id(p.b)), p.score, p.shared, for_csv(where)])
    return path


def page_context(result: Comparison) -> dict:
    """What the page shows, every piece of student text without control characters (the template
    escapes it as HTML)."""
    def side(cell: Cell) -> dict:
        return {"where": for_terminal(f"{cell.notebook}: {cell.label}"), "kind": cell.kind,
                "source": for_terminal_lines(cell.shown)}

    return {
        "assignment": for_terminal(result.assignment), "threshold": result.threshold,
        "students": result.students, "candidates": result.candidates, "ignored": result.ignored_common,
        "max_share": MAX_SHARE,
        "pairs": [{"a": for_id(p.a), "b": for_id(p.b), "score": p.score, "shared": p.shared,
                   "cells": [{"a": side(m.a), "b": side(m.b), "score": m.score, "shared": m.shared}
                             for m in p.cells]}
                  for p in result.pairs],
        "unreadable": [(for_id(sid), for_terminal(why)) for sid, why in sorted(result.unreadable.items())],
    }


def write_page(result: Comparison, folder: Path) -> Path:
    """Write ``<folder>/similarity.html`` (and ``similarity.csv``); return the page's path."""
    from autograder.reports import pages

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(result, folder / "similarity.csv")
    path = folder / "similarity.html"
    path.write_text(pages.render("similarity.html.j2", ("page.css", "similarity.css"), **page_context(result)),
                    encoding="utf-8")
    return path
