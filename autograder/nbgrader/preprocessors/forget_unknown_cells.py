"""The first sanitizing step: a graded cell a submission made up is forgotten, a known one gets the
course's metadata back."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.nbgrader.lent_gradebook import one_transaction


class ForgetUnknownCells(NbGraderPreprocessor):
    """First of all: a cell whose nbgrader metadata names no cell of the course's notebook (one a
    submission made up, with points of its own), or is not nbgrader metadata at all (null, a list,
    an id that is not text), becomes an ordinary cell, so no step of nbgrader's grades it, counts
    it or trips on it; a cell that names one of the course's gets that cell's nbgrader metadata
    back whole (``course_metadata``: graded or not, its points, solution, task, read-only, the
    schema version, the type it was released as, the checksum), whatever the submission's
    metadata claims. nbgrader's own steps stopped the whole notebook, recorded as 0, on a solution
    cell turned into a graded one worth 1000 points, a schema version edited or deleted, a key
    nbgrader's schema does not know, or a cell's metadata that is not a mapping."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        info = resources["nbgrader"]
        with one_transaction(resources), Gradebook(info["db_url"]) as gb:
            source = gb.source.cells(info["notebook"])
        for cell in nb.cells:
            if not isinstance(cell.get("metadata"), dict):
                cell["metadata"] = NotebookNode()
            if "nbgrader" not in cell.metadata:
                continue
            meta = cell.metadata["nbgrader"]
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in source:
                del cell.metadata["nbgrader"]
                continue
            cell.metadata["nbgrader"] = course_metadata(source[grade_id])
        return nb, resources


def course_metadata(cell: SimpleNamespace) -> NotebookNode:
    """The nbgrader metadata the release gives the course's cell ``cell`` (a gradebook source cell,
    as ``lent_gradebook.Source`` reads it), in nbgrader's current schema."""
    meta = NotebookNode(grade_id=cell.name, grade=hasattr(cell, "max_score"), solution=bool(cell.solution),
                        task=bool(cell.task), locked=bool(cell.locked), schema_version=3)
    if cell.cell_type in ("code", "markdown", "raw"):
        meta["cell_type"] = cell.cell_type
    if isinstance(cell.checksum, str) and len(cell.checksum) == 32:
        meta["checksum"] = cell.checksum
    if hasattr(cell, "max_score"):
        meta["points"] = cell.max_score
    elif cell.task:
        meta["points"] = cell.task_points
    return meta
