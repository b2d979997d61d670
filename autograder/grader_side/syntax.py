"""Python source into ``ast`` objects in the grader's process, one thread at a time.

CPython 3.11's AST constructor counts its recursion depth in state the whole interpreter shares.
When the garbage collector runs a finalizer in the middle of one thread's ``ast.parse`` and another
thread parses meanwhile, the count comes back unbalanced and ``ast.parse`` raises ``SystemError:
AST constructor recursion depth mismatch``. The grader grades submissions in threads and parses
(the checks' sources, the course's given cells, the route judge's cells), so a parse could fail a
student whose submission was fine: every parse in the grader goes through ``parse`` here, under
one lock (tests/test_grading_races.py reproduces the failure without it).
"""
from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never at the same time as another thread's."""
    with _LOCK:
        return ast.parse(source, filename)
