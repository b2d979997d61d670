"""``course autograde`` results into nbgrader's gradebook and ``autograded/`` folder.

Afterwards ``nbgrader formgrader``, ``generate_feedback``, ``release_feedback`` and ``export`` work as
if ``nbgrader autograde`` had run. Each submitted notebook goes through what ``nbgrader autograde``
does to it, with nbgrader's own preprocessors: sanitizing (outputs cleared, test and given cells put
back from the source), the test cells' outputs from the results (the writer ``SandboxExecute``
uses), then ``SaveAutoGrades``, ``MarkForReview`` and the late penalty into the course's ``db_url``.
Re-grading a student replaces their autograded scores; a manual score a TA already gave (C8) is
kept, and, as nbgrader does, its grade is listed for the TA to look at again.

``record(results, db_url)`` writes a results document into a gradebook alone (no notebooks), for
results graded elsewhere. Several graders may record into one PostgreSQL database at the same time
(for example two ``course autograde`` runs on the two halves of a class): opening the gradebook
(which may create its tables) is serialised with an advisory lock, each student is one
transaction, and a write that collides with another grader's is rolled back and retried.
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, InvalidEntry, MissingEntry
from nbgrader.apps.baseapp import NbGrader
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades)
from sqlalchemy.exc import SAWarning

from autograder.grader_side.assignment import Assignment, CourseError
from autograder.grader_side import nbgrader_execute
from autograder.grader_side.nbgrader_execute import MarkForReview, write_outcomes
from autograder.grader_side.pipeline import Outcome
from autograder.grader_side.pipeline.read import MAX_BYTES

# nbgrader's Autograde.sanitize_preprocessors, and its autograde_preprocessors after execution.
SANITIZE = tuple(nbgrader_execute.SANITIZE)
RECORD = (IgnorePattern, LimitOutput, SaveAutoGrades, MarkForReview, AssignLatePenalties, CheckCellMetadata)


def _alembic_on_path() -> None:
    """nbgrader stamps a new gradebook by running the ``alembic`` command: the one next to this Python."""
    here = os.path.dirname(sys.executable)
    if here not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([here, os.environ.get("PATH", "")])


class Course:
    """An nbgrader course folder, configured by its ``nbgrader_config.py`` as nbgrader reads it."""

    def __init__(self, root: Path):
        _alembic_on_path()
        self.root = Path(root).resolve()
        if not (self.root / "nbgrader_config.py").is_file():
            raise CourseError(f"no nbgrader_config.py in {self.root}: run `course` in the course folder")
        cwd = os.getcwd()
        try:
            os.chdir(self.root)   # nbgrader also reads the configuration of the folder it runs in
            app = NbGrader()
            app.initialize([], root=str(self.root))
        finally:
            os.chdir(cwd)
        self.app, self.config, self.coursedir = app, app.config, app.coursedir

    @property
    def db_url(self) -> str:
        url, prefix = self.coursedir.db_url, "sqlite:///"
        if url.startswith(prefix) and not os.path.isabs(url[len(prefix):]):
            return prefix + str(self.root / url[len(prefix):])   # relative to the course folder
        return url

    def folder(self, kind: str, student: str = ".", assignment: str = ".") -> Path:
        """nbgrader's ``<kind>_directory`` (submitted, autograded...) for a student and assignment."""
        return Path(self.coursedir.format_path(getattr(self.coursedir, f"{kind}_directory"), student, assignment))


class Recorder:
    """Writes graded students into one course's gradebook and autograded/ folder, one at a time."""

    def __init__(self, course: Course, assignment: str):
        self.course, self.name = course, assignment
        self.assignment = Assignment(assignment, course.root)
        missing = f"run `nbgrader generate_assignment {assignment}` (or `course release`) in {course.root} first"
        if course.db_url.startswith("sqlite:///") and not Path(course.db_url[len("sqlite:///"):]).is_file():
            raise CourseError(f"no gradebook {course.db_url[len('sqlite:///'):]}: {missing}")
        with Gradebook(course.db_url, course.coursedir.course_id) as gb:
            try:
                self.notebooks = [n.name for n in gb.find_assignment(assignment).notebooks]
            except MissingEntry:
                raise CourseError(f"the gradebook {course.db_url} has no assignment {assignment!r}: {missing}") from None
        self.preprocessors = {pp: pp(config=course.config) for pp in SANITIZE + RECORD}
        # nbgrader's notes on each answered solution cell ("checksum has changed") are not news here.
        quiet = logging.getLogger("autograder.gradebook")
        quiet.setLevel(logging.ERROR)
        for pp in self.preprocessors.values():
            pp.log = quiet

    def record(self, student: str, result: dict, folder: Path) -> None:
        """Write ``result`` (one student of a results document), graded from ``folder``."""
        with warnings.catch_warnings():
            # nbgrader's gradebook trips SQLAlchemy's autoflush notes on every new submission.
            warnings.filterwarnings("ignore", category=SAWarning)
            self._record(student, result, folder)

    def _record(self, student: str, result: dict, folder: Path) -> None:
        outcomes = {row["id"]: Outcome(row["passed"], row["message"], review=row.get("review"))
                    for q in result.get("questions", {}).values() for row in q.get("checks", [])}
        dest = self.course.folder("autograded", student, self.name)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for path in _bookkeeping(folder, self.name):
            shutil.copy(path, dest / path.name)
        db_url, course_id = self.course.db_url, self.course.coursedir.course_id
        with Gradebook(db_url, course_id) as gb:
            gb.update_or_create_student(student)
            when = self.course.coursedir.get_existing_timestamp(str(dest))
            gb.update_or_create_submission(self.name, student, **({"timestamp": when} if when else {}))
        for notebook in self.notebooks:
            nb = _read(folder, self.name, notebook)
            resources = {"unique_key": notebook, "nbgrader": {"student": student, "assignment": self.name,
                                                              "notebook": notebook, "db_url": db_url}}
            try:
                if nb is None:
                    raise ValueError("missing or unreadable")
                for pp in SANITIZE:
                    nb, resources = self.preprocessors[pp](nb, resources)
                look = [row["id"] for qid in result.get("needs_manual_grade", [])
                        for row in result.get("questions", {}).get(qid, {}).get("checks", [])]
                resources["course"] = {"review": write_outcomes(nb, outcomes, self.assignment, notebook),
                                       "look": [cid for cid in look if cid in self.assignment.tests(notebook)]}
                for pp in RECORD:
                    nb, resources = self.preprocessors[pp](nb, resources)
            except Exception:   # nbgrader's rule for a notebook it cannot grade: zero everywhere
                with Gradebook(db_url, course_id) as gb:
                    for grade in gb.find_submission_notebook(notebook, self.name, student).grades:
                        grade.auto_score, grade.needs_manual_grade = 0, False
                    gb.db.commit()
                continue
            nbformat.write(nb, dest / f"{notebook}.ipynb")


# nbgrader's notes on a submission (written by `collect` and `zip_collect`), which its feedback
# commands read back from autograded/.
BOOKKEEPING = ("timestamp.txt", "submission_secret.txt")


def _bookkeeping(folder: Path, name: str) -> list[Path]:
    found = []
    for base in (folder, folder / name):
        for file in BOOKKEEPING:
            path = base / file
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 1000:
                found.append(path)
    return found


def _read(folder: Path, name: str, notebook: str):
    for path in (folder / f"{notebook}.ipynb", folder / name / f"{notebook}.ipynb"):
        if path.is_file() and not path.is_symlink():
            if path.stat().st_size > MAX_BYTES:
                return None
            try:
                return nbformat.read(path, as_version=4)
            except Exception:   # not a notebook: the results already say why
                return None
    return None


# ---- results alone, safe for concurrent graders ----------------------------------------------

RETRIES = 5
_LOCK_KEY = 0x636F75727365   # "course": one advisory lock shared by every grader of the database


def record(results: dict, db_url: str, course_id: str = "default_course") -> int:
    """Write ``results`` (a course autograde results document) into the gradebook at ``db_url``;
    returns how many students were recorded."""
    with _opened(db_url, course_id) as gb, warnings.catch_warnings():
        # nbgrader's add_submission builds rows in a way SQLAlchemy 2 warns about (harmlessly).
        warnings.simplefilter("ignore", SAWarning)
        try:
            gb.find_assignment(results["assignment"])
        except MissingEntry:
            raise CourseError(f"the gradebook at {_safe(db_url)} has no assignment {results['assignment']!r}: "
                              f"run `nbgrader generate_assignment {results['assignment']} --db={_safe(db_url)}` "
                              "first") from None
        for student, result in results["students"].items():
            for attempt in range(RETRIES):
                try:
                    _record_student(gb, results["assignment"], student, result)
                    break
                except InvalidEntry:   # another grader wrote the same row first: read it back and retry
                    gb.db.rollback()
                    if attempt == RETRIES - 1:
                        raise
    return len(results["students"])


def _record_student(gb: Gradebook, assignment: str, student: str, result: dict) -> None:
    scores = {row["id"]: row["score"] for q in (result.get("questions") or {}).values()
              for row in q.get("checks") or []}
    gb.update_or_create_student(student)
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        submission = gb.add_submission(assignment, student)
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            score = scores.get(grade.name)
            grade.auto_score = score
            grade.needs_manual_grade = score is None
    gb.db.commit()


@contextmanager
def _opened(db_url: str, course_id: str):
    """nbgrader's Gradebook; on PostgreSQL, opened under an advisory lock (opening creates the
    tables of an empty database, which two graders must not do at once)."""
    _alembic_on_path()
    if not db_url.startswith("postgresql"):
        with Gradebook(db_url, course_id) as gb:
            yield gb
        return
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    try:
        with engine.connect() as lock:
            lock.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _LOCK_KEY})
            try:
                gb = Gradebook(db_url, course_id)
            finally:
                lock.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _LOCK_KEY})
    finally:
        engine.dispose()
    with gb:
        yield gb


def _safe(db_url: str) -> str:
    """The URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(db_url).render_as_string(hide_password=True)
