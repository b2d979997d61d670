"""Releasing a problem set: the source notebooks from their text form, the files the set builds
(``build_files``: week 5's trained model), then nbgrader's ``generate_assignment`` into
``assignments/`` (which ships the course's runtime with every set: ``ShipRuntime``); the weekly
schedule; throwaway course folders for tests, the demo, the benchmark and the mutation report."""
from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from autograder.course import Course, CourseError
from autograder.grader_side import problem_set
from autograder.grader_side.assignment import Assignment
from autograder.nbgrader.plugins import late
from autograder.tooling import authoring, classroom

RUNTIME = Path(__file__).resolve().parents[1] / "student_side"   # autograder/student_side


class ShipRuntime(Preprocessor):
    """nbgrader's ``generate_assignment`` step that puts the course's runtime (``autograder/student_side``:
    ``check``/``ready``, the value codec, the request server and the checks' toolkit) into the
    release's ``student_side/``, next to the set's own visible checks, which nbgrader copies from
    ``solutions/<set>/student_side/checks/``, and GitHub Classroom's workflow into its
    ``.github/workflows/`` (``tooling/classroom.py``). It changes no notebook."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        converter = getattr(self.parent, "parent", None)
        info = resources.get("nbgrader", {})
        if converter is not None and hasattr(converter, "_format_dest"):
            release_dir = Path(converter._format_dest(info["assignment"], info["student"]))
            source_dir = Path(converter._format_source(info["assignment"], info["student"]))
            ship_runtime(release_dir)
            ship_built_files(source_dir, release_dir)
            from nbgrader.converters import GenerateAssignment

            if isinstance(converter, GenerateAssignment):   # a release (not the stock autograde it also serves)
                classroom.ship(source_dir, release_dir)     # GitHub Classroom's workflow: the visible checks only
        return nb, resources


def ship_built_files(source_dir: Path, release_dir: Path) -> None:
    """Put the files a set builds (``grading/built.py``'s ``FILES``) into ``release_dir``, building
    them first where the source folder lacks them (week 5 commits its trained weights; a set that
    does not), so that ``nbgrader generate_assignment`` alone releases what ``course release`` does."""
    builder = _builder(source_dir)
    if builder is None:
        return
    files = [Path(f) for f in getattr(builder, "FILES", ())]
    if any(not (source_dir / f).is_file() for f in files):
        build_files(source_dir)
    for f in files:
        target = release_dir / f
        if not (target.is_file() and target.read_bytes() == (source_dir / f).read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source_dir / f, target)


def ship_runtime(release_dir: Path) -> None:
    """Copy the runtime's files into ``release_dir/student_side/`` (its own files only, no caches):
    a release, or a set's source folder, where git ignores them (``.gitignore``)."""
    for source in sorted(RUNTIME.rglob("*.py")):
        target = release_dir / "student_side" / source.relative_to(RUNTIME)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def build_files(source_dir: Path) -> list[Path]:
    """Write the files a set builds into its own folder, which nbgrader then copies into the release
    with the rest of the folder (as it does ``figures/`` and ``notes/``): what ``build(folder)`` of the
    set's optional ``grading/built.py`` writes (week 5: its trained model, so the notebook loads it
    instead of training on every run). A set without one builds nothing. The builder must write the
    same bytes every time, so that releasing twice changes nothing."""
    builder = _builder(source_dir)
    if builder is None:
        return []
    try:
        return list(builder.build(source_dir))
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        raise CourseError(f"{source_dir.name}: grading/built.py could not build its files: {exc}") from None


def _builder(source_dir: Path):
    """The set's ``grading/built.py`` as the grader loads the set, or None for a set that builds nothing."""
    if not (source_dir / "grading" / "built.py").is_file():
        return None
    return importlib.import_module(f"{problem_set.load(source_dir).package}.grading.built")


def release(assignment: str, course: Course | Path | None = None) -> list[Path]:
    """Rebuild ``solutions/<assignment>/*.ipynb`` of ``course`` (default: the course folder this runs
    in) from their text form and regenerate its release."""
    root = Course.of(course).root
    a = Assignment(assignment, root)
    if not a.source_dir.is_dir():
        raise CourseError(f"no problem set {assignment!r} in {root / 'solutions'}")
    if _uncommitted(a.source_dir, root):
        warnings.warn(f"{a.source_dir.relative_to(root)} has uncommitted edits: the release will not match "
                      "what is committed; commit them with the release", stacklevel=2)
    _build_notebooks(a.source_dir)
    build_files(a.source_dir)    # into the set's folder: the source notebooks use them in place, nbgrader copies them
    ship_runtime(a.source_dir)   # so the source notebooks run (and `nbgrader validate` them) in place
    nbgrader("generate_assignment", assignment, "--force", "--log-level=WARN", repo=root)
    late.record_due_date(assignment, root)   # course/schedule.toml's due date into the gradebook
    return sorted(p for p in a.release_dir.rglob("*") if p.is_file())


def _build_notebooks(source_dir: Path) -> None:
    """The set's source notebooks from their text form; a malformed one is a CourseError naming the line."""
    try:
        authoring.build(source_dir)
    except authoring.AuthoringError as exc:
        raise CourseError(f"{source_dir.name}: {exc}") from None


def nbgrader(*args: str, repo: Course | Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run an nbgrader command in the folder ``repo`` with this environment's tools on PATH: a course
    (a ``Course`` or its folder) or, for nbgrader's exchange commands, a student's folder; default
    the folder this runs in, as the ``nbgrader`` command itself."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    cwd = repo.root if isinstance(repo, Course) else repo
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if check and done.returncode != 0:
        raise CourseError(f"nbgrader {args[0]} failed:\n{done.stderr.strip()[-2000:]}")
    return done


def make_course(root: Path, assignment: str, source: Course | Path | None = None) -> Assignment:
    """A throwaway course folder at ``root``, copied from the course ``source`` (default: the course
    folder this runs in): the sources rebuilt from their text form, the files the set builds,
    nbgrader's configuration, and a fresh release (for tests, the demo, the benchmark and the
    mutation report)."""
    origin = Course.of(source).root
    shutil.copytree(origin / "solutions", root / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    shutil.copy(origin / "nbgrader_config.py", root)
    a = Assignment(assignment, root)
    _build_notebooks(a.source_dir)
    build_files(a.source_dir)
    nbgrader("generate_assignment", assignment, "--force", "--log-level=WARN", repo=root)
    late.record_due_date(assignment, root, schedule_repo=origin)   # the schedule's due date, as `course release`
    return a


def _uncommitted(path: Path, root: Path) -> bool:
    """Whether git sees edits under the set's source folder ``path``, beyond what a release writes
    there itself (the notebooks built from their text form, the runtime's copy, Python's caches), so a
    course folder without the kit's ``.gitignore`` is not warned on every release after its first.
    Read from ``--porcelain -z``, which no git setting of the user's changes (paths from the top of
    the repository, unquoted; a rename's old path follows it)."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root,
                             capture_output=True, text=True, timeout=30)
        out = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=all", "--", str(path)],
                             cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if top.returncode != 0 or out.returncode != 0:
        return False
    entries, edited = out.stdout.split("\0"), []
    while entries:
        entry = entries.pop(0)
        if len(entry) > 3:
            edited.append(entry[3:])
            if entry[0] in "RC" and entries:
                edited.append(entries.pop(0))      # the old path of a rename or copy
    shipped = {(path / "student_side" / p.relative_to(RUNTIME)).resolve() for p in RUNTIME.rglob("*.py")}
    files = [(Path(top.stdout.strip()) / name).resolve() for name in edited]
    return any(f.suffix != ".ipynb" and "__pycache__" not in f.parts and f not in shipped for f in files)
