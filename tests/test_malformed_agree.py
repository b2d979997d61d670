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
from autograder.grader_side import submitted
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
    # nbgrader's collect writes timestamp.txt, but a student's folder holds what they put there: text that
    # is not a time, a long one (nbgrader's parser slows with its square), a folder, links to the machine's
    # files (nbgrader copied every file of a submission into autograded/ following links, /dev/zero's
    # endlessly: here links to small files, refused by the same rule without risking the disk).
    (write_submission(root / "submitted" / "timestamp-not-a-time", a) / "timestamp.txt").write_text("next tuesday?")
    (write_submission(root / "submitted" / "timestamp-long", a) / "timestamp.txt").write_text("9" * 300_000)
    (write_submission(root / "submitted" / "timestamp-a-folder", a) / "timestamp.txt").mkdir()
    linked = write_submission(root / "submitted" / "linked-files", a)
    (linked / "timestamp.txt").symlink_to("/etc/hostname")
    (linked / "notes.txt").symlink_to("/etc/hostname")
    ours = api.autograde(a.name, root / "submitted", repo=root, gradebook=False)["students"]
    assert {sid: r["score"] for sid, r in ours.items()} == dict.fromkeys(ours, a.max_score)
    done = api.nbgrader("autograde", a.name, "--force", "--log-level=WARN", repo=root, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        theirs = {s.student.id: s.score for s in gb.assignment_submissions(a.name)}
    assert theirs == {sid: r["score"] for sid, r in ours.items()}
    copied = root / "autograded" / "linked-files" / a.name
    assert not (copied / "timestamp.txt").exists() and not (copied / "notes.txt").exists()
    assert "notes.txt not copied to autograded/: notes.txt is a link" in done.stdout + done.stderr


def _many_cells(nb):
    nb.cells += [nbformat.v4.new_markdown_cell("") for _ in range(submitted.MAX_CELLS + 1 - len(nb.cells))]


def _many_outputs(nb):
    cell = nbformat.v4.new_code_cell("print('x')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x\n")
                    for _ in range(submitted.MAX_OUTPUTS + 1)]
    nb.cells.append(cell)


def _long_markdown(nb):
    nb.cells.append(nbformat.v4.new_markdown_cell("*a **b [c <d `e " * (submitted.MAX_MARKUP_CELL // 16 + 1)))


def _bad_cell_id(nb):
    nb.cells[-1]["id"] = "not a cell id!"


# student -> (what makes the notebook too much, the words of the reason)
OVER_A_CAP = {
    "x_cell_id": (_bad_cell_id, "has an id that is not a notebook cell id"),
    "x_cells": (_many_cells, f"cells, over the {submitted.MAX_CELLS}-cell limit"),
    "x_outputs": (_many_outputs, f"outputs, over the {submitted.MAX_OUTPUTS}-output limit"),
    "x_markdown": (_long_markdown, f"over the {submitted.MAX_MARKUP_CELL}-character limit of a cell"),
}


def test_a_notebook_over_a_cap_scores_0_in_both_graders_and_its_classmate_does_not(course, tmp_path):
    """A notebook with more cells, outputs or markdown than the caps allow (each would slow the
    gradebook's recorder, which every student waits behind), or a cell id nbformat refuses (nbgrader's
    steps would stop on it and record 0 for the whole submission), scores 0 with a one-line reason in
    ``course autograde`` (results, gradebook, autograded/) and in ``nbgrader autograde`` (its output,
    its gradebook), the student's other notebook and a classmate in the same batch graded as usual."""
    root = tmp_path / "course"
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded"))
    a = api.Assignment("transformer-block", root)
    write_submission(root / "submitted" / "honest", a)
    notebook = a.notebooks[-1]
    for sid, (too_much, _) in OVER_A_CAP.items():
        folder = write_submission(root / "submitted" / sid, a)
        nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
        too_much(nb)
        (folder / f"{notebook}.ipynb").write_text(json.dumps(nb))    # as written: nbformat would refuse the id
    lost = sum(q.points for q in a.questions.values() if q.notebook == notebook)
    ours = api.autograde(a.name, root / "submitted", repo=root, gradebook=True, workers=2)["students"]
    assert ours["honest"]["score"] == a.max_score and not ours["honest"]["flags"]
    for sid, (_, words) in OVER_A_CAP.items():
        result = ours[sid]
        assert result["score"] == a.max_score - lost, (sid, result["score"], result.get("reason"))
        assert result["reason"].startswith(f"{notebook}.ipynb could not be read: ") and words in result["reason"]
        assert "\n" not in result["reason"]
        autograded = nbformat.read(root / "autograded" / sid / a.name / f"{notebook}.ipynb", as_version=4)
        assert words in autograded.cells[0].source.replace("\\", "")   # the course's cells, the reason on top
        assert len(autograded.cells) < 100
    recorded = _scores(root, a.name)
    assert recorded == {sid: r["score"] for sid, r in ours.items()}

    done = api.nbgrader("autograde", a.name, "--force", repo=root, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _scores(root, a.name) == recorded
    for sid, (_, words) in OVER_A_CAP.items():
        said = [line for line in (done.stdout + done.stderr).splitlines() if sid in line and words in line]
        assert said, f"nbgrader autograde's output names no reason for {sid}"


def _scores(root, assignment: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(assignment)}
