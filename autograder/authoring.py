"""Turns the text form of the source notebooks into nbgrader source notebooks.

Each problem set is written once, as ``solutions/<assignment>/<notebook>.pct.py``: cells headed
by ``# %% <kind> [key=value ...]`` lines (see ``KINDS``; ``# %% code grader=skip`` marks a given
cell that only shows the student something, which ``course autograde`` need not run). ``# %% checks B1`` expands into one
graded cell per check of question B1 in the registry, so adding a check to ``autograder/checks``
adds it to nbgrader's tests and to ``course autograde`` alike.

Next to the notebooks goes ``visible_checks/``: the check runtime and the *visible* checks only,
copied from ``autograder`` with the hidden checks and every reference import cut out. Students
import ``check`` from it; nbgrader restores it from the source at grading time.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat

from autograder import checks

KINDS = ("md", "code", "solution", "checks", "answer")
HEADER = re.compile(r"^# %% (\w+)(.*)$")
PACKAGE = "visible_checks"
# The modules a notebook needs to run a check, copied into the release under PACKAGE.
RUNTIME_MODULES = ("wire", "probes", "runtime", "student", "bridge")
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


class AuthoringError(ValueError):
    """The text form of a notebook is malformed; the message says where."""


def parse(text: str, origin: str = "<notebook>") -> list[tuple[str, dict, str]]:
    """Split the text form into (kind, attributes, body) cells."""
    cells, current = [], None
    for number, line in enumerate(text.splitlines(), 1):
        match = HEADER.match(line)
        if match:
            kind, rest = match.groups()
            if kind not in KINDS:
                raise AuthoringError(f"{origin}:{number}: unknown cell kind {kind!r}; use one of {', '.join(KINDS)}")
            attrs = dict(part.split("=", 1) for part in rest.split() if "=" in part)
            words = [part for part in rest.split() if "=" not in part]
            if kind == "checks":
                if len(words) != 1 or words[0] not in checks.QUESTIONS:
                    raise AuthoringError(f"{origin}:{number}: write '# %% checks <question id>'")
                attrs["question"] = words[0]
            current = [kind, attrs, []]
            cells.append(current)
        elif current is None:
            if line.strip():
                raise AuthoringError(f"{origin}:{number}: text before the first '# %%' cell header")
        else:
            current[2].append(line)
    return [(kind, attrs, "\n".join(body).rstrip("\n")) for kind, attrs, body in cells]


def _uncomment(body: str) -> str:
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def check_cell(check: checks.Check) -> str:
    """Source of the graded cell that runs one check."""
    head = f"# {check.id} · {check.points:g} point{'s' * (check.points != 1)}"
    if check.hidden:
        names = ", ".join(repr(n) for n in check.uses)
        return (f"{head} · hidden, runs when your notebook is graded: {check.says}\n"
                f"ready({names})\n"
                f"### BEGIN HIDDEN TESTS\nfrom autograder.bridge import check as hidden_check\n"
                f"hidden_check({check.id!r})\n### END HIDDEN TESTS")
    return f"{head} · {check.says}\ncheck({check.id!r})"


def build_notebook(text: str, name: str) -> nbformat.NotebookNode:
    """The nbgrader source notebook for the text form ``text`` of notebook ``name``."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})
    counter = 0
    for kind, attrs, body in parse(text, name):
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
            cells = [nbformat.v4.new_code_cell(check_cell(c), metadata=_meta(c.id, grade=True, locked=True,
                                                                              points=c.points))
                     for c in checks.all_checks() if c.question == attrs["question"]]
        for cell in cells:
            cell.id = cell.metadata["nbgrader"]["grade_id"].replace("_", "-")
        nb.cells.extend(cells)
    _expect_every_check_placed(nb, name)
    return nb


def _expect_every_check_placed(nb, name):
    placed = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells}
    missing = [c.id for c in checks.all_checks() if c.notebook == name and c.id not in placed]
    if missing:
        raise AuthoringError(f"{name}: no '# %% checks' cell places {', '.join(missing)}")


def build(assignment_dir: Path) -> list[Path]:
    """Write every ``*.pct.py`` in ``assignment_dir`` as ``.ipynb`` plus the visible checks."""
    written = []
    for source in sorted(assignment_dir.glob("*.pct.py")):
        name = source.name.removesuffix(".pct.py")
        target = source.with_name(f"{name}.ipynb")
        nbformat.write(build_notebook(source.read_text(), name), target)
        written.append(target)
    if not written:
        raise AuthoringError(f"no *.pct.py notebook sources in {assignment_dir}")
    written += write_visible_package(assignment_dir / PACKAGE)
    return written


# ---- the visible checks package -------------------------------------------------------------

def write_visible_package(dest: Path) -> list[Path]:
    """Copy the check runtime and the visible checks into ``dest`` (replacing what was there)."""
    root = Path(checks.__file__).parent.parent
    files = {f"{m}.py": (root / f"{m}.py").read_text() for m in RUNTIME_MODULES}
    files["checks/__init__.py"] = (root / "checks" / "__init__.py").read_text()
    for concept in checks.CONCEPTS:
        files[f"checks/{concept}.py"] = visible_only((root / "checks" / f"{concept}.py").read_text(), concept)
    files["__init__.py"] = (f'"""The visible checks of this problem set: run `check("<check id>")` in a check cell."""\n'
                            f"from {PACKAGE}.bridge import check, ready\n")
    written = []
    for relative, text in files.items():
        path = dest / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        header = f"# Copied from the course's grader by `course release`; edit the original, not this copy.\n"
        path.write_text(header + re.sub(r"\bautograder\b(?=[.\s])", PACKAGE, text))
        written.append(path)
    return written


def visible_only(source: str, origin: str) -> str:
    """``source`` without its hidden checks, its reference imports and the helpers only they used."""
    tree = ast.parse(source)
    drop = [n for n in tree.body if _is_hidden_check(n) or _imports_reference(n)]
    while True:
        kept = [n for n in tree.body if n not in drop]
        used = {name for n in kept for name in _names_used(n)}
        unused = [n for n in kept if _defined_name(n) and _defined_name(n) not in used
                  and not _is_check(n)]
        if not unused:
            break
        drop += unused
    lines = source.splitlines()
    for node in sorted(drop, key=lambda n: -n.lineno):
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        del lines[start - 1:node.end_lineno]
    text = re.sub(r"\n{3,}(?=\n)", "\n", "\n".join(lines)) + "\n"
    if re.search(r"\bref\.|solutions", text):
        raise AuthoringError(f"{origin}: a visible check uses the reference; visible checks must use known values")
    return text


def _check_call(node):
    for deco in getattr(node, "decorator_list", []):
        if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "check":
            return deco
    return None


def _is_check(node) -> bool:
    return _check_call(node) is not None


def _is_hidden_check(node) -> bool:
    deco = _check_call(node)
    return deco is not None and any(k.arg == "hidden" and getattr(k.value, "value", None) is True
                                    for k in deco.keywords)


def _imports_reference(node) -> bool:
    return isinstance(node, ast.ImportFrom) and (node.module or "").startswith("solutions")


def _defined_name(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _names_used(node):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            yield sub.id
