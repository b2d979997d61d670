"""Benchmark: one sandbox session, open + load a cell + one request + close.

    .venv/bin/python bench/sandbox_latency.py [--sessions 40]

Starts a Sandbox as `course autograde` does (zygote in bubblewrap, torch preloaded), then times
sessions one after the other and prints the median and the fastest.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.grader_side.sandbox import Limits, Sandbox  # noqa: E402
from autograder.student_side.student import Student  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    args = parser.parse_args(argv)
    with Sandbox(Limits(timeout=10), preload=("numpy", "torch")) as sb:
        seconds = []
        for _ in range(args.sessions):
            started = time.perf_counter()
            with sb.open(["def f(x):\n    return x + 1"]) as s:
                assert Student(s.request).call("f", 1) == 2
            seconds.append(time.perf_counter() - started)
        print(f"isolation: {sb.isolation['filesystem']}, {sb.isolation['uid']}, seccomp: "
              f"{'yes' if sb.isolation.get('seccomp', 'none') != 'none' else 'no'}")
    print(f"open+load+request+close over {args.sessions} sessions: median {statistics.median(seconds) * 1000:.1f} ms, "
          f"fastest {min(seconds) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
