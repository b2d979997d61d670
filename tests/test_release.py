"""The release: rebuilt from the sources it equals what is committed, it leaks nothing, and
nbgrader's own validator agrees that the source passes and the release does not."""
import json
import re
import shutil
from pathlib import Path

import pytest

import week4 as checks
from autograder import api
from autograder.grader_side import problem_set
from autograder.grader_side.assignment import REPO
from autograder.tooling import classroom
from autograder.tooling.release import ship_runtime

NOTEBOOKS = ("concepts", "build")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_source_notebooks_match_their_text_form(course, name):
    built = json.loads((course / "solutions" / "transformer-block" / f"{name}.ipynb").read_text())
    committed = json.loads((REPO / "solutions" / "transformer-block" / f"{name}.ipynb").read_text())
    assert built == committed, f"run `course release` and commit solutions/transformer-block/{name}.ipynb"


def test_committed_release_is_what_course_release_makes(course):
    fresh = _files(course / "assignments" / "transformer-block")
    committed = _files(REPO / "assignments" / "transformer-block")
    assert fresh.keys() == committed.keys()
    changed = [name for name in fresh if fresh[name] != committed[name]]
    assert not changed, f"stale release files {changed}: run `course release` and commit assignments/"


def test_every_other_release_file_is_a_verbatim_copy_of_its_source():
    """Besides the notebooks, students get exactly the files of the repository, and GitHub Classroom's
    workflow, written from the set's checks.
    ``student_side/`` is the set's visible checks (its own folder) next to the course's runtime
    (``autograder/student_side``), which ships whole; no file is both (``course release`` leaves a
    git-ignored copy of the runtime in the source folder, so its notebooks run in place: that copy
    is the runtime's, byte for byte)."""
    release, source = REPO / "assignments" / "transformer-block", REPO / "solutions" / "transformer-block"
    runtime = REPO / "autograder" / "student_side"
    others = {name: data for name, data in _files(release).items() if not name.endswith(".ipynb")}
    assert "student_side/checks/norms.py" in others
    shipped_runtime = {f"student_side/{p.relative_to(runtime).as_posix()}" for p in runtime.rglob("*.py")}
    assert shipped_runtime <= others.keys(), sorted(shipped_runtime - others.keys())
    workflow = others.pop(classroom.WORKFLOW.as_posix())   # GitHub Classroom's, written from the set's checks
    assert workflow == classroom.workflow(problem_set.load(source)).encode()
    for name, data in others.items():
        if name in shipped_runtime:
            origin = runtime / name.removeprefix("student_side/")
            copy = source / name
            assert not copy.exists() or copy.read_bytes() == origin.read_bytes(), \
                f"solutions/transformer-block/{name} shadows the runtime's file"
        else:
            origin = source / name
        assert data == origin.read_bytes(), f"{name} differs from {origin.relative_to(REPO)}"


def test_the_release_ships_the_lesson_notes_and_their_figures():
    """The notes the questions refer to reach the students, with every figure they embed, and both
    notebooks say where they are."""
    release = REPO / "assignments" / "transformer-block"
    notes = release / "notes" / "transformer-block.md"
    assert notes.read_bytes() == (REPO / "course" / "notes" / "transformer-block.md").read_bytes()
    linked = re.findall(r"\]\(([^)\s]+\.png)\)", notes.read_text())
    assert len(linked) == 4
    for target in linked:
        shipped = (notes.parent / target).resolve()
        assert shipped.is_file() and release.resolve() in shipped.parents, target
        assert shipped.read_bytes() == (REPO / "course" / "figures" / shipped.name).read_bytes(), target
    for name in NOTEBOOKS:
        intro = json.loads((release / f"{name}.ipynb").read_text())["cells"][0]["source"]
        assert "notes/transformer-block.md" in "".join(intro), name


def _release_text() -> str:
    return "\n".join(p.read_text() for p in (REPO / "assignments").rglob("*")
                     if p.is_file() and p.suffix in (".py", ".ipynb"))


def test_release_has_no_solution_or_hidden_test_text():
    text = _release_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "hidden_check", "solutions.reference",
                   "from autograder", "import autograder"):
        assert marker not in text, marker
    for c in checks.all_checks():
        if c.hidden:
            assert f"def test_{c.id}(" not in text, f"the code of hidden check {c.id} is in the release"


def _significant_lines(text: str) -> set[str]:
    lines = set()
    for line in text.splitlines():
        line = line.strip()
        # Lines of real computation; control-flow headers like `with torch.no_grad():` are everywhere.
        if len(line) >= 24 and not line.startswith(("#", '"""', "import ", "from ", "def ", "class ", "return ",
                                                    "with ", "for ", "if ", "raise ", "super().")):
            lines.add(line)
    return lines


def test_release_has_no_line_of_the_references():
    release = {line.strip() for line in _release_text().replace("\\n", "\n").splitlines()}
    references = sorted((REPO / "solutions" / "transformer-block" / "grading" / "reference").glob("*.py"))
    assert references
    for module in references:
        leaked = _significant_lines(module.read_text()) & release
        assert not leaked, f"{module.name} lines in the release: {sorted(leaked)[:3]}"


def test_release_has_no_line_of_the_solutions():
    release = {line.strip() for line in _release_text().replace("\\n", "\n").splitlines()}
    for source in (REPO / "solutions" / "transformer-block").glob("*.pct.py"):
        solutions = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", source.read_text(), re.S)
        leaked = set().union(*(_significant_lines(s) for s in solutions)) & release
        assert not leaked, f"{source.name} solution lines in the release: {sorted(leaked)[:3]}"


def test_release_notebooks_have_no_outputs():
    for nb in (REPO / "assignments" / "transformer-block").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                assert not cell["outputs"] and cell["execution_count"] is None, nb.name


def test_nbgrader_validate_passes_the_source_and_inverted_the_release(course, tmp_path):
    # The set's folder holds its visible checks only; the runtime they import (``check``, ``ready``)
    # ships with the release: the source is validated with the runtime beside it, as a release has it.
    folder = tmp_path / "transformer-block"
    shutil.copytree(course / "solutions" / "transformer-block", folder)
    ship_runtime(folder)
    source = [str(folder / f"{n}.ipynb") for n in NOTEBOOKS]
    release = [str(course / "assignments" / "transformer-block" / f"{n}.ipynb") for n in NOTEBOOKS]
    done = api.nbgrader("validate", *source, repo=course, check=False)
    passes = done.stdout.count("Success! Your notebook passes all the tests.")
    assert done.returncode == 0 and passes == 2, done.stdout[-2000:]
    done = api.nbgrader("validate", "--invert", *release, repo=course, check=False)
    assert done.stdout.count("Success! The notebook does not pass any tests.") == 2, done.stdout[-2000:]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_questions_visible_checks_come_before_its_hidden_ones(name):
    """A student runs a question's check cells from the top: the ones that answer at once come first."""
    cells = json.loads((REPO / "assignments" / "transformer-block" / f"{name}.ipynb").read_text())["cells"]
    by_id = {c.id: c for c in checks.all_checks()}
    placed = [by_id[gid] for gid in (cell["metadata"].get("nbgrader", {}).get("grade_id") for cell in cells)
              if gid in by_id]
    assert placed
    for question in dict.fromkeys(c.question for c in placed):
        mine = [c.hidden for c in placed if c.question == question]
        assert mine == sorted(mine), f"{question}: a hidden check cell stands above a visible one"
        assert len(mine) == sum(1 for c in by_id.values() if c.question == question)


RUBRIC = "C8 rubric (for TAs: formgrader shows it, the students' notebooks do not have it)"


def test_c8s_rubric_is_in_the_source_and_the_gradebook_but_not_in_the_release(course):
    """The rubric sits in nbgrader's mark-scheme lines of the read-only cell after C8's answer:
    the source notebook and the gradebook (which autograde restores it from) hold it, the release
    only the line that says C8 is graded by hand."""
    from nbgrader.api import Gradebook

    def cell(folder: Path) -> str:
        nb = json.loads((folder / "transformer-block" / "concepts.ipynb").read_text())
        ids = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in nb["cells"]]
        assert ids[ids.index("C8_answer") + 1] == "C8_rubric"
        return "".join(nb["cells"][ids.index("C8_rubric")]["source"])

    source, released = cell(REPO / "solutions"), cell(REPO / "assignments")
    assert RUBRIC in source and "| 1 |" in source
    assert "graded by hand, out of 4 points" in released
    assert "MARK SCHEME" not in released and "rubric" not in released.lower() and "W_2 W_1" not in released
    assert RUBRIC not in _release_text() and "MARK SCHEME" not in _release_text()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        kept = gb.find_source_cell("C8_rubric", "concepts", "transformer-block")
        assert kept.locked and RUBRIC in kept.source
