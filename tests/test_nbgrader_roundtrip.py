"""The whole nbgrader round trip with a temporary exchange folder, and an LMS download.

release_assignment; students fetch_assignment and submit; collect; autograde both ways (plain
`nbgrader autograde` through the sandbox, and `course autograde` writing the gradebook), which agree
check by check; generate_feedback, release_feedback, the student's fetch_feedback. An LMS download
of only the two notebooks per student goes through `nbgrader zip_collect` and grades exactly like
the full folders the exchange delivered.
"""
import shutil
import zipfile

import nbformat
import pytest

from autograder import api
from autograder.grader_side.assignment import notebook
from nbgrader_course import ASSIGNMENT, clone_course, course_checks, gradebook_checks

pytestmark = pytest.mark.slow


def as_student(folder, *args):
    """An nbgrader command as a student: run in their own folder, with no course configuration and
    their own cache of what they submitted (nbgrader's default one is per unix user)."""
    return api.nbgrader(*args, "--course=transformer-block", f"--Exchange.cache={folder / '.nbgrader-cache'}",
                        "--log-level=WARN", repo=folder)


@pytest.fixture(scope="module")
def trip(course, tmp_path_factory):
    from autograder.grader_side.assignment import Assignment

    tmp = tmp_path_factory.mktemp("roundtrip")
    root = clone_course(course, tmp / "course")
    a = Assignment(ASSIGNMENT, root)
    exchange = tmp / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    ex = f"--Exchange.root={exchange}"
    api.nbgrader("release_assignment", ASSIGNMENT, ex, "--log-level=WARN", repo=root)
    work = {"alice": {}, "bob": None}   # alice solves everything, bob hands in the release untouched
    for student, edits in work.items():
        home = tmp / student
        home.mkdir()
        as_student(home, "fetch_assignment", ASSIGNMENT, ex)
        fetched = home / ASSIGNMENT
        assert (fetched / "student_side").is_dir(), "the release holds the checks students run"
        for name in a.notebooks:
            nbformat.write(notebook(a, name, edits, untouched=edits is None), fetched / f"{name}.ipynb")
        as_student(home, "submit", ASSIGNMENT, f"--student={student}", ex)
    api.nbgrader("collect", ASSIGNMENT, ex, "--log-level=WARN", repo=root)
    return tmp, root, a, ex


def test_both_autograde_paths_agree_check_by_check_after_collect(trip):
    tmp, root, a, ex = trip
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["alice", "bob"]
    api.nbgrader("autograde", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    by_nbgrader = gradebook_checks(root)
    results = api.autograde(ASSIGNMENT, root / "submitted", workers=2, repo=root, gradebook=True)
    by_course = gradebook_checks(root)
    ours = course_checks(results)
    assert by_nbgrader == by_course
    for sid in ("alice", "bob"):
        assert {k: v for k, v in by_course[sid].items() if k in ours[sid]} == ours[sid]
    assert results["students"]["alice"]["score"] == 100.0 and results["students"]["bob"]["score"] == 0.0


def test_feedback_reaches_the_student(trip):
    tmp, root, a, ex = trip
    api.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    api.nbgrader("release_feedback", ASSIGNMENT, ex, "--log-level=WARN", repo=root)
    as_student(tmp / "alice", "fetch_feedback", ASSIGNMENT, "--student=alice", ex)
    pages = sorted((tmp / "alice" / ASSIGNMENT / "feedback").rglob("*.html"))
    assert [p.name for p in pages] == ["build.html", "concepts.html"]
    assert "build (Score: 70.0 / 70.0)" in pages[0].read_text()


def test_an_lms_download_goes_through_zip_collect_and_grades_like_the_full_folder(trip):
    tmp, root, a, ex = trip
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "lms-download.zip", "w") as z:   # dropped as it came, as nbgrader's docs say
        for name in a.notebooks:   # the LMS renames each file <student>_<notebook>.ipynb
            z.write(root / "submitted" / "alice" / ASSIGNMENT / f"{name}.ipynb", f"carol_{name}.ipynb")
    api.nbgrader("zip_collect", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    carol = root / "submitted" / "carol" / ASSIGNMENT
    assert sorted(p.name for p in carol.glob("*.ipynb")) == ["build.ipynb", "concepts.ipynb"]
    assert not (carol / "student_side").exists()
    only_carol = tmp / "only-carol"
    shutil.copytree(carol.parent, only_carol / "carol")
    results = api.autograde(ASSIGNMENT, only_carol, workers=1, repo=root, gradebook=True)
    ours = course_checks(results)
    assert list(ours) == ["carol"] and results["students"]["carol"]["score"] == 100.0
    assert ours["carol"] == {k: v for k, v in gradebook_checks(root)["alice"].items() if k in ours["carol"]}
    assert gradebook_checks(root)["carol"] == gradebook_checks(root)["alice"]
