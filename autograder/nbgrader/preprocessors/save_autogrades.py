"""nbgrader's ``SaveAutoGrades``, in one transaction per notebook."""
from __future__ import annotations

from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader import preprocessors as nbgrader_preprocessors

from autograder.nbgrader.lent_gradebook import one_transaction


class SaveAutoGrades(nbgrader_preprocessors.SaveAutoGrades):
    """nbgrader's, writing the notebook's grades in one transaction, not one per cell (``lent_gradebook``)."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        with one_transaction(resources):
            return super().preprocess(nb, resources)
