"""The gradebook as an LMS imports it: Canvas's gradebook CSV, Moodle's grade import CSV, or a plain table;
and ``nbgrader export``'s own CSV with its cells made harmless (``NbgraderCsvExport``, the course's
export plugin).

Scores are read from nbgrader's gradebook the way ``nbgrader export`` reads them (a TA's manual grade
counts; no submission scores 0; the score after the late penalty is ``score - late_submission_penalty``,
never below 0). Formats (see docs/ta-guide.md):

- ``canvas``: the columns of Canvas's gradebook import (Canvas guide "How do I import grades in the
  Gradebook?"; CarmenCanvas "Import a CSV File to Carmen Grades", columns A-F): ``Student`` ("Last,
  First"), ``ID`` (nbgrader's ``lms_user_id``: the Canvas user id Canvas matches first), ``SIS User
  ID``, ``SIS Login ID`` and ``Section`` left blank, then one column per assignment named as in
  nbgrader (rename it to the Canvas assignment's name, or "Name (canvas id)", if they differ); the
  second row is ``    Points Possible`` as in Canvas's own export.
- ``moodle``: Moodle's CSV grade import (MoodleDocs "Grade import": map from "Email address" to
  "useremail", or from "ID number" to "useridnumber"): ``First name``, ``Last name``, ``Email
  address``, ``ID number`` (``lms_user_id``), then with ``per_question`` a column per graded cell
  (``<set>: <grade id>``, before the late penalty) and one per assignment (after it).
- ``csv``: every student, with ``lms_user_id``, the score before and after the late penalty.

A student the LMS cannot match (Canvas: no ``lms_user_id``; Moodle: no e-mail) is not written into the
LMS file but into ``<out>-no-lms-id.csv``, and counted in the summary. Text cells (names, ids, e-mails)
go through ``escape.for_csv``: control characters removed, and a cell a spreadsheet would read as a
formula (``= + - @``, tab, CR) gets a leading apostrophe, kept by both LMSs as text (such an id then
matches no user, and the import reports the row as unknown rather than running it). Scores are numbers.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.compat import moved
from autograder.course import CourseError
from autograder.escape import for_csv, for_id

LMS = ("canvas", "moodle", "csv")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS_POSSIBLE = "    Points Possible"
MOODLE_IDENTITY = ("First name", "Last name", "Email address", "ID number")
PLAIN_IDENTITY = ("student_id", "last_name", "first_name", "email", "lms_user_id")
MISSING_COLUMNS = ("student_id", "last_name", "first_name", "email")
# What each LMS matches a row by: a student without it is listed apart.
MATCHED_BY = {"canvas": "lms_user_id", "moodle": "email", "csv": None}


@dataclass
class Score:
    """One student's grade on one assignment, as nbgrader's export computes it."""
    raw: float
    penalty: float
    questions: dict[str, float | None] = field(default_factory=dict)

    @property
    def after(self) -> float:
        return max(0.0, self.raw - self.penalty)


@dataclass
class StudentRow:
    id: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    scores: dict[str, Score]


@dataclass
class Table:
    """The gradebook's assignments (name -> max score), their graded cells, and the students."""
    assignments: dict[str, float]
    questions: dict[str, list[str]]
    students: list[StudentRow]


@dataclass
class Written:
    """What an export wrote: the LMS file, its student rows, and who was left out (and where listed)."""
    path: Path
    rows: int
    missing: list[str]
    missing_path: Path | None


def read(gradebook: Gradebook, assignments: list[str] | None = None, students: list[str] | None = None) -> Table:
    """The gradebook's scores for ``assignments`` (default all) and ``students`` (default all)."""
    known = [a.name for a in gradebook.assignments]
    for name in assignments or ():
        if name not in known:
            raise CourseError(f"the gradebook has no assignment {name!r} (it has: {', '.join(known) or 'none'}): "
                              "grade it first with `course autograde`")
    chosen = [a for a in gradebook.assignments if not assignments or a.name in assignments]
    questions = {a.name: [gc.name for nb in a.notebooks for gc in nb.grade_cells] for a in chosen}
    rows = [StudentRow(s.id, s.first_name or "", s.last_name or "", s.email or "", s.lms_user_id or "",
                       {a.name: _score(gradebook, a.name, s.id) for a in chosen})
            for s in gradebook.students if not students or s.id in students]
    return Table({a.name: a.max_score for a in chosen}, questions, rows)


def _score(gradebook: Gradebook, assignment: str, student: str) -> Score:
    """As ``nbgrader export``: no submission scores 0 with no penalty."""
    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return Score(0.0, 0.0)
    questions = {g.name: g.score for nb in submission.notebooks for g in nb.grades}
    return Score(submission.score, submission.late_submission_penalty or 0.0, questions)


def _text(value: str) -> str:
    """A text cell: no control character, never read as a formula (a leading apostrophe)."""
    return for_csv(value)


def _number(value: float | None) -> str | int | float:
    """A score as a number cell: blank when there is none, 100 rather than 100.0."""
    if value is None:
        return ""
    number = round(float(value), 4)
    return int(number) if number.is_integer() else number


def canvas(table: Table) -> list[list]:
    """Canvas's gradebook import: identity columns, a column per assignment, Points Possible second."""
    rows: list[list] = [[*CANVAS_IDENTITY, *map(_text, table.assignments)],
                        [CANVAS_POINTS_POSSIBLE, "", "", "", "", *map(_number, table.assignments.values())]]
    for s in table.students:
        name = ", ".join(part for part in (s.last_name, s.first_name) if part) or s.id
        rows.append([_text(name), _text(for_id(s.lms_user_id)), "", "", "",
                     *[_number(s.scores[a].after) for a in table.assignments]])
    return rows


def moodle(table: Table, per_question: bool = False) -> list[list]:
    """Moodle's CSV grade import: names, e-mail and ID number, then a column per grade item."""
    items = [(a, q) for a in table.assignments for q in (table.questions[a] if per_question else [])]
    rows: list[list] = [[*MOODLE_IDENTITY, *[_text(f"{a}: {q}") for a, q in items], *map(_text, table.assignments)]]
    for s in table.students:
        rows.append([_text(s.first_name), _text(s.last_name), _text(for_id(s.email)), _text(for_id(s.lms_user_id)),
                     *[_number(s.scores[a].questions.get(q)) for a, q in items],
                     *[_number(s.scores[a].after) for a in table.assignments]])
    return rows


def plain(table: Table, per_question: bool = False) -> list[list]:
    """Every student: identity, per-question scores (optional), and both sides of the late penalty."""
    several = len(table.assignments) > 1

    def col(a: str, name: str) -> str:
        return f"{a}: {name}" if several else name

    totals = ("score_before_late_penalty", "late_penalty", "score_after_late_penalty", "max_score")
    header = [*PLAIN_IDENTITY]
    for a in table.assignments:
        header += [col(a, q) for q in (table.questions[a] if per_question else [])] + [col(a, t) for t in totals]
    rows: list[list] = [[_text(h) for h in header]]
    for s in table.students:
        row: list = [_text(for_id(s.id)), _text(s.last_name), _text(s.first_name), _text(for_id(s.email)),
               _text(for_id(s.lms_user_id))]
        for a, m in table.assignments.items():
            sc = s.scores[a]
            row += [_number(sc.questions.get(q)) for q in (table.questions[a] if per_question else [])]
            row += [_number(sc.raw), _number(sc.penalty), _number(sc.after), _number(m)]
        rows.append(row)
    return rows


def export(root: Path, assignment: str, lms: str, out: Path, per_question: bool = False) -> Written:
    """``course export``: the gradebook of the course at ``root``, for ``assignment``, written for ``lms``."""
    from autograder.course import Course

    db_url = Course(root).db_url
    if db_url.startswith("sqlite:///") and not Path(db_url[len("sqlite:///"):]).is_file():
        raise CourseError(f"no gradebook {db_url[len('sqlite:///'):]}: grade the class first with "
                          f"`course autograde {assignment}`")
    with Gradebook(db_url) as gradebook:
        return write(read(gradebook, [assignment]), lms, out, per_question)


def missing_path(out: Path) -> Path:
    """Where the students an LMS file leaves out are listed: beside it, ``<stem>-no-lms-id.csv``."""
    return out.with_name(f"{out.stem}-no-lms-id.csv")


def write(table: Table, lms: str, out: Path, per_question: bool = False) -> Written:
    """Write ``table`` for ``lms`` into ``out``; the students it cannot match go to ``missing_path(out)``."""
    if lms not in LMS:
        raise CourseError(f"unknown LMS {lms!r}: give one of {', '.join(LMS)}")
    key = MATCHED_BY[lms]
    matched = [s for s in table.students if key is None or _usable(getattr(s, key))]
    left_out = [s for s in table.students if s not in matched]
    kept = Table(table.assignments, table.questions, matched)
    rows = canvas(kept) if lms == "canvas" else moodle(kept, per_question) if lms == "moodle" else \
        plain(kept, per_question)
    _write_rows(out, rows)
    extra = missing_path(out)
    if left_out:
        _write_rows(extra, [list(MISSING_COLUMNS) + list(table.assignments)] +
                    [[_text(for_id(s.id)), _text(s.last_name), _text(s.first_name), _text(for_id(s.email)),
                      *[_number(s.scores[a].after) for a in table.assignments]] for s in left_out])
    elif extra.exists():
        extra.unlink()   # an old list would name students who now have an id
    header_rows = 2 if lms == "canvas" else 1
    return Written(out, len(rows) - header_rows, [s.id for s in left_out], extra if left_out else None)


def _usable(value: str) -> bool:
    """An id the LMS can match: not empty, and written as it is (an id that escaping changes, for a
    control character or a formula's first character, would match no one: it is listed instead)."""
    return bool(value.strip()) and _text(for_id(value)) == value


def _write_rows(path: Path, rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def summary(written: Written, lms: str) -> str:
    """One line: how many rows were written where, how many students lack what the LMS matches by."""
    key = MATCHED_BY[lms]
    lacking = len(written.missing)
    line = f"{written.rows} rows written to {written.path}; {lacking} student{'' if lacking == 1 else 's'} " \
           f"without an LMS id it can match"
    if key is not None:
        line += f" ({key})"
    if written.missing_path is not None:
        line += f", listed in {written.missing_path}"
    return line


def __getattr__(name: str):
    """nbgrader's export plugins live in ``autograder.nbgrader.plugins.export``; a course folder whose
    ``nbgrader_config.py`` still imports one from here gets it from there (``compat.moved``)."""
    return moved(__name__, name)
