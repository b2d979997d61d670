"""The demo: a sample class graded end to end on every problem set, as a TA's week would go.

``course demo`` releases each set the schedule lists, writes a class of about 30 submissions per
set made at run time from the solution, the set's misconception catalogue and a few hostile
notebooks (never committed), grades it with ``course autograde``, cross-checks with ``nbgrader
autograde`` in the same folder, and writes results, grades, Gradescope files, feedback pages and
the report of each set into ``out/<set>/``.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import nbformat

from autograder import api
from autograder.course import Course
from autograder.grader_side import misconceptions
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.results import Results
from autograder.reports import feedback, report
from autograder.tooling.sampleclass import write_submission

# Seconds a demo notebook may run: the endless loop below costs this much (a TA would keep 60).
TIMEOUT = 15.0

# Hostile notebooks of the demo: what each adds at the end of the set's last notebook.
HOSTILE = {
    "patches-allclose": "import numpy, torch\ntorch.allclose = lambda *a, **k: True\n"
                        "numpy.allclose = lambda *a, **k: True\n"
                        "numpy.testing.assert_allclose = lambda *a, **k: None",
    "endless-loop": "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass",
    "exits-the-process": "import os\nos._exit(1)",
}


def build_class(course: Path, a: Assignment) -> list[str]:
    """Write the sample class into ``course/submitted``; returns the student ids."""
    submitted = course / "submitted"
    shutil.rmtree(submitted, ignore_errors=True)
    ids = []

    def add(sid, **kwargs):
        write_submission(submitted / sid, a, **kwargs)
        ids.append(sid)

    for _ in range(1, 4):
        add(f"s{len(ids) + 1:02d}-solution")
    add(f"s{len(ids) + 1:02d}-untouched-release", untouched=True)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    entries = a.set.catalogue
    for entry in entries[:: max(1, len(entries) // 20)][:20]:
        add(f"s{len(ids) + 1:02d}-{entry.id}", edits=misconceptions.edits(entry, source[entry.cell]))
    for name, code in HOSTILE.items():
        add(f"s{len(ids) + 1:02d}-{name}", extra_cells=[code])
    # A submission that deletes the last check cell of the last notebook and turns its first visible
    # check into a cell claiming 50 points.
    sid = f"s{len(ids) + 1:02d}-edits-test-cells"
    folder = write_submission(submitted / sid, a)
    last = a.notebooks[-1]
    mine = [c for c in a.checks if a.set.notebook_of(c) == last]
    visible = next(c for c in mine if not c.hidden)
    nb = nbformat.read(folder / f"{last}.ipynb", as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != mine[-1].id]
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == visible.id:
            cell.source, cell.metadata["nbgrader"]["points"] = "pass  # checked by hand, promise", 50
    nbformat.write(nb, folder / f"{last}.ipynb")
    ids.append(sid)
    sid = f"s{len(ids) + 1:02d}-corrupt-file"
    (submitted / sid / a.name).mkdir(parents=True)
    first, *rest = a.notebooks
    (submitted / sid / a.name / f"{first}.ipynb").write_text('{"cells": [')
    for name in rest:
        (submitted / sid / a.name / f"{name}.ipynb").write_text("")
    ids.append(sid)
    return ids


def sets(course: Course | Path | None = None) -> list[str]:
    """The problem sets the demo grades: those the schedule of ``course`` (default: the course folder
    this runs in) releases, in week order."""
    return [entry["assignment"] for entry in api.schedule(course)]


def run(out: Path, assignment: str, progress=None,
        course: Course | Path | None = None) -> tuple[Results, dict[str, Path]]:
    """Run the whole demo of one set of ``course`` (default: the course folder this runs in) into
    ``out``, in a throwaway copy of that course; returns the results and what it wrote, by name."""
    source = Course.of(course)
    api.release(assignment, source)
    folder = out / "course"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    a = api.make_course(folder, assignment, source)
    ids = build_class(folder, a)
    if progress:
        progress("class", len(ids))
    results = api.grade_class(a.name, folder / "submitted", timeout=TIMEOUT,
                              progress=progress and (lambda sid: progress("graded", sid)), repo=folder)
    if progress:
        progress("done", results)
    started = time.monotonic()
    api.nbgrader("autograde", a.name, "--force", "--log-level=ERROR", f"--SandboxExecute.timeout={TIMEOUT}",
                 repo=folder, check=False)
    nbgrader_seconds = time.monotonic() - started
    api.compare_nbgrader(results, folder / "gradebook.db")
    results.nbgrader_seconds = round(nbgrader_seconds, 1)
    written = {"results": out / "results.json", "grades": out / "grades.csv", "gradescope": out / "gradescope",
               "feedback": out / "feedback"}   # and "report", once written
    api.write_json(results, written["results"])
    api.write_csv(results, written["grades"])
    written["gradescope"].mkdir(exist_ok=True)
    for sid, result in results.students.items():
        (written["gradescope"] / f"{sid}.json").write_text(json.dumps(api.gradescope(result), indent=1))
    feedback.write_pages(results, written["feedback"])
    written["report"] = report.write_report(results, out, nbgrader_seconds=nbgrader_seconds)
    return results, written
