"""Benchmark: the grading process's peak memory on a hostile batch.

    .venv/bin/python bench/hostile_memory.py [--workers 2]

Grades, with `course autograde`'s code in this process, one honest submission beside
submissions made to blow up the grader's memory: a 2 GiB sparse notebook, notebooks whose every
function returns 60 MB (over the reply cap) or 15 MB (just under it), a notebook of nearly a
million tiny JSON values, and links to another student's notebook and to /etc/shadow. Prints
each submission's score or reason and the grader's peak resident memory (the sandboxed children
are other processes). The goal: under 1 GB with 2 workers, the honest score unchanged.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import api  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402

RETURNS = """
import torch
_big = torch.zeros({floats})
for _name, _value in list(globals().items()):
    if not _name.startswith('_') and callable(_value) and getattr(_value, '__module__', None) == '__main__':
        globals()[_name] = (lambda *a, **k: _big)
"""


def make_batch(root: Path, a: Assignment) -> None:
    honest = write_submission(root / "honest", a)
    sparse = root / "sparse_2GiB"
    sparse.mkdir()
    for name in a.notebooks:
        with open(sparse / f"{name}.ipynb", "wb") as f:
            f.truncate(2 << 30)
    write_submission(root / "replies_60MB", a, extra_cells=[RETURNS.format(floats=15_000_000)])
    write_submission(root / "replies_15MB", a, extra_cells=[RETURNS.format(floats=3_900_000)])
    tiny = root / "tiny_values"
    tiny.mkdir()
    (tiny / "concepts.ipynb").write_text('{"cells": [], "metadata": {"x": [' + "0," * 990_000 + "0]}}")
    links = root / "links"
    links.mkdir()
    os.symlink(honest / "concepts.ipynb", links / "concepts.ipynb")
    os.symlink("/etc/shadow", links / "build.ipynb")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    a = Assignment("transformer-block", REPO)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_batch(root, a)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.monotonic()
        results = api.autograde(a.name, root, workers=args.workers)
        seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for sid, r in results["students"].items():
        print(f"{sid:14} {r['score']:5g}/{r['max_score']:g}  {r['status']:7} {(r['reason'] or '')[:90]}")
    print(f"graded {len(results['students'])} submissions with {args.workers} workers in {seconds:.1f} s")
    print(f"grader peak RSS: {peak:.0f} MB (before grading: {before:.0f} MB)")
    return 0 if results["students"]["honest"]["score"] == a.max_score and peak < 1024 else 1


if __name__ == "__main__":
    sys.exit(main())
