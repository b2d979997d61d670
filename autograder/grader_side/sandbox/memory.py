"""How much memory a session may use where the grader runs under a memory limit: a container's
cgroup (Gradescope's containers, a Kubernetes pod, ``docker run -m``), cgroup v2's ``memory.max`` or
v1's ``memory.limit_in_bytes``, on the grader's own cgroup or any above it.

A session's address space is capped at the zygote's plus ``Limits.memory_mb``. What the container
holds at a session's peak is what the grader and the warm zygote hold (``held``: anonymous, shared
and mapped file pages, not the page cache the kernel takes back under pressure), plus the zygote's
pages the session copies by writing to them, plus what the session allocates (at most
``memory_mb``), plus the grader's own growth while it grades. ``fit`` lowers ``memory_mb`` until
that fits under the limit, counting ``COPIED`` of the zygote's anonymous memory as copied and
``MARGIN`` for the grader: a notebook that asks for more gets a MemoryError in its own session and
loses only its own points, with the reason, instead of the container being killed mid-grade.

Measured (docs/where-to-grade.md): in a 768 MiB container the grader and its warm process held
328 MiB, the zygote 170 MiB of it anonymous, and a whole honest submission grew the container by
66 MiB. A notebook that sets out to write to every page it inherited can still copy more than
``COPIED`` and push a container over: there, a container grades one submission, and Gradescope's
``run_autograder`` records the kill as that submission's result, with the reason.

Without a limit (the usual server) nothing changes.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

MARGIN = 128 << 20          # the grader's own growth while it grades
COPIED = 0.25               # the share of the zygote's anonymous memory counted as a session's copies
UNLIMITED = 1 << 60         # cgroup v1 writes "no limit" as a number near 2**63
# (limit file, memory.stat keys whose sum is what the cgroup holds) for cgroup v2 and v1
V2 = ("memory.max", ("anon", "file_mapped", "shmem"))
V1 = ("memory.limit_in_bytes", ("total_rss", "total_mapped_file", "total_shmem"))


def container(cgroup_file: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> tuple[int, int] | None:
    """(limit, held) in bytes for the tightest memory limit on this process's cgroup and those above
    it; None where no limit applies or none can be read."""
    tightest = None
    for folder, (limit_file, keys) in _folders(cgroup_file, root):
        limit, held = _limit(os.path.join(folder, limit_file)), _held(os.path.join(folder, "memory.stat"), keys)
        if limit is not None and held is not None and (tightest is None or limit - held < tightest[0] - tightest[1]):
            tightest = (limit, held)
    return tightest


def anonymous(pid: int) -> int:
    """Bytes of anonymous memory process ``pid`` holds (``RssAnon``), or 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return 0


def fit(memory_mb: int, limit: int, held: int, anonymous: int) -> int:
    """``memory_mb``, or what the limit leaves a session once ``held``, ``COPIED`` of the zygote's
    ``anonymous`` memory and ``MARGIN`` are counted, whichever is less (in MiB; below 0 as 0)."""
    return max(0, min(memory_mb, (limit - _taken(held, anonymous)) >> 20))


def needed(held: int, anonymous: int, floor_mb: int) -> int:
    """The smallest limit, in MiB, that leaves a session ``floor_mb``."""
    return (_taken(held, anonymous) >> 20) + floor_mb + 1


def _taken(held: int, anonymous: int) -> int:
    """Bytes of the limit a session cannot have: what is held, its share of copies, the margin."""
    return held + int(anonymous * COPIED) + MARGIN


def _folders(cgroup_file: str, root: str) -> Iterator[tuple[str, tuple[str, tuple[str, ...]]]]:
    """(folder, (limit file, stat keys)) for each memory cgroup of this process, deepest first."""
    try:
        with open(cgroup_file) as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            mount, kind = root, V2
        elif "memory" in parts[1].split(","):
            mount, kind = os.path.join(root, "memory"), V1
        else:
            continue
        folder = os.path.normpath(os.path.join(mount, parts[2].lstrip("/")))
        while folder.startswith(mount):
            yield folder, kind
            if folder == mount:
                break
            folder = os.path.dirname(folder)


def _limit(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text.isdigit() or int(text) >= UNLIMITED:   # v2 writes "max"
        return None
    return int(text)


def _held(path: str, keys: tuple[str, ...]) -> int | None:
    try:
        with open(path) as f:
            stat = dict(line.split() for line in f if len(line.split()) == 2)
        return sum(int(stat.get(key, 0)) for key in keys)
    except (OSError, ValueError):
        return None
