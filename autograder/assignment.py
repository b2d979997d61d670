"""Where the course's files are, and what the trusted source notebooks say.

The grader never takes a submission's word for which cells are tests, how many points they
carry, or what the given code is: it reads that here, from ``solutions/<assignment>/``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from autograder import checks

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENT = "transformer-block"
NOTEBOOKS = ("concepts", "build")


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
    """The source (nbgrader's solutions/) of one problem set."""
    name: str = ASSIGNMENT
    repo: Path = REPO
    notebooks: tuple[str, ...] = NOTEBOOKS
    _cells: dict = field(default_factory=dict, repr=False)

    @property
    def source_dir(self) -> Path:
        return self.repo / "solutions" / self.name

    @property
    def release_dir(self) -> Path:
        return self.repo / "assignments" / self.name

    def cells(self, notebook: str, released: bool = False) -> list[SourceCell]:
        """The source (or, with ``released``, the release) notebook's cells, in order (read once)."""
        folder = self.release_dir if released else self.source_dir
        key = (notebook, released)
        if key not in self._cells:
            path = folder / f"{notebook}.ipynb"
            if not path.exists():
                raise FileNotFoundError(f"{path} is missing: run `course release {self.name}` first")
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
        return float(sum(q.points for q in checks.QUESTIONS.values() if not q.manual))


def _source_cell(cell: dict) -> SourceCell:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    return SourceCell(meta.get("grade_id", ""), cell["cell_type"], source, bool(meta.get("grade")),
                      bool(meta.get("locked")), bool(meta.get("solution")), meta.get("points"),
                      bool(cell.get("metadata", {}).get("course", {}).get("skip_when_grading")))
