"""GitHub Classroom, honestly: the release's workflow runs the visible checks only, one graded step
per question worth that question's visible points, and names no hidden check; its steps, run here
as plain shell commands in a copy of the release, score the reference every visible point and the
untouched release none."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.grader_side import problem_set
from autograder.grader_side.assignment import REPO, Assignment
from autograder.tooling import classroom
from autograder.tooling.sampleclass import write_submission

SETS = ("transformer-block", "inside-the-block")


def _steps(set_name: str) -> tuple[list[dict], dict]:
    doc = yaml.safe_load((REPO / "assignments" / set_name / classroom.WORKFLOW).read_text())
    return doc["jobs"]["visible-checks"]["steps"], doc


@pytest.mark.unit
@pytest.mark.parametrize("set_name", SETS)
def test_one_graded_step_per_question_worth_its_visible_points_and_nothing_hidden(set_name):
    ps = problem_set.load(REPO / "solutions" / set_name)
    steps, doc = _steps(set_name)
    graded = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader")]
    visible = classroom.visible_points(ps)
    assert {s["with"]["test-name"]: s["with"]["max-score"] for s in graded} == visible
    assert all(s["with"]["command"] == f"python -m student_side.classroom {s['with']['test-name']}" for s in graded)
    report = steps[-1]
    assert report["with"]["runners"].split(",") == [s["id"] for s in graded]
    assert set(report["env"]) == {f"{s['id'].upper()}_RESULTS" for s in graded}
    text = (REPO / "assignments" / set_name / classroom.WORKFLOW).read_text()
    hidden = [c.id for c in ps.checks if c.hidden]
    assert hidden and not [cid for cid in hidden if cid in text]
    assert sum(visible.values()) < sum(c.points for c in ps.checks)   # the rest is the course's to grade
    assert doc["permissions"] == {"checks": "write", "actions": "read", "contents": "read"}


def _score(folder: Path, steps: list[dict]) -> tuple[float, dict[str, str]]:
    """Run the workflow's own commands in ``folder`` as plain shell commands: the score and each
    graded step's output."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = next(s for s in steps if s.get("name") == "Run the notebooks")
    done = subprocess.run(["bash", "-c", run["run"]], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    score, said = 0.0, {}
    for step in steps:
        if step.get("uses", "").startswith("classroom-resources/autograding-command-grader"):
            graded = subprocess.run(["bash", "-c", step["with"]["command"]], cwd=folder, env=env,
                                    capture_output=True, text=True, timeout=120)
            score += step["with"]["max-score"] if graded.returncode == 0 else 0
            said[step["with"]["test-name"]] = graded.stdout
    return score, said


@pytest.mark.slow
def test_the_steps_score_the_reference_every_visible_point_and_the_release_none(tmp_path):
    set_name = "transformer-block"
    steps, _ = _steps(set_name)
    total = sum(classroom.visible_points(problem_set.load(REPO / "solutions" / set_name)).values())
    release = tmp_path / "release"
    shutil.copytree(REPO / "assignments" / set_name, release)
    assert _score(release, steps)[0] == 0
    reference = tmp_path / "reference"
    shutil.copytree(REPO / "assignments" / set_name, reference)
    write_submission(reference, Assignment(set_name, REPO), nested=False)
    score, said = _score(reference, steps)
    assert score == total, said
    assert said["B1"].startswith("passed B1_") and "failed" not in said["B1"]
