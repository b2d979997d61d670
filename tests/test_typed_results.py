"""Results are typed end to end (``grader_side/results.py``): every module passes ``StudentResult``
and ``Results``, and JSON is made (``to_dict``) or read (``from_dict``) only where results leave a
process or a file. The JSON a class's results become is the document of ``docs/results.schema.json``
byte for byte, and reading it back gives the same results; no module of the grader reads a results
document by key."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side import misconceptions, pipeline
from autograder.grader_side.results import CheckResult, Misconception, QuestionResult, Results, StudentResult
from autograder.grader_side.sandbox import grading_sandbox
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results
from nbgrader_course import ASSIGNMENT, clone_course

PACKAGE = Path(__file__).resolve().parent.parent / "autograder"

# The keys of a results document (its students, questions and checks): read by key, a field renamed
# or retyped would go unnoticed there. ("assignment" and "notebook" are left out: nbgrader's own
# resources use them for its own dicts everywhere.)
KEYS = ("score", "questions", "checks", "status", "reason", "flags", "passed", "points", "max_score", "students",
        "isolation", "id", "hidden", "review", "message", "misconception", "feedback", "late_penalty",
        "needs_manual_grade", "disagreements", "load_errors", "manual", "topic", "description", "hint", "seconds",
        "workers", "nbgrader_seconds")
_NAMES = "|".join(KEYS)
READ = re.compile(rf"""(?<=[\w)\]])\s*\[\s*(?P<a>['"])(?:{_NAMES})(?P=a)\s*\]"""      # x["score"], f()['id']
                  rf"""|\.(?:get|setdefault|pop)\(\s*(?P<b>['"])(?:{_NAMES})(?P=b)""")  # x.get("score")

# Files that read dicts with such keys which are not results: file -> what those dicts are.
NOT_RESULTS = {
    "grader_side/results.py": "the JSON boundary itself: from_dict reads a document, once",
    "grader_side/assignment.py": "a source cell's nbgrader metadata",
    "grader_side/pipeline/read.py": "a submitted cell's nbgrader metadata",
    "grader_side/sandbox/host.py": "the sandbox child's replies",
    "grader_side/submitted.py": "a notebook cell's JSON",
    "nbgrader/preprocessors/forget_unknown_cells.py": "a cell's nbgrader metadata",
    "nbgrader/preprocessors/mark_for_review.py": "the preprocessors' resources",
    "student_side/classroom.py": "a student's own run of the visible checks, on their machine",
    "tooling/authoring.py": "an authored cell's options and metadata",
}
# Lines of other files that read such a dict which is not results: (file, text in the line) -> what it is.
NOT_RESULTS_LINES = {
    ("demo.py", 'metadata["nbgrader"]'): "a cell's nbgrader metadata",
    ("demo.py", 'written["'): "the demo's own table of the paths it wrote",
    ("run_autograder.py", "doc['score']"): "Gradescope's results.json, as written to its file, for the log line",
    ("nbgrader/recorder.py", '["needs_manual_grade"]'): "a gradebook grade row as a re-grade writes it (_Rows)",
}


def _key_reads() -> list[str]:
    """Every line of the package that reads one of ``KEYS`` by key, but those known not to be results."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in NOT_RESULTS:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if READ.search(line) and not any(rel == f and text in line for f, text in NOT_RESULTS_LINES):
                found.append(f"autograder/{rel}:{n}: {line.strip()}")
    return found


@pytest.mark.unit
def test_no_module_reads_a_results_document_by_key():
    """Modules read fields of the typed results. A dict of another kind read with one of these keys
    goes into NOT_RESULTS (or NOT_RESULTS_LINES) with what it is."""
    found = _key_reads()
    assert not found, ("results read by key; read the fields of StudentResult/QuestionResult/CheckResult instead "
                       "(or, for a dict that is not results, list it in NOT_RESULTS):\n" + "\n".join(found))


@pytest.mark.unit
def test_the_scan_sees_a_key_read():
    """The scan is not blind: each form of a read by key is found."""
    for line in ('r["score"]', "q.get('checks') or []", 'result.setdefault("flags", [])', "row [ 'review' ]"):
        assert READ.search(line), line
    for line in ("r.score", '{"score": 1.0}', 'print("score")', '[["score", "shared"]]'):
        assert not READ.search(line), line


# ---- a real class, through the typed path and back ------------------------------------------------

def _corrupt(folder: Path, notebooks) -> None:
    for name in notebooks:
        (folder / f"{name}.ipynb").write_text('{"cells": [')


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory) -> tuple[Results, StudentResult]:
    """A private course's class, graded and recorded in its gradebook: an honest student, a
    catalogued mistake, an answer left to a TA, one unreadable notebook, none readable; and a student
    the grader itself could not grade (its sandbox closed, as a failed restart leaves it)."""
    root = clone_course(course, tmp_path_factory.mktemp("typed"))
    a = api.Assignment(ASSIGNMENT, root)
    source = {c.grade_id: c.source for nb in a.notebooks for c in a.cells(nb)}
    entry = next(e for e in a.set.catalogue if e.id == "B1-sample-variance")
    subs = root / "submitted"
    write_submission(subs / "honest", a, signed=True)
    write_submission(subs / "mistaken", a, misconceptions.edits(entry, source[entry.cell]))
    write_submission(subs / "review", a, edits={"C2_code": 'q2_residual_cousin = "the GRU"\n'})
    _corrupt(write_submission(subs / "one-unreadable", a), a.notebooks[-1:])
    _corrupt(write_submission(subs / "unreadable", a), a.notebooks)
    results = api.grade_class(ASSIGNMENT, subs, workers=2, repo=root, gradebook=True)
    sandbox = grading_sandbox(60.0)
    sandbox.close()    # its next open() raises SandboxError: a bug of the grader's, for this student only
    error = pipeline.grade_safely("honest", subs / "honest", pipeline.Env(a, sandbox, workers=1))
    return results, error


def test_the_grader_passes_typed_results_all_the_way(graded):
    results, error = graded
    assert isinstance(results, Results) and isinstance(error, StudentResult)
    for result in results.students.values():
        assert isinstance(result, StudentResult)
        for q in result.questions.values():
            assert isinstance(q, QuestionResult) and all(isinstance(row, CheckResult) for row in q.checks)
            assert q.misconception is None or isinstance(q.misconception, Misconception)
    students = results.students
    assert {r.status for r in students.values()} == {"graded", "failed"} and error.status == "grader-error"
    named = students["mistaken"].questions["B1"].misconception
    assert named is not None and named.id == "B1-sample-variance" and named.description and named.hint
    (row,) = students["review"].questions["C2"].checks
    assert row.review == "'the GRU'" and row.awaiting_review and "C2" in students["review"].needs_manual_grade
    assert students["one-unreadable"].status == "graded" and students["one-unreadable"].reason
    assert students["unreadable"].status == "failed"
    # recorded through the recorder's process: what the gradebook holds came back into these objects
    assert all(r.late_penalty == 0.0 for r in students.values())


def test_a_class_goes_to_json_and_back_unchanged_byte_for_byte(graded):
    results, error = graded
    results.students["grader-error"] = error
    try:
        doc = results.to_dict()
        validate_results(doc)
        assert list(doc) == ["assignment", "isolation", "workers", "students", "seconds"]
        assert [list(r) for r in doc["students"].values()] == [
            ["status", "score", "max_score", "reason", "questions", "flags", "needs_manual_grade", "load_errors",
             "disagreements", "late_penalty"]] * len(doc["students"])
        text = json.dumps(doc, indent=1)
        again = Results.from_dict(json.loads(text))
        assert again == results
        assert json.dumps(again.to_dict(), indent=1) == text
        for sid, result in results.students.items():
            assert StudentResult.from_dict(result.to_dict()) == result, sid
        # what api.write_json writes for the typed results is what it writes for their document
        assert json.dumps(Results.from_dict(doc).to_dict()) == json.dumps(doc)
    finally:
        del results.students["grader-error"]


def test_reading_a_document_shares_nothing_with_it(graded):
    """A StudentResult read from a document is its own: the recorder and compare_nbgrader change
    the object, and the document a caller holds changes only when it is handed in."""
    results, _ = graded
    doc = results.students["review"].to_dict()
    typed = StudentResult.from_dict(doc)
    typed.flags.append("x")
    typed.needs_manual_grade.clear()
    typed.questions["C2"].feedback.append("y")
    assert "x" not in doc["flags"] and doc["needs_manual_grade"] and "y" not in doc["questions"]["C2"]["feedback"]
