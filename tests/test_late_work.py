"""Due dates and late work, the same in both graders: schedule.toml's due date reaches nbgrader's
gradebook (`course release --week N`, throwaway course folders); one class with timestamp.txt files
(on time, late, late within an extension, late past one, past the cut-off) graded by plain
`nbgrader autograde` in one course folder and by `course autograde` in another gets the same late
penalty per notebook and the same `nbgrader export` totals; and the policy itself, in numbers."""
import csv
import datetime as dt
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from nbgrader.api import Gradebook
from nbgrader.preprocessors import AssignLatePenalties

from autograder import api
from autograder.compat import tomllib
from autograder.grader_side.assignment import REPO, Assignment, solved
from autograder.nbgrader.plugins import late
from autograder.reports import feedback, report
from autograder.tooling.sampleclass import write_submission
from browser import have_chromium
from nbgrader_course import ASSIGNMENT, clone_course
from test_pages import CHROMIUM, _render, _text

HOUR, DAY = dt.timedelta(hours=1), dt.timedelta(days=1)


def schedule_due(root: Path) -> dt.datetime:
    """The end of the due day in the time zone of ``root``'s schedule.toml, in UTC (worked out here,
    not by late.py)."""
    doc = tomllib.loads((root / "course" / "schedule.toml").read_text())
    (week,) = [w for w in doc["weeks"] if w["assignment"] == ASSIGNMENT]
    ends = dt.datetime.combine(week["due"] + DAY, dt.time(0), tzinfo=ZoneInfo(doc["timezone"]))
    return ends.astimezone(dt.timezone.utc).replace(tzinfo=None)


def test_the_due_date_is_the_end_of_the_due_day_in_the_course_time_zone():
    assert schedule_due(REPO) == dt.datetime(2027, 2, 13, 5, 0)      # 2027-02-12 24:00 in New York (EST)
    assert late.due_date(ASSIGNMENT, REPO) == schedule_due(REPO)
    assert late.end_of_day(dt.date(2027, 6, 1), "America/New_York") == dt.datetime(2027, 6, 2, 4, 0)   # EDT
    assert late.due_date("no-such-set", REPO) is None


def test_a_schedule_without_a_time_zone_or_with_a_due_time_says_so(tmp_path):
    (tmp_path / "course").mkdir()
    schedule = tmp_path / "course" / "schedule.toml"
    schedule.write_text(f'[[weeks]]\nweek = 4\ndue = 2027-02-12\nassignment = "{ASSIGNMENT}"\n')
    with pytest.raises(api.CourseError, match="no course time zone"):
        late.due_date(ASSIGNMENT, tmp_path)
    schedule.write_text(f'timezone = "Mars/Olympus"\n[[weeks]]\ndue = 2027-02-12\nassignment = "{ASSIGNMENT}"\n')
    with pytest.raises(api.CourseError, match="unknown time zone 'Mars/Olympus'"):
        late.due_date(ASSIGNMENT, tmp_path)
    schedule.write_text(f'timezone = "Europe/Berlin"\n[[weeks]]\ndue = 2027-02-12T17:00:00\n'
                        f'assignment = "{ASSIGNMENT}"\n')
    assert late.due_date(ASSIGNMENT, tmp_path) == dt.datetime(2027, 2, 12, 16, 0)


# ---- the policy, in numbers --------------------------------------------------------------------

def plugin(tmp_path: Path, **config) -> late.CourseLatePenalty:
    """The plugin as nbgrader's AssignLatePenalties makes it, its parent knowing the assignment and
    the gradebook."""
    parent = AssignLatePenalties()
    parent.assignment_id, parent.db_url = ASSIGNMENT, f"sqlite:///{tmp_path / 'gradebook.db'}"
    return late.CourseLatePenalty(parent=parent, **config)


def test_each_started_day_costs_ten_percent_up_to_half_and_a_week_late_scores_zero(tmp_path):
    p = plugin(tmp_path)
    assert p.late_submission_penalty("alice", 40.0, 0) is None
    assert p.late_submission_penalty("alice", 40.0, 1) == 4.0                       # a second late: one day
    assert p.late_submission_penalty("alice", 40.0, DAY.total_seconds()) == 4.0
    assert p.late_submission_penalty("alice", 40.0, DAY.total_seconds() + 1) == 8.0
    assert p.late_submission_penalty("alice", 40.0, 6.5 * 86400) == 20.0           # capped at 50%
    assert p.late_submission_penalty("alice", 40.0, 7 * 86400) == 20.0
    assert p.late_submission_penalty("alice", 40.0, 7 * 86400 + 1) == 40.0         # past the cut-off
    strict = plugin(tmp_path, zero_after_days=0.0)
    assert strict.late_submission_penalty("alice", 40.0, 1) == 40.0
    lenient = plugin(tmp_path, percent_per_day=5.0, max_percent=100.0, zero_after_days=None)
    assert lenient.late_submission_penalty("alice", 40.0, 30 * 86400) == 40.0
    assert lenient.late_submission_penalty("alice", 40.0, 3 * 86400) == 6.0


def test_an_extension_in_extensions_toml_moves_that_students_due_date(tmp_path, caplog):
    (tmp_path / "extensions.toml").write_text(f'[{ASSIGNMENT}]\nalice = 2\n"j.smith" = 0.5\n[other-set]\nbob = 9\n')
    p = plugin(tmp_path)
    assert p.extensions_path() == tmp_path / "extensions.toml"          # beside the gradebook
    assert p.late_submission_penalty("alice", 40.0, 2 * 86400) is None
    assert p.late_submission_penalty("alice", 40.0, 2 * 86400 + 1) == 4.0
    assert p.late_submission_penalty("j.smith", 40.0, 13 * 3600) == 4.0
    assert p.late_submission_penalty("bob", 40.0, 3600) == 4.0          # his extension is on another set
    (tmp_path / "extensions.toml").write_text(f'[{ASSIGNMENT}]\nalice = "two days"\n')
    with caplog.at_level(logging.ERROR):
        assert p.late_submission_penalty("alice", 40.0, 5 * 86400) is None
    assert "is not a number of days" in caplog.text and "fix the file and grade again" in caplog.text


# ---- the release -------------------------------------------------------------------------------

def test_course_release_by_week_writes_the_schedules_due_date_into_the_gradebook(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "solutions", repo / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "course", repo / "course", ignore=shutil.ignore_patterns("figures", "notes"))
    shutil.copy(REPO / "nbgrader_config.py", repo)
    schedule = repo / "course" / "schedule.toml"
    schedule.write_text(schedule.read_text().replace("due = 2027-02-12", "due = 2027-03-19"))
    done = subprocess.run([str(Path(sys.executable).parent / "course"), "release", "--week", "4"], cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with Gradebook(f"sqlite:///{repo / 'gradebook.db'}") as gb:
        assert gb.find_assignment(ASSIGNMENT).duedate == schedule_due(repo) == dt.datetime(2027, 3, 20, 4, 0)   # EDT


# ---- one class, both graders ---------------------------------------------------------------------

# student -> (submitted this long after the due date, extra days in extensions.toml, timestamp's zone)
CLASS = {
    "on_time": (-3 * HOUR, None, "UTC"),
    "late": (DAY + 20 * HOUR, None, "UTC"),                       # 2 started days: 20%
    "late_wrong_b1": (DAY + 20 * HOUR, None, "America/New_York"),  # 20% of a lower score
    "extended": (DAY + 20 * HOUR, 3, "UTC"),                      # within the extension: nothing
    "past_extension": (2 * DAY + 20 * HOUR, 1, "UTC"),            # 2 started days after it: 20%
    "past_cutoff": (8 * DAY, None, "UTC"),                        # more than 7 days: 0
}
PERCENT = {"on_time": 0, "late": 20, "late_wrong_b1": 20, "extended": 0, "past_extension": 20, "past_cutoff": 100}
WRONG_B1 = "\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n    return (x - x.mean(-1, keepdim=True)) * gamma + beta\n"


def stamp(when: dt.datetime, zone: str) -> str:
    """timestamp.txt as nbgrader's collect writes it ("%Y-%m-%d %H:%M:%S.%f %Z")."""
    local = when.replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(zone))
    return local.strftime("%Y-%m-%d %H:%M:%S.%f ") + zone


def write_class(root: Path) -> None:
    a = Assignment(ASSIGNMENT, root)
    build = {c.grade_id: c.source for c in a.cells("build")}
    due, extensions = schedule_due(REPO), []
    for sid, (after, extra, zone) in CLASS.items():
        edits = {"B1_code": solved(build["B1_code"]) + WRONG_B1} if sid == "late_wrong_b1" else None
        folder = write_submission(root / "submitted" / sid, a, edits=edits)
        (folder / "timestamp.txt").write_text(stamp(due + after, zone))
        if extra is not None:
            extensions.append(f"{sid} = {extra}")
    (root / "extensions.toml").write_text(f"[{ASSIGNMENT}]\n" + "\n".join(extensions) + "\n")


def exported(root: Path) -> dict[str, dict[str, str]]:
    api.nbgrader("export", "--log-level=WARN", repo=root)
    with open(root / "grades.csv") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def penalties(root: Path) -> dict[str, tuple]:
    """student -> (due date, timestamp, (notebook, score, late penalty)...) as the gradebook holds them."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student_id: (s.assignment.duedate, s.timestamp,
                               tuple((nb.name, nb.score, nb.late_submission_penalty) for nb in s.notebooks))
                for s in gb.assignment_submissions(ASSIGNMENT)}


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    """The class in two copies of the session's course (made by make_course): graded by `nbgrader
    autograde` in one, by `course autograde` in the other, each into its own gradebook."""
    ours = clone_course(course, tmp_path_factory.mktemp("late-course"))
    theirs = clone_course(course, tmp_path_factory.mktemp("late-nbgrader"))
    for root in (ours, theirs):
        write_class(root)
    done = api.nbgrader("autograde", ASSIGNMENT, "--log-level=WARN", repo=theirs, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run([str(Path(sys.executable).parent / "course"), "autograde", ASSIGNMENT, "--workers=2",
                           "--csv", "course-grades.csv"], cwd=ours, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return ours, theirs


def test_the_gradebooks_due_date_is_the_schedules(graded):
    for root in graded:
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            assert gb.find_assignment(ASSIGNMENT).duedate == schedule_due(REPO)
        assert {row["duedate"] for row in exported(root).values()} == {str(schedule_due(REPO))}


def test_both_graders_take_the_same_late_penalty_off_each_notebook(graded):
    ours, theirs = penalties(graded[0]), penalties(graded[1])
    assert set(ours) == set(CLASS) and ours == theirs
    for sid, (_, _, notebooks) in ours.items():
        for name, score, penalty in notebooks:
            assert (penalty or 0.0) == pytest.approx(score * PERCENT[sid] / 100), (sid, name)


def test_nbgrader_export_gives_the_same_totals_either_way(graded):
    ours, theirs = exported(graded[0]), exported(graded[1])
    assert ours == theirs
    raw = {sid: float(row["raw_score"]) for sid, row in ours.items()}
    assert raw["on_time"] == raw["late"] == raw["extended"] == 100.0 and raw["late_wrong_b1"] < 100.0
    for sid, row in ours.items():
        assert float(row["late_submission_penalty"]) == pytest.approx(raw[sid] * PERCENT[sid] / 100), sid
        assert float(row["score"]) == pytest.approx(raw[sid] * (1 - PERCENT[sid] / 100)), sid
    assert float(ours["late"]["score"]) == 80.0 and float(ours["extended"]["score"]) == 100.0


def test_the_feedback_of_a_late_student_shows_the_penalty_and_of_an_extended_one_none(graded):
    root = graded[0]
    for sid in ("late", "extended"):
        api.nbgrader("generate_feedback", ASSIGNMENT, f"--student={sid}", "--force", "--log-level=WARN", repo=root)
    page = (root / "feedback" / "late" / ASSIGNMENT / "build.html").read_text()
    assert "Late submission penalty" in page
    assert "Late submission penalty" not in (root / "feedback" / "extended" / ASSIGNMENT / "build.html").read_text()


def test_grading_the_class_again_keeps_every_penalty_and_every_extension(graded, tmp_path):
    """A second `course autograde` of the same class (every student re-graded in a new run): the
    penalties are still nbgrader's, and an extended student still has none."""
    root = shutil.copytree(graded[0], tmp_path / "again", symlinks=True)
    done = subprocess.run([str(Path(sys.executable).parent / "course"), "autograde", ASSIGNMENT, "--workers=2"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    again = penalties(root)
    assert again == penalties(graded[1])
    assert [penalty for _, _, penalty in again["extended"][2]] == [None, None]


def test_a_regrade_with_a_later_timestamp_takes_its_late_penalty(course, tmp_path):
    """Graded on time, then again once a late timestamp.txt is there: the gradebook's submission
    time, and with it the late penalty, are the new ones (not those read before the change)."""
    root = clone_course(course, tmp_path / "regrade")
    folder = write_submission(root / "submitted" / "late", Assignment(ASSIGNMENT, root))
    api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True)
    assert [penalty for _, _, penalty in penalties(root)["late"][2]] == [None, None]
    (folder / "timestamp.txt").write_text(stamp(schedule_due(REPO) + DAY + 20 * HOUR, "UTC"))
    api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True)
    _, when, notebooks = penalties(root)["late"]
    assert when == schedule_due(REPO) + DAY + 20 * HOUR
    for name, score, penalty in notebooks:
        assert score > 0 and penalty == pytest.approx(score * 0.2), name


# ---- what course autograde writes: the penalty carried, every total named -----------------------

def test_results_and_course_grades_carry_the_penalty_nbgrader_export_takes(graded):
    """``course autograde`` (recording into the gradebook) writes each student's late penalty into
    results.json and course-grades.csv, the one ``nbgrader export`` takes off, and names each total
    by the penalty: before it, after it; no column is a bare "score"."""
    root = graded[0]
    results = json.loads((root / "results.json").read_text())["students"]
    export = exported(root)
    with open(root / "course-grades.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert "score" not in next(iter(rows.values()))
    for sid in CLASS:
        mine, theirs, row = results[sid], export[sid], rows[sid]
        assert mine["score"] == pytest.approx(float(theirs["raw_score"])), sid
        assert mine["late_penalty"] == pytest.approx(float(theirs["late_submission_penalty"])), sid
        assert float(row["score_before_late_penalty"]) == pytest.approx(float(theirs["raw_score"])), sid
        assert float(row["late_penalty"]) == pytest.approx(float(theirs["late_submission_penalty"])), sid
        assert float(row["score_after_late_penalty"]) == pytest.approx(float(theirs["score"])), sid
    assert results["late"]["late_penalty"] == 20.0 and results["on_time"]["late_penalty"] == 0.0


def test_results_not_recorded_leave_the_penalty_blank_and_say_before_it(course, tmp_path):
    """Graded without the gradebook, nothing has worked the penalty out: results.json says so (null),
    the CSV's penalty and after-penalty cells are blank, and the student's page and the class report
    name the total as before any late penalty."""
    root = clone_course(course, tmp_path / "unrecorded")
    folder = write_submission(root / "submitted" / "late", Assignment(ASSIGNMENT, root))
    (folder / "timestamp.txt").write_text(stamp(schedule_due(REPO) + DAY + 20 * HOUR, "UTC"))
    results = api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=False)
    assert results["students"]["late"]["late_penalty"] is None
    api.write_csv(results, tmp_path / "course-grades.csv")
    with open(tmp_path / "course-grades.csv", newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["score_before_late_penalty"] == "100.0" and row["late_penalty"] == row["score_after_late_penalty"] == ""
    text = _text(feedback.page("late", results["students"]["late"], ASSIGNMENT))
    assert "100 / 100 autograded points before any late penalty" in text
    report.write_report(results, tmp_path / "report")
    page = _text((tmp_path / "report" / "report.html").read_text())
    assert "before any late penalty" in page


def test_a_late_students_feedback_page_shows_the_penalty_and_the_total_after_it(graded, tmp_path):
    """The course's feedback page of a late student, in headless Chromium: the total before the
    penalty, the penalty, the total after it; an on-time student's page says no penalty was taken."""
    if not have_chromium():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set CHROMIUM=/path/to/it)")
    results = json.loads((graded[0] / "results.json").read_text())
    pages = {Path(p).stem: Path(p) for p in feedback.write_pages(results, tmp_path / "feedback")}
    _, dom = _render(pages["late"], tmp_path / "late.png", 900)
    text = _text(dom)
    assert "100 / 100 autograded points before the late penalty" in text
    assert "Late penalty: -20 points" in text and "80 / 100 after the late penalty" in text
    _, dom = _render(pages["on_time"], tmp_path / "on_time.png", 900)
    text = _text(dom)
    assert "100 / 100 autograded points" in text and "No late penalty" in text


def test_the_terminal_summary_names_its_total_and_shows_the_penalty():
    """``course autograde``'s table on the TA's terminal: the total column is named before the late
    penalty, and the penalty recorded is beside it ("-" where none was worked out)."""
    from autograder.cli import summary

    row = {"status": "graded", "score": 100.0, "max_score": 100.0, "questions": {}, "flags": []}
    results = {"seconds": 1.0, "workers": 1,
               "students": {"late": {**row, "late_penalty": 20.0}, "unrecorded": {**row, "late_penalty": None}}}
    lines = summary(results).splitlines()
    assert lines[0].split() == ["student", "before", "late", "penalty", "late", "penalty", "status"]
    assert lines[1].split() == ["late", "100", "20", "graded"]
    assert lines[2].split() == ["unrecorded", "100", "-", "graded"]
