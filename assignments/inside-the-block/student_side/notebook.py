"""Run a check from inside a notebook, on the notebook's own definitions.

The visible check cells call ``check("<check id>")``; nbgrader's hidden test cells call the
same function through ``autograder.grader_side.in_kernel``. Either way the check is the one
``course autograde`` runs, only the transport differs (see ``student.in_process``).
"""
from __future__ import annotations

import ast
import builtins
import inspect
import re
import sys

from . import checks, numbers
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
        found.run(Student(in_process(ns), why_missing=_syntax_error_of(ns)))
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

    def __init__(self, names: tuple[str, ...], read: dict[str, str]):
        self.names = names
        self.read = read        # answer -> the number the grader reads in it, as shown

    def __repr__(self) -> str:
        echo = "".join(f"; `{n}` reads as {shown}" for n, shown in self.read.items())
        return (f"{', '.join(f'`{n}`' for n in self.names)} written{echo}: this cell's hidden checks run when your "
                "notebook is graded")


def ready(*names: str, ns: dict | None = None) -> None:
    """Fail unless every name is defined, no longer the release's stub, and (for an answer
    variable) of a form the grader can read; say so when they are.

    A hidden check cell runs this where students can see it, so an unfinished question fails
    its hidden cells in the notebook too, with a pointer to what is missing. It never says
    whether an answer is right: only whether its type or shape can be graded.
    """
    ns = sys._getframe(1).f_globals if ns is None else ns
    read: dict[str, str] = {}
    for name in names:
        if name not in ns:
            raise CheckFailed(_syntax_error_of(ns)(name) or
                              f"`{name}` is not defined yet: write it in the cell above and run that cell")
        if _is_stub(ns[name]):
            raise CheckFailed(f"`{name}` still raises NotImplementedError: write it (see the TODO box above it)")
        if name in checks.forms():
            _expect_written_out(name, ns)
            value = _readable(name, ns)
            if isinstance(value, float):
                read[name] = numbers.shown(value)
        elif not callable(ns[name]):   # every other name a check uses is a function or a class it calls
            raise CheckFailed(f"the grader cannot grade `{name}` in this form: it is a {type(ns[name]).__name__}, and "
                              "the checks call it; define it with def (or class) as the TODO box shows")
    from IPython.display import display
    display(Ready(names, read))


def _expect_written_out(name: str, ns: dict) -> None:
    """An answer the set wants written as a value (``checks.written_out``) must be a value in the
    cell that last assigned it (numbers and arithmetic on them, no names): computed from something
    the grader never runs, it would be missing when the notebook is graded."""
    why = checks.written_out().get(name)
    history = ns.get("In")
    if why is None or not isinstance(history, list):
        return
    for source in reversed(history):
        try:
            tree = ast.parse(_as_python(source)) if isinstance(source, str) else None
        except SyntaxError:
            continue
        assigned = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)] if tree else []
        if assigned:
            used = sorted({n.id for n in ast.walk(assigned[-1]) if isinstance(n, ast.Name)
                           and not hasattr(builtins, n.id)})      # round(0.5277, 3) is still a value
            if used:
                raise CheckFailed(f"`{name}` is computed from {', '.join(f'`{u}`' for u in used)}: write the value "
                                  f"itself (such as 0.25), as the TODO box asks. {why}")
            return


def _syntax_error_of(ns: dict):
    """For a name the notebook has not defined: the syntax error of the last cell run that
    defines it (from IPython's input history ``In``), so the check names that cell's error."""
    history = ns.get("In")

    def explain(name: str) -> str | None:
        if not isinstance(history, list):
            return None
        definition = re.compile(rf"^\s*(?:(?:async\s+)?def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*=(?!=)",
                                re.MULTILINE)
        for source in reversed(history):
            if isinstance(source, str) and definition.search(source):
                try:
                    compile(_as_python(source), "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                except SyntaxError as exc:
                    return (f"`{name}` is not defined: the cell that defines it has a syntax error (line {exc.lineno}: "
                            f"{exc.msg}). Fix that cell and run it again")
                return None
        return None
    return explain


def _as_python(source: str) -> str:
    """IPython syntax (``!ls``, ``%time``) as the plain Python IPython runs, where IPython is installed."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:
        return source


def _readable(name: str, ns: dict):
    """Read the answer ``name`` as the grader will (through the same plain-data codec), in form
    only; returns what was read (a number as a float), for the notebook to echo."""
    try:
        return checks.forms()[name](Student(in_process(ns)).value(name))
    except checks.NeedsReview as exc:
        raise CheckFailed(f"{exc}. To have it graded automatically, write it in the form the TODO box asks for"
                          ) from None
    except CheckFailed as exc:
        raise CheckFailed(f"the grader cannot grade `{name}` in this form: {exc}") from None


def _is_stub(obj) -> bool:
    """Whether a function, or a method of a class, still holds the release's stub."""
    functions = [obj] if inspect.isfunction(obj) else (
        [f for f in vars(obj).values() if inspect.isfunction(f)] if inspect.isclass(obj) else [])
    return any(_holds_stub(fn.__code__) for fn in functions)


def _holds_stub(code) -> bool:
    return any(isinstance(k, str) and STUB in k or inspect.iscode(k) and _holds_stub(k) for k in code.co_consts)
