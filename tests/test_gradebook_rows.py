"""A student recorded for the first time gets exactly the gradebook rows nbgrader's own
``add_submission`` makes (the recorder writes them as multi-row inserts): the same tables, rows,
order and defaults, in two private copies of the course's gradebook; a first grading and a re-grade
leave the rows nbgrader's own preprocessors leave, and the same bytes in autograded/."""
import copy
import shutil
import sqlite3
from collections.abc import Callable

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc

from autograder import api
from autograder.course import Course
from autograder.grader_side import submitted
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.pipeline import Outcome
from autograder.grader_side.results import StudentResult
from autograder.nbgrader.outputs import write_outcomes
from autograder.nbgrader.recorder import RECORD, SANITIZE, Recorder, _NewSubmission, _timestamp
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import ASSIGNMENT, clone_course

TABLES = ("submitted_assignment", "submitted_notebook", "grade", "comment")


def rows(root) -> dict[str, list[tuple]]:
    """Each table's rows in the order they were written, the ids a new submission draws at random
    replaced by what they stand for (a grade's or comment's own id left out)."""
    with sqlite3.connect(root / "gradebook.db") as db:
        names = {}
        for (sid,) in db.execute("SELECT id FROM submitted_assignment"):
            names[sid] = "the submission"
        for nid, notebook in db.execute("SELECT id, notebook_id FROM submitted_notebook"):
            names[nid] = f"the submitted copy of notebook {notebook}"
        found = {}
        for table in TABLES:
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY rowid")   # noqa: S608 (fixed names)
            found[table] = [tuple(names.get(v, v) for v in row[table in ("grade", "comment"):]) for row in cursor]
        return found


# nbgrader's own add_submission trips SQLAlchemy's autoflush notes (the recorder silences them too)
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_new_submission_gets_the_rows_nbgraders_add_submission_makes(course, tmp_path):
    when = parse_utc("2027-02-10 12:00:00")
    ours, theirs = clone_course(course, tmp_path / "ours"), clone_course(course, tmp_path / "theirs")
    for root, add in ((ours, lambda gb: _NewSubmission(gb, ASSIGNMENT).add(gb, "s1", when)),
                      (theirs, lambda gb: gb.add_submission(ASSIGNMENT, "s1", timestamp=when))):
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            gb.add_student("s1")
            add(gb)
            gb.db.commit()
    mine, nbgraders = rows(ours), rows(theirs)
    assert len(nbgraders["submitted_notebook"]) == 2 and len(nbgraders["grade"]) > 40
    assert mine == nbgraders
    with Gradebook(f"sqlite:///{ours / 'gradebook.db'}") as gb:   # and nbgrader reads them as its own
        submission = gb.find_submission(ASSIGNMENT, "s1")
        assert submission.timestamp == when and submission.score == 0
        assert submission.max_score == gb.find_assignment(ASSIGNMENT).max_score


# ---- a re-grade: the rows nbgrader's own preprocessors leave ------------------------------------

DUE = parse_utc("2027-02-10 12:00:00")
# student -> what changes on the second grading
REGRADE = {"up": "a check failed the first time passes",
           "down": "a check passed the first time fails",
           "ta": "a TA scored C8 and one autograded check by hand in between",
           "late": "timestamp.txt now after the due date, a check fails",
           "review": "a check now awaits a TA's review",
           "same": "nothing"}


def every_row(root) -> dict[str, list[tuple]]:
    """Every table of the course's gradebook, each row whole (ids included), in the order written."""
    with sqlite3.connect(root / "gradebook.db") as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: db.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()   # noqa: S608
                for table in tables if table != "alembic_version"}


def results_of(doc: dict, changed: dict[str, Callable]) -> dict[str, StudentResult]:
    """Each student's results, typed, with ``changed``'s edits made to theirs."""
    students = {sid: StudentResult.from_dict(copy.deepcopy(r)) for sid, r in doc["students"].items()}
    for sid, edit in changed.items():
        edit(students[sid])
    return students


def fail(check: int, review: bool = False) -> Callable:
    """An edit of a student's results: their ``check``-th check failed (awaiting review: ``review``)."""
    def edit(result: StudentResult) -> None:
        _, row = result.checks()[check]
        row.passed, row.score, row.message = False, 0.0, "wrong"
        row.review = "'an answer a TA must judge'" if review else None
    return edit


def nbgraders_own(root, student: str, result: StudentResult, folder) -> None:
    """What ``nbgrader autograde`` does with a student it finds in the gradebook, with the course's
    preprocessors as its config lists them, each opening the gradebook itself (nothing lent):
    ``update_or_create_submission`` with the timestamp, then, per notebook, read by nbformat,
    sanitizing and SaveAutoGrades, MarkForReview, AssignLatePenalties on the notebook the recorder
    makes, written into autograded/ by nbformat."""
    course, a = Course.of(root), Assignment(ASSIGNMENT, root)
    db_url = f"sqlite:///{root / 'gradebook.db'}"
    when, _ = _timestamp(*submitted.bookkeeping(folder, ASSIGNMENT))
    with Gradebook(db_url) as gb:
        gb.update_or_create_student(student)
        if when:
            gb.update_or_create_submission(ASSIGNMENT, student, timestamp=when)
        else:
            gb.update_or_create_submission(ASSIGNMENT, student)
    outcomes = {row.id: Outcome(row.passed, row.message, review=row.review) for _, row in result.checks()}
    look = [row.id for qid in result.needs_manual_grade if qid in result.questions
            for row in result.questions[qid].checks]
    for notebook in a.notebooks:
        nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)   # nbformat's own reader
        resources = {"unique_key": notebook, "nbgrader": {"student": student, "assignment": ASSIGNMENT,
                                                          "notebook": notebook, "db_url": db_url}}
        for pp in SANITIZE:
            nb, resources = pp(config=course.config)(nb, resources)
        resources["course"] = {"review": write_outcomes(nb, outcomes, a, notebook),
                               "look": [cid for cid in look if cid in a.tests(notebook)]}
        for pp in RECORD:
            nb, resources = pp(config=course.config)(nb, resources)
        dest = course.folder("autograded", student, ASSIGNMENT)
        dest.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, dest / f"{notebook}.ipynb")       # as nbgrader's FilesWriter writes it


def autograded(root) -> dict[str, bytes]:
    """Every notebook in the course's autograded/ folder, by path, as bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "autograded").rglob("*.ipynb"))}


@pytest.fixture(scope="module")
def graded_once(course, tmp_path_factory):
    """A class graded and recorded once (on time, one check of "up" failed), then a TA's hand
    scores for "ta"'s C8 and first check, as the formgrader saves them; with the class's results
    document."""
    root = clone_course(course, tmp_path_factory.mktemp("regrade") / "course")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    a = Assignment(ASSIGNMENT, root)
    for sid in REGRADE:
        folder = write_submission(root / "submitted" / sid, a, signed=True)
        (folder / "timestamp.txt").write_text("2027-02-09 12:00:00.000000 UTC")
    doc = api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root)
    first = results_of(doc, {"up": fail(2)})
    with Recorder(Course.of(root), ASSIGNMENT) as recorder:
        for sid, result in first.items():
            recorder.record(sid, result, root / "submitted" / sid / ASSIGNMENT)
    check = first["ta"].checks()[0][1].id   # an autograded check the TA scores over
    (notebook,) = [name for name in a.notebooks if check in a.tests(name)]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:   # the formgrader's GradeHandler.put
        for name, where in (("C8_answer", "concepts"), (check, notebook)):
            grade = gb.find_grade(name, where, ASSIGNMENT, "ta")
            grade.manual_score, grade.needs_manual_grade = 1.0, False
        gb.db.commit()
    return root, doc


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_regrade_leaves_the_rows_nbgraders_own_preprocessors_leave(graded_once, tmp_path):
    """The class graded again, changed (a score up, one down, a TA's hand score kept, a submission
    now late, a check now awaiting review): the recorder leaves every row of every table of the
    gradebook, ids included (the rows of the first grading are the same in both copies), as
    nbgrader's own preprocessors do, in the same order."""
    root, doc = graded_once
    (root / "submitted" / "late" / ASSIGNMENT / "timestamp.txt").write_text("2027-02-12 08:30:00.000000 UTC")
    changed = {"down": fail(1), "review": fail(3, review=True), "late": fail(4)}   # late: on the new score
    ours, theirs = (shutil.copytree(root, tmp_path / name, symlinks=True) for name in ("ours", "theirs"))
    with Recorder(Course.of(ours), ASSIGNMENT) as recorder:
        for sid, result in results_of(doc, changed).items():
            recorder.record(sid, result, ours / "submitted" / sid / ASSIGNMENT)
    for sid, result in results_of(doc, changed).items():
        nbgraders_own(theirs, sid, result, theirs / "submitted" / sid / ASSIGNMENT)
    mine, nbgraders = every_row(ours), every_row(theirs)
    assert mine.keys() == nbgraders.keys()
    for table in nbgraders:
        assert mine[table] == nbgraders[table], table
    assert len(autograded(ours)) == 2 * len(REGRADE) and autograded(ours) == autograded(theirs)
    before, after = every_row(root), mine
    assert before != after
    with Gradebook(f"sqlite:///{ours / 'gradebook.db'}") as gb:   # each change is there
        late = gb.find_submission(ASSIGNMENT, "late")
        assert late.total_seconds_late > 0 and late.late_submission_penalty > 0
        c8 = gb.find_grade("C8_answer", "concepts", ASSIGNMENT, "ta")
        assert c8.manual_score == 1.0 and c8.needs_manual_grade
        scores = {sid: gb.find_submission(ASSIGNMENT, sid).score for sid in REGRADE}
        assert scores["up"] == scores["same"] > max(scores["down"], scores["late"])
        assert gb.find_submission(ASSIGNMENT, "review").needs_manual_grade


def named_rows(root) -> dict[str, list[tuple]]:
    """Every row of the tables a grading writes, in the order written, the ids a new submission
    draws at random replaced by what they stand for (``rows``), a grade's or comment's own id left out."""
    return rows(root)


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_first_grading_leaves_the_rows_nbgraders_own_preprocessors_leave(course, tmp_path):
    """A class recorded for the first time (on time, late, a check failed, a check awaiting review,
    a notebook nbgrader cannot process, none at all): the same rows, values and order as nbgrader's
    own add_submission and preprocessors leave."""
    root = clone_course(course, tmp_path / "course")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    a = Assignment(ASSIGNMENT, root)
    times = {"ontime": "2027-02-09 12:00:00.000000 UTC", "late": "2027-02-12 08:30:00.000000 UTC",
             "down": "2027-02-09 12:00:00.000000 UTC", "review": "2027-02-09 12:00:00.000000 UTC",
             "broken": "2027-02-11 12:00:00.000000 UTC"}
    for sid, when in times.items():
        folder = write_submission(root / "submitted" / sid, a, signed=True)
        (folder / "timestamp.txt").write_text(when)
    (root / "submitted" / "broken" / ASSIGNMENT / "build.ipynb").write_text("{ not a notebook")
    doc = api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root)
    changed = {"down": fail(1), "review": fail(3, review=True), "late": fail(4)}
    ours, theirs = (shutil.copytree(root, tmp_path / name, symlinks=True) for name in ("ours", "theirs"))
    with Recorder(Course.of(ours), ASSIGNMENT) as recorder:
        for sid, result in results_of(doc, changed).items():
            recorder.record(sid, result, ours / "submitted" / sid / ASSIGNMENT)
    for sid, result in results_of(doc, changed).items():
        try:
            nbgraders_own(theirs, sid, result, theirs / "submitted" / sid / ASSIGNMENT)
        except Exception:   # nbgrader's rule for a notebook it cannot process: zero everywhere
            assert sid == "broken"
            with Gradebook(f"sqlite:///{theirs / 'gradebook.db'}") as gb:
                for notebook in a.notebooks:
                    nb = gb.find_submission_notebook(notebook, ASSIGNMENT, sid)
                    if notebook == "build":
                        for grade in nb.grades:
                            grade.auto_score, grade.needs_manual_grade = 0, False
                        nb.late_submission_penalty = None
                gb.db.commit()
    mine, nbgraders = named_rows(ours), named_rows(theirs)
    for table in nbgraders:
        assert mine[table] == nbgraders[table], table
    assert len(autograded(ours)) == 2 * len(times) - 1 and autograded(ours) == autograded(theirs)
