"""A submission's source read in a helper process, under a time and memory budget.

Before any student code runs, the grader reads it: IPython's input transformer turns shell,
help and magic syntax into plain Python, and the route judge (``routes.judge``) follows what each
question's names reach. The submission chooses what that costs (a cell of 20,000 magic lines, a
26-byte constant that folds to gigabytes), so neither runs in the grader's own process: each
notebook is one request to a helper process whose address space is capped (``MEMORY``) and
which must answer within ``SECONDS``. Past either, the helper is killed and a new one serves the
next notebook; this notebook's cells go to the sandbox as they were written, and every question
with a route rule goes to a TA with the reason (``Reading.failure``).

One helper per grading thread, started on first use, kept for the batch (the judge's cache of
the course's own cells lives there) and stopped at exit.
"""
from __future__ import annotations

import atexit
import hashlib
import json
import os
import queue
import resource
import select
import signal
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from autograder.compat import python_command
from autograder.grader_side import routes

SECONDS = 10.0              # wall-clock budget for one notebook
MEMORY = 1 << 30            # the helper's address space, bytes
# Longer cells are passed on as they are (IPython's transformer is meant for what a person types).
MAX_TRANSFORMED = 200_000
_HEADER = struct.Struct("!Q")


@dataclass
class Reading:
    """One notebook, read: the code to run and, per route question, the verdict."""
    program: list[str]                  # IPython syntax made plain Python (the cells as written on failure)
    verdicts: dict                      # question -> routes.Verdict; {} on failure
    failure: str = ""                   # why the reading failed (budget, or no reader), one line; "" if it did not


def as_python(source: str) -> str:
    """``source`` with IPython's shell, help and magic syntax turned into plain Python calls of
    ``get_ipython()``; plain Python comes back unchanged."""
    if len(source) > MAX_TRANSFORMED or not any(mark in source for mark in "!%?"):
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:   # left as it was: the cell then fails (or not) on its own
        return source


def read(cells: list[tuple[str, bool, bool]], rules: dict, labels: list[str],
         seconds: float = SECONDS) -> Reading:
    """Read one notebook's program: ``cells`` are (source, the student's: transform it, judge it),
    in run order; ``rules`` (question -> ``routes.Rule``) the questions to judge; ``labels[i]``
    names cell ``i`` in messages. Never raises."""
    key, data = _encoded(rules)
    try:
        helper = _take()
    except OSError as exc:     # no process could be started (EAGAIN, a missing interpreter): a TA reads it
        return Reading([source for source, _, _ in cells], {}, f"the grader could not start its program reader "
                                                               f"({type(exc).__name__}: {exc})")
    request: dict[str, object] = {"cells": cells, "rules_key": key, "labels": labels}
    if key not in helper.known:
        request["rules"] = data    # once per helper: it keeps them
    try:
        reply = helper.ask(request, seconds)
    except _Over as over:
        helper.stop()
        return Reading([source for source, _, _ in cells], {}, str(over))
    helper.known.add(key)
    _give(helper)
    verdicts = {q: routes.Verdict(q, [routes.Finding(**f) for f in found], rules[q])
                for q, found in reply["verdicts"].items()}
    return Reading(reply["program"], verdicts)


_encodings: dict[tuple, tuple[str, dict]] = {}


def _encoded(rules: dict) -> tuple[str, dict]:
    """``rules`` as plain data, with a key naming them (computed once per set of rules)."""
    ids = tuple((q, id(r)) for q, r in rules.items())
    if ids not in _encodings:
        data = {q: r.to_data() for q, r in rules.items()}
        _encodings[ids] = (hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest(), data)
    return _encodings[ids]


_known_rules: dict[str, dict[str, routes.Rule]] = {}     # in the helper: rules_key -> question -> Rule


def _answer(request: dict) -> dict:
    """In the helper: transform the student's cells, then judge the program."""
    if "rules" in request:
        _known_rules[request["rules_key"]] = {q: routes.Rule.from_data(d) for q, d in request["rules"].items()}
    rules = _known_rules[request["rules_key"]]
    program = [as_python(source) if transform else source for source, transform, _ in request["cells"]]
    judged = [source if judge else "" for source, (_, _, judge) in zip(program, request["cells"], strict=True)]
    labels = request["labels"]
    verdicts = routes.judge(judged, rules, lambda i: labels[i] if 0 <= i < len(labels) else
                            f"cell {i + 1}") if rules else {}
    return {"program": program, "verdicts": {q: [asdict(f) for f in v.findings] for q, v in verdicts.items()}}


# ---- the helper process ------------------------------------------------------------------------

class _Over(Exception):
    """The helper ran out of its budget, died or answered nonsense: the reason, for a TA."""


class _Helper:
    def __init__(self) -> None:
        self.known: set[str] = set()    # the rules_keys this helper has been sent
        self.process = subprocess.Popen(
            python_command(code="from autograder.grader_side.analysis import serve; serve()"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
            start_new_session=True)
        assert self.process.stdin is not None and self.process.stdout is not None   # both are pipes (PIPE)
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        try:
            resource.prlimit(self.process.pid, resource.RLIMIT_AS, (MEMORY, MEMORY))
            resource.prlimit(self.process.pid, resource.RLIMIT_FSIZE, (0, 0))
        except (OSError, ValueError):
            pass            # already gone: the first request says so

    known: set

    def ask(self, request: dict, seconds: float) -> dict:
        deadline = time.monotonic() + seconds
        body = json.dumps(request).encode()
        try:
            self.stdin.write(_HEADER.pack(len(body)) + body)
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Over(self._why("could not be reached")) from None
        header = self._read(_HEADER.size, deadline, seconds)
        reply = json.loads(self._read(_HEADER.unpack(header)[0], deadline, seconds))
        if "error" in reply:
            raise _Over(f"the grader's reading of this notebook failed ({reply['error'][:80]})")
        return reply

    def _read(self, n: int, deadline: float, seconds: float) -> bytes:
        fd, chunks, got = self.stdout.fileno(), [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Over(f"the grader's reading of this notebook took more than its {seconds:g} s budget")
            chunk = os.read(fd, min(n - got, 1 << 20))
            if not chunk:
                raise _Over(self._why("stopped"))
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _why(self, what: str) -> str:
        code = self.process.poll()
        if code is not None and code < 0:
            return f"the grader's reading of this notebook {what}: killed by signal {-code} (its memory budget)"
        return f"the grader's reading of this notebook {what} (its memory budget of {MEMORY >> 20} MiB)"

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        for pipe in (self.stdin, self.stdout):
            try:
                pipe.close()
            except OSError:
                pass


_idle: queue.LifoQueue = queue.LifoQueue()
_started: list[_Helper] = []


def _take() -> _Helper:
    try:
        return _idle.get_nowait()
    except queue.Empty:
        helper = _Helper()
        _started.append(helper)
        return helper


def _give(helper: _Helper) -> None:
    _idle.put(helper)


def warm() -> None:
    """Start a helper now, for the first notebook to take: its start (a Python, IPython's input
    transformer) then runs beside the grader's own start-up (loading the set, the sandbox's) instead
    of before that notebook is read. One that cannot start is left for that notebook to find out."""
    if _idle.empty():
        try:
            _give(_take())
        except OSError:
            pass


@atexit.register
def _stop_all() -> None:
    for helper in _started:
        if helper.process.poll() is None:
            helper.stop()


def serve() -> None:
    """The helper's loop: a length-prefixed JSON request on stdin, its answer on stdout."""
    import IPython.core.inputtransformer2  # noqa: F401  (loaded before any budget runs)

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        request = json.loads(stdin.read(_HEADER.unpack(header)[0]))
        try:
            reply = _answer(request)
        except BaseException as exc:   # MemoryError, RecursionError, a bug: the grader decides what it means
            reply = {"error": type(exc).__name__}
        body = json.dumps(reply).encode()
        stdout.write(_HEADER.pack(len(body)) + body)
        stdout.flush()
