"""What every problem set of ``solutions/`` must hold to, whatever it asks: its committed notebooks
and release are what ``course release`` makes, the release ships the runtime and leaks nothing
of ``grading/``, and in both graders the reference solution earns full marks and the untouched
release earns none. A new week's set is held to it by adding its folder."""
from __future__ import annotations

import json

import pytest
from nbgrader.api import Gradebook

from autograder import api
from autograder.course import problem_sets
from autograder.grader_side.assignment import REPO, Assignment
from autograder.tooling.sampleclass import write_submission

SETS = problem_sets(REPO)
pytestmark = pytest.mark.slow


def test_the_course_has_its_weekly_sets():
    scheduled = [week["assignment"] for week in api.schedule(REPO)]
    assert scheduled == sorted(set(scheduled), key=scheduled.index) and set(scheduled) <= set(SETS)
    assert len(SETS) >= 2


@pytest.fixture(scope="module", params=SETS)
def made(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(request.param)
    return api.make_course(root, request.param)


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_committed_notebooks_and_release_are_what_course_release_makes(made):
    for notebook in made.notebooks:
        built = json.loads((made.source_dir / f"{notebook}.ipynb").read_text())
        committed = json.loads((REPO / "solutions" / made.name / f"{notebook}.ipynb").read_text())
        assert built == committed, f"run `course release {made.name}` and commit solutions/{made.name}/{notebook}.ipynb"
    fresh, committed = _files(made.release_dir), _files(REPO / "assignments" / made.name)
    assert fresh.keys() == committed.keys()
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"stale release files {stale}: run `course release {made.name}` and commit assignments/"


def test_the_release_ships_the_runtime_and_nothing_of_grading(made):
    shipped = _files(made.release_dir)
    runtime = _files(REPO / "autograder" / "student_side")
    for name, data in runtime.items():
        assert shipped[f"student_side/{name}"] == data, name
    assert not any(name.startswith("grading") or name.endswith(".pct.py") for name in shipped)
    # the set's own shipped text (the runtime is public, and shared by every set)
    text = "\n".join(data.decode() for name, data in shipped.items()
                     if name.endswith((".py", ".ipynb", ".md")) and f"student_side/{name}" not in
                     {f"student_side/{r}" for r in runtime} and name.removeprefix("student_side/") not in runtime)
    for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "hidden_check", "from autograder", "import autograder"):
        assert marker not in text, marker
    for c in made.checks:
        if c.hidden:
            assert f"def test_{c.id}(" not in text, f"hidden check {c.id} is in the release"
    # No reference line of computation is a line of the release (``solutions/<set>/grading/reference``).
    shipped_lines = {line.strip() for line in text.replace("\\n", "\n").splitlines()}
    for path in (made.source_dir / "grading" / "reference").glob("*.py"):
        leaked = {line.strip() for line in path.read_text().splitlines()
                  if len(line.strip()) >= 24 and not line.strip().startswith(
                      ("#", '"""', "import ", "from ", "def ", "class ", "return ", "with ", "for ", "if ", "raise ",
                       "super()."))} & shipped_lines
        assert not leaked, f"{path.name} lines in the release: {sorted(leaked)[:3]}"


def test_both_graders_give_the_reference_full_marks_and_the_release_none(made):
    root = made.root
    write_submission(root / "submitted" / "reference", made)
    write_submission(root / "submitted" / "untouched", made, untouched=True)
    ours = api.autograde(made.name, root / "submitted", repo=root, gradebook=True)["students"]
    assert ours["reference"]["score"] == made.max_score, ours["reference"]["flags"]
    assert ours["untouched"]["score"] == 0
    assert ours["reference"]["flags"] == [] and ours["reference"]["status"] == "graded"
    api.nbgrader("autograde", made.name, "--force", "--log-level=ERROR", repo=root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        theirs = {s.student.id: s.score for s in gb.assignment_submissions(made.name)}
    assert theirs == {"reference": made.max_score, "untouched": 0}


def test_a_set_names_the_notes_it_ships(made):
    notes = list((made.release_dir / "notes").glob("*.md"))
    assert notes, "a set ships its lesson notes in notes/"
    first = json.loads((made.release_dir / f"{made.notebooks[0]}.ipynb").read_text())["cells"][0]["source"]
    assert any(f"notes/{n.name}" in "".join(first) for n in notes)


def test_loading_holds_a_set_to_its_contract(tmp_path):
    import shutil

    from autograder.course import CourseError

    shutil.copytree(REPO / "tests" / "toy", tmp_path / "solutions" / "toy")
    init = tmp_path / "solutions" / "toy" / "grading" / "__init__.py"
    init.write_text(init.read_text().replace('Question("T2", "answers", 3,', 'Question("T2", "answers", 4,'))
    with pytest.raises(CourseError, match="T2 carry 3 points, the contract says 4"):
        _ = Assignment("toy", tmp_path).set
