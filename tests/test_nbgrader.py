"""Stock nbgrader (its own `Execute`: hidden tests in the student's kernel), as a comparison: the
source notebooks submitted as a student earn every autograded point, the untouched release earns
none, and `course autograde --compare-nbgrader` agrees with it on honest work and flags where the
student's kernel was fooled (the course's own configuration grades through the sandbox instead)."""
import pytest
from nbgrader.api import Gradebook

import week4 as checks
from autograder import api
from autograder.grader_side.assignment import Assignment, solved
from autograder.tooling.sampleclass import write_submission
from autograder.tooling.stock import use_stock_nbgrader
from nbgrader_course import clone_course

pytestmark = pytest.mark.slow

HIJACK = """
import numpy
numpy.allclose = lambda *args, **kwargs: True
numpy.abs = lambda a, *args, **kwargs: numpy.zeros(numpy.shape(a))
"""


@pytest.fixture(scope="module")
def stock(course, tmp_path_factory):
    root = clone_course(course, tmp_path_factory.mktemp("stock"))
    use_stock_nbgrader(root)
    return root


@pytest.fixture(scope="module")
def graded(stock):
    course, assignment = stock, Assignment("transformer-block", stock)
    build = {c.grade_id: c.source for c in assignment.cells("build")}
    write_submission(course / "submitted" / "ref", assignment)
    write_submission(course / "submitted" / "blank", assignment, untouched=True)
    # Breaks B1 (returns x unchanged) and fools nbgrader's in-kernel visible check of the row statistics.
    write_submission(course / "submitted" / "hijack", assignment, edits={
        "B1_code": solved(build["B1_code"]) + HIJACK + "\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n"
                   "    return (x - x.mean(-1, keepdim=True)) * gamma + beta\n"})
    done = api.nbgrader("autograde", "transformer-block", "--force", repo=course, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s.student_id: (s.score, {g.name: (g.auto_score, g.max_score) for nb in s.notebooks
                                           for g in nb.grades if g.auto_score is not None})
                  for s in gb.assignment_submissions("transformer-block")}
    return scores


def test_the_solution_earns_all_100_autograded_points(graded):
    total, per_check = graded["ref"]
    assert total == 100.0
    assert set(per_check) == {c.id for c in checks.all_checks()}
    assert all(score == top for score, top in per_check.values())


def test_the_untouched_release_earns_nothing(graded):
    assert graded["blank"][0] == 0.0


def test_course_autograde_agrees_with_nbgrader_and_flags_what_nbgrader_missed(graded, stock):
    course = stock
    results = api.autograde("transformer-block", course / "submitted", workers=2, repo=course)
    disagreements = api.compare_nbgrader(results, course / "gradebook.db")
    assert results["students"]["ref"]["score"] == graded["ref"][0] == 100.0
    assert results["students"]["blank"]["score"] == graded["blank"][0] == 0.0
    assert "ref" not in disagreements and "blank" not in disagreements
    nbgrader_b1 = graded["hijack"][1]["B1_worked_example"][0]
    assert nbgrader_b1 == 2.0, "the hijack was meant to fool nbgrader's in-kernel check"
    assert results["students"]["hijack"]["questions"]["B1"]["score"] < 8
    assert any(line.startswith("B1_worked_example: nbgrader 2, course autograde 0") for line in disagreements["hijack"])
