"""Turns the text form of the source notebooks into nbgrader source notebooks.

Each problem set is written once, as ``solutions/<assignment>/<notebook>.pct.py``, in Jupytext's
percent format: each cell starts with a ``# %%`` line (``# %% [markdown]`` for text, whose lines are
commented with ``# ``), and the kit's options follow it as Jupytext's cell metadata (``key=value``,
each value JSON), so Jupytext, VS Code and JupyterLab read the file into the very cells the kit
builds:

    # %% [markdown]                                          given text (read-only)
    # %% [markdown] grade_id="C8_rubric"                     given text with an id
    # %% [markdown] role="answer" grade_id="C8_answer" points=4   graded by hand
    # %%                                                     given code (read-only)
    # %% grader="skip"                                       given code that only shows something
    # %% role="solution" grade_id="B1_code"                  the student's cell
    # %% role="check" grade_id="B1_layer_norm_shapes"        a graded cell running one check
    # %% role="checks" question="B1"                         where B1's check cells go (a new question)

The check cells are written from the set's checks, not by hand: :func:`sync` rewrites each
question's run of check cells (and a ``role="checks"`` placeholder) as one cell per check of the
question, the visible ones first, so adding a check to the set adds it to nbgrader's tests and to
``course autograde`` alike; ``course release`` syncs before it builds. A cell carrying nbgrader's
own metadata (``nbgrader={...}``, as Jupytext writes an nbgrader notebook) is read by that metadata.
A line that looks like a cell marker but is not one the kit reads is an error naming the line,
never a cell merged into the one above.

Next to the notebooks stands ``student_side/checks/``, the set's visible checks; the release
gets them with the course's runtime (``release.ShipRuntime``), and students import ``check``
from it.
"""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import nbformat

from autograder.grader_side import problem_set
from autograder.student_side.checks import Check

KINDS = ("md", "code", "solution", "answer", "check", "checks")
ROLES = {"solution": "solution", "answer": "answer", "check": "check", "checks": "checks"}
OPTIONS = {"role", "grade_id", "points", "grader", "question", "nbgrader", "course", "lines_to_next_cell"}
MARKER = re.compile(r"^\s*#\s*%%")          # what Jupytext (and VS Code) take for a cell marker
HEADER = re.compile(r"^# %%( \[markdown\])?(?: (.*))?$")
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)=")


class AuthoringError(ValueError):
    """The text form of a notebook is malformed; the message says where."""


def _options(rest: str, where: str) -> dict:
    """The ``key=value`` options of a cell marker (values in JSON, as Jupytext writes them)."""
    found: dict = {}
    decoder = json.JSONDecoder()
    at = 0
    while rest[at:].strip():
        key = _KEY.match(rest, at)
        if not key:
            raise AuthoringError(f"{where}: {rest[at:].strip()!r} is not an option: write key=value after '# %%' "
                                 "(e.g. '# %% [markdown]' or '# %% role=\"solution\" grade_id=\"B1_code\"')")
        try:
            value, at = decoder.raw_decode(rest, key.end())
        except json.JSONDecodeError:
            raise AuthoringError(f"{where}: the value of {key.group(1)} is not JSON (a text is written in double "
                                 "quotes: grade_id=\"B1_code\")") from None
        if key.group(1) not in OPTIONS:
            raise AuthoringError(f"{where}: unknown option {key.group(1)!r}; the kit reads "
                                 f"{', '.join(sorted(OPTIONS))}")
        found[key.group(1)] = value
    return found


def _kind(markdown: bool, opts: dict, where: str) -> str:
    nbg = opts.get("nbgrader")
    if isinstance(nbg, dict):   # an nbgrader notebook as Jupytext writes it
        opts.setdefault("grade_id", nbg.get("grade_id"))
        if nbg.get("grade") and nbg.get("solution"):
            opts.setdefault("points", nbg.get("points"))
            return "answer"
        if nbg.get("solution"):
            return "solution"
        if nbg.get("grade"):
            return "check"
        if isinstance(opts.get("course"), dict) and opts["course"].get("skip_when_grading"):
            opts.setdefault("grader", "skip")
        return "md" if markdown else "code"
    role = opts.get("role")
    if role is None:
        return "md" if markdown else "code"
    if role not in ROLES:
        raise AuthoringError(f"{where}: unknown role {role!r}; use one of {', '.join(ROLES)}")
    if (role == "answer") != markdown:
        raise AuthoringError(f"{where}: role={role!r} goes on " + ("'# %% [markdown]'" if role == "answer" else
                                                                   "a code cell ('# %%')"))
    return ROLES[role]


def parse(text: str, origin: str = "<notebook>", questions=None) -> list[tuple[str, dict, str]]:
    """Split the text form into (kind, options, body) cells: ``kind`` one of ``KINDS``, a markdown
    body still commented (``questions``: the set's ids, to hold ``role="checks"`` cells to)."""
    cells: list[tuple[str, dict, list[str]]] = []
    body: list[str] | None = None   # the lines of the cell being read
    lines = text.splitlines()
    header = lines.index("# ---", 1) + 1 if lines[:1] == ["# ---"] and "# ---" in lines[1:] else 0
    for number, line in enumerate(lines, 1):
        where = f"{origin}:{number}"
        if number <= header:   # Jupytext's header (the notebook's metadata): the kit writes its own
            continue
        if MARKER.match(line):
            match = HEADER.match(line)
            if not match:
                raise AuthoringError(f"{where}: {line.strip()!r} is not a cell marker the kit reads: write "
                                     "'# %%' (code) or '# %% [markdown]', then any options as key=value")
            opts = _options(match.group(2) or "", where)
            kind = _kind(bool(match.group(1)), opts, where)
            if kind == "checks" and (not isinstance(opts.get("question"), str) or
                                     (questions is not None and opts["question"] not in questions)):
                raise AuthoringError(f"{where}: question={opts.get('question')!r} is not one of the set's questions "
                                     f"({', '.join(questions or [])}; grading/__init__.py lists them): write "
                                     "'# %% role=\"checks\" question=\"<question id>\"'")
            if kind in ("solution", "answer", "check") and not isinstance(opts.get("grade_id"), str):
                raise AuthoringError(f"{where}: a {kind} cell needs grade_id=\"...\"")
            if kind == "answer" and not isinstance(opts.get("points"), (int, float)):
                raise AuthoringError(f"{where}: an answer cell needs points=<number>")
            opts["line"] = number
            body = []
            cells.append((kind, opts, body))
        elif body is None:
            if line.strip():
                raise AuthoringError(f"{where}: text before the first '# %%' cell marker")
        else:
            body.append(line)
    return [(kind, opts, "\n".join(lines).strip("\n")) for kind, opts, lines in cells]


def _uncomment(body: str) -> str:
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())


def write(cells: list[tuple[str, dict, str]]) -> str:
    """The text form of (kind, options, body) cells, as :func:`parse` reads it (and Jupytext)."""
    parts = []
    for kind, opts, body in cells:
        keep = {"md": ("grade_id",), "code": ("grader",), "solution": ("grade_id",), "check": ("grade_id",),
                "answer": ("grade_id", "points"), "checks": ("question",)}[kind]
        role = {} if kind in ("md", "code") else {"role": kind}
        shown = {**role, **{k: opts[k] for k in keep if opts.get(k) is not None}}
        marker = "# %% [markdown]" if kind in ("md", "answer") else "# %%"
        header = " ".join([marker, *(f"{k}={json.dumps(v)}" for k, v in shown.items())])
        parts.append(f"{header}\n{body}" if body else header)
    return "\n\n".join(parts) + "\n"


def sync(text: str, name: str, ps: problem_set.ProblemSet) -> str:
    """``text`` with each question's check cells written from the set's checks: a run of check cells
    (or a ``role="checks"`` placeholder) becomes one cell per check of its question, visible first.
    Everything else (a Jupytext header, every other cell, its options' order) is kept as written."""
    cells = parse(text, name, ps.questions)
    lines = text.splitlines(keepends=True)
    starts = [opts["line"] - 1 for _, opts, _ in cells] + [len(lines)]
    pieces = ["".join(lines[:starts[0]])] if cells else [text]
    placed: dict[str, int] = {}   # question -> line of its run
    by_id = {c.id: c for c in ps.checks}
    run = None                    # the question whose run of check cells is being read
    for i, (kind, opts, _) in enumerate(cells):
        if kind not in ("check", "checks"):
            pieces.append(("\n" if run else "") + "".join(lines[starts[i]:starts[i + 1]]))
            run = None
            continue
        if kind == "checks":
            question = opts["question"]
        elif opts["grade_id"] in by_id:
            question = by_id[opts["grade_id"]].question
        else:
            raise AuthoringError(f"{name}:{opts['line']}: {opts['grade_id']!r} is not a check of the set: remove the "
                                 "cell, or write the check in the set's grading/ first")
        if question == run:
            continue   # the rest of this question's run: written already
        if question in placed:
            raise AuthoringError(f"{name}:{opts['line']}: the check cells of {question} stand in two places "
                                 f"(the first at line {placed[question]}); keep one run")
        placed[question] = opts["line"]
        written = write([("check", {"grade_id": c.id}, check_cell(c, ps)) for c in question_checks(ps, question)])
        pieces.append(("\n" if run else "") + written)   # a blank line between two runs, as between cells
        run = question
    return "".join(pieces)


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
    """The nbgrader source notebook for the text form ``text`` of notebook ``name`` of the set ``ps``
    (its check cells written from the set's checks first: :func:`sync`)."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    counter = 0   # a given cell's default id counts the cells above it, a question's checks as one
    question = None
    lines: dict[str, int] = {}   # grade_id -> the line of its cell's marker
    by_id = {c.id: c for c in ps.checks}
    for kind, opts, body in parse(sync(text, name, ps), name, ps.questions):
        asked = by_id[opts["grade_id"]].question if kind == "check" else None
        counter += not (asked and asked == question)
        question = asked
        gid = opts.get("grade_id") or f"{name}_{kind}_{counter}"
        if kind == "md":
            cell = nbformat.v4.new_markdown_cell(_uncomment(body), metadata=_meta(gid, locked=True))
        elif kind == "code":
            meta = _meta(gid, locked=True)
            if opts.get("grader") == "skip":   # a demonstration for the student; grading needs nothing from it
                meta["course"] = {"skip_when_grading": True}
            cell = nbformat.v4.new_code_cell(body, metadata=meta)
        elif kind == "solution":
            cell = nbformat.v4.new_code_cell(body, metadata=_meta(gid, solution=True))
        elif kind == "answer":
            cell = nbformat.v4.new_markdown_cell(
                _uncomment(body), metadata=_meta(gid, grade=True, solution=True, points=float(opts["points"])))
        else:
            cell = nbformat.v4.new_code_cell(body, metadata=_meta(gid, grade=True, locked=True,
                                                                  points=by_id[gid].points))
        if gid in lines:   # nbgrader would refuse the notebook at release, and remove the release
            raise AuthoringError(f"{name}:{opts['line']}: grade_id {gid!r} is already the id of the cell at line "
                                 f"{lines[gid]}: give each cell its own")
        lines[gid] = opts["line"]
        cell.id = gid.replace("_", "-")
        nb.cells.append(cell)
    _expect_every_check_placed(nb, name, ps)
    return nb


def _expect_every_check_placed(nb, name, ps):
    placed = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells}
    missing = [c.id for c in ps.checks if ps.notebook_of(c) == name and c.id not in placed]
    if missing:
        raise AuthoringError(f"{name}: no check cells place {', '.join(missing)}: put '# %% role=\"checks\" "
                             "question=\"<question>\"' after the question's solution cell")


def build(assignment_dir: Path) -> list[Path]:
    """Write every ``*.pct.py`` in ``assignment_dir`` (a problem set's folder) as ``.ipynb``; a text
    form whose check cells are not the set's is rewritten first (with a warning naming it)."""
    ps = problem_set.load(assignment_dir)
    written = []
    for source in sorted(assignment_dir.glob("*.pct.py")):
        name = source.name.removesuffix(".pct.py")
        text = source.read_text()
        synced = sync(text, name, ps)
        if synced != text:
            source.write_text(synced)
            warnings.warn(f"{source.name}: its check cells were rewritten from the set's checks; commit it",
                          stacklevel=2)
        target = source.with_name(f"{name}.ipynb")
        nbformat.write(build_notebook(synced, name, ps), target)
        written.append(target)
    if not written:
        raise AuthoringError(f"no *.pct.py notebook sources in {assignment_dir}")
    return written
