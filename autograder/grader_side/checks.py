"""Reading a check's code: which of the student's names it needs (``ready()`` cells, the order
answers are read in)."""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from collections.abc import Callable

from autograder.grader_side import syntax
from autograder.student_side.checks import Check


@functools.lru_cache(maxsize=None)
def uses(check: Check, names: tuple[str, ...]) -> tuple[str, ...]:
    """The student's names (of its question's ``names``) ``check`` needs, in the order its code
    first reaches them: those the check's code spells out, or the helper functions it calls do
    (the set's own: its module's, or the visible checks' a hidden check imports); else all of
    ``names``.

    A name read only inside ``try: ... except CheckFailed`` is not needed (the check goes on
    without it), so a hidden cell's ``ready(...)`` does not ask for it; the first name ``ready``
    reports as missing is then the first one the check itself fails on."""
    module = inspect.getmodule(check.run)
    package = module.__name__.partition(".")[0] if module is not None else None
    found: dict[str, None] = {}
    seen: set[tuple[Callable[..., object], bool]] = set()

    def visit_function(fn: Callable[..., object], optional: bool) -> None:
        if (fn, optional) in seen:
            return
        seen.add((fn, optional))
        for node in syntax.parse(textwrap.dedent(inspect.getsource(fn))).body:
            visit(node, optional, inspect.getmodule(fn))

    def visit(node: ast.AST, optional: bool, module: types.ModuleType | None) -> None:
        if isinstance(node, ast.Try) and any(_catches_check_failed(h) for h in node.handlers):
            for stmt in node.body:
                visit(stmt, True, module)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, optional, module)
            return
        if isinstance(node, ast.Constant) and node.value in names and not optional:
            found.setdefault(node.value)
        for child in ast.iter_child_nodes(node):   # the arguments before the call they are passed to
            visit(child, optional, module)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and module is not None:
            helper = getattr(module, node.func.id, None)
            if inspect.isfunction(helper) and helper.__module__.partition(".")[0] == package:
                visit_function(helper, optional)

    visit_function(check.run, False)
    return tuple(found) or names


def _catches_check_failed(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    kinds = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return caught is None or any(isinstance(k, ast.Name) and k.id in ("CheckFailed", "AssertionError", "Exception")
                                 for k in kinds)
