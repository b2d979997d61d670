"""Benchmark: re-grading a class into nbgrader's gradebook, the recorder's core seconds per student.

    .venv/bin/python bench/regrade_recording.py [--students 60] [--repeat 3] [--profile]

Builds a throwaway course folder (sources rebuilt, fresh nbgrader release), writes N honest signed
submissions, grades them once with ``course autograde`` (not recorded), records the class into the
gradebook once (every submission new), then records it again ``--repeat`` times (every student a
re-grade: scores replaced, hand scores kept, late penalties worked out again) and prints the core
seconds per student of the first recording and of the best re-grade, measured in this process
(the Recorder itself, as ``recorder_process`` runs it), with ``--profile`` the top of a cProfile of
one re-grade.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import api  # noqa: E402
from autograder.course import Course  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.results import StudentResult  # noqa: E402
from autograder.nbgrader.recorder import Recorder  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402

ASSIGNMENT = "transformer-block"


def recording_seconds(root: Path, doc: dict) -> float:
    """Core seconds per student of one Recorder writing the graded class into the gradebook."""
    students = {sid: StudentResult.from_dict(r) for sid, r in doc["students"].items()}
    with Recorder(Course.of(root), ASSIGNMENT) as recorder:
        started = time.process_time()
        for sid, result in students.items():
            recorder.record(sid, result, root / "submitted" / sid / ASSIGNMENT)
        return (time.process_time() - started) / len(students)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        root.mkdir()
        api.make_course(root, ASSIGNMENT)
        a = Assignment(ASSIGNMENT, root)
        for n in range(args.students):
            write_submission(root / "submitted" / f"s{n:04}", a, signed=True)
        doc = api.autograde(ASSIGNMENT, root / "submitted", repo=root)
        first = recording_seconds(root, doc)
        again = min(recording_seconds(root, doc) for _ in range(args.repeat))
        print(f"class of {args.students}: recorder core seconds per student, first recording {first:.4f} s, "
              f"re-grade {again:.4f} s (best of {args.repeat})")
        if args.profile:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.runcall(recording_seconds, root, doc)
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
