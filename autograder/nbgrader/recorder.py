"""``course autograde`` results into nbgrader's gradebook and ``autograded/`` folder.

Afterwards ``nbgrader formgrader``, ``generate_feedback``, ``release_feedback`` and ``export`` work as
if ``nbgrader autograde`` had run. Each submitted notebook goes through what ``nbgrader autograde``
does to it: nbgrader's own sanitizing preprocessors (outputs cleared, test and given cells put back
from the source), the test cells' outputs from the results (the writer ``SandboxExecute`` uses),
then the rows ``SaveAutoGrades``, ``MarkForReview`` and the late penalty would write into the
course's ``db_url``.
Re-grading a student replaces their autograded scores; a manual score a TA already gave (C8) is
kept, and, as nbgrader does, its grade is listed for the TA to look at again.

A :class:`Recorder` holds one gradebook session for a whole batch and writes each student as one
transaction, their student and submission rows included: nbgrader's sanitizing preprocessors are
lent that session (``lent_gradebook``), so recording a student costs milliseconds, not a second. A
new submission's rows are written as nbgrader's ``add_submission`` makes them
(:class:`_NewSubmission`); then, on a first grading as on a re-grade, the rows ``SaveAutoGrades``,
``MarkForReview`` and ``AssignLatePenalties`` would leave are written as updates (:class:`_Rows`).
``tests/test_gradebook_rows.py`` holds all three equal, row by row, to nbgrader's own.
``course autograde`` runs its Recorder in a process of its own (``recorder_process``), locally and
for a Dask cluster.

Several graders may record into one PostgreSQL gradebook at the same time (two ``course
autograde`` runs on the two halves of a class): opening it (which may create its tables) is
serialised with an advisory lock, and a student whose write collides with another grader's is
rolled back and written again.
"""
from __future__ import annotations

import json
import logging
import re
import shutil
import warnings
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from nbformat.v4.nbjson import BytesEncoder
from nbformat.v4.rwbase import split_lines, strip_transient
from nbgrader import utils
from nbgrader.api import (
    BaseCell,
    Comment,
    Grade,
    Gradebook,
    InvalidEntry,
    MissingEntry,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
    new_uuid,
)
from nbgrader.preprocessors import AssignLatePenalties, IgnorePattern, LimitOutput
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError, SAWarning

from autograder.course import Course, CourseError, alembic_on_path
from autograder.grader_side import submitted
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.pipeline import Outcome
from autograder.grader_side.results import NOT_WRITTEN, StudentResult
from autograder.nbgrader.exporter import placeholder, read_submitted
from autograder.nbgrader.files import submission_time
from autograder.nbgrader.lent_gradebook import Source, lent
from autograder.nbgrader.outputs import write_outcomes
from autograder.nbgrader.preprocessors import SANITIZE as AUTOGRADE_SANITIZE
from autograder.nbgrader.preprocessors import MarkForReview, SaveAutoGrades
from autograder.student_side.checks import quoted

# nbgrader's Autograde.sanitize_preprocessors, and its autograde_preprocessors after execution
# (its closing CheckCellMetadata left out: nothing after sanitizing changes cell metadata).
SANITIZE = tuple(AUTOGRADE_SANITIZE)
RECORD = (IgnorePattern, LimitOutput, SaveAutoGrades, MarkForReview, AssignLatePenalties)
NOTEBOOK_ONLY = (IgnorePattern, LimitOutput)   # of RECORD, those that change the notebook, not the gradebook
RETRIES = 5


class Recorder:
    """Writes graded students into one course's gradebook and autograded/ folder, one at a time,
    through one gradebook session: use it as a context manager."""

    def __init__(self, course: Course, assignment: str):
        self.course, self.name = course, assignment
        self.assignment = Assignment(assignment, course.root)
        self.gb: Gradebook | None = None
        self.preprocessors = {pp: pp(config=course.config) for pp in SANITIZE + RECORD}
        # nbgrader's notes on each answered solution cell ("checksum has changed") are not news here.
        quiet = logging.getLogger("autograder.gradebook")
        quiet.setLevel(logging.ERROR)
        for pp in self.preprocessors.values():
            pp.log = quiet
        late = self.preprocessors[AssignLatePenalties]
        # What AssignLatePenalties.preprocess would set from a notebook's resources: the plugin reads
        # the assignment (whose extensions apply) and the gradebook (beside which extensions.toml is).
        late.assignment_id, late.db_url = assignment, course.db_url
        late.init_plugin()
        self.plugin = late.plugin_inst   # the course's late penalty (_Rows)

    def __enter__(self) -> Recorder:
        course, name = self.course, self.name
        missing = f"run `nbgrader generate_assignment {name}` (or `course release`) in {course.root} first"
        if course.db_url.startswith("sqlite:///") and not Path(course.db_url[len("sqlite:///"):]).is_file():
            raise CourseError(f"no gradebook {course.db_url[len('sqlite:///'):]}: {missing}")
        self.gb = gb = _opened(course.db_url, course.coursedir.course_id)
        try:
            self.source = Source(gb, name)
            self.new_rows = _NewSubmission(gb, name)
        except MissingEntry:
            gb.close()
            raise CourseError(f"the gradebook {_safe(course.db_url)} has no assignment {name!r}: {missing}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._session().close()

    def _session(self) -> Gradebook:
        """The gradebook session, open from ``__enter__`` to ``__exit__``."""
        if self.gb is None:
            raise RuntimeError("a Recorder records inside its `with` block only")
        return self.gb

    def record(self, student: str, result: StudentResult, folder: Path) -> None:
        """Write ``result`` (one student of the results), graded from ``folder``; ``result`` then says
        what the gradebook holds (flags, late penalty, the hand-graded questions as it lists them)."""
        notes = []
        if UNMATCHABLE.search(student):
            notes.append("this student id holds a line break, a control character or one of [ ] * ?: nbgrader's "
                         "own autograde and generate_feedback stop at such a folder, or skip it; rename it and "
                         "grade again")
        kept, refused = submitted.bookkeeping(folder, self.name)   # timestamp.txt, submission_secret.txt, lms_late.txt
        when, unread = _timestamp(kept, refused)
        if unread:
            notes.append(f"timestamp.txt is not a time ({unread}): recorded without a submission time, so no late "
                         "penalty applies; check when it was handed in")
        if submitted.LMS_LATE in kept and when is None:
            notes.append("the LMS marked this submission late and gave no time (lms_late.txt, from zip_collect), so "
                         "no late penalty applies; check it against the due date")
        for attempt in range(RETRIES):
            try:
                with warnings.catch_warnings():
                    # nbgrader's gradebook trips SQLAlchemy's autoflush notes on every new submission.
                    warnings.filterwarnings("ignore", category=SAWarning)
                    graded, unprocessed, waiting, penalty = self._record(student, result, folder, when)
                break
            except (InvalidEntry, IntegrityError):   # another grader wrote the same row first: again
                self._session().db.rollback()
                if attempt == RETRIES - 1:
                    raise
            except BaseException:
                self._session().db.rollback()
                raise
        if notes or unprocessed:   # once, after the attempt that was committed
            result.flags.extend(notes + unprocessed)
        result.late_penalty = penalty
        _hand_graded_as_recorded(result, waiting, self.assignment.questions)
        dest = self.course.folder("autograded", student, self.name)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for file, data in kept.items():
            (dest / file).write_bytes(data)
        for notebook, nb in graded.items():
            (dest / f"{notebook}.ipynb").write_text(_notebook_json(nb), encoding="utf-8")

    def record_safely(self, student: str, result: StudentResult, folder: Path) -> None:
        """``record``; a failure is noted in the student's flags, not raised (the batch goes on)."""
        try:
            self.record(student, result, folder)
        except Exception as exc:
            result.flags.append(f"{NOT_WRITTEN}{type(exc).__name__}: {exc}"[:300])

    def _record(self, student: str, result: StudentResult, folder: Path,
                when: datetime | None) -> tuple[dict[str, Any], list[str], set[str], float]:
        """Write the student's grades (committed together); return their autograded notebooks, a
        flag for each notebook nbgrader's sanitizing preprocessors could not process, the hand-graded
        questions whose grade the gradebook now lists for a TA, and the late penalty it recorded
        (the points ``nbgrader export`` takes off: the sum over the notebooks)."""
        gb = self._session()
        outcomes = {row.id: Outcome(row.passed, row.message, review=row.review) for _, row in result.checks()}
        look = [row.id for qid in result.needs_manual_grade if qid in result.questions
                for row in result.questions[qid].checks]
        graded: dict[str, Any] = {}
        unprocessed: list[str] = []
        waiting: set[str] = set()
        with lent(gb, self.source):   # the sanitizing steps read the source cells from the batch's session
            gb.update_or_create_student(student)
            try:
                existing = gb.find_submission(self.name, student)
            except MissingEntry:
                self.new_rows.add(gb, student, when)
                existing = gb.find_submission(self.name, student)
            else:
                if when:   # what nbgrader's update_or_create_submission changes on one it finds
                    existing.timestamp = when
            penalty = self._scored(student, folder, outcomes, look, existing, graded, unprocessed, waiting)
        gb.db.commit()
        return graded, unprocessed, waiting, float(penalty)

    def _scored(self, student: str, folder: Path, outcomes: dict[str, Outcome], look: list[str],
                 submission: SubmittedAssignment, graded: dict[str, Any], unprocessed: list[str],
                 waiting: set[str]) -> float:
        """A submission the gradebook holds (new or graded before): each notebook sanitized and its
        outputs written by nbgrader's preprocessors, its grades, comments and late penalty by :class:`_Rows` (what
        SaveAutoGrades, MarkForReview and AssignLatePenalties would write); return the late penalty
        recorded (``graded``, ``unprocessed``, ``waiting`` filled in)."""
        rows = _Rows(self._session(), submission.id, self.plugin, self.preprocessors[AssignLatePenalties].log)
        late = submission.total_seconds_late
        penalty = 0.0
        for notebook in self.source.notebooks:
            try:
                nb, resources = self._sanitized(student, folder, notebook)
                review = write_outcomes(nb, outcomes, self.assignment, notebook)
                for pp in NOTEBOOK_ONLY:
                    nb, resources = self.preprocessors[pp](nb, resources)
                changes = rows.scored(notebook, nb, [*review, *self._looked_at(look, notebook)])
            except (InvalidEntry, IntegrityError):
                raise
            except Exception as exc:   # nbgrader's rule for a notebook it cannot grade: zero everywhere
                unprocessed.append(_unprocessed(notebook, exc))
                rows.zeroed(notebook)   # and no late penalty on a 0
                continue
            penalty += rows.write(notebook, changes, student, late)
            graded[notebook] = nb
        self._waiting(rows.flags(), waiting)
        return penalty

    def _sanitized(self, student: str, folder: Path, notebook: str) -> tuple[Any, dict[str, Any]]:
        """The student's notebook read and through nbgrader's sanitizing steps, with its resources;
        raises for one that is missing or that nbgrader cannot process."""
        nb = _read(folder, self.assignment, notebook)
        resources: dict[str, Any] = {"unique_key": notebook, "nbgrader": {
            "student": student, "assignment": self.name, "notebook": notebook, "db_url": self.course.db_url}}
        if nb is None:
            raise ValueError("missing or unreadable")
        for pp in SANITIZE:
            nb, resources = self.preprocessors[pp](nb, resources)
        return nb, resources

    def _looked_at(self, look: list[str], notebook: str) -> list[str]:
        """The checks of ``notebook`` among those the grader wants a TA to look at."""
        return [cid for cid in look if cid in self.assignment.tests(notebook)]

    def _waiting(self, flags: Iterable[tuple[str, bool]], waiting: set[str]) -> None:
        """Add to ``waiting`` each hand-graded question with a grade (name, needs_manual_grade) flagged."""
        questions = self.assignment.questions
        for name, needs_manual_grade in flags:
            qid = name.partition("_")[0]
            if needs_manual_grade and qid in questions and questions[qid].manual:
                waiting.add(qid)


def _unprocessed(notebook: str, exc: Exception) -> str:
    """The flag for a notebook recorded as 0 because nbgrader could not process it."""
    return (f"{notebook}.ipynb is recorded in nbgrader's gradebook as 0 points: nbgrader could not "
            f"process it ({type(exc).__name__}: {exc})"[:300])


class _Rows:
    """One submission's grades and comments as nbgrader's ``SaveAutoGrades``, ``MarkForReview``
    and ``AssignLatePenalties`` leave them on a re-grade, read in two queries and written as updates
    by primary key (nbgrader: one lookup and one commit per cell). For each graded cell of the
    notebook its auto score, ``needs_manual_grade`` when a manual score was given (kept) or there is
    no auto score, then set for each check marked for a TA; each solution cell's and task's comment
    "No response." when left as released; the notebook's late penalty from the course's plugin on
    its new score (none when on time)."""

    def __init__(self, gb: Gradebook, submission_id: str, plugin: Any, log: logging.Logger) -> None:
        self.gb, self.plugin, self.log = gb, plugin, log
        self.notebooks: dict[str, str] = {}
        self.grades: dict[str, dict[str, list[Any]]] = {}
        self.comments: dict[str, dict[str, str]] = {}
        for sid, name in gb.db.execute(select(SubmittedNotebook.id, Notebook.name).join(
                Notebook, Notebook.id == SubmittedNotebook.notebook_id).where(
                SubmittedNotebook.assignment_id == submission_id)):
            self.notebooks[name], self.grades[name], self.comments[name] = sid, {}, {}
        names = {sid: name for name, sid in self.notebooks.items()}
        for gid, cell, sid, manual, needs in gb.db.execute(
                select(Grade.id, BaseCell.name, Grade.notebook_id, Grade.manual_score, Grade.needs_manual_grade)
                .join(BaseCell, BaseCell.id == Grade.cell_id).where(Grade.notebook_id.in_(names))):
            self.grades[names[sid]][cell] = [gid, manual, needs]
        for cid, cell, sid in gb.db.execute(select(Comment.id, BaseCell.name, Comment.notebook_id).join(
                BaseCell, BaseCell.id == Comment.cell_id).where(Comment.notebook_id.in_(names))):
            self.comments[names[sid]][cell] = cid

    def scored(self, notebook: str, nb: Any, marked: list[str]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
        """The grade and comment updates for ``nb`` (by row id); a cell the gradebook has no row for
        is nbgrader's MissingEntry, as in its preprocessors."""
        grades: dict[str, dict[str, Any]] = {}
        comments: dict[str, Any] = {}
        for cell in nb.cells:
            if utils.is_grade(cell):
                gid, manual, _ = self._grade(notebook, cell.metadata["nbgrader"]["grade_id"])
                auto, _ = utils.determine_grade(cell, self.log)
                grades[gid] = {"id": gid, "auto_score": auto,
                               "needs_manual_grade": manual is not None or auto is None}
            if utils.is_solution(cell) or utils.is_task(cell):
                name = cell.metadata["nbgrader"]["grade_id"]
                if name not in self.comments[notebook]:
                    raise MissingEntry(f"no comment {name} in {notebook}")
                blank = cell.metadata.nbgrader.get("checksum", None) == utils.compute_checksum(cell)
                comments[self.comments[notebook][name]] = "No response." if blank and not utils.is_task(cell) else None
        for name in marked:
            gid = self._grade(notebook, name)[0]
            grades.setdefault(gid, {"id": gid})["needs_manual_grade"] = True   # auto score as it was
        return grades, comments

    def _grade(self, notebook: str, name: str) -> list[Any]:
        found = self.grades.get(notebook, {}).get(name)
        if found is None:
            raise MissingEntry(f"no grade {name} in {notebook}")
        return found

    def write(self, notebook: str, changes: tuple[dict[str, dict[str, Any]], dict[str, Any]], student: str,
              seconds_late: float) -> float:
        """Write ``changes`` and the notebook's late penalty; return that penalty (0 when none)."""
        grades, comments = changes
        self._update(grades.values(), comments)
        for row in self.grades[notebook].values():
            if row[0] in grades:
                row[2] = grades[row[0]]["needs_manual_grade"]
        penalty = None
        if seconds_late > 0:
            score = self.gb.db.execute(select(SubmittedNotebook.score).where(
                SubmittedNotebook.id == self.notebooks[notebook])).scalar_one()
            penalty = self.plugin.late_submission_penalty(student, score, seconds_late)
            if penalty is not None:
                penalty = 0 if penalty < 0 else score if penalty > score else penalty
        self.gb.db.execute(update(SubmittedNotebook), [{"id": self.notebooks[notebook],
                                                        "late_submission_penalty": penalty}])
        return float(penalty or 0.0)

    def zeroed(self, notebook: str) -> None:
        """Every grade of ``notebook`` 0 and not waiting for a TA, no late penalty."""
        rows = self.grades[notebook].values()
        self._update([{"id": row[0], "auto_score": 0, "needs_manual_grade": False} for row in rows], {})
        for row in rows:
            row[2] = False
        self.gb.db.execute(update(SubmittedNotebook), [{"id": self.notebooks[notebook],
                                                        "late_submission_penalty": None}])

    def _update(self, grades: Iterable[dict[str, Any]], comments: dict[str, Any]) -> None:
        grade_rows = list(grades)
        for keys in ({"id", "auto_score", "needs_manual_grade"}, {"id", "needs_manual_grade"}):
            same = [row for row in grade_rows if row.keys() == keys]
            if same:
                self.gb.db.execute(update(Grade), same)
        if comments:
            self.gb.db.execute(update(Comment), [{"id": cid, "auto_comment": text} for cid, text in comments.items()])

    def flags(self) -> Iterator[tuple[str, bool]]:
        """(cell name, needs_manual_grade) of every grade, as now written."""
        for grades in self.grades.values():
            for name, row in grades.items():
                yield name, bool(row[2])


class _NewSubmission:
    """nbgrader's ``add_submission`` for one assignment: the submission, a row per notebook, a grade
    for each graded cell and task and a comment for each solution cell and task, in its order, with
    its defaults; written as one multi-row insert per table, not about 85 ORM objects (10 ms a
    student). The assignment's ids are read once."""

    def __init__(self, gb: Gradebook, assignment: str):
        found = gb.find_assignment(assignment)
        self.assignment_id = found.id
        self.notebooks = [(nb.id, [c.id for c in nb.grade_cells], [c.id for c in nb.solution_cells],
                           [c.id for c in nb.task_cells]) for nb in found.notebooks]

    def add(self, gb: Gradebook, student: str, when: datetime | None) -> None:
        submission = new_uuid()
        notebooks: list[dict[str, str]] = []
        grades: list[dict[str, str]] = []
        comments: list[dict[str, str]] = []
        for notebook_id, graded, solutions, tasks in self.notebooks:
            row = new_uuid()
            notebooks.append({"id": row, "assignment_id": submission, "notebook_id": notebook_id})
            grades += [{"notebook_id": row, "cell_id": cell} for cell in graded + tasks]
            comments += [{"notebook_id": row, "cell_id": cell} for cell in solutions + tasks]
        gb.db.execute(insert(SubmittedAssignment), [{"id": submission, "assignment_id": self.assignment_id,
                                                     "student_id": student, "timestamp": when}])
        for model, rows in ((SubmittedNotebook, notebooks), (Grade, grades), (Comment, comments)):
            if rows:
                gb.db.execute(insert(model), rows)


def _hand_graded_as_recorded(result: StudentResult, waiting: set[str], questions_of_set: dict[str, Any]) -> None:
    """The hand-graded questions (C8) of ``result`` as the gradebook lists them: waiting for a TA
    exactly when nbgrader's grade needs manual grading (an answer, a manual score given before),
    else scored 0 as recorded (an answer left as released, a notebook nbgrader could not process)."""
    questions = result.questions
    for qid, q in questions_of_set.items():
        if not q.manual:
            continue
        if qid in questions:
            if qid in waiting and questions[qid].score is not None:
                questions[qid].score, questions[qid].feedback = None, ["graded by hand by a TA"]
            elif qid not in waiting and questions[qid].score is None:
                questions[qid].score = 0.0
                questions[qid].feedback = ["recorded as 0 in nbgrader's gradebook, not listed for grading by hand"]
    listed = set(result.needs_manual_grade)
    listed = {qid for qid in listed if not (qid in questions_of_set and questions_of_set[qid].manual)} | waiting
    result.needs_manual_grade = [qid for qid in questions_of_set if qid in listed] + \
        [qid for qid in result.needs_manual_grade if qid not in questions_of_set]


# What nbgrader cannot match in a student's folder name: its paths are globs, then a regular
# expression whose "." stops at a line break.
UNMATCHABLE = re.compile(r"[\x00-\x1f\x7f\[\]*?]")


def _timestamp(kept: dict[str, bytes], refused: dict[str, str]) -> tuple[datetime | None, str]:
    """(when the submission was made, from its timestamp.txt as nbgrader's collect writes it, or
    None; why a timestamp.txt could not be read, or ""). It may come from the student's side of the
    exchange, so anything that is not a time is only reported."""
    if "timestamp.txt" in kept:
        when = submission_time(kept["timestamp.txt"])
        text = kept["timestamp.txt"].decode("utf-8", errors="replace").strip()
        return (when, "") if when else (None, quoted(text[:40]) if text else "it is empty")
    if "timestamp.txt" in refused:
        return None, "it is not a plain file of under 1000 bytes"
    return None, ""


def _read(folder: Path, a: Assignment, notebook: str) -> Any:
    """The student's notebook, read by the one reader's rule; for one it refuses (a link, not a
    regular file, over the size cap or a structure cap), the course's released notebook with the
    reason on top, so nothing but the course's cells reaches autograded/ and feedback, and no
    notebook costs the recorder more than the caps allow; None when it is missing or not a notebook
    (the results already say why)."""
    try:
        data = submitted.notebook(folder, a.name, notebook)
    except submitted.Missing:
        return None
    except submitted.Refused as exc:
        return placeholder(a, notebook, str(exc))
    try:
        return read_submitted(data)
    except Exception:
        return None


def _notebook_json(nb: Any) -> str:
    """The bytes ``nbformat.write`` writes for ``nb`` (tests/test_gradebook_rows.py holds them
    equal), without its copy of ``nb``, which this changes (its lines split, its transient fields
    dropped) and nothing reads afterwards, and without its schema check: ``nb`` was checked, its
    cell ids repaired, when it was read (``nbformat.reads``), and nbgrader's steps and the outputs
    written since keep it valid (where one did not, the check would only log it)."""
    text = json.dumps(strip_transient(split_lines(nb)), cls=BytesEncoder, indent=1, sort_keys=True,
                      separators=(",", ": "), ensure_ascii=False)
    return text if text.endswith("\n") else text + "\n"


_LOCK_KEY = 0x636F75727365   # "course": one advisory lock shared by every grader of the database


def _opened(db_url: str, course_id: str) -> Gradebook:
    """nbgrader's Gradebook; on PostgreSQL, opened under an advisory lock (opening creates the
    tables of an empty database, which two graders must not do at once)."""
    alembic_on_path()
    if not db_url.startswith("postgresql"):
        return Gradebook(db_url, course_id)
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    try:
        with engine.connect() as lock:
            lock.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _LOCK_KEY})
            try:
                return Gradebook(db_url, course_id)
            finally:
                lock.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _LOCK_KEY})
    finally:
        engine.dispose()


def _safe(db_url: str) -> str:
    """The URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(db_url).render_as_string(hide_password=True)
