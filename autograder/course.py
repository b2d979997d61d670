"""The course folder as one object: the folder ``course`` and nbgrader work in.

A course folder holds its ``nbgrader_config.py``, its problem sets (``solutions/<set>/``), their
releases (``assignments/<set>/``), its schedule (``course/schedule.toml``) and nbgrader's folders
for student work (``submitted/``, ``autograded/``, ``feedback/``), named by its configuration.
Every command reads all of these from the one course folder it runs in (:meth:`Course.here`),
never from the kit's checkout: the kit's own ``REPO`` is only where its runtime is shipped from.

nbgrader's view of the folder (its configuration, as ``nbgrader`` itself reads it) is loaded the
first time it is needed: finding the folder and its schedule imports nothing of nbgrader.
"""
from __future__ import annotations

import os
import sys
from functools import cached_property
from pathlib import Path


class CourseError(RuntimeError):
    """A usage or set-up error (not a submission's fault); the message says what to do."""


class Course:
    """A course folder (``root``), configured by its ``nbgrader_config.py`` as nbgrader reads it."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        if not (self.root / "nbgrader_config.py").is_file():
            raise CourseError(f"{self.root} is not a course folder (no nbgrader_config.py): run `course` in the "
                              "course folder")

    @classmethod
    def here(cls, folder: Path | None = None) -> Course:
        """The course folder a command works on: like nbgrader, the one it runs in (``folder``, default
        the current directory)."""
        return cls(Path(folder or os.getcwd()))

    @classmethod
    def of(cls, course: Course | Path | str | None = None) -> Course:
        """The course folder an API call is given: ``course`` itself, the folder at that path, or
        (None) the one the command runs in (:meth:`here`). Never the kit's checkout unless asked."""
        if isinstance(course, Course):
            return course
        return cls.here(None if course is None else Path(course))

    # ---- what the folder holds ----------------------------------------------------------------

    def problem_sets(self) -> list[str]:
        """The problem sets: the folders of ``solutions/`` with a ``grading/`` package."""
        return problem_sets(self.root)

    def set_of(self, folder: Path) -> str:
        """The set a folder of student folders holds: the course's only set, or the one set its
        ``<student>/<set>/`` folders are named after."""
        sets = self.problem_sets()
        if len(sets) == 1:
            return sets[0]
        try:
            named = {p.name for student in folder.iterdir() if student.is_dir() for p in student.iterdir()
                     if p.is_dir() and p.name in sets}
        except OSError:
            named = set()
        if len(named) == 1:
            return named.pop()
        raise CourseError(f"give --assignment: the course has {len(sets)} problem sets ({', '.join(sets)})")

    def student_folder(self, folder: Path, assignment: str | None = None) -> tuple[str, Path, str]:
        """One student's folder as ``course pytest --submission`` takes it (``<student>/<set>/`` or
        ``<student>/`` holding the notebooks): its set (``assignment``, else the set the folder is
        named after, else :meth:`set_of`), the folder of student folders it is in, and the student."""
        named = folder.name if folder.name in self.problem_sets() else None
        assignment = assignment or named or self.set_of(folder.parent)
        one = folder.parent if named == assignment else folder
        if not one.parent.is_dir():
            raise CourseError(f"--submission={folder}: no such folder; give <student>/<assignment>/ or <student>/")
        return assignment, one.parent, one.name

    def submissions(self, folder: Path, assignment: str | None = None) -> dict[str, Path]:
        """Student id -> folder for the student folders of ``folder`` (:func:`student_folders`);
        with ``assignment``, only those holding a submission of it (:func:`of_set`; nbgrader's
        layout when ``folder`` is this course's own submitted/)."""
        found = student_folders(folder)
        if assignment is None:
            return found
        nbgrader_layout = Path(folder).resolve() == self.folder("submitted").resolve()
        return of_set(found, assignment, self.problem_sets(), nbgrader_layout)

    def schedule(self) -> list[dict]:
        """The weeks of ``course/schedule.toml`` that release a problem set, in week order."""
        from autograder.compat import tomllib

        path = self.root / "course" / "schedule.toml"
        try:
            weeks = tomllib.loads(path.read_text()).get("weeks", [])
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CourseError(f"cannot read the schedule {path}: {exc}") from None
        return sorted(weeks, key=lambda e: e.get("week", 0))

    def scheduled(self, week: int) -> str:
        """The problem set the schedule releases in ``week``."""
        weeks = self.schedule()
        for entry in weeks:
            if entry.get("week") == week:
                return entry["assignment"]
        listed = ", ".join(str(e.get("week")) for e in weeks) or "none"
        raise CourseError(f"week {week} releases no problem set (weeks in schedule.toml: {listed})")

    # ---- nbgrader's view of it ----------------------------------------------------------------

    @cached_property
    def nbgrader(self):
        """nbgrader's application configured by this folder's ``nbgrader_config.py`` (read in the
        folder, as nbgrader reads it)."""
        from nbgrader.apps.baseapp import NbGrader

        alembic_on_path()
        cwd = os.getcwd()
        try:
            os.chdir(self.root)
            app = NbGrader()
            app.initialize([], root=str(self.root))
        finally:
            os.chdir(cwd)
        return app

    @property
    def config(self):
        return self.nbgrader.config

    @property
    def coursedir(self):
        return self.nbgrader.coursedir

    @property
    def db_url(self) -> str:
        """The gradebook's URL, a relative sqlite path taken from the course folder."""
        url, prefix = self.coursedir.db_url, "sqlite:///"
        if url.startswith(prefix) and not os.path.isabs(url[len(prefix):]):
            return prefix + str(self.root / url[len(prefix):])
        return url

    def folder(self, kind: str, student: str = ".", assignment: str = ".") -> Path:
        """nbgrader's ``<kind>_directory`` (submitted, autograded...) for a student and assignment."""
        return Path(self.coursedir.format_path(getattr(self.coursedir, f"{kind}_directory"), student, assignment))



def alembic_on_path() -> None:
    """nbgrader stamps a new gradebook by running the ``alembic`` command: the one next to this Python."""
    here = os.path.dirname(sys.executable)
    if here not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([here, os.environ.get("PATH", "")])


def problem_sets(root: Path) -> list[str]:
    """The problem sets of the folder ``root`` (a course folder or not): the folders of its
    ``solutions/`` with a ``grading/`` package."""
    folder = Path(root) / "solutions"
    return sorted(p.name for p in folder.iterdir() if (p / "grading" / "__init__.py").is_file()) \
        if folder.is_dir() else []


def student_folders(folder: Path) -> dict[str, Path]:
    """Student id -> folder, for every sub-folder of ``folder`` (hidden ones left out). An entry that
    is a link to a folder is listed too, so that student is graded 0 with the reason, not left out
    (nothing below it is read here: ``grader_side/submitted.py`` reads a submission's files)."""
    if not Path(folder).is_dir():
        raise CourseError(f"no submissions folder {folder}: pass --submissions DIR "
                          "(holding <student>/<notebook>.ipynb or <student>/<assignment>/<notebook>.ipynb)")
    found = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False) or (entry.is_symlink() and entry.is_dir()):
            found[entry.name] = Path(folder) / entry.name
    return found


def of_set(found: dict[str, Path], assignment: str, sets: list[str], nbgrader_layout: bool) -> dict[str, Path]:
    """The student folders of ``found`` that hold a submission of ``assignment``. In nbgrader's
    layout (a course's submitted/), those with an ``<assignment>/`` folder, as nbgrader's autograde
    takes them. Elsewhere every one but a folder that holds another of the course's ``sets`` and
    neither ``<assignment>/`` nor a notebook of its own: that student handed in another set, not
    this one (an empty folder, or notebooks under other names, is still graded 0 with the reason)."""
    def holds(folder: Path) -> bool:
        try:
            names = {e.name for e in os.scandir(folder)}
        except OSError:
            return True                     # unreadable: graded, and the reason says why
        if assignment in names:             # a link there too: graded 0 with the reason, not left out
            return True
        if nbgrader_layout:
            return False
        return any(n.endswith(".ipynb") for n in names) or not names & set(sets)
    return {sid: folder for sid, folder in found.items() if holds(folder)}
