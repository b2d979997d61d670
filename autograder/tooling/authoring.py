"""Turns the text form of the source notebooks into nbgrader source notebooks.

Each problem set is written once, as ``solutions/<assignment>/<notebook>.pct.py``: cells headed
by ``# %% <kind> [key=value ...]`` lines (see ``KINDS``; ``# %% code grader=skip`` marks a given
cell that only shows the student something, which ``course autograde`` need not run). ``# %% checks <question>``
expands into one graded cell per check of that question in the set, the visible ones first, so
adding a check to the set adds it to nbgrader's tests and to ``course autograde`` alike.

Next to the notebooks stands ``student_side/checks/``, the set's visible checks; the release
gets them with the course's runtime (``release.ShipRuntime``), and students import ``check``
from it.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

from autograder.grader_side import problem_set
from autograder.student_side.checks import Check

KINDS = ("md", "code", "solution", "checks", "answer")
HEADER = re.compile(r"^# %% (\w+)(.*)$")
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


class AuthoringError(ValueError):
    """The text form of a notebook is malformed; the message says where."""


def parse(text: str, origin: str = "<notebook>", questions=None) -> list[tuple[str, dict, str]]:
    """Split the text form into (kind, attributes, body) cells (``questions``: the set's ids, to hold
    ``# %% checks`` cells to)."""
    cells: list[tuple[str, dict[str, str], list[str]]] = []
    body: list[str] | None = None   # the lines of the cell being read
    for number, line in enumerate(text.splitlines(), 1):
        match = HEADER.match(line)
        if match:
            kind, rest = match.groups()
            if kind not in KINDS:
                raise AuthoringError(f"{origin}:{number}: unknown cell kind {kind!r}; use one of {', '.join(KINDS)}")
            attrs = dict(part.split("=", 1) for part in rest.split() if "=" in part)
            words = [part for part in rest.split() if "=" not in part]
            if kind == "checks":
                if len(words) != 1 or (questions is not None and words[0] not in questions):
                    raise AuthoringError(f"{origin}:{number}: write '# %% checks <question id>'")
                attrs["question"] = words[0]
            body = []
            cells.append((kind, attrs, body))
        elif body is None:
            if line.strip():
                raise AuthoringError(f"{origin}:{number}: text before the first '# %%' cell header")
        else:
            body.append(line)
    return [(kind, attrs, "\n".join(lines).rstrip("\n")) for kind, attrs, lines in cells]


def _uncomment(body: str) -> str:
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def check_cell(check: Check, ps: problem_set.ProblemSet) -> str:
    """Source of the graded cell that runs one check of the set ``ps``."""
    head = f"# {check.id} · {check.points:g} point{'s' * (check.points != 1)}"
    if check.hidden:
        names = ", ".join(repr(n) for n in ps.uses(check))
        return (f"{head} · hidden, runs when your notebook is graded: {check.says}\n"
                f"ready({names})\n"
                f"### BEGIN HIDDEN TESTS\nfrom autograder.grader_side.in_kernel import hidden_check\n"
                f"hidden_check({ps.folder.name!r}, {check.id!r})\n### END HIDDEN TESTS")
    return f"{head} · {check.says}\ncheck({check.id!r})"


def question_checks(ps: problem_set.ProblemSet, question: str) -> list[Check]:
    """The checks of ``question`` in the order their cells stand: the visible ones first (they run
    as soon as the student runs them), then the hidden ones, each group in the set's order."""
    return sorted((c for c in ps.checks if c.question == question), key=lambda c: c.hidden)


def build_notebook(text: str, name: str, ps: problem_set.ProblemSet) -> nbformat.NotebookNode:
    """The nbgrader source notebook for the text form ``text`` of notebook ``name`` of the set ``ps``."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    counter = 0
    for kind, attrs, body in parse(text, name, ps.questions):
        counter += 1
        gid = attrs.get("id", f"{name}_{kind}_{counter}")
        if kind == "md":
            cells = [nbformat.v4.new_markdown_cell(_uncomment(body), metadata=_meta(gid, locked=True))]
        elif kind == "code":
            meta = _meta(gid, locked=True)
            if attrs.get("grader") == "skip":   # a demonstration for the student; grading needs nothing from it
                meta["course"] = {"skip_when_grading": True}
            cells = [nbformat.v4.new_code_cell(body, metadata=meta)]
        elif kind == "solution":
            cells = [nbformat.v4.new_code_cell(body, metadata=_meta(gid, solution=True))]
        elif kind == "answer":
            cells = [nbformat.v4.new_markdown_cell(
                _uncomment(body), metadata=_meta(gid, grade=True, solution=True, points=float(attrs["points"])))]
        else:
            cells = [nbformat.v4.new_code_cell(check_cell(c, ps), metadata=_meta(c.id, grade=True, locked=True,
                                                                                  points=c.points))
                     for c in question_checks(ps, attrs["question"])]
        for cell in cells:
            cell.id = cell.metadata["nbgrader"]["grade_id"].replace("_", "-")
        nb.cells.extend(cells)
    _expect_every_check_placed(nb, name, ps)
    return nb


def _expect_every_check_placed(nb, name, ps):
    placed = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells}
    missing = [c.id for c in ps.checks if ps.notebook_of(c) == name and c.id not in placed]
    if missing:
        raise AuthoringError(f"{name}: no '# %% checks' cell places {', '.join(missing)}")


def build(assignment_dir: Path) -> list[Path]:
    """Write every ``*.pct.py`` in ``assignment_dir`` (a problem set's folder) as ``.ipynb``."""
    ps = problem_set.load(assignment_dir)
    written = []
    for source in sorted(assignment_dir.glob("*.pct.py")):
        name = source.name.removesuffix(".pct.py")
        target = source.with_name(f"{name}.ipynb")
        nbformat.write(build_notebook(source.read_text(), name, ps), target)
        written.append(target)
    if not written:
        raise AuthoringError(f"no *.pct.py notebook sources in {assignment_dir}")
    return written
