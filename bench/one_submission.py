"""Benchmark: one submission on its own, from process start to results written, in one run.

    .venv/bin/python bench/one_submission.py [--repeats 3]

Gradescope's ``run_autograder``, ``course pytest --submission`` and ``course grade`` grade one
student per process, so start-up is the cost. Builds a throwaway course folder (sources rebuilt,
fresh nbgrader release) with one honest submission (the reference solution), and times, side by
side, each ``--repeats`` times (the median is printed):

- (a) ``course grade --assignment transformer-block concepts.ipynb build.ipynb --gradescope FILE``
  in the course folder: process start to its results written and the process ended;
- (b) Gradescope's layout: ``course gradescope-package`` built once, unpacked as Gradescope does
  (ROOT/source, ROOT/submission holding the notebooks, ROOT/results) and warmed as its setup.sh
  does (the one import it runs); then ``python -m autograder.run_autograder transformer-block
  --root ROOT`` with the kit's venv Python and ``PYTHONPATH=ROOT/source`` (as the package's
  run_autograder runs it), until results.json is written and the process ended; a fresh ROOT
  each repeat, as each submission gets a fresh container;
- (c) stock ``nbgrader autograde`` of the same student in a throwaway copy of the course
  configured with nbgrader's own ``Execute`` (``tooling.stock.use_stock_nbgrader``);
- (d) the machine's yardstick: a fresh interpreter that imports torch and ends, the floor of (a)
  and (b), whose sandboxed process must import torch before it runs student code (2.5 s on a
  machine where (a) took 4.6 s), to read the target against.

For (a) and (b) the time is split along the grader's path, from the time marks the sandbox
writes where ``AUTOGRADER_TIME_MARKS`` names a file (``grader_side/sandbox/marks.py``):

- interpreter and imports: process start until the grader asks for the sandbox (its imports,
  loading the set, reading the submission's folder);
- sandbox start: what the grader then waits for the warm process (bubblewrap, the zygote's
  imports, its isolation probe); in brackets the warm process's whole start, part of which runs
  beside the grader's imports;
- grading: from then until the sandbox is closed (both notebooks run, every check applied);
- writing: from then until the process has ended (results written, interpreter shut down).

With each time, the core time (CPU seconds of the whole process tree): on a machine others share,
it moves less than the wall time does.

Every run must give the reference full marks; the exit status is 1 otherwise (a MISS is a figure,
not a failure). To measure another copy of the kit (an older commit, for a before and after), run
the bench with ``PYTHONPATH`` naming that copy: the commands it times then import that kit (one
without time marks is timed whole, without the split). The target for (a)
and (b) is under ``TARGET`` seconds on the 2-core machine the kit is developed on (PASS/MISS).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import api  # noqa: E402
from autograder.grader_side.sandbox.marks import ENV as MARKS  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402
from autograder.tooling.stock import use_stock_nbgrader  # noqa: E402

ASSIGNMENT = "transformer-block"
TARGET = 3.0                 # seconds, process start to results written, for (a) and (b)
BIN = Path(sys.executable).parent
PHASES = ("interpreter and imports", "sandbox start", "grading", "writing")


def make_course(root: Path) -> Path:
    """A throwaway course folder at ``root`` with one honest submission, ``submitted/alice``; the
    folder holding alice's two notebooks."""
    a = api.make_course(root, ASSIGNMENT, REPO)
    return write_submission(root / "submitted" / "alice", a, signed=True)


def timed_process(command: list[str], cwd: Path, env: dict[str, str], marks: Path | None = None) -> dict:
    """Run ``command`` to its end: its wall seconds and, with ``marks``, the time marks it wrote
    (name -> seconds after the process was started)."""
    env = dict(env)
    if marks is not None:
        marks.unlink(missing_ok=True)
        env[MARKS] = str(marks)
    before, started = _children_core(), time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    ended, core = time.monotonic(), _children_core() - before
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    seen: dict[str, float] = {}
    if marks is not None and marks.exists():
        for line in marks.read_text().splitlines():
            name, at = line.split()
            seen.setdefault(name, float(at) - started)
    return {"seconds": ended - started, "core": core, "marks": seen}


def _children_core() -> float:
    """CPU seconds of every process this one has waited for, and theirs (the whole tree of a
    command: its sandbox's warm process and each notebook's process included)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def split(run: dict) -> dict[str, float]:
    """The four phases of one run along the grader's path (they add up to its wall time), and the
    warm process's whole start (``zygote``), from its marks."""
    m, total = run["marks"], run["seconds"]
    wanted, ready, closed = m["sandbox-wanted"], m["sandbox-ready"], m["sandbox-closed"]
    graded_from = max(wanted, ready)
    return {"interpreter and imports": wanted, "sandbox start": graded_from - wanted,
            "grading": closed - graded_from, "writing": total - closed,
            "zygote": ready - m["sandbox-start"]}


def course_grade(course: Path, notebooks: Path, out: Path, marks: Path) -> dict:
    """(a): ``course grade`` of alice's notebooks in the course folder, Gradescope's results.json written."""
    command = [str(BIN / "course"), "grade", "--assignment", ASSIGNMENT, str(notebooks / "concepts.ipynb"),
               str(notebooks / "build.ipynb"), "--gradescope", str(out)]
    run = timed_process(command, course, dict(os.environ), marks)
    run["score"] = json.loads(out.read_text())["score"]
    return run


def gradescope_package(course: Path, folder: Path) -> Path:
    """``course gradescope-package`` of the course, as an instructor builds it."""
    out = folder / "autograder.zip"
    done = subprocess.run([str(BIN / "course"), "gradescope-package", ASSIGNMENT, "--out", str(out)], cwd=course,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"course gradescope-package failed:\n{done.stderr[-3000:]}")
    return out


def gradescope_root(package: Path, notebooks: Path, root: Path) -> Path:
    """Gradescope's layout at ``root``: the package unpacked in source/ (modes kept, as Gradescope's
    unzip does), the upload in submission/, an empty results/; then the import setup.sh runs at the
    end of building the image, which leaves the same compiled modules in source/."""
    for part in ("source", "submission", "results"):
        (root / part).mkdir(parents=True)
    with zipfile.ZipFile(package) as z:
        for info in z.infolist():
            path = z.extract(info, root / "source")
            if info.external_attr >> 16:
                os.chmod(path, (info.external_attr >> 16) & 0o7777)
    for name in ("concepts.ipynb", "build.ipynb"):
        shutil.copy(notebooks / name, root / "submission" / name)
    subprocess.run([sys.executable, "-c", "import torch, nbformat, autograder.run_autograder"], cwd=root,
                   env=gradescope_env(root), check=True)
    return root


def gradescope_env(root: Path) -> dict[str, str]:
    """run_autograder's environment: the package's copy of the kit first on the path."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(root / "source")}


def run_autograder(package: Path, notebooks: Path, root: Path, marks: Path) -> dict:
    """(b): Gradescope's run of one submission in a fresh layout at ``root``, until results.json."""
    gradescope_root(package, notebooks, root)
    command = [sys.executable, "-m", "autograder.run_autograder", ASSIGNMENT, "--root", str(root)]
    run = timed_process(command, root, gradescope_env(root), marks)
    run["score"] = json.loads((root / "results" / "results.json").read_text())["score"]
    return run


def stock_course(course: Path, folder: Path) -> Path:
    """A copy of the course (alice submitted) whose ``nbgrader autograde`` is nbgrader's own."""
    shutil.copytree(course, folder, symlinks=True)
    use_stock_nbgrader(folder)
    return folder


def stock_autograde(stock: Path) -> dict:
    """(c): stock ``nbgrader autograde`` of alice, process start to its end (gradebook written)."""
    command = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "alice", "--force",
               "--log-level=ERROR"]
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return timed_process(command, stock, env)


def torch_import() -> dict:
    """A fresh interpreter that imports torch and ends: every route's floor (the sandbox's process
    imports torch before it runs a line of student code, and the checks need it)."""
    return timed_process([sys.executable, "-c", "import torch"], REPO, dict(os.environ))


def median(values: list[float]) -> float:
    return statistics.median(values)


def seconds(runs: list[dict]) -> str:
    """Each run's wall time, in the order they ran."""
    return ", ".join(f"{r['seconds']:.2f}" for r in runs)


def report(name: str, runs: list[dict], stock: float) -> None:
    """Print one command's median time, its ratio to stock nbgrader, its split and the target."""
    total = median([r["seconds"] for r in runs])
    met = total < TARGET
    core = median([r["core"] for r in runs])
    print(f"{name:58} {total:6.2f} s  {total / stock:5.2f}x stock nbgrader   target < {TARGET:g} s: "
          f"{'PASS' if met else 'MISS'}   (runs: {seconds(runs)}; core time {core:.2f} s)")
    if not all(run["marks"] for run in runs):
        print("    (no time marks: a kit older than grader_side/sandbox/marks.py ran, so no split)")
        return
    parts = [split(r) for r in runs]
    for phase in PHASES:
        extra = f"   (the warm process's whole start: {median([p['zygote'] for p in parts]):.2f} s)" \
            if phase == "sandbox start" else ""
        print(f"    {phase:26} {median([p[phase] for p in parts]):6.2f} s{extra}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command (the median is printed)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be 1 or more")
    with tempfile.TemporaryDirectory(prefix="one-submission-") as tmp:
        folder = Path(tmp)
        course = folder / "course"
        course.mkdir()
        notebooks = make_course(course)
        package = gradescope_package(course, folder)
        stock = stock_course(course, folder / "stock")
        grade, gradescope, nbgrader, floor = [], [], [], []
        for i in range(args.repeats):     # interleaved: a busy moment of the machine hits all four
            grade.append(course_grade(course, notebooks, folder / f"grade{i}.json", folder / "marks"))
            gradescope.append(run_autograder(package, notebooks, folder / f"gradescope{i}", folder / "marks"))
            nbgrader.append(stock_autograde(stock))
            floor.append(torch_import())
    stock_seconds = median([r["seconds"] for r in nbgrader])
    print(f"one honest submission ({ASSIGNMENT}: concepts.ipynb and build.ipynb), {args.repeats} run(s) each, "
          f"median; {os.cpu_count()} cores")
    for name, runs in (("(a) course grade, to --gradescope results written", grade),
                       ("(b) Gradescope: python -m autograder.run_autograder", gradescope)):
        report(name, runs, stock_seconds)
    print(f"{'(c) stock nbgrader autograde (hidden tests in the kernel)':58} {stock_seconds:6.2f} s  "
          f"(runs: {seconds(nbgrader)}; core time {median([r['core'] for r in nbgrader]):.2f} s)")
    print(f"{'(d) the floor: a fresh interpreter importing torch':58} {median([r['seconds'] for r in floor]):6.2f} s  "
          f"(runs: {seconds(floor)}; what every route above waits for before it grades, on this machine)")
    scores = {r["score"] for r in grade + gradescope}
    if scores != {100.0}:
        print(f"the reference did not score full marks in every run: {sorted(scores)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
