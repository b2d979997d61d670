"""The check registry: points add up to the contract, the course's solutions pass every check,
the untouched release passes none, and visible checks need no reference."""
import pytest

from autograder import checks
from autograder.bridge import check as run_check, ready
from autograder.sampleclass import trusted_namespace
from autograder.student import CheckFailed


def test_points_add_up_to_the_contract():
    totals = {}
    for c in checks.all_checks():
        totals[c.question] = totals.get(c.question, 0) + c.points
    for qid, q in checks.QUESTIONS.items():
        assert totals.get(qid, 0) == (0 if q.manual else q.points), qid
    assert sum(totals.values()) == 100


def test_every_check_is_named_for_its_question():
    for c in checks.all_checks():
        assert c.id.startswith(c.question + "_") and c.says and c.uses
        assert set(c.uses) <= set(checks.QUESTIONS[c.question].names)


@pytest.fixture(scope="module")
def solved(assignment):
    return {name: trusted_namespace(assignment, name) for name in assignment.notebooks}


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_the_solution_passes(check, solved):
    run_check(check.id, solved[check.notebook])
    ready(*check.uses, ns=solved[check.notebook])


@pytest.fixture(scope="module")
def released(assignment):
    """The release as a student receives it: every stub still raising NotImplementedError."""
    from autograder.sampleclass import notebook

    spaces = {}
    for name in assignment.notebooks:
        ns = {"__name__": "__main__"}
        for cell in notebook(assignment, name, untouched=True).cells:
            if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade"):
                try:
                    exec(cell.source.replace("from visible_checks import check, ready", ""), ns)
                except NotImplementedError:
                    pass
        spaces[name] = ns
    return spaces


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_the_release_fails_with_a_pointer(check, released):
    with pytest.raises(CheckFailed, match="TODO box|is not defined|NotImplementedError"):
        run_check(check.id, released[check.notebook])
    with pytest.raises(CheckFailed, match="TODO box|is not defined"):
        ready(*check.uses, ns=released[check.notebook])
