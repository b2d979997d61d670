"""A course runs several sets, and its submitted/ holds students who handed in some of them:
``course autograde <set>`` grades and records exactly the students nbgrader's own autograde would
(those with ``submitted/<student>/<set>/``), never a student who handed in only another set."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder import api
from autograder.grader_side.assignment import Assignment
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import clone_course

pytestmark = pytest.mark.slow

A = "transformer-block"


def test_a_student_of_another_set_is_neither_graded_nor_recorded(course, tmp_path):
    root = clone_course(course, tmp_path / "course")
    assert "inside-the-block" in api.problem_sets(root)
    a = Assignment(A, root)
    write_submission(root / "submitted" / "alice", a)
    week5 = write_submission(root / "submitted" / "bob", a)          # bob handed in week 5 only:
    shutil.move(week5, week5.parent / "inside-the-block")             # the same notebook names, another set
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", A, "--workers", "1",
                           "--out", str(out)], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(json.loads(out.read_text())["students"]) == ["alice"]
    assert "are not graded: bob" in done.stderr     # said, so a TA can look
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assert gb.find_submission(A, "alice").score == 100     # every autograded point (C8 waits for a TA)
        with pytest.raises(MissingEntry):
            gb.find_submission(A, "bob")
    assert not (root / "autograded" / "bob").exists()


def test_a_set_nobody_handed_in_is_refused_and_writes_nothing(course, tmp_path):
    root = clone_course(course, tmp_path / "course")
    write_submission(root / "submitted" / "alice", Assignment(A, root))
    out = tmp_path / "results.json"
    out.write_text("week 4's results")
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", "inside-the-block", "--out", str(out)],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "no submission of inside-the-block in" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert out.read_text() == "week 4's results"
