"""The unit tier (``make test-unit``): a whole problem set graded in this process, no nbgrader
command, no sandbox. The toy set (``tests/toy/``, two questions) goes through the real pipeline,
scoring, catalogue diagnosis, feedback pages and the class report; nothing outside its folder
names it."""
from __future__ import annotations

import pytest

from autograder.grader_side import pipeline
from autograder.grader_side.misconceptions import edits
from autograder.reports import feedback, report
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results
from inprocess import InProcess
from toyset import toy_course

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return toy_course(tmp_path_factory.mktemp("toy-course"))


def _grade(a, folder) -> dict:
    env = pipeline.Env(a, InProcess(), workers=1)
    return pipeline.grade(folder.name, folder, env).to_dict()


def _results(a, students: dict) -> dict:
    return validate_results({"assignment": a.name, "isolation": InProcess.isolation, "workers": 1, "seconds": 0.0,
                             "students": students})


def test_the_toy_set_loads_with_its_own_checks(toy):
    assert [c.id for c in toy.checks] == ["T1_is_a_number", "T1_value", "T2_small", "T2_reference"]
    assert toy.max_score == 5 and toy.notebooks == ("answers",)


def test_the_solution_earns_everything_and_the_release_nothing(toy, tmp_path):
    solved = _grade(toy, write_submission(tmp_path / "solved", toy).parent)
    untouched = _grade(toy, write_submission(tmp_path / "untouched", toy, untouched=True).parent)
    assert (solved["score"], untouched["score"]) == (5, 0)
    assert solved["status"] == untouched["status"] == "graded"
    _results(toy, {"solved": solved, "untouched": untouched})


def test_every_wrong_answer_loses_points_named_and_every_variant_keeps_them(toy, tmp_path):
    source = {c.grade_id: c.source for c in toy.cells("answers")}
    for entry in toy.set.catalogue + toy.set.variants:
        result = _grade(toy, write_submission(tmp_path / entry.id, toy, edits(entry, source[entry.cell])).parent)
        question = result["questions"][entry.question]
        if entry.description:
            assert question["score"] < question["max_score"], entry.id
            assert question["misconception"]["id"] == entry.id, entry.id
        else:
            assert question["score"] == question["max_score"], (entry.id, question["feedback"])


def test_feedback_and_report_speak_of_the_toy_set(toy, tmp_path):
    source = {c.grade_id: c.source for c in toy.cells("answers")}
    entry = toy.set.catalogue[0]
    students = {"a": _grade(toy, write_submission(tmp_path / "a", toy).parent),
                "b": _grade(toy, write_submission(tmp_path / "b", toy, edits(entry, source[entry.cell])).parent)}
    results = _results(toy, students)
    page = feedback.page("b", results["students"]["b"], toy.name)
    assert "Numbers and functions (answers notebook)" in page and entry.hint in page
    path = report.write_report(results, tmp_path / "report")
    text = path.read_text()
    assert "T1" in text and "T2" in text and entry.description in text
