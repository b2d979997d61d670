"""One problem set's code, loaded from its folder: its contract, checks, catalogue and references.

A set is a folder ``solutions/<set>/`` (see ``docs/problem-sets.md``):

- ``student_side/checks/<concept>.py``: the visible checks, released next to the course's runtime
  (``autograder/student_side``), so they import it relatively (``from . import check``);
- ``grading/__init__.py``: the contract in code (``NOTEBOOKS``, ``CONCEPTS``, ``QUESTIONS``, and
  optionally ``RULES``, ``TOPICS``, ``BUILDS_ON``); ``grading/checks/``, ``grading/misconceptions/``
  and ``grading/reference/``: the hidden checks, the catalogue and the references.

The folder is mounted as a package of its own name (one per folder), in which ``student_side`` is
the set's visible checks on top of the course's one runtime, so the checks of two sets never meet:
each set has its own checks, ids and catalogue. Loading also holds the set to its contract: every
check belongs to a question, each question's checks carry exactly its points, every catalogue
entry names a question of the set.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import re
import sys
import types
from pathlib import Path
from typing import Literal, overload

from autograder.grader_side import checks as reading
from autograder.student_side import checks as toolkit
from autograder.student_side.checks import Check

# The runtime modules a set's visible checks may import relatively (``from ..student import ...``):
# every module of the runtime the release ships beside them (``tooling.release.ship_runtime``).
RUNTIME = tuple(sorted(p.stem for p in Path(toolkit.__file__).parents[1].glob("*.py") if p.stem != "__init__"))


class ProblemSetError(ValueError):
    """A problem set that does not hold to its own contract; the message says what to fix."""


class ProblemSet:
    """The loaded code of the set in ``folder`` (use ``load``: one per folder and process)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.package = _mount(folder)
        self.definition = self._module("grading")
        d = self.definition
        self.notebooks: tuple[str, ...] = tuple(d.NOTEBOOKS)
        self.concepts: tuple[str, ...] = tuple(d.CONCEPTS)
        self.questions = {q.id: q for q in d.QUESTIONS}
        self.rules = {r.question: r for r in getattr(d, "RULES", ())}
        self.topics: dict = dict(getattr(d, "TOPICS", {}))
        self.builds_on: dict = dict(getattr(d, "BUILDS_ON", {}))
        visible = [m for c in self.concepts if (m := self._module(f"student_side.checks.{c}", optional=True))]
        hidden = [m for c in self.concepts if (m := self._module(f"grading.checks.{c}", optional=True))]
        order = {q: i for i, q in enumerate(self.questions)}
        found = [c for m in visible + hidden for c in toolkit.checks_in(m)]
        self.checks: list[Check] = sorted(found, key=lambda c: order.get(c.question, len(order)))
        self.by_id = {c.id: c for c in self.checks}
        self.forms: dict = {n: f for m in visible for n, f in getattr(m, "FORMS", {}).items()}
        self._uses: dict[str, tuple[str, ...]] = {}     # check id -> uses(check), read once
        self._hold_to_contract(found)

    @overload
    def _module(self, name: str, optional: Literal[False] = False) -> types.ModuleType: ...

    @overload
    def _module(self, name: str, optional: bool) -> types.ModuleType | None: ...

    def _module(self, name: str, optional: bool = False) -> types.ModuleType | None:
        """The set's module ``name`` (under its package); None when ``optional`` and its file is absent."""
        full = f"{self.package}.{name}"
        if optional and not (self.folder / (name.replace(".", "/") + ".py")).is_file():
            return None
        return importlib.import_module(full)

    def _hold_to_contract(self, found: list[Check]) -> None:
        where = self.folder.name
        for q in self.questions.values():
            if q.notebook not in self.notebooks:
                raise ProblemSetError(f"{where}: question {q.id} is in notebook {q.notebook!r}, not one of NOTEBOOKS")
            if q.concept not in self.concepts:
                raise ProblemSetError(f"{where}: question {q.id}'s concept {q.concept!r} is not one of CONCEPTS")
        if len(self.by_id) != len(found):
            twice = sorted({c.id for c in found if sum(d.id == c.id for d in found) > 1})
            raise ProblemSetError(f"{where}: check ids used twice: {', '.join(twice)}")
        strangers = sorted(c.id for c in found if c.question not in self.questions)
        if strangers:
            raise ProblemSetError(f"{where}: checks for questions the contract does not have: {', '.join(strangers)}")
        for q in self.questions.values():
            carried = sum(c.points for c in self.checks if c.question == q.id)
            if not q.manual and abs(carried - q.points) > 1e-9:
                raise ProblemSetError(f"{where}: the checks of {q.id} carry {carried:g} points, the contract says "
                                      f"{q.points:g}: make them add up")
        unknown = sorted(set(self.rules) - set(self.questions))
        if unknown:
            raise ProblemSetError(f"{where}: RULES for questions the contract does not have: {', '.join(unknown)}")

    def notebook_of(self, check: Check) -> str:
        """The notebook whose names ``check`` calls."""
        return self.questions[check.question].notebook

    def uses(self, check: Check) -> tuple[str, ...]:
        """The student's names ``check`` needs, in the order its code first reaches them (read from
        the check's source once: every submission asks)."""
        found = self._uses.get(check.id)
        if found is None:
            found = self._uses[check.id] = reading.uses(check, self.questions[check.question].names)
        return found

    @functools.cached_property
    def catalogue(self) -> list:
        """Every misconception, in lesson order."""
        return self._entries("ENTRIES")

    @functools.cached_property
    def variants(self) -> list:
        """Every correct-but-different answer, in lesson order."""
        return self._entries("VARIANTS")

    def _entries(self, kind: str) -> list:
        found = [e for c in self.concepts if (m := self._module(f"grading.misconceptions.{c}", optional=True))
                 for e in getattr(m, kind, [])]
        for e in found:
            if e.question not in self.questions or not e.id.startswith(e.question + "-"):
                raise ProblemSetError(f"{self.folder.name}: catalogue entry {e.id}: ids are '<question>-<name>' "
                                      "with a question id of the set's contract")
        return found

    def reference(self, concept: str) -> types.ModuleType:
        """The hidden reference module of ``concept``."""
        return self._module(f"grading.reference.{concept}")


_LOADED: dict[Path, ProblemSet] = {}


def load(folder: Path) -> ProblemSet:
    """The set in ``folder``, loaded once per process."""
    folder = Path(folder).resolve()
    if folder not in _LOADED:
        if not (folder / "grading" / "__init__.py").is_file():
            raise ProblemSetError(f"{folder} is not a problem set: it has no grading/__init__.py "
                                  "(see docs/problem-sets.md)")
        _LOADED[folder] = ProblemSet(folder)
    return _LOADED[folder]


def _mount(folder: Path) -> str:
    """Make ``folder`` importable as a package of its own and return its name.

    Its ``student_side`` is the set's visible checks over the course's runtime: the runtime's
    modules under the set's name are the runtime's own objects (one ``CheckFailed`` for all sets),
    and ``student_side.checks`` finds the set's check modules in the set's folder and everything
    else (``check``, ``expect``...) in the runtime's toolkit.
    """
    digest = hashlib.sha1(str(folder).encode()).hexdigest()[:8]
    package = "problem_set_" + re.sub(r"\W", "_", folder.name) + "_" + digest
    if package in sys.modules:
        return package
    top = _package(package, folder)
    side = _package(f"{package}.student_side", folder / "student_side")
    # Attributes a module gains at run time (what an import would set): through its __dict__.
    vars(top).update(student_side=side)
    for name in RUNTIME:
        module = importlib.import_module(f"autograder.student_side.{name}")
        sys.modules[f"{package}.student_side.{name}"] = module
        setattr(side, name, module)
    visible = _package(f"{package}.student_side.checks", folder / "student_side" / "checks")
    vars(visible).update(__getattr__=lambda name: getattr(toolkit, name))   # PEP 562's module __getattr__
    vars(side).update(checks=visible)
    return package


def _package(name: str, path: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    module.__package__ = name
    sys.modules[name] = module
    return module
