"""The misconception catalogue against both graders, for real: `nbgrader autograde` as the course
configures it and `course autograde`. Every wrong answer loses points on its question in
both, every correct variant keeps full marks in both, and every check is failed by at least one
catalogued wrong answer (so no check is one that cannot fail). For every set of the course."""
import pytest

from autograder import mutants
from autograder.course import problem_sets
from autograder.grader_side.assignment import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=problem_sets(REPO))
def report(request):
    return mutants.run(request.param)


@pytest.mark.parametrize("grader", mutants.GRADERS)
def test_every_misconception_loses_points_in_every_grader(report, grader):
    assert report.survivors(grader) == []


@pytest.mark.parametrize("grader", mutants.GRADERS)
def test_no_correct_variant_loses_a_point(report, grader):
    assert report.false_rejects(grader) == []


@pytest.mark.parametrize("grader", mutants.GRADERS)
def test_every_check_fails_on_some_catalogued_wrong_answer(report, grader):
    assert report.unexercised(grader) == []


def test_both_graders_fail_the_same_checks_on_every_entry(report):
    assert report.failed["nbgrader"] == report.failed["course"]


def test_the_catalogue_covers_every_question(report):
    autograded = [q for q, meta in report.assignment.questions.items() if not meta.manual]
    for qid in autograded:
        assert sum(e.question == qid for e in report.entries) >= 3, qid
        assert sum(v.question == qid for v in report.variants) >= 2, qid
    assert len(report.entries) >= 45
    rows = report.table()
    assert [row[0] for row in rows[1:]] == autograded
    assert all(cell.endswith("(100%)") for row in rows[1:] for cell in row[2:4])
