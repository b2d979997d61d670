"""Step 2: read each notebook as plain data.

A submission file may be anything: empty, truncated, not JSON, JSON of the wrong shape, huge,
a link, a device. Each of those becomes a one-line reason for that notebook; nothing here
raises. The file is opened without following links, must be a regular file, and its size is
checked before a byte of it is read.
"""
import errno
import json
import os
import stat

from autograder.grader_side.pipeline.submission import Cell

MAX_BYTES = 20 * 1024 * 1024
# JSON values a notebook may hold ("[", "{" and ","): each becomes a Python object many times
# its size in the file, so a file of tiny values would cost the grader far more than MAX_BYTES.
MAX_VALUES = 1_000_000


class NotANotebook(ValueError):
    pass


def run(sub, env):
    for notebook, path in sub.paths.items():
        try:
            sub.cells[notebook] = parse(read_file(sub.folder, path.relative_to(sub.folder).parts))
        except (NotANotebook, OSError) as exc:
            sub.problems[notebook] = f"{notebook}.ipynb could not be read: {exc}"


def read_file(folder, parts, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``folder/parts...``, never through a link; NotANotebook when it is not a
    regular file of at most ``limit`` bytes."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(folder, flags | os.O_DIRECTORY)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotANotebook("the submission's folder is a link; submit the folder itself") from None
        raise
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                nxt = os.open(part, flags | (os.O_NONBLOCK if last else os.O_DIRECTORY), dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
                    raise NotANotebook(f"{part} is a link; submit the notebook file itself") from None
                raise NotANotebook(f"{part}: {exc.strerror or exc}") from None
            os.close(fd)
            fd = nxt
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotANotebook("it is not a regular file")
        if info.st_size > limit:
            raise NotANotebook(f"it is {info.st_size // 2**20} MiB, over the {limit // 2**20} MiB limit")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def parse(data: bytes) -> list[Cell]:
    """The cells of a notebook file's bytes, or NotANotebook saying why not."""
    if len(data) > MAX_BYTES:
        raise NotANotebook(f"it is {len(data) // 2**20} MiB, over the {MAX_BYTES // 2**20} MiB limit")
    if not data.strip():
        raise NotANotebook("the file is empty")
    values = data.count(b"[") + data.count(b"{") + data.count(b",")
    if values > MAX_VALUES:
        raise NotANotebook(f"it holds about {values} JSON values, over the {MAX_VALUES} limit")
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
    grade_id = nbg.get("grade_id") if isinstance(nbg.get("grade_id"), str) else ""
    return Cell(raw["cell_type"], source, grade_id, nbg.get("grade") is True, nbg.get("locked") is True,
                nbg.get("points"))
