"""A stand-in for the sandbox that runs a notebook's program in this process, for the fast unit
tier (``make test-unit``): trusted code only (a set's own solution, its catalogue), never a
submission. Everything else of the pipeline is the real one."""
from __future__ import annotations

import sys

from autograder.student_side.student import in_process


class InProcess:
    isolation = {"mode": "in-process (tests only)"}

    def open(self, program: list[str], slot: int) -> "_Session":
        return _Session(program)


class _Session:
    def __init__(self, program: list[str]):
        self.ns: dict = {"__name__": "__main__"}
        self.load_report = []
        saved = sys.modules.get("student_side")      # the grader's prelude replaces it for the notebook
        try:
            for i, source in enumerate(program):
                try:
                    exec(compile(source, f"<cell {i}>", "exec"), self.ns)
                    self.load_report.append({"ok": True})
                except Exception as exc:
                    self.load_report.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            if saved is None:
                sys.modules.pop("student_side", None)
            else:
                sys.modules["student_side"] = saved
        self._send = in_process(self.ns)

    def request(self, header: dict, blobs: list[bytes]):
        return self._send(header, blobs)

    def close(self) -> None:
        self.ns.clear()
