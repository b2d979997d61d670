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
    """The student's names ``check`` calls: those its code spells out, else the question's."""
    names = QUESTIONS[check.question].names
    spelled = {node.value for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(check.run))))
               if isinstance(node, ast.Constant) and node.value in names}
    return tuple(n for n in names if n in spelled) or names
