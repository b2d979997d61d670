"""The student's HTML escaped in the autograded notebook (formgrader, feedback)."""
from __future__ import annotations

from typing import Any

import bleach
from nbconvert.preprocessors import sanitize as nbconvert_sanitize
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from traitlets import Bool

from autograder.grader_side import markup


class SanitizeStudentHTML(SanitizeHTML):
    """After ``OverwriteCells``: HTML a student wrote (a markdown answer, a raw cell, a rich output)
    is escaped in the autograded notebook, which formgrader shows in the TA's Jupyter session and
    ``generate_feedback`` turns into pages, and a markdown link, image or autolink whose target is
    not http, https, mailto or relative is shown as text (``markup.safe_markdown``); the course's own
    locked cells keep their markup."""

    enabled = Bool(True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        self.budget = markup.Budget()    # per notebook: see markup.MAX_WORK
        self.cleaner = None
        return super().preprocess(nb, resources)

    def sanitize_html_tags(self, html_str: str) -> str:
        """nbconvert's, through one bleach ``Cleaner`` per notebook: ``bleach.clean``, which nbconvert
        calls, builds a new one (its HTML parser included) for every cell, a tenth of a millisecond
        each, seconds of the gradebook recorder's time for a notebook of thousands of cells."""
        cleaner = getattr(self, "cleaner", None)
        if cleaner is None:
            cleaner = self.cleaner = bleach.Cleaner(**self._bleach_options())
        return cleaner.clean(html_str)

    def _bleach_options(self) -> dict:
        """What nbconvert's ``sanitize_html_tags`` passes to ``bleach.clean``."""
        options = {"tags": self.tags, "attributes": self.attributes, "strip": self.strip,
                   "strip_comments": self.strip_comments}
        if nbconvert_sanitize._USE_BLEACH_CSS_SANITIZER:
            options["css_sanitizer"] = nbconvert_sanitize.CSSSanitizer(allowed_css_properties=self.styles)
        elif nbconvert_sanitize._USE_BLEACH_STYLES:
            options["styles"] = self.styles
        return options

    def preprocess_cell(self, cell: NotebookNode, resources: dict[str, Any],
                        index: int) -> tuple[NotebookNode, dict[str, Any]]:
        if utils.is_locked(cell):
            return cell, resources
        cell, resources = super().preprocess_cell(cell, resources, index)
        budget = getattr(self, "budget", None) or markup.Budget()
        if cell.cell_type == "markdown":
            cell.source = markup.safe_markdown(cell.source, budget)
        elif cell.cell_type == "code":
            for output in cell.outputs:
                data = output.get("data", {})
                if isinstance(data.get("text/markdown"), str):
                    data["text/markdown"] = markup.safe_markdown(data["text/markdown"], budget)
        return cell, resources
