"""`pytest --submission(s)`: the course's checks as pytest items, run as a TA or a CI system would.

pytest runs as its own process in a course folder: the reference solution passes every item with
the full total, the untouched release fails every item with its reason, JUnit XML carries each
check's points, and on a class of the whole misconception catalogue every item agrees with
`course autograde`'s score for that check.
"""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from autograder import api
from autograder.grader_side.misconceptions import edits
from autograder.tooling.sampleclass import write_submission
from week4 import catalogue

pytestmark = pytest.mark.slow


def _pytest(course, *args):
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=course,
                          capture_output=True, text=True, env=env, timeout=900)


def _cases(xml_path):
    """(student, check) -> (outcome, message, properties) from pytest's JUnit XML."""
    cases = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        failure, skipped = case.find("failure"), case.find("skipped")
        outcome = "failed" if failure is not None else "skipped" if skipped is not None else "passed"
        message = (failure.get("message") if failure is not None else
                   skipped.get("message") if skipped is not None else "")
        cases[(props["student"], case.get("name"))] = (outcome, message or "", props)
    return cases


@pytest.fixture(scope="module")
def two(course, assignment, tmp_path_factory):
    root = tmp_path_factory.mktemp("pytest-two")
    write_submission(root / "alice", assignment)
    write_submission(root / "bob", assignment, untouched=True)
    out = root / "junit.xml"
    done = _pytest(course, f"--submissions={root}", f"--junitxml={out}")
    one = _pytest(course, f"--submission={root / 'alice' / assignment.name}", f"--junitxml={root / 'one.xml'}")
    return done, _cases(out), one, _cases(root / "one.xml"), root


def test_the_solution_passes_every_item_with_the_full_total(two):
    done, cases, one, alone, _ = two
    assert "alice: 100 / 100 points (the whole submission); waiting for a TA: C8" in done.stdout, done.stdout[-2000:]
    assert "collected 98 items" in done.stdout
    alice = {check: outcome for (sid, check), (outcome, _, _) in cases.items() if sid == "alice"}
    assert alice.pop("C8_manual") == "skipped" and set(alice.values()) == {"passed"}
    assert {k[1]: v[0] for k, v in alone.items()} == {**alice, "C8_manual": "skipped"}   # --submission alone
    assert "alice: 100 / 100 points" in one.stdout and one.returncode == 0


def test_the_untouched_release_fails_every_item_with_its_reason(two):
    done, cases, one, alone, _ = two
    assert done.returncode == 1 and "bob: 0 / 100 points" in done.stdout
    bob = {check: (outcome, message) for (sid, check), (outcome, message, _) in cases.items() if sid == "bob"}
    assert bob.pop("C8_manual")[0] == "skipped"
    assert all(outcome == "failed" and message for outcome, message in bob.values()), bob


def test_junit_xml_carries_each_checks_points(two):
    done, cases, one, alone, _ = two
    points = {check: float(props["points"]) for (sid, check), (_, _, props) in cases.items()
              if sid == "alice" and check != "C8_manual"}
    assert sum(points.values()) == 100.0
    assert all(props["question"] == check[:2] for (sid, check), (_, _, props) in cases.items() if sid == "alice")
    assert {props["hidden"] for (_, _, props) in cases.values() if "hidden" in props} == {"True", "False"}


def test_k_selects_checks_and_the_failure_text_is_the_students_message(course, assignment, two):
    done = _pytest(course, f"--submission={two[4] / 'bob' / assignment.name}", "-k", "B1_", "-rf")
    summary = done.stdout.split("short test summary info")[-1]
    assert "bob::B1::B1_worked_example" in summary and "B2_" not in summary, done.stdout[-2000:]
    assert "still the release's stub" in done.stdout


def test_every_catalogue_entry_agrees_with_course_autograde(course, assignment, tmp_path):
    source = {c.grade_id: c.source for n in assignment.notebooks for c in assignment.cells(n)}
    for entry in catalogue():
        write_submission(tmp_path / "class" / entry.id, assignment, edits=edits(entry, source[entry.cell]))
    done = _pytest(course, f"--submissions={tmp_path / 'class'}", f"--junitxml={tmp_path / 'all.xml'}", "-q")
    cases = _cases(tmp_path / "all.xml")
    ours = api.autograde(assignment.name, tmp_path / "class", workers=2, repo=course)
    for sid, result in ours["students"].items():
        for q in result["questions"].values():
            for row in q["checks"]:
                outcome, message, props = cases[(sid, row["id"])]
                expected = "passed" if row["passed"] else "skipped" if row["review"] else "failed"
                assert outcome == expected and float(props["score"]) == row["score"], (sid, row["id"], outcome)
                if expected == "failed":
                    assert message.startswith(row["message"][:60].split("\n")[0][:40]), (message, row["message"])
    assert len(cases) == sum(len(q["checks"]) + bool(q.get("manual")) for r in ours["students"].values()
                             for q in r["questions"].values()), done.stdout[-1000:]
