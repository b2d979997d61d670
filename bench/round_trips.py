"""Benchmark: what a submission's requests to its sandboxed notebooks cost the grader.

    .venv/bin/python bench/round_trips.py [--repeats 3]

Grades one honest submission of each problem set with ``course grade``'s own call
(``api.grade_submission``) and counts every request the checks send to the notebooks' sessions,
with the wall time they took (the child's work included) and the grader's CPU time inside them (its
share of each round trip: encoding, the socket, decoding). This is the most that sending a check's
independent requests in one round trip could save on the grader's side. Best of ``--repeats``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import api  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.sandbox import host  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    seen: list[tuple[str, float, float]] = []
    request = host.Session.request

    def timed(self, header, blobs=()):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return request(self, header, blobs)
        finally:
            seen.append((str(header.get("op")), time.perf_counter() - wall, time.thread_time() - cpu))

    host.Session.request = timed
    for name in api.problem_sets(REPO):
        a = Assignment(name, REPO)
        with tempfile.TemporaryDirectory() as tmp:
            folder = write_submission(Path(tmp) / "honest", a, nested=False)
            best = None
            for _ in range(args.repeats):
                seen.clear()
                api.grade_submission([folder / f"{n}.ipynb" for n in a.notebooks], name, course=REPO)
                run = (sum(s[1] for s in seen), sum(s[2] for s in seen))
                best = run if best is None or run[1] < best[1] else best
        ops = ", ".join(f"{op} {n}" for op, n in Counter(s[0] for s in seen).most_common())
        print(f"{name}: {len(seen)} requests ({ops}); wall in them {best[0]:.3f} s, "
              f"the grader's CPU in them {best[1]:.3f} s")


if __name__ == "__main__":
    main()
