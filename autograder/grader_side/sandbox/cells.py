"""Running a notebook's cells in a session, then answering the grader's requests.

Everything here runs in the session's process after it is isolated (see lifecycle.py). The
cells run into one fresh namespace; each cell and each request has its own time limit. A forked
copy of the notebook never reaches the grader's socket.
"""

from __future__ import annotations

import ast
import inspect
import io
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from types import CodeType, FrameType
from typing import Literal, NoReturn

from . import frames

# Limits on what the session accepts from the (trusted) grader.
_IN_HEADER = 1 << 30
_IN_BLOBS = 1 << 40

# Bound now so that student code replacing os.getpid cannot fool the
# check that stops forked copies of the session from talking on the socket.
_getpid = os.getpid
_exit = os._exit


def reap() -> None:
    """Collect the exit status of any finished child of the notebook (it runs as PID 1)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return


class Discard(io.TextIOBase):
    """Stand-in for sys.stdout/sys.stderr that drops everything."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, fd: int):
        self._fd = fd

    def write(self, s: str) -> int:
        return len(s)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def flush(self) -> None:
        pass


class _NoIPython:
    """What get_ipython() returns: every method accepts anything and does nothing."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None


def _display(*args: object, **kwargs: object) -> None:
    return None


_NO_IPYTHON = _NoIPython()


def describe(e: BaseException) -> str:
    name = type(e).__name__
    try:
        msg = str(e)
    except BaseException:
        msg = "(the message could not be turned into text)"
    return f"{name}: {msg[:300]}" if msg else name


def _compile_cell(src: str, name: str) -> CodeType:
    """Plain Python only: IPython syntax was turned into Python by the grader before it was sent."""
    return compile(src, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


class StepTimeout(BaseException):
    """A cell or a request ran past its time: raised inside it by a timer (not an Exception, so a
    plain ``except Exception`` in student code does not swallow it)."""


class _time_limit:
    """Interrupt the code run inside after ``seconds`` (0: no limit). Code that ignores or
    replaces SIGALRM escapes this, and then only the session's wall-clock deadline stops it."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def _ring(self, signum: int, frame: FrameType | None) -> NoReturn:
        raise StepTimeout(f"did not finish within {self.seconds:g} s")

    def __enter__(self) -> _time_limit:
        if self.seconds > 0:
            signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        if self.seconds > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return False


def run_cells(cells: list, my_pid: int, step_timeout: float = 0) -> tuple[dict, list[dict]]:
    ns: dict = {"__name__": "__main__", "display": _display, "get_ipython": lambda: _NO_IPYTHON}
    report = []
    loop = None
    for i, src in enumerate(cells, 1):
        try:
            if not isinstance(src, str):
                raise TypeError("cell source is not text")
            code = _compile_cell(src, f"<cell {i}>")
            with _time_limit(step_timeout):
                if code.co_flags & inspect.CO_COROUTINE:
                    import asyncio
                    if loop is None:
                        loop = asyncio.new_event_loop()
                    loop.run_until_complete(eval(code, ns))
                else:
                    exec(code, ns)
            entry: dict[str, bool | str] = {"ok": True}
        except BaseException as e:
            entry = {"ok": False, "error": describe(e)}
        if _getpid() != my_pid:
            _exit(0)          # a forked copy of the notebook must not reach the socket
        reap()
        report.append(entry)
    return ns, report


# The request handler: (the notebook's namespace, a request's header, its blobs) -> (reply header, blobs).
Handler = Callable[[dict, dict, list], tuple[dict, Sequence[frames.Buffer] | None]]


def serve(handler: Handler, sock: socket.socket, setup_error: str | None) -> None:
    """Run the cells the grader sends, then answer its requests until the socket closes."""
    my_pid = _getpid()
    try:
        header, _ = frames.recv_frame(sock, max_blob_bytes=_IN_BLOBS, max_header=_IN_HEADER)
    except frames.FrameError:
        _exit(0)
    if setup_error is not None:
        try:
            frames.send_frame(sock, {"setup_error": setup_error})
        except frames.FrameError:
            pass
        _exit(71)
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.set_num_threads(1)
        except Exception:
            pass
    cells = header.get("cells") or []
    step_timeout = header.get("step_timeout")
    step_timeout = float(step_timeout) if isinstance(step_timeout, (int, float)) and step_timeout > 0 else 0.0
    ns, report = run_cells(cells, my_pid, step_timeout)
    try:
        frames.send_frame(sock, {"load_report": report})
    except frames.FrameError:
        _exit(0)
    while True:
        try:
            header, blobs = frames.recv_frame(sock, max_blob_bytes=_IN_BLOBS, max_header=_IN_HEADER)
        except frames.FrameError:
            _exit(0)
        reap()
        try:
            with _time_limit(step_timeout):
                reply_header, reply_blobs = handler(ns, header, blobs)
            parts = frames.encode(reply_header, list(reply_blobs or ()))
        except BaseException as e:
            parts = frames.encode({"error": describe(e)}, [])
        if _getpid() != my_pid:
            _exit(0)
        try:
            frames.send_parts(sock, parts)
        except frames.FrameError:
            _exit(0)
