"""A set's notebooks are written in Jupytext's percent format: Jupytext itself reads every set's
``.pct.py`` into the very cells ``course release`` builds and writes it back unchanged; a notebook
Jupytext writes (nbgrader's metadata in its cell markers) builds into the same notebook; a marker
the kit does not read is an error naming its line; the check cells are written from the set's checks."""
import json
import shutil
from pathlib import Path

import jupytext
import nbformat
import pytest

from autograder.grader_side import problem_set
from autograder.tooling import authoring
from autograder.tooling.authoring import AuthoringError

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "tests" / "toy"
SOURCES = sorted([*REPO.glob("solutions/*/*.pct.py"), *TOY.glob("*.pct.py")])


def _build(source: Path, text: str | None = None) -> nbformat.NotebookNode:
    name = source.name.removesuffix(".pct.py")
    return authoring.build_notebook(source.read_text() if text is None else text, name,
                                    problem_set.load(source.parent))


def _json(nb) -> dict:
    return json.loads(nbformat.writes(nb))


def test_every_set_and_the_toy_are_covered():
    assert {p.parent.name for p in SOURCES} == {"transformer-block", "inside-the-block", "toy"}, SOURCES


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_jupytext_reads_the_cells_the_kit_builds_and_writes_the_file_back(source):
    text = source.read_text()
    theirs = jupytext.reads(text, fmt="py:percent")
    ours = _build(source)
    assert [(c.cell_type, c.source) for c in theirs.cells] == [(c.cell_type, c.source) for c in ours.cells]
    assert len({c.cell_type for c in ours.cells}) == 2   # markdown and code both, in the counts the kit builds
    assert jupytext.writes(theirs, fmt="py:percent") == text


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_notebook_jupytext_writes_builds_into_the_same_notebook(source):
    ours = _build(source)
    text = jupytext.writes(ours, fmt="py:percent")   # its header, nbgrader={...} on every marker
    assert text.startswith("# ---") and 'nbgrader={"grade": true' in text
    assert _json(_build(source, text)) == _json(ours)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_committed_source_notebook_is_what_the_text_form_builds(source):
    built = _json(_build(source))
    committed = source.with_name(source.name.replace(".pct.py", ".ipynb"))
    if committed.exists():   # the toy's is built by its tests
        assert json.loads(committed.read_text()) == built


TOY_TEXT = (TOY / "answers.pct.py").read_text()
T2 = '# %% role="solution" grade_id="T2_code"'


@pytest.mark.parametrize("line, why", [
    ("# %% md", "'md' is not an option"),                                 # the kit's old form: a code cell titled md
    ("# %% [md]", "'[md]' is not an option"),
    ("# %% [raw]", "'[raw]' is not an option"),
    ("#%% [markdown]", "is not a cell marker the kit reads"),
    ("    # %% [markdown]", "is not a cell marker the kit reads"),           # inside a code cell: never merged
    ("# %%[markdown]", "is not a cell marker the kit reads"),
    ('# %% role="nope"', "unknown role 'nope'"),
    ("# %% role=solution", "the value of role is not JSON"),
    ('# %% colour="red"', "unknown option 'colour'"),
    ('# %% role="solution"', 'a solution cell needs grade_id="..."'),
    ('# %% [markdown] role="answer" grade_id="x"', "an answer cell needs points=<number>"),
    ('# %% role="answer" grade_id="x" points=1', "role='answer' goes on '# %% [markdown]'"),
    ('# %% role="checks" question="T9"', "question='T9' is not one of the set's questions (T1, T2;"),
])
def test_a_marker_the_kit_does_not_read_is_an_error_naming_its_line(line, why):
    text = TOY_TEXT.replace(T2, f"{line}\nx = 1\n\n{T2}")
    number = text.splitlines().index(line) + 1
    with pytest.raises(AuthoringError) as raised:
        _build(TOY / "answers.pct.py", text)
    assert f"answers:{number}: " in str(raised.value) and why in str(raised.value), str(raised.value)


def test_a_markdown_marker_later_in_the_file_starts_a_markdown_cell():
    text = TOY_TEXT.replace(T2, f"# %% [markdown]\n# A note.\n\n{T2}")
    nb = _build(TOY / "answers.pct.py", text)
    (note,) = [c for c in nb.cells if c.source == "A note."]
    assert note.cell_type == "markdown" and len(nb.cells) == len(_build(TOY / "answers.pct.py").cells) + 1


def _toy(tmp_path) -> Path:
    folder = tmp_path / "toy"
    shutil.copytree(TOY, folder, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    return folder


def test_check_cells_are_written_from_the_sets_checks(tmp_path):
    """A question's run of check cells becomes the set's checks for it, in order, whatever it was:
    a placeholder, one stale cell, or cells out of order; build writes the file back, with a warning."""
    folder = _toy(tmp_path)
    source = folder / "answers.pct.py"
    cells = authoring.parse(TOY_TEXT)
    t1 = [c for c in cells if c[0] == "check" and c[1]["grade_id"].startswith("T1")]
    t2 = [c for c in cells if c[0] == "check" and c[1]["grade_id"].startswith("T2")]
    rest = [c for c in cells if c[0] != "check"]
    placeholder = ("checks", {"question": "T1"}, "")
    stale = ("check", {"grade_id": "T2_reference"}, "# an old text of the cell")
    edited = rest[:4] + [placeholder] + rest[4:] + [stale, t2[0]]
    source.write_text(authoring.write(edited))
    with pytest.warns(UserWarning, match="answers.pct.py: its check cells were rewritten"):
        authoring.build(folder)
    assert source.read_text() == TOY_TEXT
    assert json.loads((folder / "answers.ipynb").read_text()) == _json(_build(TOY / "answers.pct.py"))
    assert [c[1]["grade_id"] for c in t1 + t2] == ["T1_is_a_number", "T1_value", "T2_small", "T2_reference"]


def test_a_check_cell_the_set_does_not_have_or_a_question_in_two_places_is_an_error():
    unknown = TOY_TEXT.replace('grade_id="T1_value"', 'grade_id="T1_gone"')
    with pytest.raises(AuthoringError, match=r"answers:\d+: 'T1_gone' is not a check of the set"):
        _build(TOY / "answers.pct.py", unknown)
    twice = TOY_TEXT.replace(T2, f'# %% role="checks" question="T1"\n\n{T2}')
    with pytest.raises(AuthoringError, match=r"the check cells of T1 stand in two places \(the first at line \d+\)"):
        _build(TOY / "answers.pct.py", twice)
    missing = "\n\n".join(part for part in TOY_TEXT.split("\n\n") if 'grade_id="T2_' not in part
                          or "solution" in part)
    with pytest.raises(AuthoringError, match="no check cells place T2_small, T2_reference"):
        _build(TOY / "answers.pct.py", missing)


def test_two_cells_with_one_grade_id_is_an_error_naming_both_lines():
    """nbgrader refuses such a notebook at release, and removes the whole release folder."""
    text = TOY_TEXT.replace('grade_id="T2_code"', 'grade_id="T1_code"')
    lines = text.splitlines()
    first, second = (i + 1 for i, line in enumerate(lines) if 'grade_id="T1_code"' in line)
    with pytest.raises(AuthoringError, match=rf"answers:{second}: grade_id 'T1_code' is already the id of the cell "
                                             rf"at line {first}"):
        _build(TOY / "answers.pct.py", text)


def test_what_jupyter_saves_is_kept_as_written(tmp_path, recwarn):
    """A Jupytext header (Jupyter writes one when it saves a paired file) and options in another order
    are the author's: building neither rewrites the file nor warns."""
    folder = _toy(tmp_path)
    header = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     name: python3\n# ---\n\n"
    text = header + TOY_TEXT.replace('# %% role="solution" grade_id="T2_code"',
                                     '# %% grade_id="T2_code" role="solution"')
    (folder / "answers.pct.py").write_text(text)
    authoring.build(folder)
    assert (folder / "answers.pct.py").read_text() == text
    assert not [w for w in recwarn if "rewritten" in str(w.message)]
    assert json.loads((folder / "answers.ipynb").read_text()) == _json(_build(TOY / "answers.pct.py"))
