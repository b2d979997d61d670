"""`course release`: driven by the weekly schedule, idempotent, and warning about uncommitted edits."""
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side.assignment import REPO


@pytest.fixture()
def repo(tmp_path) -> Path:
    """A small committed copy of the course repository."""
    shutil.copytree(REPO / "solutions", tmp_path / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "course", tmp_path / "course", ignore=shutil.ignore_patterns("figures"))
    shutil.copy(REPO / "nbgrader_config.py", tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "course"], check=True)
    for name, value in (("status.branch", "true"), ("color.status", "always")):   # a TA's own settings
        subprocess.run([*git, "config", name, value], check=True)                  # change no warning
    return tmp_path


def _release_files(repo):
    folder = repo / "assignments" / "transformer-block"
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_schedule_names_the_week_of_the_problem_set(repo):
    assert api.scheduled(4, repo) == "transformer-block"
    with pytest.raises(api.CourseError, match="week 9 releases no problem set"):
        api.scheduled(9, repo)


def test_releasing_twice_changes_nothing_and_matches_the_committed_release(repo):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a clean tree: no warning, the second time either
        api.release("transformer-block", repo)  # (what the first wrote into solutions/ is no edit,
        first = _release_files(repo)            # though this course folder has no .gitignore)
        api.release("transformer-block", repo)
    assert _release_files(repo) == first
    committed = {p.relative_to(REPO / "assignments" / "transformer-block"): p.read_bytes()
                 for p in (REPO / "assignments" / "transformer-block").rglob("*") if p.is_file()
                 and "__pycache__" not in p.parts}
    assert first == committed


def test_uncommitted_edits_under_solutions_warn(repo):
    source = repo / "solutions" / "transformer-block" / "concepts.pct.py"
    source.write_text(source.read_text() + "\n# %% [markdown]\n# An extra note.\n")
    with pytest.warns(UserWarning, match="uncommitted edits"):
        api.release("transformer-block", repo)


def test_the_command_line_releases_by_week():
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "release", "--week", "9"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "week 9 releases no problem set" in done.stderr


def test_the_week_is_read_from_the_schedule_of_the_course_folder_it_runs_in(repo):
    """A course whose schedule moves week 4's set to week 7: `course release --week 7` in that folder
    releases it into that folder (before, the week was looked up in the kit's own schedule)."""
    schedule = repo / "course" / "schedule.toml"
    schedule.write_text(schedule.read_text().replace("week = 4", "week = 7"))
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "release", "--week", "7"], cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "released transformer-block: " in done.stdout and str(repo / "assignments") in done.stdout
    assert "due 2027-02-13 05:00 UTC, written into the gradebook" in done.stdout, done.stdout
    assert (repo / "assignments" / "transformer-block" / "build.ipynb").is_file()
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "release", "--week", "4"], cwd=repo,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "week 4 releases no problem set" in done.stderr
