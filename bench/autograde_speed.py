"""Benchmark: `course autograde` against `nbgrader autograde` on the same generated class.

    .venv/bin/python bench/autograde_speed.py [--students 200] [--workers 2]

Builds a throwaway course folder (sources rebuilt, fresh nbgrader release), writes N honest
submissions (the solution, and a few catalogued wrong answers so scores vary), grades them with
both tools one after the other in this run, and prints both wall times, their ratio, peak memory
of our grader, and whether every submission got the same score from both.
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import api  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.misconceptions import catalogue, edits  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402


def make_class(root: Path, students: int) -> Assignment:
    a = api.make_course(root)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    wrong = [e for e in catalogue() if e.question.startswith("B")][::7]
    for i in range(students):
        entry = wrong[i % len(wrong)] if i % 4 == 3 else None   # every fourth student makes a mistake
        write_submission(root / "submitted" / f"student{i:03d}", a,
                         edits=edits(entry, source[entry.cell]) if entry else None)
    return a


def nbgrader_scores(root: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student_id: s.score for s in gb.assignment_submissions("transformer-block")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--workers", type=int, default=0, help="course autograde workers (default: one per core)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_class(root, args.students)
        started = time.monotonic()
        ours = api.autograde("transformer-block", root / "submitted", workers=args.workers, repo=root)
        ours_seconds = time.monotonic() - started
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.monotonic()
        api.nbgrader("autograde", "transformer-block", "--force", "--log-level=ERROR", repo=root)
        theirs_seconds = time.monotonic() - started
        theirs = nbgrader_scores(root)
    differ = [sid for sid, r in ours["students"].items() if abs(r["score"] - theirs.get(sid, -1)) > 1e-9]
    print(f"submissions:         {args.students} (generated: the solution and catalogued wrong answers)")
    print(f"course autograde:    {ours_seconds:8.1f} s  ({ours['workers']} workers, peak RSS {peak_mb:.0f} MB)")
    print(f"nbgrader autograde:  {theirs_seconds:8.1f} s")
    print(f"ratio:               {theirs_seconds / ours_seconds:8.1f}x")
    print(f"same scores:         {args.students - len(differ)}/{args.students}" + (f"  differ: {differ[:10]}" if differ else ""))
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
