"""The check registry: points add up to the contract, the course's solutions pass every check,
the untouched release passes none, and visible checks need no reference."""
import pytest

from autograder.grader_side import checks, contract
from autograder.grader_side.in_kernel import hidden_check as run_check
from autograder.student_side.notebook import ready
from autograder.student_side.student import CheckFailed
from autograder.tooling.sampleclass import trusted_namespace


def test_points_add_up_to_the_contract():
    totals = {}
    for c in checks.all_checks():
        totals[c.question] = totals.get(c.question, 0) + c.points
    for qid, q in contract.QUESTIONS.items():
        assert totals.get(qid, 0) == (0 if q.manual else q.points), qid
    assert sum(totals.values()) == 100


def test_every_check_is_named_for_its_question():
    for c in checks.all_checks():
        assert c.id.startswith(c.question + "_") and c.says and checks.uses(c)
        assert set(checks.uses(c)) <= set(contract.QUESTIONS[c.question].names)


@pytest.fixture(scope="module")
def solved(assignment):
    return {name: trusted_namespace(assignment, name) for name in assignment.notebooks}


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_the_solution_passes(check, solved):
    run_check(check.id, solved[checks.notebook(check)])
    ready(*checks.uses(check), ns=solved[checks.notebook(check)])


@pytest.fixture(scope="module")
def released(assignment):
    """The release as a student receives it: every stub still raising NotImplementedError."""
    from autograder.grader_side.assignment import notebook

    spaces = {}
    for name in assignment.notebooks:
        ns = {"__name__": "__main__"}
        for cell in notebook(assignment, name, untouched=True).cells:
            if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade"):
                try:
                    exec(cell.source.replace("from student_side import check, ready", ""), ns)
                except NotImplementedError:
                    pass
        spaces[name] = ns
    return spaces


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_the_release_fails_with_a_pointer(check, released):
    with pytest.raises(CheckFailed, match="TODO box|is not defined|NotImplementedError"):
        run_check(check.id, released[checks.notebook(check)])
    with pytest.raises(CheckFailed, match="TODO box|is not defined"):
        ready(*checks.uses(check), ns=released[checks.notebook(check)])
