"""Benchmark: the three ways to autograde one generated class, in one run.

    .venv/bin/python bench/autograde_speed.py [--students 200] [--workers 2]

Builds a throwaway course folder (sources rebuilt, fresh nbgrader release), writes N honest
submissions (the solution, and a few catalogued wrong answers so scores vary), copies the course
twice, and grades the same class with

- ``course autograde`` (parallel, sandboxed, writing nbgrader's gradebook and autograded/),
- ``nbgrader autograde`` as the course configures it (one notebook at a time, through the sandbox),
- stock ``nbgrader autograde`` (nbgrader's ``Execute``: hidden tests in the student's kernel),

one after the other, and prints each wall time, the ratios to ``course autograde``, and whether
every check got the same score from all three.
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

from autograder import api  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.misconceptions import catalogue, edits  # noqa: E402
from autograder.grader_side.nbgrader_execute import use_stock_nbgrader  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402

ASSIGNMENT = "transformer-block"


def make_class(root: Path, students: int) -> Assignment:
    a = api.make_course(root)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    wrong = [e for e in catalogue() if e.question.startswith("B")][::7]
    for i in range(students):
        entry = wrong[i % len(wrong)] if i % 4 == 3 else None   # every fourth student makes a mistake
        write_submission(root / "submitted" / f"student{i:03d}", a,
                         edits=edits(entry, source[entry.cell]) if entry else None)
    return a


def gradebook_checks(root: Path) -> dict[str, dict[str, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student_id: {g.name: g.auto_score for nb in s.notebooks for g in nb.grades
                               if g.auto_score is not None}
                for s in gb.assignment_submissions(ASSIGNMENT)}


def timed(run) -> float:
    started = time.monotonic()
    run()
    return time.monotonic() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--workers", type=int, default=0, help="course autograde workers (default: one per core)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ours, sandboxed, stock = Path(tmp) / "course", Path(tmp) / "sandboxed", Path(tmp) / "stock"
        ours.mkdir()
        make_class(ours, args.students)
        shutil.copytree(ours, sandboxed, symlinks=True)
        shutil.copytree(ours, stock, symlinks=True)
        use_stock_nbgrader(stock)
        results = {}
        seconds = {
            "course autograde": timed(lambda: results.update(api.autograde(
                ASSIGNMENT, ours / "submitted", workers=args.workers, repo=ours, gradebook=True))),
            "nbgrader autograde (sandbox)": timed(lambda: api.nbgrader(
                "autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=sandboxed, check=False)),
            "nbgrader autograde (stock Execute)": timed(lambda: api.nbgrader(
                "autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=stock, check=False)),
        }
        books = {name: gradebook_checks(root) for name, root in zip(seconds, (ours, sandboxed, stock))}
    print(f"submissions: {args.students} (generated: the solution and catalogued wrong answers); "
          f"course autograde with {results['workers']} workers")
    base = seconds["course autograde"]
    reference = books["course autograde"]
    for name, s in seconds.items():
        same = sum(books[name].get(sid) == checks for sid, checks in reference.items())
        print(f"{name:36} {s:8.1f} s  {s / base:6.1f}x   same score on every check: {same}/{len(reference)}")
    return 0 if all(books[name] == reference for name in books) else 1


if __name__ == "__main__":
    sys.exit(main())
