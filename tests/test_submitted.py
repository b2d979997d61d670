"""The one reader of submission folders (autograder/grader_side/submitted.py): no link is followed
at any depth below the submissions folder, only regular files up to the cap are read, and a file
swapped for a link after it was found is refused when it is read."""
import os

import pytest

from autograder.course import student_folders
from autograder.grader_side import submitted

A = "transformer-block"


@pytest.fixture
def root(tmp_path):
    honest = tmp_path / "honest" / A
    honest.mkdir(parents=True)
    (honest / "build.ipynb").write_text('{"cells": []}')
    (honest / "timestamp.txt").write_text("2026-11-30 10:00:00 UTC")
    return tmp_path


def test_a_notebook_in_either_layout_is_read(root):
    assert submitted.notebook(root / "honest", A, "build") == b'{"cells": []}'
    (root / "flat").mkdir()
    (root / "flat" / "build.ipynb").write_text("{}")
    assert submitted.notebook(root / "flat", A, "build") == b"{}"
    with pytest.raises(submitted.Missing, match="^build.ipynb is missing from the submission$"):
        submitted.notebook(root / "flat", A, "build", nbgrader_only=True)


@pytest.mark.parametrize("make, words", [
    (lambda r: os.symlink(r / "honest", r / "x"), "build.ipynb is inside a link (x)"),
    (lambda r: ((r / "x").mkdir(), os.symlink(r / "honest" / A, r / "x" / A)),
     f"{A}/build.ipynb is inside a link ({A})"),
    (lambda r: ((r / "x" / A).mkdir(parents=True),
                os.symlink(r / "honest" / A / "build.ipynb", r / "x" / A / "build.ipynb")),
     f"{A}/build.ipynb is a link; submit the notebook file itself"),
    (lambda r: ((r / "x" / A).mkdir(parents=True), os.mkfifo(r / "x" / A / "build.ipynb")),
     f"{A}/build.ipynb is not a regular file"),
])
def test_a_link_at_any_depth_or_an_odd_file_is_refused(root, make, words):
    make(root)
    with pytest.raises(submitted.Refused) as refused:
        submitted.notebook(root / "x", A, "build")
    assert words in str(refused.value) and not isinstance(refused.value, submitted.Missing)


def test_a_file_over_the_cap_is_refused_before_it_is_read(root):
    (root / "big").mkdir()
    with open(root / "big" / "build.ipynb", "wb") as f:
        f.truncate(submitted.MAX_BYTES + 1)
    with pytest.raises(submitted.Refused, match="could not be read: it is 20 MiB, over the 20 MiB limit"):
        submitted.notebook(root / "big", A, "build")


def test_a_file_swapped_for_a_link_after_it_was_found_is_refused(root):
    folder = root / "honest"
    parts = submitted.find(folder, submitted.layouts(A, "build.ipynb"))
    path = folder.joinpath(*parts)
    path.unlink()
    os.symlink("/etc/hostname", path)
    with pytest.raises(submitted.Refused, match="is a link"):
        submitted.read(folder, parts)


def test_a_folder_swapped_for_a_link_is_refused(root):
    folder = root / "honest"
    parts = submitted.find(folder, submitted.layouts(A, "build.ipynb"))
    os.rename(folder / A, root / "moved")
    os.symlink(root / "moved", folder / A)
    with pytest.raises(submitted.Refused, match="inside a link"):
        submitted.read(folder, parts)


def test_bookkeeping_is_read_by_the_same_rule(root):
    found, refused = submitted.bookkeeping(root / "honest", A)
    assert found == {"timestamp.txt": b"2026-11-30 10:00:00 UTC"} and not refused
    (root / "x" / A).mkdir(parents=True)
    os.symlink(root / "honest" / A / "timestamp.txt", root / "x" / A / "timestamp.txt")
    (root / "x" / A / "submission_secret.txt").write_text("s" * submitted.BOOKKEEPING_BYTES)
    found, refused = submitted.bookkeeping(root / "x", A)
    assert found == {} and sorted(refused) == ["submission_secret.txt", "timestamp.txt"]


def test_students_are_folders_and_links_to_folders_not_files_or_hidden_entries(root):
    os.symlink(root / "honest", root / "linked")
    (root / "notes.txt").write_text("")
    (root / ".ipynb_checkpoints").mkdir()
    assert list(student_folders(root)) == ["honest", "linked"]


@pytest.mark.parametrize("make", [
    lambda r: os.symlink(r / "honest", r / "x"),                                   # the student's folder
    lambda r: ((r / "x").mkdir(), os.symlink(r / "honest" / A, r / "x" / A)),     # the assignment folder
    lambda r: ((r / "x").mkdir(), os.symlink(r / "elsewhere", r / "x" / A)),      # a link to nothing
])
def test_a_linked_folder_gives_only_its_own_reason_not_a_timestamp_flag(root, make):
    from autograder.nbgrader.recorder import _timestamp

    make(root)
    found, refused = submitted.bookkeeping(root / "x", A)
    assert found == {} and refused == {}
    assert _timestamp(found, refused) == (None, "")
    with pytest.raises(submitted.Refused, match="inside a link"):   # the folder's own reason, on its notebooks
        submitted.notebook(root / "x", A, "build")


def _cells(n, **cell):
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "", **cell} for _ in range(n)]}


@pytest.mark.parametrize("nb, words", [
    (_cells(submitted.MAX_CELLS + 1), f"it has {submitted.MAX_CELLS + 1} cells, over the {submitted.MAX_CELLS}-cell"),
    (_cells(2, cell_type="code", outputs=[{}] * (submitted.MAX_OUTPUTS // 2 + 1)),
     f"its cells have {submitted.MAX_OUTPUTS + 2} outputs, over the {submitted.MAX_OUTPUTS}-output limit"),
    (_cells(1, source=["x" * submitted.MAX_MARKUP_CELL, "y"]),
     f"cell 0 holds {submitted.MAX_MARKUP_CELL + 1} characters of markdown text, over the"),
    (_cells(submitted.MAX_MARKUP // submitted.MAX_MARKUP_CELL + 1, cell_type="raw",
            source="x" * submitted.MAX_MARKUP_CELL),
     "its markdown and raw cells hold"),
])
def test_a_notebook_over_a_structure_cap_is_refused_with_the_reason(root, nb, words):
    import json

    (root / "honest" / A / "build.ipynb").write_text(json.dumps(nb))
    with pytest.raises(submitted.Refused, match="^build.ipynb could not be read: ") as refused:
        submitted.notebook(root / "honest", A, "build")
    assert words in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("bad", ["not a cell id!", "x" * 65, "", 7])
def test_a_cell_id_nbformat_refuses_is_refused_with_the_reason(root, bad):
    import json

    nb = _cells(2)
    nb["cells"][1]["id"] = bad
    (root / "honest" / A / "build.ipynb").write_text(json.dumps(nb))
    with pytest.raises(submitted.Refused, match="cell 1 has an id that is not a notebook cell id"):
        submitted.notebook(root / "honest", A, "build")
    nb["cells"][1]["id"] = "a-Valid_id-" + "9" * 53
    (root / "honest" / A / "build.ipynb").write_text(json.dumps(nb))
    assert json.loads(submitted.notebook(root / "honest", A, "build")) == nb


def test_a_notebook_at_every_cap_is_read(root):
    import json

    nb = _cells(submitted.MAX_CELLS - 1, source="x" * (submitted.MAX_MARKUP // submitted.MAX_CELLS))
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": "", "outputs": [{}] * submitted.MAX_OUTPUTS})
    (root / "honest" / A / "build.ipynb").write_text(json.dumps(nb))
    assert json.loads(submitted.notebook(root / "honest", A, "build")) == nb


def test_a_missing_notebook_names_the_notebooks_that_are_there(root):
    """The usual cause is the student's own file under another name: the reason says which names it
    found (control characters escaped), never through a link."""
    folder = root / "renamed"
    (folder / A).mkdir(parents=True)
    (folder / "Build.ipynb").write_text("{}")
    (folder / A / "concepts (1).ipynb").write_text("{}")
    (folder / "b\x1b[2J.ipynb").write_text("{}")
    with pytest.raises(submitted.Missing) as missing:
        submitted.notebook(folder, A, "build")
    assert str(missing.value) == ("build.ipynb is missing from the submission (it holds Build.ipynb, b\\x1b[2J.ipynb, "
                                  "concepts (1).ipynb: a notebook is graded only under the release's name)")
    linked = root / "linked"
    linked.mkdir()
    os.symlink(folder / A, linked / A)
    with pytest.raises(submitted.Refused, match="inside a link"):
        submitted.notebook(linked, A, "build", nbgrader_only=True)


def _two_sets(tmp_path):
    """A course folder that names two sets (a set is a folder of solutions/ with a grading/ package)."""
    course = tmp_path / "course"
    for name in (A, "inside-the-block"):
        (course / "solutions" / name / "grading").mkdir(parents=True)
        (course / "solutions" / name / "grading" / "__init__.py").write_text("")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    return course


def test_a_student_who_handed_in_only_another_set_is_no_submission_of_this_one(tmp_path):
    """In the course's submitted/, as nbgrader: only <student>/<set>/. Elsewhere (an LMS download):
    every student folder, but one holding only another set's folder; an empty folder or notebooks
    under other names are still a submission, graded 0 with the reason."""
    from autograder import api

    course = _two_sets(tmp_path)
    for where in (course / "submitted", tmp_path / "downloads"):
        (where / "alice" / A).mkdir(parents=True)
        (where / "bob" / "inside-the-block").mkdir(parents=True)
        (where / "carol").mkdir()
        (where / "dan").mkdir()
        (where / "dan" / "Concepts (1).ipynb").write_text("{}")
        (where / "eve" / "inside-the-block").mkdir(parents=True)
        (where / "eve" / "build.ipynb").write_text("{}")
        (where / "fay").mkdir()
        (where / "fay" / A).symlink_to(tmp_path)      # a link: graded 0 with the reason, never left out
    assert sorted(api.find_submissions(course / "submitted", A, course)) == ["alice", "fay"]
    assert sorted(api.find_submissions(course / "submitted", "inside-the-block", course)) == ["bob", "eve"]
    assert sorted(api.find_submissions(tmp_path / "downloads", A, course)) == ["alice", "carol", "dan", "eve", "fay"]
    assert sorted(api.find_submissions(tmp_path / "downloads", None, course)) == ["alice", "bob", "carol", "dan", "eve",
                                                                                    "fay"]
