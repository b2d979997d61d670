"""``hidden_check``: a hidden check run inside the notebook's own kernel.

Only stock nbgrader (its ``Execute`` step) runs test cells in the student's kernel; the course's
own nbgrader configuration and ``course autograde`` never do. Kept so that the source notebooks
stay valid nbgrader assignments wherever they are graded.
"""
from __future__ import annotations

import sys

from autograder.grader_side.assignment import REPO, Assignment
from autograder.student_side import checks, notebook


def hidden_check(assignment: str, check_id: str, ns: dict | None = None) -> None:
    """Run one check of the set ``assignment`` (hidden ones included) on ``ns`` (default: the
    calling notebook's globals)."""
    # The hidden checks, next to the visible ones, read from the kit's checkout: stock nbgrader tells
    # the kernel no course folder, and the folder it runs in (autograded/<student>/<set>/) holds
    # what the student submitted, so looking for a course around it would let a submission name one.
    checks.add(Assignment(assignment, REPO).set.by_id)
    notebook.check(check_id, sys._getframe(1).f_globals if ns is None else ns)
