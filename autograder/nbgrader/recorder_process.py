"""The gradebook's ``Recorder`` in a process of its own, next to ``course autograde``.

Recording a student is pure Python (nbgrader's preprocessors, SQLAlchemy): on the grader's main
thread it held the interpreter lock the grading threads need between two sandbox requests, and
slowed the whole class. Here it runs in a child Python (nbgrader, and the set's checks for their
points) and records each student as the grader hands them over, graded here or on a cluster,
while the others are being graded.

``RecorderProcess`` has the ``Recorder``'s interface: use it as a context manager and call
``record_safely(student, result, folder)``. What a ``Recorder`` changes in ``result`` (flags, late
penalty, the hand-graded questions as the gradebook lists them) is copied back into the same
``StudentResult`` when the ``with`` block ends; a student the child could not write keeps the
one-line reason in its flags, as ``Recorder.record_safely`` writes it, and the others are written
as usual.

Frames on the child's stdin and stdout: an 8-byte length, then a pickle of plain data between two
processes of the grader (student code never reaches either pipe); a result travels in its JSON
form (``StudentResult.to_dict``). In: ``(student, result, folder)``. Out: ``("ready", None)`` or
``("error", message)`` first, then ``(student, result)`` for each student, in order.
"""
from __future__ import annotations

import os
import pickle
import queue
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from autograder.compat import python_command
from autograder.course import CourseError
from autograder.grader_side.assignment import REPO
from autograder.grader_side.results import NOT_WRITTEN, StudentResult

_LENGTH = struct.Struct("<Q")


def _write(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    """The next frame, or None at the end of the stream."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


class RecorderProcess:
    """A ``Recorder`` of the course at ``root`` for ``assignment``, in a child process."""

    def __init__(self, root: Path, assignment: str):
        self.root, self.assignment = Path(root), assignment
        self.results: dict[str, StudentResult] = {}   # student -> the result handed over (updated at the end)
        self.replies: dict[str, StudentResult] = {}   # student -> the result as the child recorded it
        self._ready: tuple[str, str | None] | None = None
        self.core_seconds = self.peak_mb = 0.0  # the child's CPU time and peak RSS, once it has ended
        self._replied = threading.Condition()
        # (student, result as JSON, folder) to send; None: the end
        self._queue: queue.SimpleQueue[tuple[str, dict[str, Any], str] | None] = queue.SimpleQueue()

    def __enter__(self) -> RecorderProcess:
        self._log = tempfile.TemporaryFile()
        path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
        # -P: the course folder it runs in is not on its import path
        self._child = subprocess.Popen([*python_command(module=__name__), str(self.root), self.assignment],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                       env=env, cwd=self.root)
        assert self._child.stdin is not None and self._child.stdout is not None
        self._requests, self._replies = self._child.stdin, self._child.stdout
        self._reader = threading.Thread(target=self._read_replies, name="recorder replies", daemon=True)
        self._writer = threading.Thread(target=self._write_requests, name="recorder requests", daemon=True)
        self._reader.start()
        self._writer.start()
        return self

    def ready(self) -> None:
        """Wait until the child has opened the gradebook; CourseError with its reason if it could not."""
        with self._replied:
            self._replied.wait_for(lambda: self._ready is not None)
        kind, message = self._ready or ("error", "")
        if kind != "ready":
            raise CourseError(message or "")

    def record_safely(self, student: str, result: StudentResult, folder: Path) -> None:
        """Hand ``result`` over; it returns at once (a grader waiting here would stop handing out work)."""
        self.ready()
        self.results[student] = result
        self._queue.put((student, result.to_dict(), str(folder)))

    def __exit__(self, *exc: object) -> None:
        self._queue.put(None)
        self._writer.join()
        self._reader.join()
        if self._child.returncode is None:   # (the reader has reaped a child that died before it was ready)
            _, status, usage = os.wait4(self._child.pid, 0)
            self._child.returncode = os.waitstatus_to_exitcode(status)
            self.core_seconds, self.peak_mb = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
        why = self._death()
        for student, result in self.results.items():
            if student in self.replies:
                result.replace_with(self.replies[student])
            else:
                result.flags.append(f"{NOT_WRITTEN}{why}"[:300])
        self._log.close()

    def _write_requests(self) -> None:
        while (frame := self._queue.get()) is not None:
            try:
                _write(self._requests, frame)
            except OSError:   # the child has died: the end of the block says so for each student not written
                break
        try:
            self._requests.close()
        except OSError:
            pass

    def _read_replies(self) -> None:
        first = _read(self._replies)
        if first is None:
            self._child.wait()
        with self._replied:
            self._ready = first if first is not None else ("error", f"the gradebook's recorder {self._death()}")
            self._replied.notify_all()
        while (frame := _read(self._replies)) is not None:
            student, recorded = frame
            self.replies[student] = StudentResult.from_dict(recorded)

    def _death(self) -> str:
        """Why the child ended, in one line (its last line on stderr)."""
        code = self._child.returncode
        self._log.seek(0)
        lines = [line for line in self._log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        last = lines[-1].strip() if lines else ""
        return f"ended with exit status {code}" + (f": {last}"[:200] if last else "")


def main(argv: list[str]) -> int:
    """The child: record each student read from stdin, reply on stdout."""
    from autograder.course import Course
    from autograder.nbgrader.recorder import Recorder

    root, assignment = Path(argv[0]), argv[1]
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())   # whatever else prints goes to the log
    requests = sys.stdin.buffer
    try:
        recorder = Recorder(Course(root), assignment).__enter__()
        recorder.assignment.check_loads()   # (imports the checks, and torch: before the first student, not with it)
    except CourseError as exc:
        _write(replies, ("error", str(exc)))
        return 0
    _write(replies, ("ready", None))
    try:
        while (frame := _read(requests)) is not None:
            student, data, folder = frame
            result = StudentResult.from_dict(data)
            recorder.record_safely(student, result, Path(folder))
            _write(replies, (student, result.to_dict()))
    finally:
        recorder.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
