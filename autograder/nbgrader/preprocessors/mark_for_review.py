"""After ``SaveAutoGrades``: the checks a TA must score or look at, marked for formgrader."""
from __future__ import annotations

from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor


class MarkForReview(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: mark each check the grader left to a TA (``review``: its points wait)
    or wants a TA to look at (``look``: its score stands) as ``needs_manual_grade``."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        course = resources.get("course", {})
        marked = [*(course.get("review") or {}), *(course.get("look") or [])]
        if marked:
            info = resources["nbgrader"]
            with Gradebook(info["db_url"]) as gb:
                for grade_id in marked:
                    grade = gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"])
                    grade.needs_manual_grade = True
                gb.db.commit()
        return nb, resources
