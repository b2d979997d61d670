"""What the ``course`` command does, as functions (the command line only parses arguments).

- ``release`` (and ``scheduled``, ``make_course``): build the source notebooks and generate the
  student release with nbgrader
- ``autograde``: grade a folder of submissions in sandboxed children, in parallel; ``write_csv``
- ``grade``: grade one submission; ``gradescope``: its results in Gradescope's format
- ``compare_nbgrader``: flag every check nbgrader's autograde scored differently
"""
from __future__ import annotations

import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autograder.grader_side import pipeline
from autograder.grader_side.assignment import REPO, Assignment, CourseError
from autograder.grader_side.results import StudentResult
from autograder.reports.exports import gradescope, write_csv, write_json
from autograder.tooling.release import make_course, nbgrader, release, scheduled

__all__ = ["CourseError", "autograde", "compare_nbgrader", "find_submissions", "grade", "gradescope",
           "make_course", "nbgrader", "release", "scheduled", "write_csv", "write_json"]


# ---- autograde -------------------------------------------------------------------------------

# Warm modules every child gets for free: torch, and pyplot for a student's scratch plots.
PRELOAD = ("numpy", "torch", "matplotlib.pyplot")


def find_submissions(folder: Path) -> dict[str, Path]:
    """Student id -> folder, for every sub-folder of ``folder``."""
    if not folder.is_dir():
        raise CourseError(f"no submissions folder {folder}: pass --submissions DIR "
                          "(holding <student>/<notebook>.ipynb or <student>/<assignment>/<notebook>.ipynb)")
    return {p.name: p for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.startswith(".")}


def autograde(assignment: str, submissions: Path, workers: int = 0, timeout: float = 60.0,
              progress=None, repo: Path = REPO, scheduler: str | None = None) -> dict:
    """Grade every submission in ``submissions``; returns the results document.

    With ``scheduler`` (``tcp://HOST:PORT``) each submission is a task on that dask.distributed
    cluster (``grader_side.cluster``); ``workers`` is then the cluster's business.
    """
    import torch

    from autograder.grader_side.sandbox import Sandbox

    a = Assignment(assignment, repo)
    for notebook in a.notebooks:
        a.cells(notebook)   # fail early, with advice, when the source notebooks are not built
    students = find_submissions(submissions)
    if scheduler:
        from autograder.grader_side import cluster

        return cluster.autograde(a, students, scheduler, timeout, PRELOAD, progress)
    # The grader's own tensors (references, comparisons) are tiny: torch's intra-op threads would
    # only spin, at about 0.1 s of core time per submission. Parallelism comes from the tasks.
    torch.set_num_threads(1)
    workers = workers or os.cpu_count() or 1
    started = time.monotonic()
    hide = sorted({REPO, repo.resolve(), submissions.resolve(), Path.home()})
    results: dict[str, dict] = {}
    with Sandbox(limits(timeout), preload=PRELOAD, hide=hide) as sandbox:
        env = pipeline.Env(a, sandbox, workers)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(grade_safely, sid, folder, env): sid for sid, folder in students.items()}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if progress:
                    progress(futures[future])
        isolation = dict(sandbox.isolation)
    return {"assignment": assignment, "isolation": isolation, "workers": workers,
            "seconds": round(time.monotonic() - started, 2),
            "students": {sid: results[sid] for sid in sorted(results)}}


def limits(timeout: float):
    """The sandbox's limits for ``timeout`` seconds per notebook: a cell or check that runs past a
    third of it is interrupted on its own."""
    from autograder.grader_side.sandbox import Limits

    return Limits(timeout=timeout, step_timeout=min(10.0, timeout / 3))


def grade_safely(student, folder, env) -> dict:
    """One task; a bug in the grader fails this student with its reason, not the batch."""
    try:
        return pipeline.grade(student, folder, env)
    except Exception as exc:
        return StudentResult("grader-error", 0.0, env.assignment.max_score,
                             reason=f"the grader could not grade this submission: "
                                    f"{type(exc).__name__}: {exc}"[:400]).to_dict()


# ---- one submission ------------------------------------------------------------------------

def grade(notebooks: list[Path], assignment: str, timeout: float = 60.0, repo: Path = REPO) -> dict:
    """Grade one submission given as its notebook files (named concepts.ipynb / build.ipynb)."""
    import tempfile

    missing = [str(p) for p in notebooks if not Path(p).is_file()]
    if missing:
        raise CourseError(f"no such notebook: {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submission"
        (folder / "student").mkdir(parents=True)
        for path in notebooks:
            shutil.copy(path, folder / "student" / Path(path).name)
        return autograde(assignment, folder, workers=1, timeout=timeout, repo=repo)["students"]["student"]


# ---- cross-check with nbgrader -------------------------------------------------------------

def compare_nbgrader(results: dict, gradebook: Path) -> dict[str, list[str]]:
    """Per student, every check where nbgrader's autograde score differs from ours.

    Records the differences in each student's ``disagreements`` and returns them.
    """
    from nbgrader.api import Gradebook, MissingEntry

    if not gradebook.is_file():
        raise CourseError(f"no nbgrader gradebook at {gradebook}: run `nbgrader autograde` first, or pass its path")
    found: dict[str, list[str]] = {}
    with Gradebook(f"sqlite:///{gradebook.resolve()}") as gb:
        for sid, r in results["students"].items():
            try:
                submission = gb.find_submission(results["assignment"], sid)
            except MissingEntry:
                continue
            ours = {row["id"]: row["score"] for q in r.get("questions", {}).values() for row in q.get("checks", [])}
            theirs = {g.name: g.auto_score for nb in submission.notebooks for g in nb.grades
                      if g.auto_score is not None}
            lines = [f"{cid}: nbgrader {theirs[cid]:g}, course autograde {ours[cid]:g}"
                     for cid in ours if cid in theirs and abs(theirs[cid] - ours[cid]) > 1e-9]
            r["disagreements"] = lines
            if lines:
                found[sid] = lines
    return found
