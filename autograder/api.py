"""What the ``course`` command does, as functions (the command line only parses arguments).

- ``release`` (and ``scheduled``, ``make_course``): build the source notebooks and generate the
  student release with nbgrader
- ``autograde``: grade a folder of submissions in sandboxed children, in parallel; ``write_csv``
- ``grade``: grade one submission; ``gradescope``: its results in Gradescope's format
- ``compare_nbgrader``: flag every check nbgrader's autograde scored differently
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autograder import authoring, checks, pipeline
from autograder.assignment import REPO, Assignment


class CourseError(RuntimeError):
    """A usage or setup error; the message says what to do."""


# ---- release ---------------------------------------------------------------------------------

def release(assignment: str, repo: Path = REPO) -> list[Path]:
    """Rebuild ``solutions/<assignment>/*.ipynb`` from their text form and regenerate the release."""
    a = Assignment(assignment, repo)
    if not a.source_dir.is_dir():
        raise CourseError(f"no problem set {assignment!r} in {repo / 'solutions'}")
    if _uncommitted(a.source_dir, repo):
        warnings.warn(f"{a.source_dir.relative_to(repo)} has uncommitted edits: the release will not match "
                      "what is committed; commit them with the release", stacklevel=2)
    authoring.build(a.source_dir)
    nbgrader("generate_assignment", assignment, "--force", "--log-level=WARN", repo=repo)
    return sorted(p for p in a.release_dir.rglob("*") if p.is_file())


def nbgrader(*args: str, repo: Path = REPO, check: bool = True) -> subprocess.CompletedProcess:
    """Run an nbgrader command in the course folder with this environment's tools on PATH."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    if check and done.returncode != 0:
        raise CourseError(f"nbgrader {args[0]} failed:\n{done.stderr.strip()[-2000:]}")
    return done


def scheduled(week: int, repo: Path = REPO) -> str:
    """The assignment ``course/schedule.toml`` releases in ``week``."""
    import tomllib

    path = repo / "course" / "schedule.toml"
    try:
        weeks = tomllib.loads(path.read_text()).get("weeks", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(f"cannot read the schedule {path}: {exc}") from None
    for entry in weeks:
        if entry.get("week") == week:
            return entry["assignment"]
    listed = ", ".join(str(e.get("week")) for e in weeks) or "none"
    raise CourseError(f"week {week} releases no problem set (weeks in {path.name}: {listed})")


def make_course(root: Path, assignment: str = "transformer-block", repo: Path = REPO) -> Assignment:
    """A throwaway course folder at ``root``: the sources rebuilt from their text form, nbgrader's
    configuration, and a fresh release (for tests, the demo, the benchmark and the mutation report)."""
    shutil.copytree(repo / "solutions", root / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__", "visible_checks", "*.ipynb"))
    shutil.copy(repo / "nbgrader_config.py", root)
    a = Assignment(assignment, root)
    authoring.build(a.source_dir)
    nbgrader("generate_assignment", assignment, "--force", "--log-level=WARN", repo=root)
    return a


def _uncommitted(path: Path, repo: Path) -> bool:
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", str(path)], cwd=repo,
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and any(not line.endswith(".ipynb") and "visible_checks" not in line
                                       for line in out.stdout.splitlines())


# ---- autograde -------------------------------------------------------------------------------

PRELOAD = ("numpy", "torch", "matplotlib.pyplot")


def find_submissions(folder: Path) -> dict[str, Path]:
    """Student id -> folder, for every sub-folder of ``folder``."""
    if not folder.is_dir():
        raise CourseError(f"no submissions folder {folder}: pass --submissions DIR "
                          "(holding <student>/<notebook>.ipynb or <student>/<assignment>/<notebook>.ipynb)")
    return {p.name: p for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.startswith(".")}


def autograde(assignment: str, submissions: Path, workers: int = 0, timeout: float = 60.0,
              progress=None, repo: Path = REPO) -> dict:
    """Grade every submission in ``submissions``; returns the results document."""
    from autograder.sandbox import Limits, Sandbox

    a = Assignment(assignment, repo)
    for notebook in a.notebooks:
        a.cells(notebook)   # fail early, with advice, when the source notebooks are not built
    students = find_submissions(submissions)
    workers = workers or os.cpu_count() or 1
    started = time.monotonic()
    hide = sorted({REPO, repo.resolve(), submissions.resolve(), Path.home()})
    results: dict[str, dict] = {}
    # Warm modules every child gets for free: torch, and pyplot for a student's scratch plots.
    # A cell or check that runs past a third of the notebook's time is interrupted on its own.
    limits = Limits(timeout=timeout, step_timeout=min(10.0, timeout / 3))
    with Sandbox(limits, preload=PRELOAD, hide=hide) as sandbox:
        env = pipeline.Env(a, sandbox, workers)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_grade_safely, sid, folder, env): sid for sid, folder in students.items()}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if progress:
                    progress(futures[future])
        isolation = dict(sandbox.isolation)
    return {"assignment": assignment, "isolation": isolation, "workers": workers,
            "seconds": round(time.monotonic() - started, 2),
            "students": {sid: results[sid] for sid in sorted(results)}}


def _grade_safely(student, folder, env) -> dict:
    """One task; a bug in the grader fails this student with its reason, not the batch."""
    try:
        return pipeline.grade(student, folder, env)
    except Exception as exc:
        return {"status": "failed", "reason": f"the grader could not grade this submission: "
                                              f"{type(exc).__name__}: {exc}"[:400],
                "score": 0.0, "max_score": env.assignment.max_score, "questions": {}, "flags": []}


def write_csv(results: dict, path: Path) -> None:
    """A row per student: a column per question, total, status, needs-manual-grade, flags, reason."""
    qids = list(checks.QUESTIONS)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", *qids, "score", "max_score", "status", "needs_manual_grade", "flags", "reason"])
        for sid, r in results["students"].items():
            q = r.get("questions", {})
            scores = [q.get(qid, {}).get("score") for qid in qids]
            out.writerow([sid, *["" if s is None else s for s in scores], r["score"], r["max_score"],
                          r["status"], " ".join(r.get("needs_manual_grade", [])), " | ".join(r.get("flags", [])),
                          r.get("reason") or ""])


def write_json(doc: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


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


def gradescope(result: dict) -> dict:
    """Gradescope's results.json for one graded submission: a test per check, hidden ones shown
    only after grades are published."""
    tests = []
    for qid, q in result.get("questions", {}).items():
        for row in q.get("checks", []):
            tests.append({"name": f"{row['id']}", "score": row["score"], "max_score": row["max_score"],
                          "output": row["message"] or "passed",
                          "visibility": "after_published" if row["hidden"] else "visible"})
    output = result.get("reason") or ""
    return {"score": result["score"], "output": output, "tests": tests, "visibility": "visible"}


# ---- cross-check with nbgrader -------------------------------------------------------------

def compare_nbgrader(results: dict, gradebook: Path) -> dict[str, list[str]]:
    """Per student, every check where nbgrader's autograde score differs from ours.

    Adds the differences to each student's ``flags`` and returns them.
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
            if lines:
                found[sid] = lines
                r.setdefault("flags", []).extend(f"graders disagree on {line}" for line in lines)
    results["nbgrader_disagreements"] = found
    return found
