"""A sandbox started early (``sandbox.starting``): one submission's process starts its warm process
beside its own start-up, and grading gets exactly that sandbox, alive, or one of its own; and the
program reader, started early too (``analysis.warm``), is the one the first notebook is read by.

The real sandbox throughout (bubblewrap, the zygote, sessions), the real program reader, and a
real ``course grade`` process.
"""
from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.grader_side import analysis
from autograder.grader_side.sandbox import PRELOAD_ONE, grading_sandbox, starting
from autograder.grader_side.sandbox.marks import ENV as MARKS
from autograder.student_side.student import Student

pytestmark = pytest.mark.sandboxed

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0


def children() -> set[int]:
    """The pids of this process's children (every thread's)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found |= {int(pid) for pid in (task / "children").read_text().split()}
        except FileNotFoundError:      # the thread ended since the listing: it has no children left
            continue
    return found


def test_grading_takes_the_sandbox_started_early_and_its_warm_process_outlives_the_start(tmp_path):
    """bubblewrap dies with the thread that started it (--die-with-parent follows the thread): the
    thread that starts the sandbox early must live as long as the sandbox, or grading finds the
    warm process gone and starts another (Sandbox.events says so)."""
    with starting(TIMEOUT, (tmp_path,)):
        sandbox = grading_sandbox(TIMEOUT, hide=(tmp_path,), preload=PRELOAD_ONE)
        with sandbox:
            started_with = sandbox.zygote_pid
            assert str(tmp_path) in sandbox.hide
            for notebook in (["x = 6 * 7"], ["import torch", "y = torch.ones(2).sum().item()"]):
                with sandbox.open(notebook) as session:
                    assert all(entry["ok"] for entry in session.load_report), session.load_report
            assert sandbox.events == [] and sandbox.zygote_pid == started_with


def test_a_student_who_plots_is_graded_where_pyplot_is_not_preloaded(tmp_path):
    """One submission's sandbox leaves pyplot out of its warm process (``PRELOAD_ONE``): a cell
    that imports it imports it in the session, and plots as in a class's sandbox."""
    with starting(TIMEOUT, (tmp_path,)):
        with grading_sandbox(TIMEOUT, hide=(tmp_path,), preload=PRELOAD_ONE) as sandbox:
            plots = ["import sys\nwarm = 'matplotlib.pyplot' in sys.modules", "import matplotlib.pyplot as plt",
                     "plt.plot([1, 2], [3, 4])\nplt.savefig('plot.png')",
                     "import os\nsize = os.path.getsize('plot.png')"]
            with sandbox.open(plots) as session:
                assert all(entry["ok"] for entry in session.load_report), session.load_report
                assert Student(session.request).value("warm") is False   # not preloaded: imported here
                assert Student(session.request).value("size") > 1000
            assert sandbox.preload == PRELOAD_ONE and sandbox.events == []


def test_a_sandbox_nobody_takes_is_closed_when_the_block_ends(tmp_path):
    before_children = children()
    with starting(TIMEOUT, (tmp_path,)):
        for _ in range(6000):                    # until the start thread has started bubblewrap
            if children() - before_children:
                break
            time.sleep(0.01)
        assert children() - before_children
    assert not children() - before_children      # what the block started has ended (and was reaped)


def test_other_arguments_get_a_sandbox_of_their_own_and_the_early_one_is_closed(tmp_path):
    asked, other = tmp_path / "asked", tmp_path / "other"
    asked.mkdir()
    other.mkdir()
    before_children = children()
    with starting(TIMEOUT, (other,)):
        with grading_sandbox(TIMEOUT, hide=(asked,)) as sandbox:
            assert str(asked) in sandbox.hide and str(other) not in sandbox.hide
            with sandbox.open(["z = 1"]) as session:
                assert session.load_report == [{"ok": True}]
    assert not children() - before_children      # what the block started has ended (and was reaped)


def test_the_cyclic_gc_is_off_only_until_the_sandbox_is_taken(tmp_path):
    assert gc.isenabled()
    with starting(TIMEOUT, (tmp_path,)):
        assert not gc.isenabled()                # this process imports meanwhile: nothing to collect
        with grading_sandbox(TIMEOUT, hide=(tmp_path,), preload=PRELOAD_ONE):
            assert gc.isenabled()
    assert gc.isenabled()
    with starting(TIMEOUT, (tmp_path,)):
        pass
    assert gc.isenabled()


def test_course_grade_starts_the_sandbox_before_it_asks_for_it(tmp_path):
    """The time marks of a real `course grade`: its warm process starts before the grader has
    loaded the set and asks for it, once, and grading waits for it no longer than it must."""
    folder = tmp_path / "alice" / "transformer-block"
    folder.mkdir(parents=True)
    for name in ("concepts.ipynb", "build.ipynb"):
        shutil.copy(REPO / "solutions" / "transformer-block" / name, folder / name)
    marks = tmp_path / "marks"
    course = Path(sys.executable).with_name("course")
    done = subprocess.run([str(course), "grade", str(folder / "concepts.ipynb"), str(folder / "build.ipynb")],
                          cwd=REPO, env={**os.environ, MARKS: str(marks)}, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("total "), done.stdout
    order = [line.split()[0] for line in marks.read_text().splitlines()]
    assert order == ["sandbox-start", "sandbox-wanted", "sandbox-ready", "first-session", "sandbox-closed"] or \
        order == ["sandbox-start", "sandbox-ready", "sandbox-wanted", "first-session", "sandbox-closed"], order


def test_the_first_notebook_is_read_by_the_program_reader_started_early():
    while not analysis._idle.empty():            # readers earlier tests left idle
        analysis._idle.get_nowait().stop()
    started = len(analysis._started)
    analysis.warm()
    assert len(analysis._started) == started + 1 and analysis._idle.qsize() == 1
    analysis.warm()                              # one idle reader is enough
    assert len(analysis._started) == started + 1
    reading = analysis.read([("x = 1", True, True), ("%time y = x", True, True)], {}, ["cell 1", "cell 2"])
    assert reading.failure == "" and reading.program[0] == "x = 1" and "%" not in reading.program[1]
    assert len(analysis._started) == started + 1   # no other reader was started for it
