"""Week 5's B7 answers are read off the trained model, which only a cell the grader never runs loads
(it shows the student something). Computed in code from that model, they work in the student's
notebook and fail when it is graded: the notebook's own check cell says so before submission, and
the grader's message says what happened (not "fix that cell", which ran fine for the student)."""
from __future__ import annotations

import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import api
from autograder.tooling.sampleclass import write_submission

pytestmark = pytest.mark.slow

COMPUTED = '''
with torch.no_grad():
    rows = LensLM()
    rows.load_state_dict(trained.state_dict())
    b7_drop = float(token_probability(rows(torch.tensor([15, 11, 1, 6, 15, 7, 13])), 15)[-1]) - 0.4669
b7_settled = 3
'''


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    """A course, and one student who solved everything but computed B7's numbers from `trained`."""
    root = tmp_path_factory.mktemp("written-out")
    a = api.make_course(root / "course", "inside-the-block")
    folder = write_submission(root / "student", a, edits={"B7_answers": COMPUTED})
    return root, a, folder


def _outputs(nb, grade_id: str) -> str:
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return "\n".join(o.get("text", "") + o.get("evalue", "") + str(o.get("data", {}).get("text/plain", ""))
                     for o in cell.get("outputs", []))


def test_the_notebook_says_to_write_the_value_itself_before_submission(computed):
    """Run as the student runs it, next to the trained model: the answers exist, and the hidden check
    cell of b7_drop fails with what to do."""
    root, a, folder = computed
    work = root / "run"
    shutil.copytree(a.release_dir, work)
    shutil.copy(folder / "build.ipynb", work / "build.ipynb")
    nb = nbformat.read(work / "build.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, allow_errors=True, resources={"metadata": {"path": str(work)}}).execute()
    said = _outputs(nb, "B7_drop")
    assert "`b7_drop` is computed from `rows`, `token_probability`, `torch`" in said, said
    assert "write the value itself" in said and "without the trained model" in said
    assert "written" in _outputs(nb, "B7_settled")          # a value: ready says so
    assert "computed from" not in _outputs(nb, "B7_settled")


def test_the_grader_says_the_value_came_from_a_cell_it_does_not_run(computed):
    root, a, folder = computed
    result = api.grade_one(sorted(folder.glob("*.ipynb")), a.name, course=root / "course")["students"]["student"]
    b7 = result["questions"]["B7"]
    failed = {row["id"]: row["message"] for row in b7["checks"] if not row["passed"]}
    assert set(failed) == {"B7_drop", "B7_settled"}, failed          # the cell stopped at b7_drop's line
    for message in failed.values():
        assert "uses `trained`, which only a cell the grader does not run defines" in message, message
        assert "Fix that cell" not in message
    assert b7["score"] == b7["max_score"] - 2
