"""nbgrader's gradebook on a real PostgreSQL server (started by the test in a temporary folder):
nbgrader's own autograde and export use it, a TA's formgrader scores C8 in it, and two graders
recording the two halves of a class at the same time leave one complete, consistent gradebook."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import api
from autograder.course import CourseError
from autograder.grader_side.misconceptions import edits
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results
from nbgrader_course import give_c8
from week4 import catalogue

ASSIGNMENT = "transformer-block"


@pytest.fixture
def course_on_postgres(course, postgres, tmp_path, request):
    """A copy of the course whose ``nbgrader_config.py`` names a fresh PostgreSQL database as its
    gradebook, holding the assignment (recorded by ``nbgrader generate_assignment``)."""
    url = postgres.createdb(request.node.name.lower()[:60])
    root = copy_on(course, tmp_path / "course", url)
    api.nbgrader("generate_assignment", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    return root, url


def copy_on(course: Path, root: Path, url: str) -> Path:
    """A copy of the course, without students or gradebook, whose ``nbgrader_config.py`` names ``url``."""
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded", "feedback", "gradebook.db"))
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.CourseDirectory.db_url = {url!r}\n")
    return root


def write_class(folder: Path, assignment, students: int) -> dict[str, Path]:
    source = {c.grade_id: c.source for n in assignment.notebooks for c in assignment.cells(n)}
    wrong = [e for e in catalogue() if e.question.startswith("B")][::9]
    for i in range(students):
        entry = wrong[i % len(wrong)] if i % 2 else None
        write_submission(folder / f"student{i}", assignment, edits=edits(entry, source[entry.cell]) if entry else None)
    return folder


def exported(root: Path) -> dict[str, float]:
    """Student -> score, from `nbgrader export`'s CSV."""
    api.nbgrader("export", "--log-level=WARN", repo=root)
    with open(root / "grades.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT]
    students = [r["student_id"] for r in rows]
    assert len(students) == len(set(students)), f"a student appears twice: {sorted(students)}"
    return {r["student_id"]: float(r["score"]) for r in rows}


@pytest.mark.slow
def test_nbgrader_autograde_and_export_use_a_postgresql_gradebook(course_on_postgres, assignment):
    root, url = course_on_postgres
    write_class(root / "submitted", assignment, 2)
    api.nbgrader("autograde", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    ours = api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root)
    theirs = exported(root)
    assert theirs == {sid: r["score"] for sid, r in ours["students"].items()}
    assert len(set(theirs.values())) == 2, "one honest and one wrong submission"


@pytest.mark.slow
def test_a_ta_scores_c8_in_formgrader_on_a_postgresql_gradebook(course_on_postgres, assignment, tmp_path):
    """formgrader, in a real Jupyter server started in the course folder, reads and writes the same
    PostgreSQL gradebook that ``course autograde`` filled."""
    root, url = course_on_postgres
    write_submission(root / "submitted" / "ref", assignment)
    api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True)
    assert exported(root) == {"ref": 100.0}
    give_c8(root, tmp_path, {"ref": 3.0})
    assert exported(root) == {"ref": 103.0}
    assert not (root / "gradebook.db").exists(), "the gradebook is the PostgreSQL one, not a SQLite file"


@pytest.mark.slow
def test_two_course_autogrades_on_halves_at_once_leave_one_complete_gradebook(course_on_postgres, assignment,
                                                                             tmp_path):
    """Two ``course autograde`` processes, started together on the two halves of a class, write
    into the course's PostgreSQL gradebook at the same time."""
    root, url = course_on_postgres
    everyone = write_class(tmp_path / "class", assignment, 12)
    halves = []
    for i in range(2):
        half = tmp_path / f"half{i}"
        for student in sorted(everyone.iterdir())[i::2]:
            shutil.copytree(student, half / student.name)
        halves.append(half)
    graders = [subprocess.Popen([sys.executable, "-m", "autograder.cli", "autograde", ASSIGNMENT, "--submissions",
                                 str(half), "--gradebook", "--workers", "1",
                                 "--out", str(tmp_path / f"{half.name}.json")],
                                cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for half in halves]
    outputs = [g.communicate(timeout=600) for g in graders]
    assert [g.returncode for g in graders] == [0, 0], [err[-2000:] for _, err in outputs]
    students = {}
    for half in halves:
        students.update(validate_results(json.loads((tmp_path / f"{half.name}.json").read_text()))["students"])
    unwritten = [flag for r in students.values() for flag in r.get("flags", []) if "gradebook" in flag]
    assert not unwritten, "every student was written"

    from nbgrader.api import Gradebook
    with Gradebook(url) as gb:
        submissions = gb.assignment_submissions(ASSIGNMENT)
        assert sorted(s.student_id for s in submissions) == sorted(students)
        for s in submissions:
            ours = {row["id"]: row["score"]
                    for q in students[s.student_id]["questions"].values() for row in q["checks"]}
            theirs = {g.name: g.auto_score for nb in s.notebooks for g in nb.grades if g.auto_score is not None}
            assert theirs == ours, s.student_id
    assert exported(root) == {sid: r["score"] for sid, r in students.items()}
    assert len({r["score"] for r in students.values()}) > 1
    assert sorted(p.name for p in (root / "autograded").iterdir()) == sorted(students)


def test_grading_into_a_gradebook_without_the_assignment_says_what_to_do(course, postgres, tmp_path):
    root = copy_on(course, tmp_path / "course", postgres.createdb("empty_gradebook"))
    (tmp_path / "class").mkdir()
    with pytest.raises(CourseError, match="generate_assignment"):
        api.autograde(ASSIGNMENT, tmp_path / "class", repo=root, gradebook=True)
