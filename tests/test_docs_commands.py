"""Every command the README and docs/ show runs as written: it parses, and what it names exists.

The commands are read from the ```sh / ```bash / ```console blocks of README.md and docs/*.md, and
from their untagged blocks (a line there that starts with one of the commands below).
A `course ...` command goes through the `course` parser itself (``cli.parse_args``, which runs
nothing); an `nbgrader ...` command through nbgrader's own application for its subcommand
(traitlets' parser, which runs nothing either); a `make` target must be one of the Makefile's; a
path under tests/ or bench/ that a `pytest` or `python` command names must exist. `course-image`
(the docs' alias for the Docker image) is read as the command it wraps.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from autograder import cli

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "console", ""}        # an untagged block may hold commands too (docs/scaling.md)
CHECKED = ("course", "nbgrader", "make", "pytest")


def _blocks(text: str):
    """The text of every fenced block in a shell language or none, fences matched line by line."""
    lang, lines = None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                if lang in SHELL:
                    yield "\n".join(lines)
                lang = None
        elif lang is not None:
            lines.append(line)


def _lines(block: str):
    """The command lines of a block: prompts and comments off, continuations joined."""
    joined = re.sub(r"\\\n", " ", block)
    for line in joined.splitlines():
        line = line.strip().removeprefix("$ ")
        if line and not line.startswith("#"):
            yield line


def _argv(line: str) -> list[str]:
    """The command a line runs, as argv: leading VAR=value assignments and the image alias dropped;
    empty for a line that runs none of the checked commands (it may not even be shell words: a
    heredoc's body)."""
    words = [w for w in line.split() if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", w)]
    if not words or words[words[0] == "course-image":][:1] not in ([c] for c in CHECKED):
        return []
    argv = shlex.split(line, comments=True)
    while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
        argv = argv[1:]
    if argv[:1] == ["course-image"]:
        argv = argv[1:]
    return argv


def documented() -> list[tuple[str, list[str]]]:
    """(where, argv) for every checked command in a fenced shell block of the README and docs/."""
    found = []
    for page in PAGES:
        for block in _blocks(page.read_text()):
            for line in _lines(block):
                argv = _argv(line)
                if argv and argv[0] in CHECKED:
                    found.append(pytest.param(f"{page.relative_to(REPO)}: {line}", argv,
                                              id=f"{page.name}: {' '.join(argv)}"[:100]))
    return found


COMMANDS = documented()


def _of(command: str) -> list:
    return [c for c in COMMANDS if c.values[1][0] == command]


def test_the_docs_show_commands_of_every_kind():
    kinds = {c.values[1][0] for c in COMMANDS}
    assert {"course", "nbgrader", "make"} <= kinds, kinds


def test_the_readme_is_an_entry_point_under_200_lines():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines: move detail to docs/"


@pytest.mark.parametrize("where, argv", _of("course"))
def test_a_course_command_shown_parses(where, argv, capsys):
    try:
        cli.parse_args(argv[1:])
    except SystemExit as exc:
        pytest.fail(f"{where}\n  is a usage error (exit {exc.code}): {capsys.readouterr().err.strip()}")


def _nbgrader_app(argv: list[str]):
    """nbgrader's application class for ``argv`` (subcommands followed) and the rest of ``argv``."""
    from nbgrader.apps import NbGraderApp
    from traitlets.utils.importstring import import_item

    app = NbGraderApp
    while argv and argv[0] in (app().subcommands or {}):
        target = app().subcommands[argv[0]][0]
        app = import_item(target) if isinstance(target, str) else target
        argv = argv[1:]
    return app, argv


def _options(app) -> set[str]:
    """The option names an nbgrader application takes (flags and aliases, short and long)."""
    names = set()
    for key in [*app.flags, *app.aliases]:
        names.update(key if isinstance(key, tuple) else (key,))
    return names


@pytest.mark.parametrize("where, argv", _of("nbgrader"))
def test_an_nbgrader_command_shown_parses(where, argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # nbgrader reads no course's configuration while parsing
    app, rest = _nbgrader_app(argv[1:])
    instance = app()
    assert not instance.subcommands, f"{where}\n  names no nbgrader subcommand: {sorted(instance.subcommands)}"
    options = _options(instance)
    for token in rest:
        name = token.lstrip("-").split("=", 1)[0]
        if token.startswith("-") and "." not in name:
            assert name in options, f"{where}\n  {app.__name__} has no option {token!r}"
    try:
        instance.parse_command_line(rest)
    except SystemExit as exc:
        pytest.fail(f"{where}\n  is a usage error (exit {exc.code}): {capsys.readouterr().err.strip()}")


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text()
    return {t for line in re.findall(r"^([A-Za-z0-9_.\- ]+):(?!=)", text, re.M) for t in line.split()}


@pytest.mark.parametrize("where, argv", _of("make"))
def test_a_make_target_shown_exists(where, argv):
    targets = [a for a in argv[1:] if not a.startswith("-") and "=" not in a]
    assert set(targets) <= _make_targets(), f"{where}\n  names no target of the Makefile"


def test_every_make_target_named_in_the_text_exists():
    """Inline `make X` in prose too (`make test-unit`, `make bench`)."""
    named = {(page.name, t) for page in PAGES for t in re.findall(r"`make ([\w-]+)", page.read_text())}
    missing = sorted((page, t) for page, t in named if t not in _make_targets())
    assert not missing, f"the Makefile has no such target: {missing}"


def test_a_pytest_command_shown_names_files_that_exist():
    for c in _of("pytest"):
        where, argv = c.values
        for arg in argv[1:]:
            path = arg.split("::", 1)[0]
            if path.startswith(("tests/", "bench/")):
                assert (REPO / path).exists(), f"{where}\n  {path} does not exist"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_relative_link_names_a_file_and_heading_that_exist():
    """Text moved out of the README must leave no link behind pointing where it used to be."""
    broken = []
    for page in PAGES:
        for target, anchor in re.findall(r"\]\((?!https?:|mailto:)([^)#\s]*)(?:#([^)\s]+))?\)", page.read_text()):
            linked = (page.parent / target).resolve() if target else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.M)
                if anchor not in {_anchor(h) for h in headings}:
                    broken.append(f"{page.name}: {target}#{anchor}")
    assert not broken, broken
