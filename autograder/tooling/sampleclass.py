"""Submissions made from the course's own material, for the demo, the tests and the benchmark.

A submission starts from the release (what a student receives) and fills each solution cell:
with the source's solution (markers removed, as a student would type it), with a catalogued
wrong answer, or with hostile code. Nothing here is committed: classes are generated when needed.
"""
from __future__ import annotations

import ast
import os
import zlib
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat

from autograder.grader_side.assignment import Assignment, notebook


def write_submission(folder: Path, a: Assignment, edits=None, extra_cells=(), untouched=False,
                     nested: bool = True, only: tuple[str, ...] | None = None, signed: bool = False) -> Path:
    """Write one student's notebooks into ``folder`` (nbgrader's layout when ``nested``);
    ``extra_cells`` go at the end of the last notebook; ``only`` limits which notebooks are written.
    ``signed`` makes each student's code their own, as in a real class, where the grader cannot reuse
    what it read before: a statement ``_variant_<n> = <n>`` (``n`` from the student's folder name)
    opens every function of each solution cell, which changes what the grader parses, not what the
    code computes, and a comment naming the student ends the cell."""
    target = folder / a.name if nested else folder
    target.mkdir(parents=True, exist_ok=True)
    for name in only or a.notebooks:
        nb = notebook(a, name, edits, extra_cells if name == a.notebooks[-1] else (), untouched)
        if signed:
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
                    cell.source = _variant(cell.source, zlib.crc32(folder.name.encode()) % 1_000_000)
                    cell.source = cell.source.rstrip("\n") + f"\n# written by {folder.name}\n"
        nbformat.write(nb, target / f"{name}.ipynb")
    return target


def _variant(source: str, n: int) -> str:
    """``source`` with ``_variant_<n> = <n>`` as the first statement of every function written over
    more than one line (after its docstring); unchanged when it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    at = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
            first = body[0] if body else None
            if first is not None and first.lineno > node.lineno:   # a decorated one starts at its decorator
                top = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
                at.append((top, first.col_offset))
    for lineno, col in sorted(at, reverse=True):
        lines.insert(lineno - 1, f"{' ' * col}_variant_{n} = {n}\n")
    return "".join(lines)


def trusted_namespace(a: Assignment, name: str, edits: dict[str, str] | None = None) -> dict:
    """Run the course's own version of a notebook (the solution, or a catalogued wrong answer)
    in this process and return its namespace. Only for code the course wrote; never a submission."""
    import matplotlib

    matplotlib.use("Agg")
    ns = {"__name__": "__main__", "check": lambda *args, **kwargs: None, "ready": lambda *args, **kwargs: None}
    with open(os.devnull, "w") as quiet, redirect_stdout(quiet), redirect_stderr(quiet):
        for cell in notebook(a, name, edits).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or meta.get("grade"):
                continue
            source = cell.source.replace("from student_side import check, ready", "")
            try:
                exec(compile(source, f"<{name}:{meta.get('grade_id')}>", "exec"), ns)
            except Exception:
                # A cell that only shows the student something never runs when grading: a wrong
                # answer it trips on (a float64 table in a float32 demo) is graded like any other.
                if not cell.metadata.get("course", {}).get("skip_when_grading"):
                    raise
    import matplotlib.pyplot as plt

    plt.close("all")   # figures the notebook drew
    return ns
