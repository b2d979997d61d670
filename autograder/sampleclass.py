"""Submissions made from the course's own material, for the demo, the tests and the benchmark.

A submission starts from the release (what a student receives) and fills each solution cell:
with the source's solution (markers removed, as a student would type it), with a catalogued
wrong answer, or with hostile code. Nothing here is committed: classes are generated when needed.
"""
from __future__ import annotations

import os
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat

from autograder.assignment import Assignment

MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
REGION = re.compile(r"([ \t]*)### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?", re.S | re.M)


def solved(source: str) -> str:
    """A solution cell as the student would leave it: the solution kept, the markers gone."""
    return MARKER.sub("", source)


def replace_region(source: str, body: str) -> str:
    """The solution cell ``source`` with its single solution region replaced by ``body``."""
    regions = REGION.findall(source)
    if len(regions) != 1:
        raise ValueError(f"expected one solution region, found {len(regions)}: give the whole cell instead")
    indent = regions[0][0]
    body = "".join(indent + line if line.strip() else line for line in body.strip("\n").splitlines(True)) + "\n"
    return REGION.sub(lambda m: body, source, count=1)


def notebook(a: Assignment, name: str, edits: dict[str, str] | None = None,
             extra_cells: list[str] = (), untouched: bool = False) -> nbformat.NotebookNode:
    """The release notebook ``name`` as a student would submit it.

    ``edits`` maps a solution cell's grade_id to the code the student wrote there (default: the
    source's solution); ``extra_cells`` are appended as scratch cells; ``untouched`` keeps the stubs.
    """
    edits = edits or {}
    release = nbformat.read(a.release_dir / f"{name}.ipynb", as_version=4)
    source = {c.grade_id: c for c in a.cells(name)}
    for cell in release.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        if untouched or not meta.get("solution"):
            continue
        cell.source = edits.get(gid, solved(source[gid].source))
    for code in extra_cells:
        release.cells.append(nbformat.v4.new_code_cell(code))
    return release


def write_submission(folder: Path, a: Assignment, edits=None, extra_cells=(), untouched=False,
                     nested: bool = True, only: tuple[str, ...] | None = None) -> Path:
    """Write one student's notebooks into ``folder`` (nbgrader's layout when ``nested``);
    ``extra_cells`` go at the end of the last notebook; ``only`` limits which notebooks are written."""
    target = folder / a.name if nested else folder
    target.mkdir(parents=True, exist_ok=True)
    for name in only or a.notebooks:
        nbformat.write(notebook(a, name, edits, extra_cells if name == a.notebooks[-1] else (), untouched),
                       target / f"{name}.ipynb")
    return target


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
            source = cell.source.replace("from visible_checks import check, ready", "")
            exec(compile(source, f"<{name}:{meta.get('grade_id')}>", "exec"), ns)
    import matplotlib.pyplot as plt

    plt.close("all")   # figures the notebook drew
    return ns
