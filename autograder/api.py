"""What the ``course`` command does, as functions (the command line only parses arguments).

- ``release`` (and ``make_course``): build the source notebooks and generate the student release
  with nbgrader
- ``course_root``: the course folder a command works on (the one it is run in: ``course.Course``);
  ``problem_sets``, ``schedule``, ``scheduled``: what that folder holds. Every function that reads
  a course takes it as ``course`` (``repo`` for ``autograde`` and ``nbgrader``): a ``Course``, its
  folder, or None for the folder the call runs in (``Course.here()``), never the kit's checkout
- ``autograde``: grade a folder of submissions in sandboxed children, in parallel, and (with
  ``gradebook=True``) record them in nbgrader's gradebook and autograded/; ``write_csv``
- ``grade`` (``grade_one``: with the isolation it ran under): grade one submission; ``gradescope``:
  its results in Gradescope's format; ``gradescope_package``: Gradescope's autograder.zip
- ``compare_nbgrader``: flag every check nbgrader's autograde scored differently

``autograde``, ``grade`` and ``grade_one`` return JSON (the results document of
``docs/results.schema.json``); ``grade_class`` and ``grade_submission`` return the same as typed
``grader_side.results.Results``, which the package's own modules use.
"""
from __future__ import annotations

import shutil
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.course import Course, CourseError, student_folders
from autograder.grader_side import analysis, local
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.results import Results, as_results, refresh
from autograder.grader_side.sandbox import PRELOAD, starting
from autograder.nbgrader.recorder_process import RecorderProcess
from autograder.reports.exports import gradescope, write_csv, write_json

if TYPE_CHECKING:    # at run time from tooling.release on first use (module __getattr__ below)
    from autograder.tooling.release import make_course, nbgrader, release

__all__ = ["CourseError", "autograde", "autograded_folder", "compare_nbgrader", "course_root", "find_submissions",
           "grade", "grade_class", "grade_one", "grade_submission", "gradescope", "gradescope_package",
           "make_course", "nbgrader", "problem_sets", "record_gradebook", "release", "schedule", "scheduled",
           "submitted_folder", "write_csv", "write_json"]


def problem_sets(course: Course | Path | None = None) -> list[str]:
    """The problem sets of ``course`` (default: the folder this runs in), the folders of ``solutions/``."""
    return Course.of(course).problem_sets()


def schedule(course: Course | Path | None = None) -> list[dict]:
    """The weeks of ``course``'s ``course/schedule.toml`` that release a problem set, in week order."""
    return Course.of(course).schedule()


def scheduled(week: int, course: Course | Path | None = None) -> str:
    """The problem set ``course``'s schedule releases in ``week``."""
    return Course.of(course).scheduled(week)


# ---- the course folder ---------------------------------------------------------------------------

def course_root(folder: Path | None = None) -> Path:
    """The course folder ``course`` works on: like nbgrader, the one it is run in (``folder``, default
    the current directory), which holds the course's ``nbgrader_config.py``."""
    return Course.here(folder).root


def find_submissions(folder: Path, assignment: str | None = None,
                     course: Course | Path | None = None) -> dict[str, Path]:
    """Student id -> folder for the student folders of ``folder``; with ``assignment``, only those
    holding a submission of that set of ``course`` (``Course.submissions``: in the course's own
    submitted/, those with an ``<assignment>/`` folder, as nbgrader grades them)."""
    return Course.of(course).submissions(folder, assignment) if assignment else student_folders(folder)


def submitted_folder(root: Path) -> Path:
    """nbgrader's submitted/ of the course at ``root``, as its configuration names it."""
    return Course(root).folder("submitted")


def autograded_folder(root: Path) -> Path:
    """nbgrader's autograded/ of the course at ``root``, as its configuration names it."""
    return Course(root).folder("autograded")


def record_gradebook(results: Results | dict[str, Any], submissions: Path, course: Course | Path | None = None) -> None:
    """Write the results (a ``Results``, or the results document ``autograde`` returns) of the
    submissions in ``submissions`` into the gradebook and autograded/ of ``course`` (what
    ``autograde(..., gradebook=True)`` does on the way); the results then say what it recorded."""
    folders = find_submissions(submissions)
    typed = as_results(results)
    with _recorder(Course.of(course), typed.assignment) as recorder:
        for sid, result in typed.students.items():
            recorder.record_safely(sid, result, folders[sid])
    if isinstance(results, dict):
        refresh(results, typed)


# ---- autograde -------------------------------------------------------------------------------

def grade_class(assignment: str | None, submissions: Path, workers: int = 0, timeout: float = 60.0,
                progress=None, repo: Course | Path | None = None, gradebook: bool = False,
                allow_weak_isolation: bool = False, scheduler: str | None = None, insecure_cluster: bool = False,
                only: list[str] | None = None, student: bool = False) -> Results:
    """Grade every submission in ``submissions`` (or the students ``only`` names); returns the
    results (``autograde``: as the results document, JSON).

    The set is read from the course folder ``repo`` (a ``Course`` or its folder; default the folder
    this runs in); ``assignment`` None: the set the folders are named after, or the course's only
    one (``Course.set_of``). With ``student``, ``submissions`` is one student's folder
    (``<student>/<set>/`` or ``<student>/``, ``Course.student_folder``), whose sandbox starts beside
    loading the set. With ``gradebook``, each student is also written into that course's gradebook
    and autograded/ folder as soon as they are graded (while the others are being graded).
    With ``scheduler`` (``tls://HOST:PORT``, reached with the certificate files the course's
    ``nbgrader_config.py`` names; ``tcp://`` only with ``insecure_cluster``) each submission is a
    task on that dask.distributed cluster (``grader_side.cluster``); ``workers`` is then the
    cluster's business.
    Where student code cannot be isolated (no namespaces or bubblewrap) this raises CourseError
    with the reason, unless ``allow_weak_isolation``: then ``isolation["weak"]`` records it. Weak
    isolation grades ONE submission per throwaway environment (the machine's other files, another
    copy of the course among them, are not hidden from it): with more, this raises CourseError.
    """
    course = Course.of(repo)
    if student:
        assignment, submissions, name = course.student_folder(submissions, assignment)
        only, workers = [name], workers or 1
    assignment = assignment or course.set_of(submissions)
    _known(assignment, course)
    early = starting(timeout, (course.root, submissions), allow_weak_isolation) \
        if student and not scheduler else nullcontext()
    with early:   # one student: the sandbox starts beside loading the set
        if not scheduler:
            analysis.warm()   # the program reader starts beside loading the set and the sandbox
        a = Assignment(assignment, course.root)
        for notebook in a.notebooks:
            a.cells(notebook)   # fail early, with advice, when the source notebooks are not built
        students = course.submissions(submissions, None if student else assignment)
        if only is not None:
            missing = sorted(set(only) - set(students))
            if missing:
                raise CourseError(f"no submission of {missing[0]} in {submissions}")
            students = {sid: students[sid] for sid in only}
        if allow_weak_isolation and len(students) > 1:
            raise CourseError(weak_isolation_refused(len(students)))
        if scheduler:
            from autograder.grader_side import cluster

            security = cluster.security(scheduler, course.root, insecure_cluster)
        started = time.monotonic()
        # The recorder is a process of its own: it writes each student while the others are graded.
        with RecorderProcess(course.root, assignment) if gradebook else nullcontext() as recorder:
            record = None
            if recorder:
                record = lambda sid, result: recorder.record_safely(sid, result, students[sid])  # noqa: E731
            if scheduler:
                if recorder:
                    recorder.ready()
                doc = cluster.autograde(a, students, scheduler, timeout, PRELOAD, progress, security,
                                        allow_weak_isolation, graded=record)
            else:
                doc = local.grade_students(a, students, workers, timeout, progress, (course.root, submissions),
                                      allow_weak_isolation, ready=recorder.ready if recorder else None,
                                      graded=record)
    doc.seconds = round(time.monotonic() - started, 2)   # recording's tail included
    return doc


def _known(assignment: str, course: Course) -> None:
    """Refuse a set the course does not have before a sandbox starts for it (the reason names the
    sets there)."""
    if assignment not in course.problem_sets():
        Assignment(assignment, course.root).check_loads()


def autograde(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """``grade_class(...)`` (the same arguments) as the results document: the JSON of
    ``results.json``, which ``docs/results.schema.json`` describes."""
    return grade_class(*args, **kwargs).to_dict()


def weak_isolation_refused(count: int) -> str:
    """Why a class is not graded with weak isolation, and what to do instead (one line)."""
    return (f"--allow-weak-isolation grades one submission per throwaway environment, not {count}: student code "
            "there sees the machine's files, another copy of the course among them; grade the class where "
            "namespaces are allowed (without the flag), in the course image run with its seccomp profile "
            "(docs/seccomp-course.json), or one container per submission, as Gradescope does")


def _recorder(course: Course, assignment: str):
    from autograder.nbgrader.recorder import Recorder

    return Recorder(course, assignment)


# ---- one submission ------------------------------------------------------------------------

def grade(notebooks: list[Path], assignment: str, timeout: float = 60.0,
          course: Course | Path | None = None) -> dict:
    """Grade one submission given as its notebook files (named concepts.ipynb / build.ipynb), by the
    set of ``course`` (default: the course folder this runs in)."""
    return grade_submission(notebooks, assignment, timeout, course).students["student"].to_dict()


def grade_one(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """``grade``, returning the whole results document of this class of one: the student is
    ``students["student"]``, and ``isolation`` says what their code ran under
    (``grade_submission(...)``, the same arguments, as JSON)."""
    return grade_submission(*args, **kwargs).to_dict()


def grade_submission(notebooks: list[Path], assignment: str, timeout: float = 60.0,
                     course: Course | Path | None = None) -> Results:
    """The results of a class of one: the submission given as its notebook files is the student
    ``"student"``, and ``isolation`` says what their code ran under."""
    import tempfile

    course = Course.of(course)   # a usage error before the notebooks are looked at
    missing = [str(p) for p in notebooks if not Path(p).is_file()]
    if missing:
        raise CourseError(f"no such notebook: {', '.join(missing)}")
    _known(assignment, course)
    with tempfile.TemporaryDirectory() as tmp:
        student = Path(tmp) / "submission" / "student" / assignment   # <student>/<set>/, whatever the sets' names
        student.mkdir(parents=True)
        for path in notebooks:
            shutil.copy(path, student / Path(path).name)
        return grade_class(assignment, student, timeout=timeout, repo=course, student=True)   # starts its sandbox early


def gradescope_package(assignment: str, out: Path, course: Course | Path | None = None) -> Path:
    """Gradescope's autograder package for ``assignment`` of ``course`` (default: the course folder
    this runs in), written to ``out`` (``autograder.tooling.gradescope``)."""
    from autograder.tooling import gradescope as package

    return package.build(assignment, out, course)


# ---- cross-check with nbgrader -------------------------------------------------------------

def compare_nbgrader(results: Results | dict[str, Any], gradebook: Path) -> dict[str, list[str]]:
    """Per student, every check where nbgrader's autograde score differs from ours.

    Records the differences in each student's ``disagreements`` (of the ``Results``, or of the
    results document ``autograde`` returns) and returns them.
    """
    from nbgrader.api import Gradebook, MissingEntry

    if not gradebook.is_file():
        raise CourseError(f"no nbgrader gradebook at {gradebook}: run `nbgrader autograde` first, or pass its path")
    found: dict[str, list[str]] = {}
    typed = as_results(results)
    with Gradebook(f"sqlite:///{gradebook.resolve()}") as gb:
        for sid, r in typed.students.items():
            try:
                submission = gb.find_submission(typed.assignment, sid)
            except MissingEntry:
                continue
            ours = {row.id: row.score for _, row in r.checks()}
            theirs = {g.name: g.auto_score for nb in submission.notebooks for g in nb.grades
                      if g.auto_score is not None}
            lines = [f"{cid}: nbgrader {theirs[cid]:g}, course autograde {ours[cid]:g}"
                     for cid in ours if cid in theirs and abs(theirs[cid] - ours[cid]) > 1e-9]
            r.disagreements = lines
            if lines:
                found[sid] = lines
    if isinstance(results, dict):
        refresh(results, typed)
    return found


# Releasing and nbgrader's commands, from ``tooling.release``: loaded on first use, since it imports
# nbgrader and nbconvert (most of a second), which grading one submission never needs.
_RELEASE = ("make_course", "nbgrader", "release")


def __getattr__(name: str):
    if name in _RELEASE:
        from autograder.tooling import release as _release

        return getattr(_release, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
