"""What leaves the grader is harmless where it lands: hostile student ids and messages never become
a spreadsheet formula in the CSV, nor escape sequences on the TA's terminal."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.escape import for_csv, for_id, for_terminal
from autograder.grader_side.assignment import REPO, Assignment, solved
from autograder.reports.exports import write_csv
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results

COURSE = Path(sys.executable).parent / "course"
FORMULAS = ['=HYPERLINK("http://example.com","click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
            "\t=1+1", "\r=1+1", "  =1+1"]
ESCAPES = ["\x1b[2J\x1b[Hwiped", "ok\x1b]0;a new title\x07", "red\x1b[31m text", "8-bit\x9b2J CSI", "back\x08\x08space",
           "bell\x07", "nul\x00", "bidi\u202eevil", "line\nbreak", "osc8 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"]
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("text", FORMULAS)
def test_a_cell_a_spreadsheet_would_read_as_a_formula_gets_a_quote(text):
    cell = for_csv(text)
    assert cell.startswith("'") and cell[1:].strip() == text.strip() and not CONTROL.search(cell)


@pytest.mark.parametrize("value", ["alice", "B1_code (-2): off", 92.0, 0, None, "", "a=b"])
def test_other_cells_pass_unchanged(value):
    assert for_csv(value) == value


@pytest.mark.parametrize("text", ESCAPES)
def test_terminal_text_has_no_escape_or_control_character(text):
    clean = for_terminal(text)
    assert not CONTROL.search(clean), repr(clean)
    assert "\x1b" not in clean


def test_ids_that_differ_only_in_control_characters_stay_distinct():
    """A folder named ``m<ESC>[0mallory`` beside ``mallory``: stripped, both would read ``mallory`` on the
    screen and in the CSV an LMS imports; shown by code, each stays its own and prints safely."""
    shown = [for_id(sid) for sid in ["mallory", "m\x1b[0mallory", "mal\u202elory", "mal\nlory", "mal\x9blory",
                                     "mallory\u200b", "mallory ", " mallory", "mal\u2028lory"]]
    assert len(set(shown)) == len(shown) and shown[0] == "mallory"
    assert shown[1] == "m\\x1b[0mallory"
    for text in shown:
        assert not CONTROL.search(text)


def test_terminal_text_keeps_what_is_printable():
    assert for_terminal("\x1b[2J\x1b[Hwiped") == "wiped"
    assert for_terminal("red\x1b[31m text\x1b[0m") == "red text"
    assert for_terminal("line\nbreak") == "line break"
    assert for_terminal("ok\x1b]0;a new title\x07!") == "ok!"


def test_the_csv_writer_neutralises_every_text_cell(tmp_path):
    student = {"score": 0.0, "max_score": 100.0, "status": "graded", "questions": {}, "needs_manual_grade": ["C8"],
               "flags": ["=1+1 flag", "fine"], "reason": "@reason"}
    results = {"students": {sid: dict(student) for sid in [*FORMULAS, "alice"]}}
    write_csv(results, tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert [row[0] for row in rows[1:]] == [for_csv(for_id(sid)) for sid in FORMULAS] + ["alice"]
    assert len({row[0] for row in rows[1:]}) == len(FORMULAS) + 1          # every id its own row
    for row in rows[1:]:
        assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row), row


# ---- the real command line ----------------------------------------------------------------------

RAISES = ("def layer_norm(x, gamma, beta, eps=1e-5):\n"
          "    raise ValueError('\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07erased your screen')\n")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    a = Assignment("transformer-block", REPO)
    root = tmp_path_factory.mktemp("hostile-ids")
    b1 = solved(next(c.source for c in a.cells("build") if c.grade_id == "B1_code"))
    ids = {'=HYPERLINK("https:example.com";"x")': {}, "\x1b[2J\x1b[Hstudent": {"B1_code": b1 + "\n\n" + RAISES}}
    for sid, edits in ids.items():
        write_submission(root / "submitted" / sid, a, edits=edits, nested=False)
    return root, ids


def test_course_autograde_writes_a_safe_csv_and_a_clean_summary(hostile):
    root, ids = hostile
    done = subprocess.run([str(COURSE), "autograde", "transformer-block", "--submissions", str(root / "submitted"),
                           "--out", str(root / "results.json"), "--csv", str(root / "grades.csv"), "--workers", "2",
                           "--no-gradebook"],
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    validate_results(json.loads((root / "results.json").read_text()))
    stdout = done.stdout.decode()
    assert not CONTROL.search(stdout.replace("\n", "")), repr(stdout)
    assert "student" in stdout and "HYPERLINK" in stdout                  # the ids are shown, made harmless
    assert b"\x1b[2J" not in done.stderr and b"\x1b]0;" not in done.stderr
    with open(root / "grades.csv", newline="") as f:
        rows = {row[0]: row for row in list(csv.reader(f))[1:]}
    assert set(rows) == {'\'=HYPERLINK("https:example.com";"x")', "\\x1b[2J\\x1b[Hstudent"}   # shown by code
    for row in rows.values():
        assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row), row


def test_course_grade_prints_a_hostile_message_without_its_escapes(hostile):
    root, ids = hostile
    folder = root / "submitted" / "\x1b[2J\x1b[Hstudent"
    done = subprocess.run([str(COURSE), "grade", "--assignment", "transformer-block", str(folder / "concepts.ipynb"),
                           str(folder / "build.ipynb")],
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    validate_results(json.loads((root / "results.json").read_text()))
    stdout = done.stdout.decode()
    assert "erased your screen" in stdout                                  # the message itself is kept
    assert not CONTROL.search(stdout.replace("\n", "")), repr(stdout)


def test_nbgrader_export_writes_names_that_look_like_formulas_as_text(course, tmp_path):
    """nbgrader's own `export`, as the course configures it: a student whose id and names came from
    a roster or an LMS as formulas (or with a comma) is one row of harmless cells."""
    import shutil

    from autograder import api

    root = shutil.copytree(course, tmp_path / "course", symlinks=True,
                           ignore=shutil.ignore_patterns("submitted", "autograded", "feedback"))
    api.nbgrader("db", "student", "add", FORMULAS[0], f"--last-name={FORMULAS[1]}", "--first-name=Doe, Jane",
                 "--log-level=WARN", repo=root)
    api.nbgrader("export", "--to=export.csv", "--log-level=WARN", repo=root)
    with open(root / "export.csv", newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["first_name"] == "Doe, Jane"]
    assert row["student_id"] == "'" + FORMULAS[0] and row["last_name"] == "'" + FORMULAS[1]
    assert row["assignment"] == "transformer-block" and float(row["score"]) == 0.0
