"""nbgrader's ``OverwriteCells``: the course's cells put back from the source, read once."""
from __future__ import annotations

import re
from logging import WARNING
from pathlib import Path
from typing import Any

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader import preprocessors as nbgrader_preprocessors

from autograder.nbgrader.context import assignment_of, coursedir_of
from autograder.nbgrader.lent_gradebook import one_transaction


class OverwriteCells(nbgrader_preprocessors.OverwriteCells):
    """nbgrader's, with the notebook's source cells read once, not one query per cell (``lent_gradebook``),
    and without its "checksum has changed" warning for a read-only cell left as it was released (the
    source's checksum counts what the release leaves out: a test cell's hidden tests, C8's rubric):
    the warnings left are about cells a student edited."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        self.as_released = self._as_released(nb, resources["nbgrader"]) if self.log.isEnabledFor(WARNING) else set()
        with one_transaction(resources):
            return super().preprocess(nb, resources)

    def _as_released(self, nb: NotebookNode, info: dict[str, Any]) -> set[str]:
        try:
            assignment = assignment_of(info["assignment"], Path(coursedir_of(self).root))
            cells = assignment.cells(info["notebook"], released=True)
        except Exception:   # it only quiets warnings: never a reason to fail a notebook
            return set()
        released = {c.grade_id: c for c in cells if c.grade_id and c.locked}
        ids = [cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in nb.cells]
        return {gid for gid, cell in zip(ids, nb.cells, strict=True)
                if gid in released and cell.get("source") == released[gid].source}

    def report_change(self, name: str, attr: str, old: object, new: object) -> None:
        if not (attr == "checksum" and name in self.as_released):
            super().report_change(name, attr, old, new)

    def add_missing_task_cells(self, nb: NotebookNode,
                               resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        """nbgrader's, reading each cell's ``grade_id`` with ``get``: ``DeduplicateIds`` leaves a
        repeated cell's nbgrader metadata empty, and nbgrader's own version then stopped the whole
        notebook with a KeyError (a check cell pasted twice scored the notebook 0)."""
        source = self.gradebook.source.cells(self.notebook_id)
        present = {(cell.metadata.get("nbgrader") or {}).get("grade_id") for cell in nb.cells}
        for task in source.values():
            if task.task and task.name not in present:
                nb.cells.append(self.missing_cell_transform(task, task.task_points, is_task=True))
        return nb, resources

    def add_missing_grade_cells(self, nb: NotebookNode,
                                resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        """nbgrader's, putting a deleted graded cell back after the nearest earlier cell of the
        source that the submission still has. (nbgrader's own looks only at graded and solution
        cells, so a deleted answer right after a read-only cell, such as C8's after its TODO box,
        stopped the whole notebook with a KeyError, and it was recorded as 0.)"""
        source = self.gradebook.source.cells(self.notebook_id)
        names = list(source)
        present = {(cell.metadata.get("nbgrader") or {}).get("grade_id"): i for i, cell in enumerate(nb.cells)}
        for graded in [cell for cell in source.values() if hasattr(cell, "max_score")]:
            if graded.name in present:
                continue
            self.log.warning(f"Missing grade cell {graded.name} encountered, adding to notebook")
            k = names.index(graded.name)
            cell = nbformat.from_dict(self.missing_cell_transform(graded, graded.max_score,
                                                                  is_solution=graded.solution))
            cell.id = re.sub(r"[^A-Za-z0-9_-]", "-", f"restored-{graded.name}")[:64]   # nbformat 4.5 wants one
            nb.cells.insert(next((present[n] + 1 for n in reversed(names[:k]) if n in present), 0), cell)
            present = {(c.metadata.get("nbgrader") or {}).get("grade_id"): i for i, c in enumerate(nb.cells)}
        return nb, resources
