"""nbgrader's gradebook on a real PostgreSQL server (started by the test in a temporary folder):
nbgrader's own autograde and export use it, and two graders recording the two halves of a class at
the same time leave one complete, consistent gradebook."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side.assignment import CourseError
from autograder.grader_side.gradebook import record
from autograder.grader_side.misconceptions import catalogue, edits
from autograder.tooling.sampleclass import write_submission

ASSIGNMENT = "transformer-block"


@pytest.fixture
def course_on_postgres(course, postgres, tmp_path, request):
    """A copy of the course whose nbgrader gradebook is a fresh PostgreSQL database holding the
    assignment (recorded by ``nbgrader generate_assignment``)."""
    root = tmp_path / "course"
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded", "feedback", "gradebook.db"))
    url = postgres.createdb(request.node.name.lower()[:60])
    api.nbgrader("generate_assignment", ASSIGNMENT, "--force", f"--db={url}", "--log-level=WARN", repo=root)
    return root, url


def write_class(folder: Path, assignment, students: int) -> dict[str, Path]:
    source = {c.grade_id: c.source for n in assignment.notebooks for c in assignment.cells(n)}
    wrong = [e for e in catalogue() if e.question.startswith("B")][::9]
    for i in range(students):
        entry = wrong[i % len(wrong)] if i % 2 else None
        write_submission(folder / f"student{i}", assignment, edits=edits(entry, source[entry.cell]) if entry else None)
    return folder


def exported(root: Path, url: str) -> dict[str, float]:
    """Student -> score, from `nbgrader export`'s CSV."""
    api.nbgrader("export", f"--db={url}", "--log-level=WARN", repo=root)
    with open(root / "grades.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT]
    students = [r["student_id"] for r in rows]
    assert len(students) == len(set(students)), f"a student appears twice: {sorted(students)}"
    return {r["student_id"]: float(r["score"]) for r in rows}


@pytest.mark.slow
def test_nbgrader_autograde_and_export_use_a_postgresql_gradebook(course_on_postgres, assignment):
    root, url = course_on_postgres
    write_class(root / "submitted", assignment, 2)
    api.nbgrader("autograde", ASSIGNMENT, "--force", f"--db={url}", "--log-level=WARN", repo=root)
    ours = api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root)
    theirs = exported(root, url)
    assert theirs == {sid: r["score"] for sid, r in ours["students"].items()}
    assert len(set(theirs.values())) == 2, "one honest and one wrong submission"


@pytest.mark.slow
def test_two_graders_recording_halves_at_once_leave_one_complete_gradebook(course_on_postgres, assignment, tmp_path):
    root, url = course_on_postgres
    graded = api.autograde(ASSIGNMENT, write_class(tmp_path / "class", assignment, 4), workers=2, repo=root)
    # A bigger class from these real results, so the two writers overlap for a while.
    students = {f"{sid}-{k:02d}": r for k in range(15) for sid, r in graded["students"].items()}
    names = sorted(students)
    start = time.time() + 5   # both writers start at this moment
    writers = []
    for i, half in enumerate((names[0::2], names[1::2])):
        path = tmp_path / f"half{i}.json"
        path.write_text(json.dumps(dict(graded, students={s: students[s] for s in half})))
        writers.append(subprocess.Popen(
            [sys.executable, "-c", "import json, sys, time\n"
             "from autograder.grader_side.gradebook import record\n"
             "results = json.loads(open(sys.argv[1]).read())\n"
             "time.sleep(max(0.0, float(sys.argv[3]) - time.time()))\n"
             "print(record(results, sys.argv[2]))", str(path), url, str(start)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [w.communicate(timeout=600) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [err[-2000:] for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == [str(len(names) // 2)] * 2

    from nbgrader.api import Gradebook
    with Gradebook(url) as gb:
        submissions = gb.assignment_submissions(ASSIGNMENT)
        assert sorted(s.student_id for s in submissions) == names
        for s in submissions:
            ours = {row["id"]: row["score"] for q in students[s.student_id]["questions"].values() for row in q["checks"]}
            theirs = {g.name: g.auto_score for nb in s.notebooks for g in nb.grades if g.auto_score is not None}
            assert theirs == ours, s.student_id
    assert exported(root, url) == {sid: r["score"] for sid, r in students.items()}
    assert len({r["score"] for r in students.values()}) > 1


def test_recording_into_a_gradebook_without_the_assignment_says_what_to_do(postgres):
    url = postgres.createdb("empty_gradebook")
    with pytest.raises(CourseError, match="generate_assignment"):
        record({"assignment": ASSIGNMENT, "students": {}}, url)
