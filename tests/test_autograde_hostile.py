"""`course autograde` against submissions that attack the grader's side: links, huge files,
huge replies, and a class graded where student code cannot be isolated.

Every attack gets a one-line reason or loses its points, and the honest copy in the same batch
keeps its exact score.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder import api
from autograder.grader_side.assignment import REPO, Assignment
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results

TIMEOUT = 10.0   # seconds per notebook: what each endless loop costs
BIG_REPLIES = """
import torch
_big = torch.zeros(15_000_000)          # 60 MB, whatever a check asks
for _name, _value in list(globals().items()):
    if not _name.startswith('_') and callable(_value) and getattr(_value, '__module__', None) == '__main__':
        globals()[_name] = (lambda *a, **k: _big)
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    a = Assignment("transformer-block", REPO)
    root = tmp_path_factory.mktemp("hostile")
    honest = write_submission(root / "honest", a)                       # honest/transformer-block/*.ipynb
    for name in a.notebooks:                                            # links to another student's notebooks
        (root / "x_links_to_honest").mkdir(exist_ok=True)
        os.symlink(honest / f"{name}.ipynb", root / "x_links_to_honest" / f"{name}.ipynb")
    (root / "x_links_to_shadow").mkdir()
    for name in a.notebooks:
        os.symlink("/etc/shadow", root / "x_links_to_shadow" / f"{name}.ipynb")
    (root / "x_folder_link").mkdir()
    os.symlink(honest, root / "x_folder_link" / a.name)                 # the assignment folder is a link
    os.symlink(root / "honest", root / "x_student_link")                # the student's folder is a link
    (root / "x_fifo").mkdir()
    for name in a.notebooks:
        os.mkfifo(root / "x_fifo" / f"{name}.ipynb")
    sparse = root / "x_sparse"
    sparse.mkdir()
    for name in a.notebooks:
        with open(sparse / f"{name}.ipynb", "wb") as f:
            f.truncate(2 << 30)                                         # 2 GiB, no disk used
    (root / "x_tiny_values").mkdir()
    (root / "x_tiny_values" / "concepts.ipynb").write_text('{"cells": [' + "{}," * 600_000 + "{}]}")
    write_submission(root / "x_big_replies", a, extra_cells=[BIG_REPLIES])
    return a, api.autograde("transformer-block", root, workers=2, timeout=TIMEOUT)


def test_the_honest_copy_keeps_its_exact_score(batch):
    a, results = batch
    honest = results["students"]["honest"]
    assert honest["status"] == "graded" and honest["score"] == 100.0 == a.max_score
    assert not honest["flags"]


@pytest.mark.parametrize("sid, words", [
    ("x_links_to_honest", "concepts.ipynb is a link; submit the notebook file itself"),
    ("x_links_to_shadow", "build.ipynb is a link; submit the notebook file itself"),
    ("x_folder_link", "transformer-block/concepts.ipynb is inside a link (transformer-block)"),
    ("x_student_link", "concepts.ipynb is inside a link (x_student_link)"),
    ("x_fifo", "concepts.ipynb is not a regular file"),
    ("x_sparse", "concepts.ipynb could not be read: it is 2048 MiB, over the 20 MiB limit"),
    ("x_tiny_values", "JSON values, over the 1000000 limit"),
])
def test_links_and_odd_files_are_refused_with_one_line_reasons(batch, sid, words):
    result = batch[1]["students"][sid]
    assert result["score"] == 0.0 and result["status"] == "failed", result
    assert words in result["reason"] and "\n" not in result["reason"]


def test_huge_replies_fail_their_checks_and_nothing_else(batch):
    result = batch[1]["students"]["x_big_replies"]
    assert result["status"] == "graded"
    assert result["questions"]["B1"]["score"] == 0.0
    messages = " ".join(row["message"] for q in result["questions"].values() for row in q.get("checks") or [])
    assert "output limit" in messages
    assert result["questions"]["C1"]["score"] == result["questions"]["C1"]["max_score"]   # concepts untouched


def test_without_namespaces_course_autograde_refuses_unless_told(tmp_path):
    """Graded where namespaces are denied (a seccomp filter, as some containers have)."""
    if not shutil.which("bwrap"):
        pytest.skip("needs bubblewrap (make sandbox)")
    write_submission(tmp_path / "class" / "only", Assignment("transformer-block", REPO))
    wrapper = ("import os, sys\n"
               "from autograder.grader_side.sandbox import seccomp, syscalls\n"
               "syscalls.load_seccomp(seccomp.build(deny_sysv_ipc=False))\n"
               "from autograder import cli\n"
               "sys.exit(cli.main(sys.argv[1:]))\n")
    command = [sys.executable, "-c", wrapper, "autograde", "transformer-block", "--submissions",
               str(tmp_path / "class"), "--out", str(tmp_path / "r.json"), "--workers", "1", "--no-gradebook"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("course autograde: student code cannot be isolated here: ")
    assert "--allow-weak-isolation" in last
    assert not (tmp_path / "r.json").exists()
    # As root the session's uid must read the Python: here it lives under /root, so the grader runs in a
    # view where it is searchable by anyone, as in a container image (else it stops, never grading as root).
    from test_isolation_modes import _python_view

    view = ["bwrap", *_python_view(), "--"] if os.geteuid() == 0 else []
    weak = subprocess.run([*view, *command, "--allow-weak-isolation"], capture_output=True, text=True, timeout=300)
    assert weak.returncode == 0, weak.stderr[-2000:]
    results = validate_results(json.loads((tmp_path / "r.json").read_text()))
    assert results["isolation"]["weak"] and results["isolation"]["filesystem"].startswith("not isolated")
    assert results["students"]["only"]["score"] == 100.0
    assert "weak isolation" in weak.stderr


SPY = '''
_permutes_with_input = permutes_with_input


def permutes_with_input(f, X, perm, atol=1e-5):
    global q7_2017_paper
    q7_2017_paper = "SEEN " + repr((tuple(X.shape), list(perm), atol))
    return _permutes_with_input(f, X, perm, atol)
'''


def test_answers_are_read_before_hidden_inputs_reach_student_code(assignment, tmp_path):
    """Code called with a hidden check's inputs cannot smuggle them into an answer that a TA's review
    or the feedback would quote: every answer is read before any function of the student's is called."""
    from autograder.grader_side.assignment import solved

    source = {c.grade_id: c.source for c in assignment.cells("concepts")}
    write_submission(tmp_path / "class" / "spy", assignment, edits={"C1_code": solved(source["C1_code"]) + SPY})
    result = api.autograde("transformer-block", tmp_path / "class", workers=1, repo=assignment.root)["students"]["spy"]
    assert "SEEN" not in json.dumps(result)
    assert result["questions"]["C7"]["score"] == result["questions"]["C7"]["max_score"]
