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

from autograder.grader_side import submitted
from autograder.grader_side.pipeline.submission import Cell
from autograder.grader_side.submitted import MAX_BYTES, MAX_VALUES

__all__ = ["MAX_BYTES", "MAX_VALUES", "NotANotebook", "parse", "read_file", "run"]


class NotANotebook(ValueError):
    pass


def run(sub, env):
    for notebook, parts in sub.paths.items():
        try:
            sub.cells[notebook] = parse(read_file(sub.folder, parts))
        except (NotANotebook, OSError) as exc:
            sub.problems[notebook] = f"{notebook}.ipynb could not be read: {exc}"


def read_file(folder, parts, limit: int = MAX_BYTES) -> bytes:
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


def _cell(raw, index) -> Cell:
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
