"""``nbgrader autograde``'s log is a door to the TA's terminal: every line it writes may carry text a
submission controls (a made-up graded cell's id, a cell id, a file name, an error's text, a student
id). Through the course's ``nbgrader_config.py`` every record of every nbgrader command run in the
course folder (autograde, generate_feedback, zip_collect...) is written without escape sequences or
control characters."""
from __future__ import annotations

import shutil

import nbformat
import pytest

from autograder import api
from autograder.tooling.sampleclass import write_submission
from hostile_text import HOSTILE, PAYLOAD, assert_clean

pytestmark = pytest.mark.slow

RAISES = f"raise ValueError({PAYLOAD!r})\n"
# A line break, then what passes for a line of nbgrader's log.
FORGED = "\n[AutogradeApp | ERROR] forged"
# Without NUL or "/": a name a file system takes.
NAME = "x" + "".join(HOSTILE[:6]).replace("/", "") + "\u202eevil"


def _made_up_cells(nb) -> None:
    """A made-up graded cell whose grade_id is the payload, and cells that raise it."""
    made_up = nbformat.v4.new_code_cell(RAISES)
    made_up.metadata["nbgrader"] = {"grade": True, "grade_id": PAYLOAD + FORGED, "points": 5, "solution": False,
                                    "locked": False, "schema_version": 3}
    nb.cells += [made_up, nbformat.v4.new_code_cell(RAISES)]


def _hostile_cell_id(nb) -> None:
    """A cell whose id carries escape sequences (the reader refuses the notebook, naming the id)."""
    nb.cells[-1]["id"] = "bad-id" + HOSTILE[1]


def _write(folder, a, change) -> None:
    for notebook in a.notebooks:
        nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
        change(nb)
        nbformat.write(nb, folder / f"{notebook}.ipynb", version=nbformat.NO_CONVERT)


def test_nbgrader_autograde_writes_no_escape_sequence_a_submission_put_in_its_log(course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded"))
    a = api.Assignment("transformer-block", root)
    write_submission(root / "submitted" / "honest", a)
    folder = write_submission(root / "submitted" / "hostile_cells", a)
    _write(folder, a, _made_up_cells)
    (folder / f"{NAME}.txt").write_text(PAYLOAD)
    # A cell id nbformat refuses, a timestamp that is not a time: students of their own.
    _write(write_submission(root / "submitted" / "hostile_cell_id", a), a, _hostile_cell_id)
    (write_submission(root / "submitted" / "hostile_time", a) / "timestamp.txt").write_text(PAYLOAD)
    done = api.nbgrader("autograde", a.name, "--force", "--log-level=INFO", repo=root, check=False)
    output = done.stdout + done.stderr
    for words in ("hostile_cells: build: a cell claims to be graded (hostile ",
                  "has an id that is not a notebook cell id ('bad-id", "timestamp.txt is not a time"):
        assert words in output, output[-3000:]   # the log speaks of the hostile students
    assert_clean(output, "nbgrader autograde")
    flags = [line for line in output.splitlines() if "hostile_cells: build: a cell claims to be graded" in line]
    assert flags and all("forged" in line for line in flags)   # a flag is one line
    # The other commands load the same configuration: generate_feedback copies the oddly named file.
    done = api.nbgrader("generate_feedback", a.name, "--force", "--log-level=INFO", repo=root, check=False)
    assert "hostile_cells" in done.stdout + done.stderr and ".txt" in done.stdout + done.stderr
    assert_clean(done.stdout + done.stderr, "nbgrader generate_feedback")
    # A student id a submission folder's name gives.
    write_submission(root / "submitted" / NAME, a)
    done = api.nbgrader("autograde", a.name, "--force", "--log-level=INFO", repo=root, check=False)
    assert_clean(done.stdout + done.stderr, "nbgrader autograde of a hostile student id")
