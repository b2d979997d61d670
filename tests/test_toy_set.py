"""A set the grader has never heard of: the toy set (``tests/toy/``, two questions) goes through
nbgrader's release, both graders (``course autograde`` into the gradebook, ``nbgrader autograde``
through the sandbox), the mutation report, feedback and the class report, with nothing outside its
own folder naming it."""
from __future__ import annotations

import subprocess

import pytest
from nbgrader.api import Gradebook

from autograder import api, mutants
from autograder.grader_side.assignment import REPO
from autograder.reports import feedback, report
from autograder.tooling.sampleclass import write_submission
from toyset import TOY, toy_course

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return toy_course(tmp_path_factory.mktemp("toy-course"))


def test_nothing_outside_the_toy_folder_names_it():
    found = subprocess.run(["git", "grep", "-l", "-E", r"\btoy\b|T1_|T2_|t1_answer", "--", "autograder"],
                           cwd=REPO, capture_output=True, text=True)
    assert found.stdout == ""


def test_the_release_ships_the_runtime_and_leaks_nothing(toy):
    release = toy.release_dir
    shipped = sorted(str(p.relative_to(release)) for p in release.rglob("*") if p.is_file())
    assert "student_side/checks/basics.py" in shipped and "student_side/server.py" in shipped
    assert not any(p.startswith("grading") for p in shipped)
    text = (release / "answers.ipynb").read_text()
    assert "hidden_check" not in text and "t1_answer = 42" not in text and "return 2 * x" not in text


def test_both_graders_agree_on_a_class_of_the_toy_set(toy):
    root = toy.root
    source = {c.grade_id: c.source for c in toy.cells("answers")}
    from autograder.grader_side.misconceptions import edits

    write_submission(root / "submitted" / "solved", toy)
    write_submission(root / "submitted" / "untouched", toy, untouched=True)
    for entry in toy.set.catalogue:
        write_submission(root / "submitted" / entry.id, toy, edits(entry, source[entry.cell]))
    ours = api.autograde("toy", root / "submitted", repo=root, gradebook=True)["students"]
    assert ours["solved"]["score"] == 5 and ours["untouched"]["score"] == 0
    assert all(ours[e.id]["score"] < 5 for e in toy.set.catalogue)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        recorded = {s.student.id: s.score for s in gb.assignment_submissions("toy")}
    assert recorded == {sid: r["score"] for sid, r in ours.items()}
    api.nbgrader("autograde", "toy", "--force", "--log-level=ERROR", repo=root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        theirs = {s.student.id: s.score for s in gb.assignment_submissions("toy")}
    assert theirs == recorded
    results = {"assignment": "toy", "students": ours}
    pages = feedback.write_pages(results, root / "feedback-pages")
    assert len(pages) == len(ours) and all("toy" in p.read_text() for p in pages)
    assert "T2" in report.write_report(results, root / "report").read_text()


def test_the_mutation_report_of_the_toy_set_is_perfect_in_both_graders(toy):
    result = mutants.run("toy", repo=toy.root)
    assert result.perfect and not result.unexercised("course"), result.table()
    assert TOY.is_dir()
