"""One problem set as the grader sees it: where its files are, what its trusted source notebooks
say, and its contract, checks and catalogue (``problem_set.py``).

The grader never takes a submission's word for which cells are tests, how many points they
carry, or what the given code is: it reads that here, from ``solutions/<assignment>/``. It names
no problem set of its own: every command is given the assignment (a folder under ``solutions/``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.course import CourseError, problem_sets
from autograder.grader_side import problem_set

if TYPE_CHECKING:
    import nbformat

    from autograder.student_side.checks import Check

# The kit's checkout (autograder/grader_side/assignment.py): where the kit's own files are read from
# (the runtime shipped into releases and Gradescope's package). Never a course folder by default:
# every course folder is named where it is used (``Assignment.root``, ``course.Course``).
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SourceCell:
    grade_id: str
    cell_type: str
    source: str
    grade: bool
    locked: bool
    solution: bool
    points: float | None
    skip_when_grading: bool = False


@dataclass
class Assignment:
    """The source (nbgrader's solutions/) and release (assignments/) of one problem set of the
    course folder ``root``."""
    name: str
    root: Path
    only: tuple[str, ...] = ()      # grade these of its notebooks only (nbgrader grades one at a time)
    _cells: dict = field(default_factory=dict, repr=False)

    @property
    def source_dir(self) -> Path:
        return self.root / "solutions" / self.name

    @cached_property
    def set(self) -> problem_set.ProblemSet:
        """The set's contract, checks and catalogue, loaded from ``source_dir``."""
        if not self.source_dir.is_dir():
            sets = ", ".join(problem_sets(self.root)) or "none"
            raise CourseError(f"no problem set {self.name!r} in {self.root / 'solutions'} (sets there: {sets})")
        try:
            return problem_set.load(self.source_dir)
        except problem_set.ProblemSetError as exc:
            raise CourseError(str(exc)) from None

    def check_loads(self) -> None:
        """Raise ``CourseError`` (saying what to do) unless the set exists and holds to its contract."""
        _ = self.set   # loading it is the check

    @property
    def notebooks(self) -> tuple[str, ...]:
        return self.only or self.set.notebooks

    @property
    def questions(self) -> dict:
        return self.set.questions

    @property
    def checks(self) -> list:
        return self.set.checks

    def check(self, check_id: str) -> Check:
        try:
            return self.set.by_id[check_id]
        except KeyError:
            raise KeyError(f"no check named {check_id!r} in {self.name}; see `course checks {self.name}`") from None

    @property
    def release_dir(self) -> Path:
        return self.root / "assignments" / self.name

    def cells(self, notebook: str, released: bool = False) -> list[SourceCell]:
        """The source (or, with ``released``, the release) notebook's cells, in order (read once)."""
        folder = self.release_dir if released else self.source_dir
        key = (notebook, released)
        if key not in self._cells:
            path = folder / f"{notebook}.ipynb"
            if not path.exists():
                raise CourseError(f"{path} is missing: run `course release {self.name}` first")
            nb = json.loads(path.read_text())
            self._cells[key] = [_source_cell(c) for c in nb["cells"]]
        return self._cells[key]

    def tests(self, notebook: str) -> dict[str, SourceCell]:
        """Graded code cells (the checks) by grade_id, as the students received them."""
        return {c.grade_id: c for c in self.cells(notebook, released=True) if c.grade and c.cell_type == "code"}

    def given(self, notebook: str) -> dict[str, SourceCell]:
        """Read-only code cells that are not tests (imports, given helpers), by grade_id."""
        return {c.grade_id: c for c in self.cells(notebook, released=True)
                if c.locked and not c.grade and c.cell_type == "code"}

    @cached_property
    def max_score(self) -> float:
        return float(sum(q.points for q in self.questions.values() if not q.manual))


def _source_cell(cell: dict) -> SourceCell:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    return SourceCell(meta.get("grade_id", ""), cell["cell_type"], source, bool(meta.get("grade")),
                      bool(meta.get("locked")), bool(meta.get("solution")), meta.get("points"),
                      bool(cell.get("metadata", {}).get("course", {}).get("skip_when_grading")))


# ---- notebooks filled from the source ---------------------------------------------------------

MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
REGION = re.compile(r"([ \t]*)### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?", re.S | re.M)


def solved(source: str) -> str:
    """A solution cell as the student would leave it: the solution kept, the markers gone."""
    return MARKER.sub("", source)


def replace_region(source: str, body: str) -> str:
    """The solution cell ``source`` with its single solution region replaced by ``body``."""
    regions = REGION.findall(source)
    if len(regions) != 1:
        raise ValueError(f"expected one solution region, found {len(regions)}: give the whole cell instead")
    indent = regions[0][0]
    body = "".join(indent + line if line.strip() else line for line in body.strip("\n").splitlines(True)) + "\n"
    return REGION.sub(lambda m: body, source, count=1)


def notebook(a: Assignment, name: str, edits: dict[str, str] | None = None,
             extra_cells: Sequence[str] = (), untouched: bool = False) -> nbformat.NotebookNode:
    """The release notebook ``name`` as a student would submit it.

    ``edits`` maps a solution cell's grade_id to the code the student wrote there (default: the
    source's solution); ``extra_cells`` are appended as scratch cells; ``untouched`` keeps the stubs.
    """
    import nbformat  # here: grading never fills a notebook (importing nbformat, and jsonschema, takes 0.2 s)

    edits = edits or {}
    release = nbformat.read(a.release_dir / f"{name}.ipynb", as_version=4)
    source = {c.grade_id: c for c in a.cells(name)}
    for cell in release.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        if untouched or not meta.get("solution"):
            continue
        cell.source = edits.get(gid, solved(source[gid].source))
    for code in extra_cells:
        release.cells.append(nbformat.v4.new_code_cell(code))
    return release
