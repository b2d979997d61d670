"""The one reader of submission folders: every place the grader reads what a student handed in
(the pipeline, the gradebook recorder, the cluster, ``nbgrader autograde`` through the course's
exporter, and the list of students) reads it here.

One rule: below the submissions folder (which is the TA's), no link is followed at any depth: not
the student's folder, not the assignment folder in it, not a notebook, not ``timestamp.txt``. Only
regular files are read, and only up to a size cap. Every file is reached by opening one name at a
time from the folder opened before it, with ``O_NOFOLLOW``, and checked on the opened descriptor
(``fstat``), so a link or a different file swapped in between a check and the read is refused too.

A student's folder is ``<submissions>/<student>``; a notebook is ``<student>/<notebook>.ipynb`` or
nbgrader's ``<student>/<assignment>/<notebook>.ipynb``. What breaks the rule is a :class:`Refused`
with a one-line reason the student can act on.

A notebook is also held to caps on what it contains (JSON values, cells, outputs, markdown:
``structure``), so that none costs the graders, or the gradebook's recorder every student waits
behind, more than a second or two. Every reader applies them here: ``notebook`` (the recorder,
``nbgrader autograde``'s exporter) and ``pipeline/read.py`` (``course autograde``, and the grading
inside ``nbgrader autograde``), so both graders refuse the same notebooks with the same reason.
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path

MAX_BYTES = 20 * 1024 * 1024       # a notebook
BOOKKEEPING_BYTES = 1000           # timestamp.txt, submission_secret.txt, lms_late.txt
# What a notebook under MAX_BYTES may hold, so that no notebook costs the graders or the gradebook's
# recorder (nbgrader's preprocessors, both graders run them) more than a second or two. The sets'
# notebooks have about 45 and 65 cells, 17,000 characters of markdown in all, at most 2,100 in a cell.
# JSON values ("[", "{" and ","): each becomes a Python object many times its size in the file.
MAX_VALUES = 1_000_000
# Cells: each costs the recorder and nbgrader autograde about 0.15 ms (150,000 empty markdown cells
# added 96 s to a class's recording).
MAX_CELLS = 3_000
# Outputs, all cells together: nbformat checks each one against its schema before they are cleared.
MAX_OUTPUTS = 10_000
# The text of markdown and raw cells (characters, the course's own included): each of the student's
# is rendered and its HTML sanitized for formgrader and feedback, at up to 16 microseconds a
# character, and for some texts at a cost that grows with the square of a cell's length (a cell of
# 540,000 characters of "*a **b [c <d `e" cost 25 s; one of 16,000, 0.03 s).
MAX_MARKUP_CELL = 16_000
MAX_MARKUP = 64_000
# nbgrader's notes on a submission (written by `collect` and `zip_collect`), which its feedback
# commands read back from autograded/, and the LMS's mark of a late upload that `zip_collect` with
# the Canvas collector keeps (nbgrader/plugins/zip_collect.py).
LMS_LATE = "lms_late.txt"
BOOKKEEPING = ("timestamp.txt", "submission_secret.txt", LMS_LATE)

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def shown(name: str) -> str:
    """A name as a message may print it: control characters (which a terminal would obey) escaped."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)


class Refused(ValueError):
    """A file of a submission the grader will not read; the message is one line."""


class Missing(Refused):
    """No such file in the submission."""


class FolderRefused(Refused):
    """A folder on the way to the file is refused (a link, or it cannot be opened): the reason is the
    folder's, not the file's."""


def layouts(assignment: str, filename: str, nbgrader_only: bool = False) -> tuple[tuple[str, ...], ...]:
    """Where ``filename`` may be in a student's folder, in the order looked at."""
    return ((assignment, filename),) if nbgrader_only else ((filename,), (assignment, filename))


def find(folder: Path, places: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """The first of ``places`` (paths inside ``folder``) that is a regular file reached without a
    link; else Refused with the reason for the first one that breaks the rule, or Missing."""
    refused = None
    for parts in places:
        try:
            os.close(_open(folder, parts))
            return parts
        except Missing:
            continue
        except Refused as exc:
            refused = refused or exc
    if refused:
        raise refused
    others = _notebooks_beside(folder, places)
    raise Missing(f"{places[0][-1]} is missing from the submission" + (
        f" (it holds {', '.join(others)}: a notebook is graded only under the release's name)" if others else ""))


def _notebooks_beside(folder: Path, places: tuple[tuple[str, ...], ...]) -> list[str]:
    """The names of the notebooks in the folders ``places`` look in (no link followed), for the
    reason a missing notebook gives: the student's own file under another name is the usual cause.
    Names a student chose: control characters escaped, at most five, each cut at 60 characters."""
    found: set[str] = set()
    for parts in places:
        where = Path(folder, *parts[:-1])
        try:
            if any(os.path.islink(Path(folder, *parts[:i])) for i in range(len(parts))):
                continue   # a linked folder: the reason is the link's
            with os.scandir(where) as entries:
                found.update(e.name for e in entries
                             if e.name.endswith(".ipynb") and e.is_file(follow_symlinks=False))
        except OSError:
            continue
    names = sorted(shown(name)[:60] for name in found)
    return names[:5] + ([f"{len(names) - 5} more"] if len(names) > 5 else [])


def read(folder: Path, parts: tuple[str, ...], limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``folder/parts...`` by the rule; Refused (its reason: "it is ..."), or Missing."""
    fd = _open(folder, parts)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise Refused(_too_big(size, limit))
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:   # it grew while it was read
            raise Refused(_too_big(len(data), limit))
        return data
    finally:
        os.close(fd)


def notebook(folder: Path, assignment: str, name: str, nbgrader_only: bool = False) -> bytes:
    """The bytes of notebook ``name`` of the student's ``folder``, within every cap (``within_caps``);
    Refused or Missing with the one-line reason the results give (``<name>.ipynb is a link; ...``)."""
    parts = find(folder, layouts(assignment, f"{name}.ipynb", nbgrader_only))
    try:
        data = read(folder, parts)
        within_caps(data)
        return data
    except Missing:
        raise
    except Refused as exc:
        raise Refused(f"{name}.ipynb could not be read: {exc}") from None


def within_caps(data: bytes) -> None:
    """Refused with the reason when the notebook file ``data`` holds more than the caps allow
    (``MAX_VALUES``, then ``structure``). A file that is not JSON passes: whoever reads it next
    says why it is not a notebook."""
    count_values(data)
    try:
        nb = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):   # (UnicodeDecodeError is a ValueError)
        return
    structure(nb)


def count_values(data: bytes) -> None:
    """Refused when ``data`` holds more than ``MAX_VALUES`` JSON values (counted before parsing it,
    as the brackets and commas of the file: an output's printed list counts too)."""
    values = data.count(b"[") + data.count(b"{") + data.count(b",")
    if values > MAX_VALUES:
        raise Refused(f"it holds about {values} JSON values, over the {MAX_VALUES} limit")


def structure(nb: object) -> None:
    """Refused, with a one-line reason the student can act on, when the parsed notebook ``nb`` has
    more cells, outputs or markdown than the caps allow, or a cell id nbformat's schema refuses.
    What is not of a notebook's shape is not counted (the readers refuse it with their own reason)."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return
    if len(cells) > MAX_CELLS:
        raise Refused(f"it has {len(cells)} cells, over the {MAX_CELLS}-cell limit; delete scratch cells "
                      "and submit it again")
    outputs = markup = 0
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        if "id" in cell and not (isinstance(cell["id"], str) and _CELL_ID.fullmatch(cell["id"])):
            # nbgrader's steps stop on it (nbformat's validation) and record 0 for the whole
            # submission: refused here, both graders give this notebook alone 0 with this reason.
            raise Refused(f"cell {index} has an id that is not a notebook cell id ({str(cell['id'])[:70]!r}; "
                          "1 to 64 letters, digits, - or _); delete the cell or its id and submit it again")
        if isinstance(cell.get("outputs"), list):
            outputs += len(cell["outputs"])
        if cell.get("cell_type") in ("markdown", "raw"):
            size = _length(cell.get("source"))
            if size > MAX_MARKUP_CELL:
                raise Refused(f"cell {index} holds {size} characters of {cell['cell_type']} text, over the "
                              f"{MAX_MARKUP_CELL}-character limit of a cell; shorten it and submit it again")
            markup += size
    if outputs > MAX_OUTPUTS:
        raise Refused(f"its cells have {outputs} outputs, over the {MAX_OUTPUTS}-output limit; clear the "
                      "outputs (Kernel > Restart & Clear Output) and submit it again")
    if markup > MAX_MARKUP:
        raise Refused(f"its markdown and raw cells hold {markup} characters, over the {MAX_MARKUP}-character "
                      "limit; shorten them and submit it again")


_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")      # nbformat 4.5's schema for a cell's id


def _length(source: object) -> int:
    """The characters of a cell's source (a string, or nbformat's list of lines)."""
    if isinstance(source, str):
        return len(source)
    if isinstance(source, list):
        return sum(len(line) for line in source if isinstance(line, str))
    return 0


def bookkeeping(folder: Path, assignment: str, nbgrader_only: bool = False) -> tuple[dict[str, bytes], dict[str, str]]:
    """nbgrader's notes on the submission (``timestamp.txt``, ``submission_secret.txt``) and
    ``lms_late.txt``: {name: bytes} of those read by the rule (under 1000 bytes each; the student's
    folder first, then the assignment folder), and {name: why not} for those present but refused. A
    folder that is refused (a linked student or assignment folder) refuses every notebook in it with
    its own reason: it gives no reason here, as if nothing were there."""
    found, refused = {}, {}
    for name in BOOKKEEPING:
        try:
            found[name] = read(folder, find(folder, layouts(assignment, name, nbgrader_only)), BOOKKEEPING_BYTES - 1)
        except (Missing, FolderRefused):
            pass
        except Refused as exc:
            refused[name] = str(exc)
    return found, refused


def within_rule(folder: Path, parts: tuple[str, ...]) -> bool:
    """Whether ``folder/parts...`` is a regular file reached without a link (nothing is read)."""
    try:
        os.close(_open(folder, parts))
        return True
    except Refused:
        return False


def _open(folder: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of the regular file ``folder/parts...``, every name opened without following a
    link, from the descriptor of the folder before it."""
    try:
        fd = os.open(folder, _FLAGS | os.O_DIRECTORY)
    except FileNotFoundError:
        raise Missing(f"{parts[-1]} is missing from the submission") from None
    except OSError as exc:
        if os.path.islink(folder):
            raise FolderRefused(f"{'/'.join(parts)} is inside a link ({os.path.basename(folder)}); "
                          "submit the folder itself") from None
        if exc.errno == errno.ENOTDIR:
            raise Missing(f"{parts[-1]} is missing from the submission") from None
        raise FolderRefused(f"{'/'.join(parts)} could not be opened ({exc.strerror or exc})") from None
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                mode = os.lstat(part, dir_fd=fd).st_mode
            except FileNotFoundError:
                raise Missing(f"{parts[-1]} is missing from the submission") from None
            except OSError as exc:
                raise Refused(f"{'/'.join(parts)} could not be opened ({exc.strerror or exc})") from None
            if stat.S_ISLNK(mode):
                if last:
                    raise Refused(f"{'/'.join(parts)} is a link; submit the {_what(part)} itself")
                raise FolderRefused(f"{'/'.join(parts)} is inside a link ({part}); submit the folder itself")
            if not last and not stat.S_ISDIR(mode):
                raise Missing(f"{parts[-1]} is missing from the submission")
            if last and not stat.S_ISREG(mode):
                raise Refused(f"{'/'.join(parts)} is not a regular file; submit the {_what(part)} itself")
            try:
                nxt = os.open(part, _FLAGS | (os.O_NONBLOCK if last else os.O_DIRECTORY), dir_fd=fd)
            except OSError as exc:   # it changed since the lstat: a link swapped in is refused here
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise Refused(f"{'/'.join(parts)} changed while it was read (a link?); submit it again") from None
                raise Refused(f"{'/'.join(parts)} could not be opened ({exc.strerror or exc})") from None
            os.close(fd)
            fd = nxt
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{'/'.join(parts)} is not a regular file; submit the {_what(parts[-1])} itself")
        return fd
    except BaseException:
        os.close(fd)
        raise


def _what(name: str) -> str:
    return "notebook file" if name.endswith(".ipynb") else "file"


def _too_big(size: int, limit: int) -> str:
    if limit >= 2**20:
        return f"it is {size // 2**20} MiB, over the {limit // 2**20} MiB limit"
    return f"it is {size} bytes, over the {limit}-byte limit"
