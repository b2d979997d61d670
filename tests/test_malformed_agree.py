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


# ---- a graded cell's nbgrader metadata, corrupted ---------------------------------------------------

def _meta(grade_id: str, change):
    """A corruption of the cell ``grade_id``'s metadata (of the notebook that has it) by ``change``."""
    def corrupt(nb) -> None:
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
                change(cell)
    return corrupt


def _set(**values):
    return lambda cell: cell.metadata.nbgrader.update(values)


def _swap_type(cell) -> None:
    if cell.cell_type == "code":
        cell.cell_type = "markdown"
        cell.pop("outputs", None), cell.pop("execution_count", None)
    else:
        cell.update(cell_type="code", outputs=[], execution_count=None)


TEST, ANSWER, MANUAL = "B1_random_affine", "B1_code", "C8_answer"   # a check cell, B1's answer, C8's (by hand)
# student -> a corruption of one cell's nbgrader metadata. The right score is the honest student's in
# every case: the course's checks decide the points, and the course's cells are the course's (nbgrader's
# OverwriteCells puts a cell's type, points and checksum back from the source), whatever the metadata says.
CORRUPTED = {
    "test_meta_deleted": _meta(TEST, lambda c: c.metadata.pop("nbgrader")),
    "answer_meta_deleted": _meta(ANSWER, lambda c: c.metadata.pop("nbgrader")),
    "manual_meta_deleted": _meta(MANUAL, lambda c: c.metadata.pop("nbgrader")),
    "test_meta_null": _meta(TEST, lambda c: c.metadata.update(nbgrader=None)),
    "answer_meta_a_list": _meta(ANSWER, lambda c: c.metadata.update(nbgrader=[1])),
    "answer_metadata_a_string": _meta(ANSWER, lambda c: c.update(metadata="x")),
    "test_id_changed": _meta(TEST, _set(grade_id="B1_mine")),
    "test_id_emptied": _meta(TEST, _set(grade_id="")),
    "test_id_a_number": _meta(TEST, _set(grade_id=7)),
    "test_id_another_tests": _meta(TEST, _set(grade_id="B1_near_constant")),
    "answer_id_changed": _meta(ANSWER, _set(grade_id="B1_mine")),
    "answer_id_a_list": _meta(ANSWER, _set(grade_id=[ANSWER])),
    "answer_id_a_tests": _meta(ANSWER, _set(grade_id=TEST)),
    "manual_id_changed": _meta(MANUAL, _set(grade_id="C8_mine")),
    "given_id_changed": _meta("build_code_2", _set(grade_id="mine")),
    "test_points_edited": _meta(TEST, _set(points=40)),
    "test_points_text": _meta(TEST, _set(points="many")),
    "test_points_null": _meta(TEST, _set(points=None)),
    "manual_points_edited": _meta(MANUAL, _set(points=40)),
    "test_grade_false": _meta(TEST, _set(grade=False)),
    "manual_grade_false": _meta(MANUAL, _set(grade=False)),
    "answer_solution_false": _meta(ANSWER, _set(solution=False)),
    "answer_locked": _meta(ANSWER, _set(locked=True)),
    "answer_locked_text": _meta(ANSWER, _set(locked="no")),
    "answer_a_task": _meta(ANSWER, _set(task=True)),
    "test_unlocked": _meta(TEST, _set(locked=False)),
    "test_checksum_changed": _meta(TEST, _set(checksum="0" * 32)),
    "manual_checksum_changed": _meta(MANUAL, _set(checksum="0" * 32)),
    "test_type_swapped": _meta(TEST, _swap_type),
    "answer_type_swapped": _meta(ANSWER, _swap_type),
    "manual_type_swapped": _meta(MANUAL, _swap_type),
    "answer_recorded_type_changed": _meta(ANSWER, _set(cell_type="markdown")),
    "test_schema_too_new": _meta(TEST, _set(schema_version=99)),
    "test_schema_text": _meta(TEST, _set(schema_version="3")),
    "answer_schema_too_old": _meta(ANSWER, _set(schema_version=1)),
    "answer_schema_deleted": _meta(ANSWER, lambda c: c.metadata.nbgrader.pop("schema_version")),
    "answer_extra_key": _meta(ANSWER, _set(extra="x")),
}


def test_both_graders_give_each_question_its_score_whatever_a_cells_metadata_says(course, tmp_path):
    """A student who corrupts the nbgrader metadata of a graded cell (deletes it, changes its id,
    points, grade flag, checksum, schema version or cell type) scores exactly what an honest
    classmate with the same answers scores, question by question, in ``course autograde``'s
    results, in the gradebook it records, and in ``nbgrader autograde``'s gradebook (which scored
    some of them 0 for the whole notebook, or lost the answer of a cell whose type was swapped)."""
    root = tmp_path / "course"
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded"))
    a = api.Assignment("transformer-block", root)
    write_submission(root / "submitted" / "honest", a)
    for sid, corrupt in CORRUPTED.items():
        folder = write_submission(root / "submitted" / sid, a)
        for notebook in a.notebooks:
            nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
            corrupt(nb)
            (folder / f"{notebook}.ipynb").write_text(json.dumps(nb))   # as written: nbformat may refuse it
    ours = api.autograde(a.name, root / "submitted", repo=root, gradebook=True, workers=2)["students"]
    right = _by_question(ours["honest"])
    assert right[0] == {qid: float(q.points) for qid, q in a.questions.items() if not q.manual}
    unscored = {sid: (r.get("status"), r.get("reason"), r.get("flags"))
                for sid, r in ours.items() if not r["questions"]}
    assert {sid: _by_question(r) for sid, r in ours.items()} == dict.fromkeys(ours, right), unscored
    assert {sid: r["score"] for sid, r in ours.items()} == dict.fromkeys(ours, ours["honest"]["score"])
    recorded = _gradebook_by_question(root, a.name)
    assert recorded == dict.fromkeys(ours, right), "course autograde's gradebook differs from its results"
    done = api.nbgrader("autograde", a.name, "--force", "--log-level=WARN", repo=root, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _gradebook_by_question(root, a.name) == recorded, "nbgrader autograde differs from course autograde"


def _by_question(result: dict) -> tuple[dict[str, float], set[str]]:
    """(question -> points, of the questions scored; the questions waiting for a TA) of one result."""
    questions = result["questions"]
    return ({qid: q["score"] for qid, q in questions.items() if q["score"] is not None},
            {qid for qid, q in questions.items() if q["score"] is None})


def _gradebook_by_question(root, assignment: str) -> dict[str, tuple[dict[str, float], set[str]]]:
    """student -> what ``_by_question`` gives, as the gradebook holds it (a grade waiting for a TA with
    no score yet is waiting, not scored)."""
    found = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for s in gb.assignment_submissions(assignment):
            scores: dict[str, float] = {}
            waiting = set()
            for notebook in s.notebooks:
                for grade in notebook.grades:
                    qid = grade.name.partition("_")[0]
                    if grade.needs_manual_grade and grade.manual_score is None and grade.auto_score is None:
                        waiting.add(qid)
                    else:
                        scores[qid] = scores.get(qid, 0.0) + grade.score
            found[s.student.id] = (scores, waiting)
    return found
