"""Benchmark: the three ways to autograde one generated class, in one run.

    .venv/bin/python bench/autograde_speed.py [--students 200] [--workers 2] [--no-cluster]

Builds a throwaway course folder (sources rebuilt, fresh nbgrader release), writes N honest
submissions (the solution, and a few catalogued wrong answers so scores vary; each student's code
cells end with their own comment, so no two submissions are the same text), copies the course
twice, and grades the same class with

- ``course autograde`` (parallel, sandboxed, writing nbgrader's gradebook and autograded/),
- ``nbgrader autograde`` as the course configures it (one notebook at a time, through the sandbox),
- stock ``nbgrader autograde`` (nbgrader's ``Execute``: hidden tests in the student's kernel),

one after the other, and prints each wall time, the ratios to ``course autograde``, and whether
every check got the same score from all three; then the core time per honest submission (grader
and sandbox processes, warm sandbox), the peak memory of the grader and of its sandbox, and the
same class on a dask.distributed cluster of this machine (``course autograde --scheduler``) with
1 and 2 worker processes.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import api  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.misconceptions import edits  # noqa: E402
from autograder.grader_side.nbgrader_execute import use_stock_nbgrader  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402

ASSIGNMENT = "transformer-block"


def make_class(root: Path, students: int) -> Assignment:
    a = api.make_course(root, ASSIGNMENT)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    wrong = [e for e in a.set.catalogue if e.question.startswith("B")][::7]
    for i in range(students):
        entry = wrong[i % len(wrong)] if i % 4 == 3 else None   # every fourth student makes a mistake
        write_submission(root / "submitted" / f"student{i:03d}", a,
                         edits=edits(entry, source[entry.cell]) if entry else None, signed=True)
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


def core_seconds() -> float:
    """CPU time of this process and of its finished children (the sandbox's zygote and, through
    it, every notebook process)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def honest_core_seconds(root: Path, a: Assignment, students: int = 20) -> float:
    """Core time per honest submission with a warm sandbox: a class of ``students`` honest
    submissions minus a class of one (so the sandbox's start-up is not counted)."""
    costs = []
    for n in (1, students):
        folder = root / f"honest{n}"
        for i in range(n):
            write_submission(folder / f"honest{i:03d}", a, signed=True)
        before = core_seconds()
        api.autograde("transformer-block", folder, workers=1, repo=root)
        costs.append(core_seconds() - before)
    return (costs[1] - costs[0]) / (students - 1)


def on_cluster(root: Path, processes: int) -> tuple[float, float]:
    """Wall times of `course autograde --scheduler` on a scheduler and ``processes`` single-thread
    worker processes of this machine: a first run of one submission (the workers start their
    sandboxes), then the class on the warm workers."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=processes, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        times = []
        for folder in (root / "honest1", root / "submitted"):
            started = time.monotonic()
            api.autograde("transformer-block", folder, repo=root, scheduler=cluster.scheduler_address,
                          insecure_cluster=True)   # this machine only
            times.append(time.monotonic() - started)
        return times[0], times[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--workers", type=int, default=0, help="course autograde workers (default: one per core)")
    parser.add_argument("--no-cluster", action="store_true", help="skip the dask.distributed runs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ours, sandboxed, stock = Path(tmp) / "course", Path(tmp) / "sandboxed", Path(tmp) / "stock"
        ours.mkdir()
        a = make_class(ours, args.students)
        shutil.copytree(ours, sandboxed, symlinks=True)
        shutil.copytree(ours, stock, symlinks=True)
        use_stock_nbgrader(stock)
        results = {}
        seconds = {
            "course autograde": timed(lambda: results.update(api.autograde(
                ASSIGNMENT, ours / "submitted", workers=args.workers, repo=ours, gradebook=True))),
        }
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        sandbox_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        seconds.update({
            "nbgrader autograde (sandbox)": timed(lambda: api.nbgrader(
                "autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=sandboxed, check=False)),
            "nbgrader autograde (stock Execute)": timed(lambda: api.nbgrader(
                "autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=stock, check=False)),
        })
        books = {name: gradebook_checks(root) for name, root in zip(seconds, (ours, sandboxed, stock))}
        per_submission = honest_core_seconds(ours, a)
        cluster = {} if args.no_cluster else {n: on_cluster(ours, n) for n in (1, 2)}
    print(f"submissions: {args.students} (generated: the solution and catalogued wrong answers); "
          f"course autograde with {results['workers']} workers")
    base = seconds["course autograde"]
    reference = books["course autograde"]
    for name, s in seconds.items():
        same = sum(books[name].get(sid) == checks for sid, checks in reference.items())
        print(f"{name:36} {s:8.1f} s  {s / base:6.1f}x   same score on every check: {same}/{len(reference)}")
    print(f"course autograde peak RSS: grader {peak_mb:.0f} MB, sandbox zygote {sandbox_mb:.0f} MB")
    print(f"core time per honest submission (warm sandbox): {per_submission:.3f} s")
    for n, (warm_up, s) in cluster.items():
        print(f"on a dask cluster of this machine, {n} worker process{'es' if n > 1 else ''}: {s:6.1f} s "
              f"(after {warm_up:.1f} s starting the workers' sandboxes)")
    return 0 if all(books[name] == reference for name in books) else 1


if __name__ == "__main__":
    sys.exit(main())
