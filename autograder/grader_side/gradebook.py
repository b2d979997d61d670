"""Course autograde results in nbgrader's gradebook, on SQLite or PostgreSQL.

``record(results, db_url)`` writes every student of a results document as an nbgrader
submission: each check's score becomes the ``auto_score`` of the graded cell of the same name,
and a cell we have no score for (a question graded by hand, a notebook that could not be
graded) is left for the TA (``needs_manual_grade``). The assignment itself (its notebooks and
graded cells) must already be in the gradebook: ``nbgrader generate_assignment`` records it.

Several graders may record into one PostgreSQL database at the same time (for example two
``course autograde`` runs on the two halves of a class): opening the gradebook (which may create
its tables) is serialised with an advisory lock, each student is one transaction, and a write
that collides with another grader's is rolled back and retried.
"""
from __future__ import annotations

import os
import sys
import warnings
from contextlib import contextmanager

from nbgrader.api import Gradebook, InvalidEntry, MissingEntry
from sqlalchemy.exc import SAWarning

from autograder.grader_side.assignment import CourseError

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
    # nbgrader stamps a new gradebook by running the `alembic` command: the one next to this Python.
    here = os.path.dirname(sys.executable)
    if here not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([here, os.environ.get("PATH", "")])
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
