# Copied from the course's grader by `course release`; edit the original, not this copy.
"""Run a check from inside a notebook, on the notebook's own definitions.

The visible check cells call ``check("B1_worked_example")``; the hidden test cells that nbgrader
inserts at grading time call the same function from the full grader. Either way the check is the
one ``course autograde`` runs, only the transport differs (see ``student.in_process``).
"""
from __future__ import annotations

import sys

from visible_checks import checks
from visible_checks.student import CheckFailed, Student, in_process


class Passed:
    """What a passing check cell shows: its id, points and what it checked."""

    def __init__(self, check: checks.Check):
        self.check = check

    def __repr__(self) -> str:
        c = self.check
        return f"passed {c.id} ({c.points:g} point{'s' * (c.points != 1)}): {c.says}"


def check(check_id: str, ns: dict | None = None) -> Passed:
    """Run one check against ``ns`` (default: the calling notebook's globals).

    Raises ``CheckFailed`` (an AssertionError) with a message for the student when it fails.
    """
    found = checks.get(check_id)
    ns = sys._getframe(1).f_globals if ns is None else ns
    try:
        found.run(Student(in_process(ns)))
    except CheckFailed as exc:
        raise CheckFailed(f"{found.id} failed: {exc}") from None
    return Passed(found)
