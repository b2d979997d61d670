"""`course autograde` end to end: real sandboxed children, real notebooks, hostile submissions.

One batch holds honest submissions and hostile ones; every hostile one earns no point it did
not earn honestly and gets a reason or a flag, and the honest ones score exactly as they do in a
batch of their own.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

import nbformat
import pytest

from autograder import api
from autograder.grader_side.assignment import REPO, solved
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results

TIMEOUT = 10.0   # seconds per notebook: what each endless loop costs
WRONG = ("B1-sample-variance", "B6-no-causal-mask", "B7-pre-norm-wiring")   # catalogued wrong answers


def _solution(a, cell):
    return solved(next(c.source for c in a.cells("build") if c.grade_id == cell))


def _b1(a, code):
    """The reference solution with B1's cell followed by ``code`` (which redefines layer_norm)."""
    return {"B1_code": _solution(a, "B1_code") + "\n\n" + code}


class Listener:
    """A TCP server on loopback that records whether anything connected to it."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.connections += 1
                conn.close()
            except OSError:
                continue

    def close(self):
        self.stop.set()
        self.thread.join()
        self.sock.close()


HOSTILE_B1 = {
    "patches_comparisons": """
import numpy
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
def layer_norm(x, gamma, beta, eps=1e-5):
    return x
""",
    "lying_tensor": """
class Liar(torch.Tensor):
    def __eq__(self, other): return True
    def allclose(self, *a, **k): return True
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func.__name__ in ("allclose", "equal", "__eq__", "isclose"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
def layer_norm(x, gamma, beta, eps=1e-5):
    return torch.zeros_like(x).as_subclass(Liar)
""",
    "reads_references": f"""
def layer_norm(x, gamma, beta, eps=1e-5):
    import importlib, sys
    sys.path[:0] = [{str(REPO)!r}, {str(REPO / 'solutions' / 'transformer-block')!r}]
    for found in (lambda: importlib.import_module("grading.reference.norms"),
                  lambda: importlib.import_module("autograder.grader_side.assignment")
                  .Assignment("transformer-block", __import__("pathlib").Path({str(REPO)!r}))
                  .set.reference("norms")):
        try:
            return found().layer_norm(x, gamma, beta, eps)
        except Exception:
            pass
    text = open({str(REPO / 'solutions' / 'transformer-block' / 'grading' / 'reference' / 'norms.py')!r}).read()
    namespace = {{}}
    exec(text, namespace)
    return namespace["layer_norm"](x, gamma, beta, eps)
""",
    "walks_frames": """
import sys, numpy
def layer_norm(x, gamma, beta, eps=1e-5):
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            same_shape = isinstance(value, (torch.Tensor, numpy.ndarray)) and tuple(value.shape) == tuple(x.shape)
            if same_shape and value is not x:
                return torch.as_tensor(value)
        frame = frame.f_back
    return x * 0
""",
    "exits": """
import os
def layer_norm(x, gamma, beta, eps=1e-5):
    os._exit(0)
""",
    "memory_bomb": """
def layer_norm(x, gamma, beta, eps=1e-5):
    hog = torch.empty(10**11)
    return hog[: x.numel()].reshape(x.shape)
""",
    "loops": """
def layer_norm(x, gamma, beta, eps=1e-5):
    while True:
        pass
""",
    "loops_ignoring_signals": """
import signal
def layer_norm(x, gamma, beta, eps=1e-5):
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(s, signal.SIG_IGN)
    while True:
        try:
            pass
        except BaseException:
            pass
""",
}


@pytest.fixture(scope="module")
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.fixture(scope="module")
def batch(tmp_path_factory, listener):
    """(honest-only folder, mixed folder): the same honest submissions in both."""
    from autograder.grader_side.assignment import Assignment
    from autograder.grader_side.misconceptions import edits
    from week4 import catalogue

    a = Assignment("transformer-block", REPO)
    honest_dir, mixed = tmp_path_factory.mktemp("honest"), tmp_path_factory.mktemp("mixed")
    build = {c.grade_id: c.source for c in a.cells("build")}
    by_id = {e.id: e for e in catalogue()}
    # Wrong blocks too: naming their mistake replays catalogued blocks while other threads grade,
    # and those replays must never touch the grader's own torch.
    honest = {"ref": {}, "ref2": {},
              **{f"wrong_{e.lower()}": edits(by_id[e], build[by_id[e].cell])
                 for e in WRONG}}
    for root in (honest_dir, mixed):
        for sid, e in honest.items():
            write_submission(root / sid, a, edits=e)
    for name, code in HOSTILE_B1.items():
        write_submission(mixed / f"x_{name}", a, edits=_b1(a, code), nested=False)
    write_submission(mixed / "x_kills_parent", a, extra_cells=[
        "import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
        "    except Exception:\n        pass\n"
        "for entry in os.listdir('/proc'):\n    if entry.isdigit() and int(entry) != os.getpid():\n"
        "        try:\n            os.kill(int(entry), signal.SIGKILL)\n        except Exception:\n            pass"])
    write_submission(mixed / "x_network", a, extra_cells=[
        f"import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {listener.port}), timeout=2).sendall(b'secret')\n"
        "except OSError:\n    pass"])
    write_submission(mixed / "x_top_level_loop", a, extra_cells=[
        "import signal\nfor s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "while True:\n    pass"])
    write_submission(mixed / "x_scratch_loop", a, extra_cells=["while True:\n    pass"])
    write_submission(mixed / "x_fork_bomb", a, extra_cells=[
        "import os\nfor _ in range(200):\n    try:\n        os.fork()\n    except OSError:\n        break"])
    tampered = write_submission(mixed / "x_tampered_tests", a)
    nb = nbformat.read(tampered / "build.ipynb", as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta["grade_id"].startswith("B1_"):
            cell.source, meta["points"] = "pass", 100
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("B2_w")]
    nb.cells.append(nbformat.v4.new_code_cell("check('B3_grad_x')"))
    nbformat.write(nb, tampered / "build.ipynb")
    corrupt = mixed / "x_corrupt" / "transformer-block"
    corrupt.mkdir(parents=True)
    (corrupt / "concepts.ipynb").write_text("")
    (corrupt / "build.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "x = 1"')
    (mixed / "x_not_a_notebook").mkdir()
    (mixed / "x_not_a_notebook" / "build.ipynb").write_text('{"cells": "nope"}')
    return (api.autograde("transformer-block", honest_dir, workers=2, timeout=TIMEOUT),
            api.autograde("transformer-block", mixed, workers=2, timeout=TIMEOUT))


def test_honest_scores_do_not_change_when_hostile_submissions_share_the_batch(batch):
    alone, mixed = batch
    assert alone["students"]["ref"]["score"] == alone["students"]["ref2"]["score"] == 100.0
    for entry in WRONG:
        result, question = alone["students"][f"wrong_{entry.lower()}"], entry[:2]
        lost = result["questions"][question]["max_score"] - result["questions"][question]["score"]
        assert lost > 0 and result["score"] == 100 - lost
        assert result["questions"][question]["misconception"]["id"] == entry
    for sid, result in alone["students"].items():
        assert mixed["students"][sid]["score"] == result["score"]
        assert mixed["students"][sid]["questions"] == result["questions"]


@pytest.mark.parametrize("name", HOSTILE_B1)
def test_hostile_layer_norm_earns_nothing_for_b1_and_leaves_the_rest(batch, name):
    result = batch[1]["students"][f"x_{name}"]
    assert result["status"] == "graded"
    assert result["questions"]["B1"]["score"] == 0.0, result["questions"]["B1"]
    assert result["score"] == 92.0, {q: v["score"] for q, v in result["questions"].items()}
    assert all(line.strip() for line in result["questions"]["B1"]["feedback"])


def test_a_crash_or_timeout_is_explained(batch):
    students = batch[1]["students"]
    for name in ("exits", "loops_ignoring_signals", "memory_bomb"):
        feedback = " ".join(students[f"x_{name}"]["questions"]["B1"]["feedback"])
        assert "stopped the process that runs your notebook" in feedback or "raised" in feedback, (name, feedback)
    assert "timed out" in " ".join(students["x_loops_ignoring_signals"]["flags"])


def test_killing_forking_and_connecting_change_nothing(batch, listener):
    students = batch[1]["students"]
    for name in ("x_kills_parent", "x_network", "x_fork_bomb"):
        assert students[name]["score"] == 100.0, (name, students[name]["flags"])
    assert listener.connections == 0


def test_an_endless_scratch_cell_is_interrupted_and_costs_nothing(batch):
    result = batch[1]["students"]["x_scratch_loop"]
    assert result["score"] == 100.0
    assert any("did not finish within" in error for error in result["load_errors"]["build"])


def test_a_notebook_that_never_finishes_loses_only_itself(batch):
    result = batch[1]["students"]["x_top_level_loop"]
    assert result["status"] == "graded"
    assert result["score"] == 30.0   # concepts graded in full; build never finished
    assert any("did not finish running" in flag and "timed out" in flag for flag in result["flags"])


def test_tampered_test_cells_change_no_score_and_are_reported(batch):
    result = batch[1]["students"]["x_tampered_tests"]
    assert result["score"] == 100.0
    flags = " ".join(result["flags"])
    for words in ("B1_worked_example was edited", "points of B1_worked_example changed",
                  "B2_worked_example was deleted", "retyped"):
        assert words in flags, words


def test_unreadable_notebooks_fail_with_one_line_reasons(batch):
    corrupt = batch[1]["students"]["x_corrupt"]
    assert corrupt["status"] == "failed" and corrupt["score"] == 0.0
    assert "concepts.ipynb could not be read: the file is empty" in corrupt["reason"]
    assert "build.ipynb could not be read: not valid JSON" in corrupt["reason"]
    other = batch[1]["students"]["x_not_a_notebook"]
    assert "concepts.ipynb is missing" in other["reason"] and "no list of cells" in other["reason"]


def test_results_follow_the_documented_shape(batch):
    results = batch[1]
    assert results["assignment"] == "transformer-block"
    for r in results["students"].values():
        assert set(r) >= {"status", "reason", "score", "max_score", "questions"}
        assert r["status"] in ("graded", "failed") and r["max_score"] == 100.0
        if r["status"] == "graded":
            assert list(r["questions"]) == ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8",
                                            "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9"]
            for q in r["questions"].values():
                assert {"score", "max_score", "feedback"} <= set(q)
    json.dumps(results)


def test_the_command_line_writes_results_and_csv_and_exits_0(course, assignment, tmp_path):
    """Run in a course folder, as a TA does; with --gradebook, another folder's grades go into the
    course's gradebook too."""
    import shutil

    course = shutil.copytree(course, tmp_path / "course", symlinks=True,
                             ignore=shutil.ignore_patterns("submitted", "autograded", "feedback"))
    submissions = tmp_path / "class"
    write_submission(submissions / "only", assignment)
    out, grades = tmp_path / "r.json", tmp_path / "g.csv"
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", "transformer-block", "--submissions",
                           str(submissions), "--out", str(out), "--csv", str(grades), "--workers", "1", "--gradebook"],
                          capture_output=True, text=True, timeout=300, cwd=course)
    assert done.returncode == 0, done.stderr
    assert validate_results(json.loads(out.read_text()))["students"]["only"]["score"] == 100.0
    header, row = grades.read_text().splitlines()[:2]
    assert header.startswith("student,C1,C2") and "status" in header and row.startswith("only,8")
    assert "only" in done.stdout and "100" in done.stdout
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_submission("transformer-block", "only").score == 100.0


def test_a_missing_submissions_folder_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", "transformer-block", "--submissions",
                           str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no submissions folder" in done.stderr


def test_a_negative_worker_count_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", "transformer-block", "--workers", "-2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "'-2' is not a number of workers" in done.stderr
