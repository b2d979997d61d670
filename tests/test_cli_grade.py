"""`course grade` finds the problem set itself when it can tell, and says what to pass when it cannot.

Both sets of the course have a `concepts.ipynb` and a `build.ipynb`, so the notebooks' names alone
say nothing here; their folder does when it is named after a set (`submitted/<student>/<set>/`,
`assignments/<set>/`), as the README's TA path shows.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder import api, cli

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = ("concepts.ipynb", "build.ipynb")


def _copies(folder: Path, source: Path) -> list[str]:
    folder.mkdir(parents=True)
    for name in NOTEBOOKS:
        shutil.copy(source / name, folder / name)
    return [str(folder / name) for name in NOTEBOOKS]


def test_without_assignment_a_folder_named_after_no_set_is_refused_saying_what_to_pass(tmp_path, monkeypatch,
                                                                                          capsys):
    monkeypatch.chdir(REPO)
    notebooks = _copies(tmp_path / "downloads", REPO / "solutions" / "transformer-block")
    status = cli.main(["grade", *notebooks])
    err = capsys.readouterr().err
    assert status == 2
    assert "--assignment" in err and all(s in err for s in api.problem_sets(REPO)), err
    assert len(err.strip().splitlines()) == 1, err


def test_a_folder_given_for_the_notebooks_is_refused_saying_what_to_give(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    folder = tmp_path / "alice" / "transformer-block"
    _copies(folder, REPO / "solutions" / "transformer-block")
    status = cli.main(["grade", str(folder)])
    err = capsys.readouterr().err
    assert status == 2 and err == f"course grade: {folder} is a folder: give the notebook files in it (course grade " \
                                  f"{folder}/*.ipynb)\n", err


def test_an_unknown_set_is_refused_before_a_sandbox_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    marks = tmp_path / "marks"
    monkeypatch.setenv("AUTOGRADER_TIME_MARKS", str(marks))    # the sandbox notes each step it takes
    notebooks = _copies(tmp_path / "downloads", REPO / "solutions" / "transformer-block")
    status = cli.main(["grade", "--assignment", "nope", *notebooks])
    err = capsys.readouterr().err
    assert status == 2 and "no problem set 'nope'" in err, err
    assert not marks.exists(), marks.read_text()


@pytest.mark.sandboxed
def test_without_assignment_the_set_is_the_one_the_notebooks_folder_is_named_after(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    notebooks = _copies(tmp_path / "alice" / "transformer-block", REPO / "solutions" / "transformer-block")
    assert cli.main(["grade", *notebooks]) == 0
    out = capsys.readouterr().out
    questions = [line.split()[0] for line in out.splitlines()]
    assert {"B1", "C8"} <= set(questions) and out.splitlines()[-1].startswith("total "), out
