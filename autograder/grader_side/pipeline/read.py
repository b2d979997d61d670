"""Step 2: read each notebook as plain data.

A submission file may be anything: empty, truncated, not JSON, JSON of the wrong shape, huge,
a link, a device, or more cells, outputs or markdown than the caps allow. Each of those becomes a
one-line reason for that notebook; nothing here raises. The file is read by the one reader
(``grader_side.submitted``): opened without following links, a regular file, its size checked
before a byte of it is read, and its structure checked against the caps every reader applies
(``submitted.structure``: the gradebook's recorder and ``nbgrader autograde`` refuse the same
notebooks with the same reason).
"""
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from autograder.grader_side import submitted
from autograder.grader_side.pipeline.submission import Cell, Env, Submission
from autograder.grader_side.submitted import MAX_BYTES, MAX_VALUES

__all__ = ["MAX_BYTES", "MAX_VALUES", "NotANotebook", "as_graded", "parse", "read_file", "run"]


class NotANotebook(ValueError):
    pass


def run(sub: Submission, env: Env) -> None:
    for notebook, parts in sub.paths.items():
        try:
            sub.cells[notebook] = parse(read_file(sub.folder, parts))
        except (NotANotebook, OSError) as exc:
            sub.problems[notebook] = f"{notebook}.ipynb could not be read: {exc}"


def read_file(folder: Path, parts: tuple[str, ...] | list[str], limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``folder/parts...`` by the one reader's rule (``grader_side.submitted``);
    NotANotebook when it is not a regular file of at most ``limit`` bytes reached without a link."""
    try:
        return submitted.read(folder, tuple(parts), limit)
    except submitted.Refused as exc:
        raise NotANotebook(str(exc)) from None


def parse(data: bytes) -> list[Cell]:
    """The cells of a notebook file's bytes, or NotANotebook saying why not."""
    if len(data) > MAX_BYTES:
        raise NotANotebook(f"it is {len(data) // 2**20} MiB, over the {MAX_BYTES // 2**20} MiB limit")
    if not data.strip():
        raise NotANotebook("the file is empty")
    try:
        submitted.count_values(data)
    except submitted.Refused as exc:
        raise NotANotebook(str(exc)) from None
    try:
        nb = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise NotANotebook("the file is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise NotANotebook(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise NotANotebook("the JSON nests too deeply") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotANotebook("no list of cells in it (is this a Jupyter notebook?)")
    try:
        submitted.structure(nb)
    except submitted.Refused as exc:
        raise NotANotebook(str(exc)) from None
    return [_cell(c, i) for i, c in enumerate(nb["cells"])]


def _cell(raw: Any, index: int) -> Cell:
    if not isinstance(raw, dict) or not isinstance(raw.get("cell_type"), str):
        raise NotANotebook(f"cell {index} is not a notebook cell")
    source = raw.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise NotANotebook(f"cell {index} has no text source")
    meta = raw.get("metadata")
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    nbg = nbg if isinstance(nbg, dict) else {}
    grade_id = nbg.get("grade_id")
    grade_id = grade_id if isinstance(grade_id, str) else ""
    return Cell(raw["cell_type"], source, grade_id, nbg.get("grade") is True, nbg.get("locked") is True,
                nbg.get("points"), nbg.get("solution") is True)


def as_graded(cells: list[Cell], course_cells: list[Any]) -> list[Cell]:
    """The cells of a submitted notebook as both graders grade them, whatever their nbgrader
    metadata claims, by nbgrader's own rules (``ForgetUnknownCells``, ``DeduplicateIds``,
    ``OverwriteCells``): of the cells naming one of the course's cells (``course_cells``, the
    released ones), the last is that cell, with the course's cell type, kind and points; every
    other cell (a made-up id, an earlier copy) is an ordinary cell of the student's, its claims
    dropped. So a student's answer whose cell was turned into markdown, or given a check's id
    ahead of the check's own cell, still runs, and a C8 answer turned into code does not."""
    course = {c.grade_id: c for c in course_cells if c.grade_id}
    last = {cell.grade_id: i for i, cell in enumerate(cells) if cell.grade_id in course}
    graded = []
    for i, cell in enumerate(cells):
        if last.get(cell.grade_id) == i:
            mine = course[cell.grade_id]
            graded.append(replace(cell, cell_type=mine.cell_type, grade=mine.grade, locked=mine.locked,
                                  points=mine.points, solution=mine.solution))
        else:
            graded.append(Cell(cell.cell_type, cell.source))
    return graded
