"""Benchmark: `course autograde` against `nbgrader autograde` on the same generated class.

    .venv/bin/python bench/autograde_speed.py [--students 200] [--workers 2] [--no-cluster]

Builds a throwaway course folder (sources rebuilt, fresh nbgrader release), writes N honest
submissions (the solution, and a few catalogued wrong answers so scores vary), grades them with
both tools one after the other in this run, and prints both wall times, their ratio, the core
time (grader and sandbox processes) per honest submission, peak memory of our grader and of its
sandbox, and whether every submission got the same score from both. Then the same class on a
dask.distributed cluster of this machine (`course autograde --scheduler`) with 1 and 2 worker
processes.
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
            write_submission(folder / f"honest{i:03d}", a)
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
            api.autograde("transformer-block", folder, repo=root, scheduler=cluster.scheduler_address)
            times.append(time.monotonic() - started)
        return times[0], times[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--workers", type=int, default=0, help="course autograde workers (default: one per core)")
    parser.add_argument("--no-cluster", action="store_true", help="skip the dask.distributed runs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        a = make_class(root, args.students)
        started = time.monotonic()
        ours = api.autograde("transformer-block", root / "submitted", workers=args.workers, repo=root)
        ours_seconds = time.monotonic() - started
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        sandbox_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        per_submission = honest_core_seconds(root, a)
        cluster = {} if args.no_cluster else {n: on_cluster(root, n) for n in (1, 2)}
        started = time.monotonic()
        api.nbgrader("autograde", "transformer-block", "--force", "--log-level=ERROR", repo=root)
        theirs_seconds = time.monotonic() - started
        theirs = nbgrader_scores(root)
    differ = [sid for sid, r in ours["students"].items() if abs(r["score"] - theirs.get(sid, -1)) > 1e-9]
    print(f"submissions:         {args.students} (generated: the solution and catalogued wrong answers)")
    print(f"course autograde:    {ours_seconds:8.1f} s  ({ours['workers']} workers; peak RSS: grader {peak_mb:.0f} MB, "
          f"sandbox zygote {sandbox_mb:.0f} MB)")
    print(f"  core time per honest submission (warm sandbox): {per_submission:.3f} s")
    for n, (warm_up, seconds) in cluster.items():
        print(f"  on a dask cluster of this machine, {n} worker process{'es' if n > 1 else ''}: {seconds:6.1f} s "
              f"(after {warm_up:.1f} s starting the workers' sandboxes)")
    print(f"nbgrader autograde:  {theirs_seconds:8.1f} s")
    print(f"ratio:               {theirs_seconds / ours_seconds:8.1f}x")
    print(f"same scores:         {args.students - len(differ)}/{args.students}" + (f"  differ: {differ[:10]}" if differ else ""))
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
