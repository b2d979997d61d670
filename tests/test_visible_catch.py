"""The visible checks catch the cheap mistakes: no catalogued wrong answer passes every visible
check of its question and still loses more than a quarter of that question's points on hidden
checks, unless the set's contract says why (its list "Wrong answers the visible checks let
through").

A student who runs the released checks and sees them all pass should not lose most of a question
to checks they never saw. Each entry of every set is applied to the set's own source notebook, run
in this process, and every check of its question runs on the namespace, as in
tests/test_misconceptions_inprocess.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from autograder.course import problem_sets
from autograder.grader_side import routes
from autograder.grader_side.assignment import REPO, Assignment
from autograder.grader_side.in_kernel import hidden_check as run_check
from autograder.grader_side.misconceptions import edits
from autograder.student_side.student import CheckFailed
from autograder.tooling.sampleclass import notebook as submitted_notebook
from autograder.tooling.sampleclass import trusted_namespace

SETS = problem_sets(REPO)

# The share of a question's points hidden checks may take from an entry that passes its visible checks.
SHARE = 0.25

# The contract's section listing the entries excused from the rule: a table whose rows name entries
# (in backquotes) in their first cell and give the reason in their last.
EXCUSES = "## Wrong answers the visible checks let through"


@dataclass(frozen=True)
class Outcome:
    """How one catalogue entry fared on its question: which visible checks failed, and the
    points its hidden checks took."""
    entry: str
    question: str
    points: float
    visible_failed: tuple[str, ...]
    hidden_lost: float

    @property
    def slips_through(self) -> bool:
        """Passes every visible check yet loses more than SHARE of the question on hidden ones."""
        return not self.visible_failed and self.hidden_lost > SHARE * self.points

    def __str__(self) -> str:
        return f"{self.entry} ({self.question}: loses {self.hidden_lost:g} of {self.points:g} on hidden checks)"


def _failed(a: Assignment, entry, notebook: str, source: dict[str, str]) -> set[str]:
    """Ids of the checks of ``entry``'s question that fail on the notebook with ``entry`` applied."""
    import matplotlib.pyplot as plt

    ns = trusted_namespace(a, notebook, edits(entry, source[entry.cell]))
    plt.close("all")
    failed = set()
    for c in a.checks:
        if c.question == entry.question:
            try:
                run_check(a.name, c.id, ns)
            except CheckFailed:
                failed.add(c.id)
    return failed


def _route_taken(a: Assignment, entry, notebook: str, source: dict[str, str]) -> bool:
    """Whether the grader judges the entry's code a forbidden route (every check of the question then fails)."""
    rules = a.set.rules
    if entry.question not in rules:
        return False
    nb = submitted_notebook(a, notebook, edits(entry, source[entry.cell]))
    verdict = routes.judge_notebook(nb, {entry.question: rules[entry.question]})[entry.question]
    return verdict.status == "route"


def outcome(a: Assignment, entry) -> Outcome:
    """``entry`` graded in process: the visible checks as the student's notebook runs them, the
    hidden ones as the grader does (a forbidden route fails them all)."""
    notebook = a.questions[entry.question].notebook
    source = {c.grade_id: c.source for c in a.cells(notebook)}
    failed = _failed(a, entry, notebook, source)
    mine = [c for c in a.checks if c.question == entry.question]
    if _route_taken(a, entry, notebook, source):
        failed |= {c.id for c in mine if c.hidden}
    return Outcome(entry.id, entry.question, a.questions[entry.question].points,
                   tuple(c.id for c in mine if not c.hidden and c.id in failed),
                   sum(c.points for c in mine if c.hidden and c.id in failed))


def excused(a: Assignment) -> dict[str, str]:
    """entry id -> the reason the contract gives for letting it through the visible checks."""
    text = (a.source_dir / "grading" / "contract.md").read_text()
    if EXCUSES not in text:
        return {}
    section = text.split(EXCUSES, 1)[1].split("\n## ", 1)[0]
    reasons = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) >= 2:
            reasons.update(dict.fromkeys(re.findall(r"`([^`]+)`", cells[0]), cells[-1]))
    return reasons


@pytest.fixture(scope="module", params=SETS)
def graded(request) -> tuple[Assignment, list[Outcome]]:
    """A set and the outcome of every entry of its catalogue."""
    a = Assignment(request.param, REPO)
    return a, [outcome(a, e) for e in a.set.catalogue]


def test_no_wrong_answer_slips_past_the_visible_checks_unexcused(graded):
    a, outcomes = graded
    excuses = excused(a)
    slipping = [str(o) for o in outcomes if o.slips_through and o.entry not in excuses]
    assert slipping == [], (
        f"{a.name}: these wrong answers pass every visible check of their question and lose more than "
        f"{SHARE:.0%} of it on hidden checks; add a visible check that catches each, or list it with the reason "
        f"under {EXCUSES!r} in solutions/{a.name}/grading/contract.md:\n  " + "\n  ".join(slipping))


def test_every_excuse_names_an_entry_that_needs_it(graded):
    """The contract's list holds no stale names: each is a catalogue entry that does slip through, with a reason."""
    a, outcomes = graded
    slips = {o.entry for o in outcomes if o.slips_through}
    for entry, why in excused(a).items():
        assert entry in slips, f"{a.name}: {entry!r} is listed under {EXCUSES!r} but is no entry that slips through"
        assert why, f"{a.name}: {entry!r} is listed under {EXCUSES!r} without a reason"
