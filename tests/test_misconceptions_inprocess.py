"""The misconception catalogue, run for real: every catalogued wrong answer loses points on its
question, and every correct-but-different variant keeps full marks.

Each entry is applied to the course's own source notebook (``solutions/transformer-block/*.ipynb``,
built by ``course release``), the notebook is run in this process, and every check of the entry's
question runs on the resulting namespace, exactly as the nbgrader hidden cells do.
"""
from __future__ import annotations

from collections import Counter

import pytest

import week4
import week4 as checks
import week4 as contract
from autograder.grader_side.assignment import REPO, Assignment
from autograder.grader_side.in_kernel import hidden_check as run_check
from autograder.grader_side.misconceptions import edits
from autograder.student_side.student import CheckFailed
from autograder.tooling.sampleclass import notebook as submitted_notebook
from autograder.tooling.sampleclass import trusted_namespace
from week4 import catalogue, variants

ENTRIES = catalogue()
VARIANTS = variants()
AUTOGRADED = [qid for qid, q in contract.QUESTIONS.items() if not q.manual]

# A failure for one of these reasons means the entry's own code is broken, not that it was caught.
BROKEN = ("raised NameError", "raised UnboundLocalError", "raised AttributeError", "raised ImportError",
          "raised SyntaxError", "raised ModuleNotFoundError")


@pytest.fixture(scope="module")
def course_assignment() -> Assignment:
    """The repo's own source notebooks (run `course release transformer-block` if they are missing)."""
    return Assignment("transformer-block", REPO)


def _notebook(entry) -> str:
    return contract.QUESTIONS[entry.question].notebook


@pytest.fixture(scope="module")
def outcomes(course_assignment):
    """entry -> {check id: None if it passes, else its failure message}, each entry run once."""
    cache: dict[str, dict] = {}

    def get(entry):
        if entry.id not in cache:
            cache[entry.id] = _outcomes(course_assignment, entry)
        return cache[entry.id]
    return get


def _outcomes(a: Assignment, entry) -> dict[str, str | None]:
    """check id -> None if it passes, else its failure message, for every check of the entry's question."""
    import matplotlib.pyplot as plt

    notebook = _notebook(entry)
    source = {c.grade_id: c.source for c in a.cells(notebook)}
    ns = trusted_namespace(a, notebook, edits(entry, source[entry.cell]))
    plt.close("all")   # the build notebook draws a figure every time it runs
    outcomes = {}
    for c in checks.all_checks():
        if c.question == entry.question:
            try:
                run_check(week4.NAME, c.id, ns)
                outcomes[c.id] = None
            except CheckFailed as exc:
                outcomes[c.id] = str(exc)
    assert outcomes, f"{entry.question} has no checks"
    # Forbidden routes are judged from the source, outside the code's process, as both graders do.
    if entry.question in week4.RULES:
        verdict = week4.judge_notebook(submitted_notebook(a, notebook, edits(entry, source[entry.cell])),
                                        [entry.question])[entry.question]
        if verdict.status == "route":
            outcomes = {cid: message or verdict.message() for cid, message in outcomes.items()}
    return outcomes


# ---- the catalogue's shape ----------------------------------------------------------------------

def test_every_autograded_question_has_entries_and_variants():
    wrong_per_question = Counter(e.question for e in ENTRIES)
    variants_per_question = Counter(e.question for e in VARIANTS)
    for qid in AUTOGRADED:
        assert wrong_per_question[qid] >= 3, f"{qid}: only {wrong_per_question[qid]} misconceptions"
        assert variants_per_question[qid] >= 2, f"{qid}: only {variants_per_question[qid]} variants"
    assert len(ENTRIES) >= 45
    manual = {qid for qid, q in contract.QUESTIONS.items() if q.manual}
    assert not manual & {e.question for e in ENTRIES + VARIANTS}, "manual questions have no checks to lose"


def test_ids_are_unique():
    ids = [e.id for e in ENTRIES + VARIANTS]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]


def test_entries_have_a_description_and_a_hint():
    for e in ENTRIES:
        assert e.description.strip() and "\n" not in e.description, e.id
        assert e.hint.strip(), e.id
    for e in VARIANTS:
        assert not e.description and not e.hint, e.id


def test_every_entry_edits_a_solution_cell_of_its_notebook(course_assignment):
    for e in ENTRIES + VARIANTS:
        solution_cells = {c.grade_id for c in course_assignment.cells(_notebook(e)) if c.solution}
        assert e.cell in solution_cells, f"{e.id}: {e.cell!r} is not a solution cell of {_notebook(e)}"


# ---- every misconception loses points; every variant keeps them all ----------------------------

@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_misconception_loses_points(entry, outcomes):
    failed = {cid: msg for cid, msg in outcomes(entry).items() if msg is not None}
    broken = [msg for msg in failed.values() if any(b in msg for b in BROKEN)]
    assert not broken, f"{entry.id}: the entry's own code is broken: {broken[0]}"
    assert failed, f"{entry.id}: no check of {entry.question} fails ({', '.join(outcomes(entry))} all pass)"


@pytest.mark.parametrize("entry", VARIANTS, ids=lambda e: e.id)
def test_variant_keeps_full_marks(entry, outcomes):
    failed = {cid: msg for cid, msg in outcomes(entry).items() if msg is not None}
    assert not failed, f"{entry.id}: a correct answer lost points: {failed}"


def test_every_check_fails_on_some_misconception(outcomes):
    """No check is one that nothing in the catalogue can fail."""
    failed = {cid for e in ENTRIES for cid, msg in outcomes(e).items() if msg is not None}
    assert [c.id for c in checks.all_checks() if c.id not in failed] == []
