"""A grader killed mid-notebook (a CI job cancelled, `timeout`, the out-of-memory killer) should take
its sessions with it: no process of a notebook should outlive the command that started it.

A session's waiting process (P, root) outlives the zygote on purpose (a session in flight survives
a zygote restart, ``test_sandbox.py::test_zygote_restart_keeps_sessions_running``), so the
zygote's death cannot end it. P watches the grader's end of the session's socket instead, which
the kernel closes however the grader dies, and then kills the session's PID 1 (G). Before that,
P and G lived on under pid 1 until the notebook's CPU limit. The same attack under weak isolation
is in test_weak_isolation.py."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.grader_side.assignment import REPO, Assignment
from autograder.tooling.sampleclass import write_submission

pytestmark = pytest.mark.slow


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _uid(pid: int) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def test_no_notebook_process_outlives_a_killed_grader(tmp_path):
    a = Assignment("transformer-block", REPO)
    loop = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass"
    folder = write_submission(tmp_path / "looping", a, extra_cells=[loop])
    grader = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", "--assignment", a.name,
                               *(str(folder / f"{n}.ipynb") for n in a.notebooks)],
                              cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree: set[int] = set()
    try:
        deadline, students = time.monotonic() + 120, set()
        while time.monotonic() < deadline and not students:
            students = {p for p in _descendants(grader.pid) if _uid(p) >= 61000}   # a session's dedicated uid
            time.sleep(0.2)
        assert students, "no session started"
        time.sleep(1)
        tree = _descendants(grader.pid)
        grader.send_signal(signal.SIGKILL)
        grader.wait(timeout=30)
        time.sleep(3)
        left = [p for p in tree if _alive(p)]
        assert not left, [(p, _uid(p), Path(f"/proc/{p}/cmdline").read_bytes()[:80]) for p in left if _alive(p)]
    finally:
        if grader.poll() is None:
            grader.kill()
        for p in tree | _descendants(grader.pid):   # what leaked too: it would spin until its CPU limit
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def test_ctrl_c_ends_course_grade_at_once_in_one_line(tmp_path):
    """Ctrl-C (SIGINT) while a notebook loops: the command ends within seconds, not at the
    notebook's timeout, says so in one line with no traceback, and leaves no session behind."""
    a = Assignment("transformer-block", REPO)
    folder = write_submission(tmp_path / "looping", a, extra_cells=["while True:\n    pass"])
    grader = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", "--assignment", a.name,
                               "--timeout", "120", *(str(folder / f"{n}.ipynb") for n in a.notebooks)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tree: set[int] = set()
    try:
        deadline, students = time.monotonic() + 120, set()
        while time.monotonic() < deadline and not students:
            students = {p for p in _descendants(grader.pid) if _uid(p) >= 61000}
            time.sleep(0.2)
        assert students, "no session started"
        tree = _descendants(grader.pid)
        interrupted = time.monotonic()
        grader.send_signal(signal.SIGINT)
        out, err = grader.communicate(timeout=100)
        took = time.monotonic() - interrupted
        assert took < 30, f"{took:.1f} s: it waited for the notebook's timeout (120 s)"   # about 1 s here
        assert grader.returncode == 130, err[-2000:]
        assert "Traceback" not in err, err[-2000:]
        assert err.strip().splitlines()[-1].startswith("course grade: interrupted"), err[-2000:]
        deadline = time.monotonic() + 10
        while [p for p in tree if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in tree if _alive(p)]
    finally:
        if grader.poll() is None:
            grader.kill()
        for p in tree:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
