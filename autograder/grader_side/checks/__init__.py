"""Every check of the problem set: the visible ones (``autograder/student_side/checks``, which
students have too) and the hidden ones here, one module per lesson concept, which only the grader
sees. Both register through the same ``@check`` decorator; this module lists them in lesson order
and holds each one to the contract.
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import textwrap

from autograder.grader_side.contract import CONCEPTS, QUESTIONS
from autograder.student_side.checks import Check, registered


def all_checks() -> list[Check]:
    """Every check, visible and hidden, in lesson order (modules are imported on first use)."""
    for concept in CONCEPTS:
        importlib.import_module(f"{__name__}.{concept}")
    found = registered()
    strangers = sorted(cid for cid, c in found.items() if c.question not in QUESTIONS)
    if strangers:
        raise ValueError(f"checks for questions the contract does not have: {', '.join(strangers)}")
    order = {q: i for i, q in enumerate(QUESTIONS)}
    return sorted(found.values(), key=lambda c: order[c.question])


def get(check_id: str) -> Check:
    for c in all_checks():
        if c.id == check_id:
            return c
    raise KeyError(f"no check named {check_id!r}; see `course checks` for the list")


def notebook(check: Check) -> str:
    """The notebook whose names ``check`` calls."""
    return QUESTIONS[check.question].notebook


@functools.lru_cache(maxsize=None)
def uses(check: Check) -> tuple[str, ...]:
    """The student's names ``check`` needs, in the order its code first reaches them: those the
    check's code spells out, or the module's own helper functions it calls do; else the question's.

    A name read only inside ``try: ... except CheckFailed`` is not needed (the check goes on
    without it), so a hidden cell's ``ready(...)`` does not ask for it; the first name ``ready``
    reports as missing is then the first one the check itself fails on."""
    names = QUESTIONS[check.question].names
    module = inspect.getmodule(check.run)
    found: dict[str, None] = {}
    seen: set = set()

    def visit_function(fn, optional: bool) -> None:
        if (fn, optional) in seen:
            return
        seen.add((fn, optional))
        for node in ast.parse(textwrap.dedent(inspect.getsource(fn))).body:
            visit(node, optional)

    def visit(node, optional: bool) -> None:
        if isinstance(node, ast.Try) and any(_catches_check_failed(h) for h in node.handlers):
            for child in node.body:
                visit(child, True)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, optional)
            return
        if isinstance(node, ast.Constant) and node.value in names and not optional:
            found.setdefault(node.value)
        for child in ast.iter_child_nodes(node):   # the arguments before the call they are passed to
            visit(child, optional)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = getattr(module, node.func.id, None)
            if inspect.isfunction(helper) and helper.__module__ == module.__name__:
                visit_function(helper, optional)

    visit_function(check.run, False)
    return tuple(found) or names


def _catches_check_failed(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    kinds = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return caught is None or any(isinstance(k, ast.Name) and k.id in ("CheckFailed", "AssertionError", "Exception")
                                 for k in kinds)
