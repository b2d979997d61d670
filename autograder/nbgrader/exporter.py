"""What ``nbgrader autograde`` reads of a submission: the notebook, by the one reader's rule."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
from nbconvert.exporters import NotebookExporter
from nbformat.notebooknode import NotebookNode
from nbgrader.coursedir import CourseDirectory

from autograder.escape import for_terminal
from autograder.grader_side import submitted
from autograder.nbgrader.context import assignment_of, student_folder
from autograder.nbgrader.files import keep_own_files

if TYPE_CHECKING:
    from autograder.grader_side.assignment import Assignment


class SubmittedNotebookExporter(NotebookExporter):
    """``nbgrader autograde``'s exporter (``Autograde.exporter_class``). In its sanitizing pass, where
    nbgrader reads the submitted file, the notebook is read by the one reader's rule
    (``grader_side.submitted``: no link at any depth below submitted/, a regular file of at most
    20 MiB, within the caps on cells, outputs and markdown that ``course autograde`` applies too);
    one it refuses becomes the course's released notebook with the reason on top, so a linked
    classmate's notebook never reaches this student's autograded/ copy or feedback, and a notebook
    of 150,000 cells never reaches nbgrader's preprocessors. And what
    nbgrader itself took through a link before that (the other files of the assignment folder it
    copies into autograded/, the submission time in timestamp.txt) is taken back."""

    def from_filename(self, filename: str, resources: dict[str, Any] | None = None, **kw: Any
                      ) -> tuple[NotebookNode, dict[str, Any]]:
        converter = self.parent
        info = (resources or {}).get("nbgrader")
        coursedir = getattr(converter, "coursedir", None)
        if resources is None or not (info and getattr(converter, "_sanitizing", False)
                                     and isinstance(coursedir, CourseDirectory)):
            return super().from_filename(filename, resources, **kw)   # nbgrader's own autograded/ copy
        student, name, notebook = info["student"], info["assignment"], info["notebook"]
        folder = student_folder(coursedir, student)
        keep_own_files(coursedir, student, name, info["db_url"])
        try:
            data = submitted.notebook(folder, name, notebook, nbgrader_only=True)
        except submitted.Refused as exc:
            self.log.warning("%s: %s: graded 0, with the course's own cells in autograded/", for_terminal(student),
                             for_terminal(exc))
            nb = placeholder(assignment_of(name, Path(coursedir.root)), notebook, str(exc))
        else:
            nb = read_submitted(data)
        resources.setdefault("metadata", {}).update(name=notebook, path=os.path.dirname(filename))
        return self.from_notebook_node(nb, resources, **kw)


def read_submitted(data: bytes) -> nbformat.NotebookNode:
    """A submitted notebook's bytes as nbformat 4, for nbgrader's steps (both graders read it here).
    One with version-4 cells under another version number (an edited header) is read as the
    version-4 notebook it is, as ``course autograde`` reads it (nbformat would try to upgrade it
    from version 3 and stop); a cell whose metadata is not a mapping gets empty metadata (nbformat
    stops on it; ``course autograde`` grades the cell, its metadata deciding nothing)."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raw = None
    if not (isinstance(raw, dict) and isinstance(raw.get("cells"), list)):
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    odd = [cell for cell in raw["cells"] if isinstance(cell, dict) and not isinstance(cell.get("metadata", {}), dict)]
    for cell in odd:
        cell["metadata"] = {}
    if raw.get("nbformat") != 4:
        ids = all(isinstance(cell, dict) and "id" in cell for cell in raw["cells"])
        raw.update(nbformat=4, nbformat_minor=5 if ids else 4)     # cell ids came with 4.5
    elif not odd:
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    return nbformat.reads(json.dumps(raw), as_version=4)


def placeholder(a: Assignment, notebook: str, reason: str) -> NotebookNode:
    """What autograded/ gets for a submitted notebook the grader refused to read: the course's
    released notebook (the cells the student was given), the reason in a cell on top."""
    nb = nbformat.read(a.release_dir / f"{notebook}.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"**Not graded:** {_markdown_text(reason)}"))
    return nb


def _markdown_text(text: str) -> str:
    """``text`` shown as itself in markdown: control characters replaced, markup characters escaped."""
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]", "?", text)
    return re.sub(r"([\\`*_{}\[\]()#+\-!<>|~&])", r"\\\1", text)
