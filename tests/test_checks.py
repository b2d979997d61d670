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


# The lesson's "where students get stuck" points, as catalogued wrong answers, and what the visible
# check they fail must say: a student who runs the release top to bottom is told, before grading.
STUCK_POINTS = {
    "B1-sample-variance": ("B1_worked_example", "you divided by d - 1"),
    "B4-tanh-gelu": ("B4_structure_example", "tanh approximation of GELU"),
    "B6-residual-replaces": ("B6_residual", "it never replaces x"),
    "B6-adds-normalized-input": ("B6_residual", "not to the normalized copy"),
    "B7-residual-replaces": ("B7_residual", "it never replaces x"),
    "B9-residual-replaces": ("B9_stack_example", "residual=True"),
}


@pytest.mark.parametrize("entry_id", [e for e, (_, says) in STUCK_POINTS.items() if says])
def test_a_stuck_point_fails_a_visible_check_that_names_it(entry_id, assignment):
    from autograder.grader_side.misconceptions import catalogue, edits

    entry = next(e for e in catalogue() if e.id == entry_id)
    check_id, says = STUCK_POINTS[entry_id]
    assert not checks.get(check_id).hidden
    name = checks.notebook(checks.get(check_id))
    source = {c.grade_id: c.source for c in assignment.cells(name)}
    ns = trusted_namespace(assignment, name, edits(entry, source[entry.cell]))
    with pytest.raises(CheckFailed, match=says):
        run_check(check_id, ns)
