"""Benchmark: what one student's notebooks, just under every structure cap, add to a class.

    .venv/bin/python bench/notebook_caps.py [--students 10] [--workers 2]

The caps (``grader_side/submitted.py``: cells, outputs, markdown a cell and a notebook) bound what a
notebook costs the graders, nbgrader's preprocessors above all, which the gradebook's recorder runs
for every student (the class waits behind it) and ``nbgrader autograde`` runs too. Builds a throwaway
course, a class of honest students, and one student whose two notebooks are each at the caps: as
many cells as allowed, as many outputs, and the allowed markdown as the text that costs nbgrader's
markdown rendering and HTML sanitizing most (it grows with the square of a cell's length). Prints

- the class through ``course autograde``, without and with the gradebook written, with and without
  that student;
- the recorder alone (in this process) on an honest student and on that student;
- ``nbgrader autograde`` of an honest student and of that student;
- the same student with one cell more: refused, with the reason, and what recording it costs.

Goal: the student at the caps adds at most a few seconds to the class.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from autograder import api  # noqa: E402
from autograder.grader_side import submitted  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.results import StudentResult  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402

ASSIGNMENT = "transformer-block"
# Emphasis, link, HTML and code openers that are never closed: mistune's costliest text per character.
COSTLY = "*a **b [c <d `e "


def at_the_caps(nb, extra_cells: int = 0) -> None:
    """Fill ``nb`` (in place) up to every structure cap, plus ``extra_cells`` cells over the cell cap."""
    cell = COSTLY * (submitted.MAX_MARKUP_CELL // len(COSTLY))
    left = submitted.MAX_MARKUP - sum(len(c.source) for c in nb.cells if c.cell_type in ("markdown", "raw"))
    while left >= len(COSTLY):
        nb.cells.append(nbformat.v4.new_markdown_cell(cell[: left - left % len(COSTLY)]))
        left -= len(nb.cells[-1].source)
    outputs = nbformat.v4.new_code_cell("print('x')")
    outputs.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x\n")
                       for _ in range(submitted.MAX_OUTPUTS - sum(len(c.get("outputs", [])) for c in nb.cells))]
    nb.cells.append(outputs)
    nb.cells += [nbformat.v4.new_markdown_cell("") for _ in range(submitted.MAX_CELLS - len(nb.cells) + extra_cells)]


def write_student(folder: Path, a: Assignment, extra_cells: int = 0) -> None:
    target = write_submission(folder, a)
    for name in a.notebooks:
        nb = nbformat.read(target / f"{name}.ipynb", as_version=4)
        at_the_caps(nb, extra_cells)
        if not extra_cells:
            submitted.structure(nb)   # raises if the bench went over a cap
        nbformat.write(nb, target / f"{name}.ipynb")


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    started = time.monotonic()
    value = fn(*args, **kwargs)
    return time.monotonic() - started, value


def class_seconds(root: Path, a: Assignment, workers: int) -> tuple[float, float]:
    """Seconds to grade the class in ``root``: without the gradebook, and with it (the recorder too)."""
    graded, _ = timed(api.autograde, a.name, root / "submitted", workers=workers, repo=root)
    recorded, _ = timed(api.autograde, a.name, root / "submitted", workers=workers, repo=root, gradebook=True)
    return graded, recorded


def record_seconds(root: Path, a: Assignment, results: dict) -> dict[str, float]:
    """Seconds the recorder takes for each student of ``results`` (in this process, warmed up)."""
    from autograder.course import Course
    from autograder.nbgrader.recorder import Recorder

    with Recorder(Course(root), a.name) as recorder:
        recorder.assignment.check_loads()
        warm = StudentResult.from_dict(results["honest000"])
        recorder.record_safely("honest000", warm, root / "submitted" / "honest000")   # warm-up
        return {sid: timed(recorder.record_safely, sid, StudentResult.from_dict(r), root / "submitted" / sid)[0]
                for sid, r in results.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        a = api.make_course(root, ASSIGNMENT)
        for i in range(args.students):
            write_submission(root / "submitted" / f"honest{i:03d}", a)
        honest_class = class_seconds(root, a, args.workers)
        write_student(root / "submitted" / "at_caps", a)
        size = sum(f.stat().st_size for f in (root / "submitted" / "at_caps").rglob("*.ipynb")) / 2**20
        with_it = class_seconds(root, a, args.workers)
        print(f"a class of {args.students}, and with a student at every cap ({size:.1f} MiB of notebooks):")
        for i, what in enumerate(("graded", "graded, gradebook written")):
            print(f"  {what}: {honest_class[i]:.1f} s -> {with_it[i]:.1f} s (+{with_it[i] - honest_class[i]:.1f} s)")

        write_student(root / "submitted" / "over_caps", a, extra_cells=1)
        results = api.autograde(a.name, root / "submitted", workers=args.workers, repo=root,
                                only=["honest000", "at_caps", "over_caps"])["students"]
        print(f"over the caps: {results['over_caps']['score']:g} points, reason: {results['over_caps']['reason']}")
        seconds = record_seconds(root, a, results)
        print("recorder alone: " + ", ".join(f"{sid} {s:.2f} s" for sid, s in seconds.items()))

        shutil.rmtree(root / "submitted" / "over_caps")
        for sid in ("honest000", "at_caps"):
            took, done = timed(api.nbgrader, "autograde", a.name, f"--student={sid}", "--force", repo=root,
                               check=False)
            print(f"nbgrader autograde --student={sid}: {took:.1f} s (exit status {done.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
