"""What Gradescope's ``run_autograder`` runs in the container, once per submission (``python -m
autograder.run_autograder ASSIGNMENT``): grade ``ROOT/submission`` with the course at ``ROOT/source``
and write ``ROOT/results/results.json``, always (``tooling/gradescope.py`` builds the package).

What a student uploads: ``concepts.ipynb`` and ``build.ipynb``, at the top or in any folder, or
a zip archive holding them (the first place each name is found, nearest the top, is graded;
``__MACOSX/``, ``.ipynb_checkpoints/`` and hidden folders are skipped, links are never followed).
A container grades one submission, so grading is allowed to fall back to weak isolation
(``allow_weak_isolation=True``) where the container refuses namespaces; the results say so and
state the isolation in force.

What students see before grades are published (``reports.exports.gradescope``): the visible
checks' tests and the top-level output, where nothing a hidden check decided appears; a hidden
check's verdict and review note are in its own ``after_published`` test, and Gradescope hides the
total while such a test exists. The runner's stdout, which Gradescope shows to instructors only
(``stdout_visibility: hidden``), also lists every check awaiting a TA's review, hidden ones
included. Every line it prints goes through ``escape.for_terminal``.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import stat
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

from autograder.course import CourseError
from autograder.escape import for_terminal
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.results import StudentResult
from autograder.grader_side.sandbox import starting
from autograder.reports.exports import describe_isolation

DEFAULT_ROOT = "/autograder"



class UploadError(ValueError):
    """The upload holds nothing to grade; the message says why, in one line, for the student."""


def find_notebooks(upload: Path, names: list[str]) -> tuple[dict[str, tuple], list[str]]:
    """Where each notebook ``names`` is in the upload: name -> ("file", path) or ("zip", archive,
    member), and notes for the student (duplicates, links skipped). Files win over zip archives."""
    notes: list[str] = []
    files: dict[str, list] = {n: [] for n in names}
    archives: list[Path] = []
    others: list[str] = []
    if not upload.is_dir() or upload.is_symlink():
        raise UploadError("nothing was uploaded")
    for folder, dirs, entries in os.walk(upload, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in ("__MACOSX", ".ipynb_checkpoints") and not d.startswith("."))
        for entry in sorted(entries):
            path = Path(folder) / entry
            rel = path.relative_to(upload).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                notes.append(f"{rel} is a link and was not read")
            elif not stat.S_ISREG(mode):
                continue
            elif entry in files:
                files[entry].append((len(path.relative_to(upload).parts), rel, ("file", path)))
            elif entry.lower().endswith(".zip"):
                archives.append(path)
            elif not entry.startswith("."):
                others.append(rel)
    if not any(files.values()):
        for archive in archives:
            rel = archive.relative_to(upload).as_posix()
            try:
                with zipfile.ZipFile(archive) as z:
                    for info in z.infolist():
                        parts = info.filename.split("/")
                        link = stat.S_ISLNK(info.external_attr >> 16)
                        if (info.is_dir() or link or parts[-1] not in files
                                or any(p in ("__MACOSX", ".ipynb_checkpoints", "..") or p.startswith(".")
                                       for p in parts[:-1])):
                            continue
                        files[parts[-1]].append((len(parts), f"{rel}:{info.filename}", ("zip", archive, info)))
            except (zipfile.BadZipFile, OSError) as exc:
                notes.append(f"{rel} is not a readable zip archive ({exc})")
    found = {}
    for name, places in files.items():
        if places:
            places.sort(key=lambda p: (p[0], p[1]))
            found[name] = (places[0][1], places[0][2])
            if len(places) > 1:
                notes.append(f"{len(places)} files named {name}; graded {places[0][1]}")
    if not found:
        seen = ", ".join(others[:5] + [a.relative_to(upload).as_posix() for a in archives][:5]) or "no files"
        raise UploadError(f"no {' or '.join(names)} in the upload (found: {seen}): upload the notebooks, "
                          f"named {' and '.join(names)}, or a zip archive of them")
    return found, notes


def stage(found: dict[str, tuple], folder: Path, limit: int) -> None:
    """Copy each found notebook into ``folder``, never through a link. A file over ``limit``
    bytes becomes a sparse file of its size, which the grader's reader refuses with its size."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (_, where) in found.items():
        target = folder / name
        if where[0] == "file":
            fd = os.open(where[1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f, open(target, "wb") as out:
                size = os.fstat(f.fileno()).st_size
                if size > limit:
                    out.truncate(size)
                else:
                    out.write(f.read(limit + 1))
        else:
            _, archive, info = where
            with zipfile.ZipFile(archive) as z, open(target, "wb") as out:
                if info.file_size > limit:
                    out.truncate(info.file_size)
                else:
                    with z.open(info) as f:
                        out.write(f.read(limit + 1))


def failed(reason: str, started: float, notes: Sequence[str] = ()) -> dict:
    """A results.json for an upload that could not be graded: score 0 and the reason, one line."""
    from autograder.reports.exports import gradescope

    result = StudentResult("failed", 0.0, 0.0, reason=reason)   # (Gradescope's file shows no maximum)
    return gradescope(result, time.monotonic() - started, notes=tuple(notes))


def run(assignment: str, root: Path, timeout: float = 60.0, started: float | None = None,
        staff: list[str] | None = None) -> dict:
    """Grade ``root/submission`` with the course at ``root/source``: Gradescope's results dict.
    ``staff``, when given, receives what only the instructor may read before grades are published
    (which questions wait for a TA, hidden checks included), for the runner's stdout."""
    from autograder import api
    from autograder.grader_side.pipeline.read import MAX_BYTES

    started = time.monotonic() if started is None else started
    source = root / "source"
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        submissions = Path(tmp) / "submissions"
        submissions.mkdir()
        with starting(timeout, (source, submissions), allow_weak_isolation=True):   # beside loading the set
            a = Assignment(assignment, source)
            names = [f"{n}.ipynb" for n in a.notebooks]
            try:
                found, notes = find_notebooks(root / "submission", names)
            except UploadError as exc:
                return failed(str(exc), started)
            notes = [f"graded {', '.join(f'{name} (from {rel})' for name, (rel, _) in found.items())}", *notes]
            student = submissions / "student" / assignment   # <student>/<set>/: whatever the sets' names
            stage(found, student, MAX_BYTES)
            try:
                doc = api.grade_class(assignment, student, timeout=timeout, repo=source,
                                      allow_weak_isolation=True, student=True)
            except CourseError as exc:
                return failed(f"the autograder could not grade: {exc}", started, notes)
    isolation = doc.isolation
    result = doc.students["student"]
    if staff is not None:
        staff.extend(awaiting_review(result))
        staff.append("instructor only: one submission in this container, graded with allow_weak_isolation=True "
                     "(Gradescope mode); " + ("namespaces were refused here, so the isolation is weak"
                                             if isolation.get("weak") else "the full sandbox was available and used"))
        staff.append(f"instructor only: isolation, whole: {describe_isolation(isolation)}")
    return api.gradescope(result, time.monotonic() - started, isolation, tuple(notes))


def awaiting_review(result: StudentResult) -> list[str]:
    """For the instructor: a line per check whose points wait for a TA, hidden or not, with the
    answer to read (students see a hidden one's note in its own test once grades are published)."""
    from autograder.reports.exports import awaiting

    return [f"instructor only: {qid} {row.id} ({'hidden' if row.hidden else 'visible'} check) awaits a "
            f"TA's review: {row.review}"
            for qid, row in result.checks() if awaiting(row)]


def main(argv=None) -> int:
    """``python -m autograder.run_autograder ASSIGNMENT [--root /autograder]``: always writes
    ``ROOT/results/results.json`` and exits 0 once it has."""
    started = time.monotonic()
    parser = argparse.ArgumentParser(prog="python -m autograder.run_autograder",
                                     description="grade ROOT/submission into ROOT/results/results.json")
    parser.add_argument("assignment")
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", DEFAULT_ROOT)))
    parser.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per notebook")
    args = parser.parse_args(argv)
    staff: list[str] = []
    try:
        doc = run(args.assignment, args.root, args.timeout, started, staff)
    except Exception as exc:     # never leave without a results.json
        doc = failed(f"the autograder failed: {type(exc).__name__}: {exc}"[:400], started)
    target = args.root / "results" / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name("results.json.partial")
    partial.write_text(json.dumps(doc, indent=1) + "\n")
    os.chmod(partial, 0o600)
    partial.replace(target)
    # Gradescope shows this stdout to instructors only (stdout_visibility: hidden); one record a line.
    print(f"{for_terminal(target)}: score {doc['score']:g}, {len(doc['tests'])} tests")
    for line in [*doc["output"].splitlines(), *staff]:
        print(for_terminal(line))
    gc.freeze()     # only the interpreter's exit is left, which would walk every object torch made (0.5 to 2 s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
