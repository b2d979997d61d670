"""Plain `nbgrader autograde`, as a TA types it, grades through the sandbox.

One class holds honest submissions (some of only the two notebooks, as an LMS download gives
them) and hostile ones: patched comparisons, `os._exit`, killing the parent, an endless loop that
ignores signals, edited test cells, a corrupt file. The run completes, nobody earns a point they did
not earn, everyone else is graded, and the gradebook agrees check by check with `course autograde`.
"""
import nbformat
import pytest

from autograder import api
from autograder.grader_side.assignment import solved
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import ASSIGNMENT, clone_course, course_checks, gradebook_checks

pytestmark = pytest.mark.slow

TIMEOUT = "20"   # seconds per notebook: what the endless loop costs (with room for a loaded machine)

HOSTILE = {
    # Wrong B1 plus every comparison patched to say "equal".
    "patches_comparisons": "import numpy\ntorch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
                           "numpy.allclose = lambda *a, **k: True\n"
                           "def layer_norm(x, gamma, beta, eps=1e-5):\n    return x\n",
    "exits": "import os\ndef layer_norm(x, gamma, beta, eps=1e-5):\n    os._exit(0)\n",
    "loops_ignoring_signals": "import signal\nfor s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):\n"
                              "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n",
    "kills_parent": "import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n"
                    "        os.kill(pid, signal.SIGKILL)\n    except Exception:\n        pass\n",
}


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    root = clone_course(course, tmp_path_factory.mktemp("nbgrader-sandbox"))
    from autograder.grader_side.assignment import Assignment

    a = Assignment(ASSIGNMENT, root)
    submitted = root / "submitted"
    write_submission(submitted / "ref", a)
    write_submission(submitted / "blank", a, untouched=True)
    build = {c.grade_id: c.source for c in a.cells("build")}
    write_submission(submitted / "x_patches_comparisons", a,
                     edits={"B1_code": solved(build["B1_code"]) + HOSTILE["patches_comparisons"]})
    write_submission(submitted / "x_exits", a, edits={"B1_code": solved(build["B1_code"]) + HOSTILE["exits"]})
    for name in ("loops_ignoring_signals", "kills_parent"):
        write_submission(submitted / f"x_{name}", a, extra_cells=[HOSTILE[name]])
    tampered = write_submission(submitted / "x_tampered_tests", a)
    nb = nbformat.read(tampered / "build.ipynb", as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta["grade_id"].startswith("B1_"):
            cell.source, meta["points"] = "pass", 100
    nbformat.write(nb, tampered / "build.ipynb")
    madeup = write_submission(submitted / "x_made_up_test", a)
    nb = nbformat.read(madeup / "build.ipynb", as_version=4)
    for meta in ({"grade": True, "grade_id": "bonus", "points": 40, "locked": True}, {"grade": True, "points": 9}):
        nb.cells.append(nbformat.v4.new_code_cell("print('bonus')", metadata={"nbgrader": meta}))
    nbformat.write(nb, madeup / "build.ipynb")
    corrupt = write_submission(submitted / "x_corrupt", a)
    (corrupt / "build.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "x = 1"')
    done = api.nbgrader("autograde", ASSIGNMENT, "--force", f"--SandboxExecute.timeout={TIMEOUT}",
                        repo=root, check=False)
    return root, done, gradebook_checks(root)


def test_the_run_completes_and_grades_every_readable_submission(graded):
    root, done, book = graded
    # nbgrader reports the one unreadable notebook (exit 1) after grading everyone else.
    assert "x_corrupt" in done.stderr
    for sid in ("ref", "blank", "x_patches_comparisons", "x_exits", "x_loops_ignoring_signals", "x_kills_parent",
                "x_tampered_tests", "x_made_up_test"):
        assert (root / "autograded" / sid / ASSIGNMENT / "build.ipynb").is_file(), done.stderr[-3000:]
        assert (root / "autograded" / sid / ASSIGNMENT / "concepts.ipynb").is_file()


def test_honest_work_is_graded_and_hostile_work_earns_nothing_undeserved(graded):
    root, done, book = graded
    full = sum(v for v in book["ref"].values() if v is not None)
    assert full == 100.0
    assert sum(v or 0 for v in book["blank"].values()) == 0.0
    for sid in ("x_patches_comparisons", "x_exits"):
        b1 = {k: v for k, v in book[sid].items() if k.startswith("B1_")}
        assert b1 and all(v == 0 for v in b1.values()), (sid, b1)
    # Tampered test cells are put back and graded from the course's copy: full marks, not 100 per cell.
    assert sum(v or 0 for v in book["x_tampered_tests"].values()) == 100.0
    # Graded cells a submission made up are forgotten: neither counted nor able to stop the run.
    assert sum(v or 0 for v in book["x_made_up_test"].values()) == 100.0 and "bonus" not in book["x_made_up_test"]
    assert sum(v or 0 for v in book.get("x_corrupt", {}).values()) <= 30.0   # at most its concepts.ipynb


def test_the_gradebook_agrees_check_by_check_with_course_autograde(graded):
    root, done, book = graded
    results = api.autograde(ASSIGNMENT, root / "submitted", workers=2, timeout=float(TIMEOUT), repo=root,
                            gradebook=False)
    assert any("is not one of the course's" in f for f in results["students"]["x_made_up_test"]["flags"])
    ours = course_checks(results)
    for sid, checks in ours.items():
        if sid == "x_corrupt":
            continue
        theirs = {k: v for k, v in book[sid].items() if k in checks}
        assert theirs == checks, sid
    # course autograde's own gradebook writer forgets the made-up cell too.
    api.record_gradebook({**results, "students": {"x_made_up_test": results["students"]["x_made_up_test"]}},
                         root / "submitted", root)
    assert sum(v or 0 for v in gradebook_checks(root)["x_made_up_test"].values()) == 100.0


def test_no_hidden_test_source_in_the_autograded_notebooks(graded):
    root, done, book = graded
    for path in (root / "autograded").rglob("*.ipynb"):
        text = path.read_text()
        assert "HIDDEN TESTS" not in text and "hidden_check" not in text, path


def test_each_lost_point_shows_its_reason_in_the_test_cell(graded):
    root, done, book = graded
    nb = nbformat.read(root / "autograded" / "x_exits" / ASSIGNMENT / "build.ipynb", as_version=4)
    outputs = {c.metadata.nbgrader["grade_id"]: c.outputs for c in nb.cells
               if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"}
    (error,) = outputs["B1_worked_example"]
    assert error.output_type == "error" and "your code stopped the process that runs your notebook" in error.evalue
    (passed,) = outputs["B2_worked_example"]
    assert passed.output_type == "stream" and passed.text.startswith("passed B2_worked_example")
