"""Each test cell's output written from the grader's verdicts: the pass line, or the student message
as an ``error`` output (nbgrader scores any error output 0), which nbgrader's ``SaveAutoGrades``
reads. ``SandboxExecute`` and ``course autograde``'s recorder both write them here."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from nbformat.notebooknode import NotebookNode
from nbgrader import utils

if TYPE_CHECKING:
    from autograder.grader_side.assignment import Assignment
    from autograder.grader_side.pipeline.submission import Outcome

# The ``ename`` of a test cell's error output (nbgrader scores any error output 0).
FAILED = "CheckFailed"


def write_outcomes(nb: NotebookNode, outcomes: Mapping[str, Outcome], assignment: Assignment,
                   notebook: str) -> dict[str, str]:
    """Write each test cell's outcome as its output (in place); return {grade_id: answer a TA must review}.

    A grade cell the course does not know (one a submission made up) gets an error, so it can never
    earn a point; test cells get back the source the students were given."""
    released = assignment.tests(notebook)
    review: dict[str, str] = {}
    for cell in nb.cells:
        if not (utils.is_grade(cell) and cell.cell_type == "code"):
            continue
        grade_id = cell.metadata.nbgrader.get("grade_id", "")
        outcome = outcomes.get(grade_id)
        if grade_id in released:
            cell.source = released[grade_id].source
        cell.execution_count = None
        if outcome is None:
            cell.outputs = [_error(f"{grade_id} is not a check of this course: no points")]
        elif outcome.review:
            review[grade_id] = outcome.review
            # nbgrader scores an error output 0 and shows that score beside this text until a TA's
            # manual score replaces it: say so, rather than that the points are not lost.
            cell.outputs = [_error(f"{grade_id} is awaiting review: not scored yet, a TA decides (until then "
                                   f"nbgrader shows 0): {outcome.review}")]
        elif outcome.passed:
            check = assignment.check(grade_id)
            text = f"passed {grade_id} ({check.points:g} point{'s' * (check.points != 1)}): {check.says}\n"
            cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=text)]
        else:
            cell.outputs = [_error(f"{grade_id} failed: {outcome.message}")]
    return review


def _error(message: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=FAILED, evalue=message, traceback=[f"{FAILED}: {message}"])
