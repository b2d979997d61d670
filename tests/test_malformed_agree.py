"""A notebook a student broke by accident (a check cell pasted twice, a solution cell's metadata
edited into a graded cell worth 1000 points, an nbformat header changed) is graded the same way
by ``nbgrader autograde`` and ``course autograde``: the course's cells and points, the student's
answers, and no stopped notebook."""
from __future__ import annotations

import copy
import json
import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import api
from autograder.tooling.sampleclass import write_submission

pytestmark = pytest.mark.slow


def _pasted_twice(nb):
    i = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade") and
             c.cell_type == "code")
    nb.cells.insert(i + 1, copy.deepcopy(nb.cells[i]))


def _solution_claims_points(nb):
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code")
    cell.metadata["nbgrader"].update(grade=True, points=1000)


BREAKAGES = {"pasted-twice": _pasted_twice, "solution-claims-points": _solution_claims_points}


def test_both_graders_agree_on_accidentally_broken_notebooks(course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded"))
    a = api.Assignment("transformer-block", root)
    for name, breakage in BREAKAGES.items():
        folder = write_submission(root / "submitted" / name, a)
        for notebook in a.notebooks:
            nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
            breakage(nb)
            nbformat.write(nb, folder / f"{notebook}.ipynb")
    folder = write_submission(root / "submitted" / "header-says-v3", a)
    for notebook in a.notebooks:
        raw = json.loads((folder / f"{notebook}.ipynb").read_text())
        raw["nbformat"] = 3
        (folder / f"{notebook}.ipynb").write_text(json.dumps(raw))
    ours = api.autograde(a.name, root / "submitted", repo=root, gradebook=False)["students"]
    assert {sid: r["score"] for sid, r in ours.items()} == dict.fromkeys(ours, a.max_score)
    done = api.nbgrader("autograde", a.name, "--force", "--log-level=ERROR", repo=root, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        theirs = {s.student.id: s.score for s in gb.assignment_submissions(a.name)}
    assert theirs == {sid: r["score"] for sid, r in ours.items()}
