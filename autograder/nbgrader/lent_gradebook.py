"""One gradebook session lent to nbgrader's preprocessors.

nbgrader's autograde steps each open the gradebook themselves, once per notebook, look up every
cell's rows one query at a time, and commit after every cell. Lent a session (:func:`lent`), they
open it instead, its commits wait for the lender's, and their per-cell lookups are answered from
rows read once: the same rows written, at a fraction of the cost. ``course autograde`` lends its
batch's session while it records a student (one transaction per student); in ``nbgrader
autograde``, the course's ``OverwriteCells`` and ``SaveAutoGrades`` lend one per step
(:func:`one_transaction`).
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, TypeVar

from nbgrader.api import BaseCell, Comment, Grade, Gradebook, MissingEntry
from sqlalchemy.orm import Session

# A row the gradebook keeps per cell of a student's notebook: a grade or a comment.
_Row = TypeVar("_Row", Grade, Comment)


class _Waiting:
    """A gradebook session whose ``commit`` does nothing: the changes are committed together by the
    lender (the session flushes them before every query, so each query sees them)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def commit(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class Source:
    """The assignment's cells as the gradebook holds them, read once: per notebook (or ``only`` the
    one), each cell's name, type, locked flag, checksum, source, points (``max_score`` of a graded
    cell, ``task_points`` of a task) and whether it is a solution cell, in the notebook's order."""

    def __init__(self, gb: Gradebook, assignment: str, only: str | None = None) -> None:
        self.notebooks: dict[str, dict[str, SimpleNamespace]] = {}
        for notebook in gb.find_assignment(assignment).notebooks:
            if only and notebook.name != only:
                continue
            cells = {c.name: SimpleNamespace(name=c.name, cell_type=c.cell_type, locked=c.locked, checksum=c.checksum,
                                             source=c.source, solution=False, task=False)
                     for c in notebook.source_cells}
            for c in notebook.grade_cells:
                cells[c.name].max_score = c.max_score
            for c in notebook.solution_cells:
                cells[c.name].solution = True
            for c in notebook.task_cells:
                cells[c.name].task, cells[c.name].task_points = True, c.max_score
            self.notebooks[notebook.name] = cells

    def cells(self, notebook: str) -> dict[str, SimpleNamespace]:
        """Every cell of ``notebook`` by name, in the notebook's order."""
        if notebook not in self.notebooks:
            raise MissingEntry(f"no notebook {notebook}")
        return self.notebooks[notebook]

    def cell(self, name: str, notebook: str, points: bool = False) -> SimpleNamespace:
        found = self.notebooks.get(notebook, {}).get(name)
        if found is None or (points and not hasattr(found, "max_score")):
            raise MissingEntry(f"no cell {name} in notebook {notebook}")
        return found


class LentGradebook:
    """A gradebook as nbgrader's preprocessors open it (``with Gradebook(db_url) as gb``): one
    session, not closed at the end of the ``with``; the lookups they make for every cell answered
    from rows read once (the assignment's cells, the student's grades and comments per notebook);
    the rest is the gradebook's own."""

    def __init__(self, gb: Gradebook, source: Source) -> None:
        self._gb, self.source, self.db = gb, source, _Waiting(gb.db)
        self._rows: dict[tuple[type, str, str, str], dict[str, Any]] = {}

    def __enter__(self) -> LentGradebook:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def close(self) -> None:
        return None

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> SimpleNamespace:
        return self.source.cell(name, notebook)

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> SimpleNamespace:
        return self.source.cell(name, notebook, points=True)

    def find_grade(self, name: str, notebook: str, assignment: str, student: str) -> Grade:
        return self._row(Grade, name, notebook, assignment, student)

    def find_comment(self, name: str, notebook: str, assignment: str, student: str) -> Comment:
        return self._row(Comment, name, notebook, assignment, student)

    def _row(self, model: type[_Row], name: str, notebook: str, assignment: str, student: str) -> _Row:
        rows = self._rows_of(model, notebook, assignment, student)
        if name not in rows:
            raise MissingEntry(f"no {model.__name__.lower()} {name} in {notebook} of {student}")
        return rows[name]

    def _rows_of(self, model: type[_Row], notebook: str, assignment: str, student: str) -> dict[str, _Row]:
        key = (model, notebook, assignment, student)
        if key not in self._rows:
            submitted = self._gb.find_submission_notebook(notebook, assignment, student)
            self._rows[key] = dict((cell, row) for row, cell in self._gb.db.query(model, BaseCell.name).join(
                BaseCell, BaseCell.id == model.cell_id).filter(model.notebook_id == submitted.id))
        return self._rows[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gb, name)


# The modules whose preprocessors open the gradebook themselves (by this name), ours included.
_OPENERS = ("nbgrader.preprocessors.overwritekernelspec", "nbgrader.preprocessors.overwritecells",
            "nbgrader.preprocessors.saveautogrades", "nbgrader.preprocessors.latesubmissions",
            "autograder.nbgrader.files", "autograder.nbgrader.preprocessors.forget_unknown_cells",
            "autograder.nbgrader.preprocessors.mark_for_review")
_lending: list[LentGradebook] = []   # the session lent now, if any (one thread grades per process)


@contextmanager
def lent(gb: Gradebook, source: Source) -> Iterator[LentGradebook]:
    """Until the end of the ``with``, nbgrader's preprocessors open ``gb``'s session (lent, never
    closed, its commits waiting) instead of their own gradebook, and ``gb``'s own methods
    (``update_or_create_submission``...) wait to commit too. Within a lent session this changes
    nothing."""
    if _lending:
        yield _lending[-1]
        return
    loan = LentGradebook(gb, source)
    modules: list[Any] = [importlib.import_module(name) for name in _OPENERS]   # their Gradebook is swapped
    originals = [module.Gradebook for module in modules]
    for module in modules:
        module.Gradebook = lambda *args, **kwargs: loan
    _lending.append(loan)
    session, gb.db = gb.db, loan.db
    try:
        yield loan
    finally:
        gb.db = session
        _lending.pop()
        for module, original in zip(modules, originals, strict=True):
            module.Gradebook = original


@contextmanager
def one_transaction(resources: dict[str, Any]) -> Iterator[None]:
    """For one of nbgrader's own steps on one notebook (``nbgrader autograde``): the gradebook
    opened once and lent for the step, its changes committed together at the end."""
    if _lending:
        yield
        return
    info = resources["nbgrader"]
    with Gradebook(info["db_url"]) as gb:
        try:
            with lent(gb, Source(gb, info["assignment"], only=info["notebook"])):
                yield
            gb.db.commit()
        except BaseException:
            gb.db.rollback()
            raise
