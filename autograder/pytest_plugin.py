"""Grading with pytest: one test item per check, scored exactly as ``course autograde`` scores it.

Run in the course folder (the one holding ``nbgrader_config.py``)::

    pytest --submission submitted/alice/<assignment>           # one student
    pytest --submissions submitted/ --junitxml grades.xml       # a whole class

The submissions are graded once, at collection, by ``course autograde``'s own pipeline (the same
sandbox, grader-side comparisons and route verdicts); each check then becomes an item
``<student>::<question>::<check>`` that passes, fails with the check's message for the student,
or is skipped while its points wait for a TA (a question graded by hand, an answer or a route the
grader left to a TA). Every item carries its points as JUnit XML properties (``points``,
``score``, ``question``, ``hidden``, ``student``), ``-k``, ``-x`` and ``--lf`` work as usual, and
the summary gives each student's total. Without ``--submission``/``--submissions`` the plugin
does nothing.
"""
from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("course", "grading submissions with the course's checks")
    group.addoption("--submission", type=Path, default=None, metavar="FOLDER",
                    help="grade one student's folder: <student>/<assignment>/ or <student>/ holding the notebooks")
    group.addoption("--submissions", type=Path, default=None, metavar="DIR",
                    help="grade every student folder in DIR, as `course autograde --submissions DIR`")
    group.addoption("--assignment", default=None, help="the problem set (default: the one the submission folders "
                                                       "are named after, or the course's only set)")
    group.addoption("--course", type=Path, default=None, help="the course folder (default: the current one)")
    group.addoption("--grading-timeout", type=float, default=60.0, help="wall-clock seconds per notebook")
    group.addoption("--grading-workers", type=int, default=0, help="parallel submissions (0: one per core)")


def pytest_configure(config):
    if config.getoption("submission") or config.getoption("submissions"):
        config.pluginmanager.register(Grading(config), "course-grading-session")


class Grading:
    """The plugin once a submission is given: grades at collection, reports totals at the end."""

    def __init__(self, config):
        self.config = config
        self.results: dict = {}

    def pytest_collection(self, session):
        from autograder import api

        config = self.config
        try:
            self.results = _grade(config)
        except api.CourseError as exc:
            raise pytest.UsageError(str(exc)) from None
        session.items = [item for sid, result in self.results["students"].items()
                         for item in _items(session, sid, result)]
        # As a collector would report them: the terminal then says "collected N items".
        config.hook.pytest_collectreport(report=pytest.CollectReport("", "passed", None, list(session.items)))
        config.hook.pytest_collection_modifyitems(session=session, config=config, items=session.items)
        config.hook.pytest_collection_finish(session=session)
        session.testscollected = len(session.items)
        return True

    def pytest_terminal_summary(self, terminalreporter):
        for sid, result in self.results.get("students", {}).items():
            waiting = [q for q in result.get("needs_manual_grade", [])]
            line = f"{sid}: {result['score']:g} / {result['max_score']:g} points (the whole submission)"
            if waiting:
                line += f"; waiting for a TA: {', '.join(waiting)}"
            if result.get("reason"):
                line += f"; {result['reason']}"
            terminalreporter.write_line(line)


def _grade(config) -> dict:
    """The results document of the submissions the options name."""
    from autograder import api

    root = api.course_root(config.getoption("course"))
    timeout, workers = config.getoption("grading_timeout"), config.getoption("grading_workers")
    one, many = config.getoption("submission"), config.getoption("submissions")
    if one and many:
        raise api.CourseError("give --submission FOLDER or --submissions DIR, not both")
    assignment = config.getoption("assignment")
    if many:
        return api.autograde(assignment or _named(api, root, Path(many)), many, workers, timeout, repo=root)
    one = Path(one)
    named = one.name if one.name in api.problem_sets(root) else None
    assignment = assignment or named or _named(api, root, one.parent)
    student = one.parent if named == assignment else one     # <student>/<assignment>/ or <student>/
    if not student.parent.is_dir():
        raise api.CourseError(f"--submission {one}: no such folder; give <student>/<assignment>/ or <student>/")
    return api.autograde(assignment, student.parent, workers or 1, timeout, repo=root, only=[student.name])



def _named(api, root: Path, folder: Path) -> str:
    """The set a folder of student folders holds: the course's only set, or the one set its
    ``<student>/<assignment>/`` folders are named after."""
    sets = api.problem_sets(root)
    if len(sets) == 1:
        return sets[0]
    try:
        named = {p.name for student in folder.iterdir() if student.is_dir() for p in student.iterdir()
                 if p.is_dir() and p.name in sets}
    except OSError:
        named = set()
    if len(named) == 1:
        return named.pop()
    raise api.CourseError(f"give --assignment: the course has {len(sets)} problem sets ({', '.join(sets)})")

def _items(session, sid: str, result: dict):
    safe = sid.replace(":", "%3A")      # a folder named "alice::C1" must not pass for alice's C1
    student = Student.from_parent(session, name=safe, nodeid=safe)
    questions = result.get("questions") or {}
    if not any(q.get("checks") for q in questions.values()):
        yield Check.from_parent(student, name="submission", sid=sid, qid="", row=None,
                                why=result.get("reason") or "nothing could be graded")
        return
    for qid, q in questions.items():
        node = Question.from_parent(student, name=qid, nodeid=f"{safe}::{qid}")
        if q.get("manual"):
            why = "graded by hand by a TA" if qid in result.get("needs_manual_grade", []) else \
                (q.get("feedback") or ["not graded by hand: it scores 0"])[0]
            yield Check.from_parent(node, name=f"{qid}_manual", sid=sid, qid=qid, row=None, why=why, skip=True,
                                    points=q["max_score"])
        for row in q.get("checks") or []:
            yield Check.from_parent(node, name=row["id"], sid=sid, qid=qid, row=row)


class Student(pytest.Collector):
    def collect(self):
        return []


class Question(pytest.Collector):
    def collect(self):
        return []


class CheckFailed(Exception):
    """A check the submission did not pass: its message for the student."""


class Check(pytest.Item):
    """One check of one student, already scored."""

    def __init__(self, *, sid, qid, row, why="", skip=False, points=None, **kwargs):
        super().__init__(**kwargs)
        self.row, self.why, self.skip_it = row, why, skip
        self.user_properties += [("student", sid), ("question", qid)]
        if row is not None:
            self.user_properties += [("points", row["max_score"]), ("score", row["score"]),
                                     ("hidden", row["hidden"])]
        elif points is not None:
            self.user_properties += [("points", points), ("score", "manual")]

    def runtest(self):
        row = self.row
        if row is None:
            if self.skip_it:
                pytest.skip(self.why)
            raise CheckFailed(self.why)
        if row["passed"]:
            return
        if row.get("review"):
            message = row["message"]
            pytest.skip(message if message.startswith("awaiting") else f"awaiting a TA's review: {message}")
        raise CheckFailed(row["message"])

    def repr_failure(self, excinfo, style=None):
        if excinfo.errisinstance(CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.nodeid
