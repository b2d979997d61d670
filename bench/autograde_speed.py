"""Benchmark: the three ways to autograde one generated class, in one run.

    .venv/bin/python bench/autograde_speed.py [--students 200] [--sample 20] [--growth 1000]
                                              [--workers 2] [--no-cluster]

Builds a throwaway course folder (sources rebuilt, fresh nbgrader release), writes N honest
submissions (the solution, and a few catalogued wrong answers so scores vary; each student's
functions open with a statement of their own, ``_variant_<n> = <n>``, so no two submissions are
the same code to the grader, as in a real class), and grades

- the class with ``course autograde`` (parallel, sandboxed, writing nbgrader's gradebook and autograded/),
- the first ``--sample`` students with ``nbgrader autograde`` as the course configures it (one
  notebook at a time, through the sandbox) and with stock ``nbgrader autograde`` (nbgrader's
  ``Execute``: hidden tests in the student's kernel), their times scaled to the class,

and prints each wall time, the ratios to ``course autograde``, whether every check got the same
score, and whether every student's copy scores, check by check, as the unsigned original it was made
from (the solution or a catalogue entry); then the core time per honest submission over the whole
process tree with the gradebook written (warm sandbox, start-up excluded) split by process, the
start-up time, the yardsticks to read the per-submission target against (the same checks on the same
honest students with each notebook's program run in this process: no sandbox, no gradebook; and a
sandbox session with nothing to grade), the
core time per submission in a class of 60 and of ``--growth``, the peak memory of
the grader and of its largest child, and the class on a dask.distributed cluster of this machine
(``course autograde --scheduler``, the gradebook written as in the local run) with 1 and 2 worker
processes; and each target of the speed work (per-submission core time, memory, flat cost, the
cluster) as PASS or MISS.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from autograder import api  # noqa: E402
from autograder.grader_side import pipeline  # noqa: E402
from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.grader_side.misconceptions import edits  # noqa: E402
from autograder.grader_side.sandbox import grading_sandbox  # noqa: E402
from autograder.nbgrader.recorder_process import RecorderProcess  # noqa: E402
from autograder.student_side.student import Student  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402
from autograder.tooling.stock import use_stock_nbgrader  # noqa: E402
from inprocess import InProcess  # noqa: E402

ASSIGNMENT = "transformer-block"


def make_class(root: Path, students: int) -> tuple[Assignment, dict[str, str | None]]:
    """The course and its class; each student's original: None for the solution, else the
    catalogue entry their copy was made from."""
    a = api.make_course(root, ASSIGNMENT)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    wrong = [e for e in a.set.catalogue if e.question.startswith("B")][::7]
    made: dict[str, str | None] = {}
    for i in range(students):
        entry = wrong[i % len(wrong)] if i % 4 == 3 else None   # every fourth student makes a mistake
        write_submission(root / "submitted" / f"student{i:03d}", a,
                         edits=edits(entry, source[entry.cell]) if entry else None, signed=True)
        made[f"student{i:03d}"] = entry.id if entry else None
    return a, made


def check_scores(result: dict) -> dict[str, float]:
    return {row["id"]: row["score"] for q in result["questions"].values() for row in q.get("checks") or []}


def copies_as_originals(root: Path, a: Assignment, results: dict, made: dict[str, str | None]) -> int:
    """How many students' copies score, check by check, as the original they were made from (the
    solution, or the catalogue entry as the catalogue writes it), graded in the same course."""
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    entries = {e.id: e for e in a.set.catalogue}
    folder = root / "originals"
    for key in set(made.values()):
        entry = entries.get(key) if key else None
        write_submission(folder / (key or "solution"), a, edits=edits(entry, source[entry.cell]) if entry else None)
    originals = api.autograde(ASSIGNMENT, folder, workers=1, repo=root)["students"]
    return sum(check_scores(results["students"][sid]) == check_scores(originals[key or "solution"])
               for sid, key in made.items())


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


def core_seconds() -> tuple[float, float, float]:
    """CPU seconds so far of (this process, the children it has waited for, its live children).

    The sandbox's zygote is waited for when its run ends (and it has waited for every notebook
    process); the route judge's helper processes live until exit, so they are read from /proc."""
    me, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    tick, live = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (OSError, ValueError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[1] == str(os.getpid()):
            live += sum(int(x) for x in fields[11:15]) / tick   # utime stime cutime cstime
    return me.ru_utime + me.ru_stime, waited.ru_utime + waited.ru_stime, live


def checks_alone_core_seconds(root: Path, students: int) -> float:
    """Core seconds per honest submission (signed, as in ``honest_core_seconds``) of the grading
    pipeline with each notebook's program run in this process (``tests/inprocess.py``, for trusted
    code: the solution): the checks, references and route judge without a sandbox, sessions or
    gradebook. Beyond two students graded first, so imports and caches are not counted; torch on one
    thread, as the grader and each session run it (``local.grade_students``)."""
    import torch

    torch.set_num_threads(1)
    a = api.make_course(root, ASSIGNMENT)
    folders = [write_submission(root / "submitted" / f"alone-{i:04d}", a, signed=True) for i in range(students + 2)]
    env = pipeline.Env(a, InProcess(), workers=1)
    first = [pipeline.grade(folder.parent.name, folder, env).score for folder in folders[:2]]
    before = sum(core_seconds())
    for folder in folders[2:]:
        assert pipeline.grade(folder.parent.name, folder, env).score == first[0] == first[1]
    return (sum(core_seconds()) - before) / students


def empty_session_core_seconds(sessions: int) -> float:
    """Core seconds of one session with nothing to grade in the class's sandbox (forked from the warm
    process, isolated, a one-line program, one request, ended), beyond one session: what each
    notebook costs before its code and checks run."""
    costs = []
    for n in (1, 1 + sessions):
        before = core_seconds()[1]
        with grading_sandbox(60.0) as sandbox:
            for _ in range(n):
                with sandbox.open(["def f(x):\n    return x + 1"]) as session:
                    assert Student(session.request).call("f", 1) == 2
        costs.append(core_seconds()[1] - before)   # the sandbox's processes, waited for when it closed
    return (costs[1] - costs[0]) / sessions


class MeasuredRecorder(RecorderProcess):
    """The gradebook's recorder process, its core time and peak memory kept for the split."""
    ended: list[RecorderProcess] = []

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self.ended.append(self)


api.RecorderProcess = MeasuredRecorder   # type: ignore[misc]   # what course autograde starts


def recorder_seconds() -> float:
    return sum(r.core_seconds for r in MeasuredRecorder.ended)


def honest_core_seconds(root: Path, students: int) -> tuple[dict[str, float], float]:
    """Core seconds per honest submission over the whole process tree, gradebook written, with a
    warm sandbox (a class of ``students`` minus a class of two, so start-up is not counted: a class
    of one would start a lighter sandbox, ``PRELOAD_ONE``), split by process; and the wall time of
    the class of two (start-up)."""
    a = api.make_course(root, ASSIGNMENT)
    costs, walls = [], []
    for n in (2, students):
        shutil.rmtree(root / "submitted", ignore_errors=True)
        for i in range(n):
            write_submission(root / "submitted" / f"honest{n}-{i:04d}", a, signed=True)
        before, started = (*core_seconds(), recorder_seconds()), time.monotonic()
        api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True)
        walls.append(time.monotonic() - started)
        costs.append([after - b for after, b in zip((*core_seconds(), recorder_seconds()), before, strict=True)])
    parts = [(big - small) / (students - 2) for small, big in zip(*costs, strict=True)]
    split = {"grader (checks, references, comparisons)": parts[0],
             "sandbox (zygote and notebook processes: student code)": parts[1] - parts[3],
             "route judge (helper processes)": parts[2],
             "recorder process (gradebook and autograded/)": parts[3]}
    return split, walls[0]


def recording_seconds(root: Path, results: dict) -> float:
    """Core seconds per student of writing an already graded class into the gradebook again."""
    started = time.process_time()
    api.record_gradebook(results, root / "submitted", course=root)
    return (time.process_time() - started) / max(1, len(results["students"]))


def on_cluster(root: Path, processes: int, pristine: Path) -> tuple[float, float]:
    """Wall times of `course autograde --scheduler` on a scheduler and ``processes`` single-thread
    worker processes of this machine: a first run of one submission (the workers start their
    sandboxes), then the class on the warm workers, written into the gradebook as the local run was
    (a copy of ``pristine``, the gradebook before any student)."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=processes, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        times = []
        for folder in (root / "first", root / "submitted"):
            shutil.copy(pristine, root / "gradebook.db")
            started = time.monotonic()
            api.autograde(ASSIGNMENT, folder, repo=root, scheduler=cluster.scheduler_address, gradebook=True,
                          insecure_cluster=True)   # this machine only
            times.append(time.monotonic() - started)
        return times[0], times[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--sample", type=int, default=20,
                        help="students nbgrader autograde grades (its time is extrapolated to the class)")
    parser.add_argument("--growth", type=int, default=1000, help="the large class of the growth figure (0: skip)")
    parser.add_argument("--workers", type=int, default=0, help="course autograde workers (default: one per core)")
    parser.add_argument("--no-cluster", action="store_true", help="skip the dask.distributed runs")
    args = parser.parse_args(argv)
    sample = min(args.sample, args.students)
    with tempfile.TemporaryDirectory() as tmp:
        ours, sandboxed, stock = Path(tmp) / "course", Path(tmp) / "sandboxed", Path(tmp) / "stock"
        ours.mkdir()
        a, made = make_class(ours, args.students)
        for copy in (sandboxed, stock):
            shutil.copytree(ours, copy, symlinks=True)
            for folder in sorted((copy / "submitted").iterdir())[sample:]:
                shutil.rmtree(folder)
        use_stock_nbgrader(stock)
        shutil.copytree(stock / "submitted" / "student000", ours / "first" / "student000")
        shutil.copy(ours / "gradebook.db", Path(tmp) / "pristine.db")
        results = {}
        seconds = {
            "course autograde": timed(lambda: results.update(api.autograde(
                ASSIGNMENT, ours / "submitted", workers=args.workers, repo=ours, gradebook=True))),
        }
        children_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024   # the largest one
        recorder_mb = max(r.peak_mb for r in MeasuredRecorder.ended)
        scale = args.students / sample
        seconds.update({
            "nbgrader autograde (sandbox)": scale * timed(lambda: api.nbgrader(
                "autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=sandboxed, check=False)),
            "nbgrader autograde (stock Execute)": scale * timed(lambda: api.nbgrader(
                "autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=stock, check=False)),
        })
        as_originals = copies_as_originals(Path(tmp) / "course", a, results, made)
        books = {name: gradebook_checks(root) for name, root in zip(seconds, (ours, sandboxed, stock), strict=True)}
        recording = recording_seconds(ours, results)
        split, start_up = honest_core_seconds(Path(tmp) / "honest", 20)
        alone = checks_alone_core_seconds(Path(tmp) / "alone", 20)
        session = empty_session_core_seconds(40)
        growth = {n: honest_core_seconds(Path(tmp) / f"growth{n}", n)[0] for n in (60, args.growth) if n}
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        cluster = {} if args.no_cluster else {n: on_cluster(ours, n, Path(tmp) / "pristine.db") for n in (1, 2)}
    print(f"submissions: {args.students} (generated: the solution and catalogued wrong answers); "
          f"course autograde with {results['workers']} workers, gradebook written")
    print(f"every copy scores as its original, check by check: {as_originals}/{len(made)}")
    base = seconds["course autograde"]
    reference = books["course autograde"]
    for name, s in seconds.items():
        note = "" if name == "course autograde" else f" (measured on {sample}, times {scale:g})"
        same = sum(books[name].get(sid) == checks for sid, checks in reference.items() if sid in books[name])
        print(f"{name:36} {s:8.1f} s  {s / base:6.1f}x{note}   same score on every check: {same}/{len(books[name])}")
    total = sum(split.values())
    print(f"core time per honest submission, whole process tree, gradebook written: {total:.3f} s "
          f"(start-up, a class of two: {start_up:.1f} s)")
    for part, cost in split.items():
        print(f"  {part:56} {cost:.3f} s")
    print(f"  (the same class recorded again on the grader's thread: {recording:.3f} s per student)")
    print(f"  (yardstick: the same checks, each program run in the grader, no sandbox or gradebook: {alone:.3f} s)")
    print(f"  (yardstick: a sandbox session with nothing to grade, one per notebook: {session:.3f} s)")
    for n, parts in growth.items():
        print(f"growth: core time per submission in a class of {n:5}: {sum(parts.values()):.3f} s")
    print(f"peak RSS: grader {peak_mb:.0f} MB (the whole bench, {args.growth or args.students} submissions "
          f"at most in one run), the largest child {children_mb:.0f} MB (the recorder process: "
          f"{recorder_mb:.0f} MB; otherwise the sandbox's zygote)")
    for n, (warm_up, s) in cluster.items():
        print(f"on a dask cluster of this machine, {n} worker process{'es' if n > 1 else ''}, gradebook written: "
              f"{s:6.1f} s, "
              f"{s / base:.2f}x the local run (after {warm_up:.1f} s starting the workers' sandboxes)")
    targets = {"core time per submission beyond start-up at most 0.15 s": total <= 0.15,
               f"grader under 1 GB in a class of {args.growth or args.students}": peak_mb < 1024}
    if len(growth) == 2:
        small, large = (sum(parts.values()) for parts in growth.values())
        targets["core time per submission flat from 60 to the growth class (within 15%)"] = large <= 1.15 * small
    if 2 in cluster:
        targets["the dask run with 2 workers within 15% of the local run"] = cluster[2][1] <= 1.15 * base
    for target, met in targets.items():
        print(f"target: {target}: {'PASS' if met else 'MISS'}")
    # Stock nbgrader cannot judge forbidden routes (hidden tests run beside the student's code), so
    # only the course's two graders are held to the same score on every check.
    sandboxed = books["nbgrader autograde (sandbox)"]
    same = sandboxed == {sid: reference[sid] for sid in sandboxed}
    return 0 if same and as_originals == len(made) else 1


if __name__ == "__main__":
    sys.exit(main())
