"""nbgrader's ``DeduplicateIds``, leaving a repeated cell ordinary."""
from __future__ import annotations

from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import DeduplicateIds


class ForgetRepeatedCells(DeduplicateIds):
    """nbgrader's ``DeduplicateIds`` (of several cells with one id, the last is the course's), which
    leaves each earlier copy an ordinary cell: nbgrader's own leaves it an empty nbgrader metadata,
    which its metadata check then reads as an old format and stops the notebook (a check cell pasted
    twice scored the notebook 0)."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict[str, Any],
                        cell_index: int) -> tuple[NotebookNode, dict[str, Any]]:
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if cell.get("metadata", {}).get("nbgrader") == {}:
            del cell.metadata["nbgrader"]
        return cell, resources
