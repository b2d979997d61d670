"""The API and tooling work on the course folder they are given, or the one they run in (like
nbgrader), never on the kit's own checkout: a course holding only the toy set, with its own
schedule, is read, graded, packaged and copied as itself."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from autograder import api, demo
from autograder.course import Course
from autograder.grader_side.assignment import REPO, Assignment
from autograder.tooling import gradescope
from autograder.tooling.sampleclass import write_submission
from toyset import toy_course

SCHEDULE = 'timezone = "Europe/Berlin"\n[[weeks]]\nweek = 1\ndue = 2027-01-08\nassignment = "toy"\n'


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    """A course folder that is not the kit's checkout: only the toy set, released, and a schedule
    that releases it in week 1."""
    root = tmp_path_factory.mktemp("toy-course")
    toy_course(root)
    (root / "course").mkdir()
    (root / "course" / "schedule.toml").write_text(SCHEDULE)
    return root


def test_what_a_course_holds_is_read_from_the_folder_it_runs_in(toy, monkeypatch):
    monkeypatch.chdir(toy)
    assert api.problem_sets() == ["toy"]
    assert [week["assignment"] for week in api.schedule()] == ["toy"]
    assert api.scheduled(1) == "toy"
    assert demo.sets() == ["toy"]
    with pytest.raises(api.CourseError, match=r"week 4 releases no problem set \(weeks in schedule.toml: 1\)"):
        api.scheduled(4)     # the kit's schedule releases transformer-block in week 4


def test_a_course_given_is_read_wherever_the_call_is_made(toy, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for course in (Course(toy), toy):
        assert api.problem_sets(course) == ["toy"]
        assert api.scheduled(1, course) == "toy"
        assert demo.sets(course) == ["toy"]


def test_outside_a_course_folder_the_api_says_where_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for call in (api.problem_sets, api.schedule, demo.sets, lambda: api.scheduled(4)):
        with pytest.raises(api.CourseError, match="is not a course folder .* run `course` in the course folder"):
            call()


def test_a_submission_is_graded_by_the_set_of_the_course_it_runs_in(toy, tmp_path, monkeypatch):
    a = Assignment("toy", toy)
    folder = write_submission(tmp_path / "downloads", a, nested=False)
    monkeypatch.chdir(toy)
    result = api.grade(sorted(folder.glob("*.ipynb")), "toy", timeout=30.0)
    assert result["score"] == result["max_score"] == a.max_score, result
    monkeypatch.chdir(tmp_path)
    assert api.grade(sorted(folder.glob("*.ipynb")), "toy", timeout=30.0, course=Course(toy))["score"] == a.max_score


def test_the_gradescope_package_holds_the_course_files_of_that_course_and_the_kits_runtime(toy, tmp_path,
                                                                                          monkeypatch):
    monkeypatch.chdir(toy)
    files = gradescope.course_files("toy")
    assert files["nbgrader_config.py"] == toy.resolve() / "nbgrader_config.py"
    course = [path for name, path in files.items() if name.startswith(("solutions/", "assignments/"))]
    assert course and all(path.is_relative_to(toy.resolve()) for path in course)
    kit = [path for name, path in files.items() if name.startswith("autograder/")]
    assert kit and all(path.is_relative_to(REPO) for path in kit)
    out = api.gradescope_package("toy", tmp_path / "autograder.zip")
    with zipfile.ZipFile(out) as z:
        assert "solutions/toy/answers.ipynb" in z.namelist()
        assert not any(name.startswith("solutions/transformer-block") for name in z.namelist())


def test_a_throwaway_course_copies_the_course_it_is_made_from(toy, tmp_path, monkeypatch):
    monkeypatch.chdir(toy)
    made = api.make_course(tmp_path / "copy", "toy")
    assert sorted(p.name for p in (tmp_path / "copy" / "solutions").iterdir()) == ["toy"]
    assert (made.release_dir / "answers.ipynb").is_file()
