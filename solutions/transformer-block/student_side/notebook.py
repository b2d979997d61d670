"""Run a check from inside a notebook, on the notebook's own definitions.

The visible check cells call ``check("B1_worked_example")``; nbgrader's hidden test cells call the
same function through ``autograder.grader_side.in_kernel``. Either way the check is the one
``course autograde`` runs, only the transport differs (see ``student.in_process``).
"""
from __future__ import annotations

import inspect
import sys

from . import checks
from .student import CheckFailed, Student, in_process


class Passed:
    """What a passing check cell shows: its id, points and what it checked."""

    def __init__(self, check: checks.Check):
        self.check = check

    def __repr__(self) -> str:
        c = self.check
        return f"passed {c.id} ({c.points:g} point{'s' * (c.points != 1)}): {c.says}"


def check(check_id: str, ns: dict | None = None) -> None:
    """Run one check against ``ns`` (default: the calling notebook's globals).

    Raises ``CheckFailed`` (an AssertionError) with a message for the student when it fails;
    a pass is displayed (not returned as the cell's value, which nbgrader would read as a score).
    """
    found = checks.get(check_id)
    ns = sys._getframe(1).f_globals if ns is None else ns
    try:
        found.run(Student(in_process(ns)))
    except CheckFailed as exc:   # re-raised as the same kind: a NeedsReview stays one, with its answer
        waiting = isinstance(exc, checks.NeedsReview)
        exc.args = (f"{found.id} {'waits for a TA' if waiting else 'failed'}: {exc}",)
        raise exc.with_traceback(None) from None
    from IPython.display import display
    display(Passed(found))


# Part of the message every release stub raises (nbgrader_config.py sets the stub).
STUB = "see the TODO box"


class Ready:
    """What a hidden check cell shows once the names it checks are written."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names

    def __repr__(self) -> str:
        return (f"{', '.join(f'`{n}`' for n in self.names)} written: this cell's hidden checks run when your "
                "notebook is graded")


def ready(*names: str, ns: dict | None = None) -> None:
    """Fail unless every name is defined and no longer the release's stub; say so when they are.

    A hidden check cell runs this where students can see it, so an unfinished question fails
    its hidden cells in the notebook too, with a pointer to what is missing.
    """
    ns = sys._getframe(1).f_globals if ns is None else ns
    for name in names:
        if name not in ns:
            raise CheckFailed(f"`{name}` is not defined yet: write it in the cell above and run that cell")
        if _is_stub(ns[name]):
            raise CheckFailed(f"`{name}` still raises NotImplementedError: write it (see the TODO box above it)")
    from IPython.display import display
    display(Ready(names))


def _is_stub(obj) -> bool:
    """Whether a function, or a method of a class, still holds the release's stub."""
    functions = [obj] if inspect.isfunction(obj) else (
        [f for f in vars(obj).values() if inspect.isfunction(f)] if inspect.isclass(obj) else [])
    return any(_holds_stub(fn.__code__) for fn in functions)


def _holds_stub(code) -> bool:
    return any(isinstance(k, str) and STUB in k or inspect.iscode(k) and _holds_stub(k) for k in code.co_consts)
