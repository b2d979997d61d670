"""The toolkit of a set's catalogue of misconceptions: wrong answers the course has seen or expects,
one module per lesson concept in ``solutions/<set>/grading/misconceptions/`` (the same names as the
checks and the references; ``ProblemSet.catalogue`` and ``.variants`` gather them).

Each entry names its question, says what the mistake is in one line, gives the student a hint,
and carries the wrong answer itself as code for one solution cell of the notebook:
- ``mode="append"`` (default): the code runs after the cell's correct solution and redefines one
  name (a function, a class, a method or a variable);
- ``mode="region"``: the code replaces the body of the cell's single ``### BEGIN SOLUTION`` region.

Most wrong answers are a correct answer with one line changed, and say so: ``changed(correct,
old, new)``. Alongside, ``VARIANTS`` are correct answers written differently (float64 internals,
einsum, an additive mask, a free-text answer phrased as students phrase it): every grader must
give them full marks.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.grader_side.assignment import replace_region, solved


@dataclass(frozen=True)
class Entry:
    id: str             # "<question>-<short-name>", e.g. "B1-sample-variance"
    question: str
    description: str    # the mistake, one line, in the course's words (empty for a variant)
    hint: str           # what to look at again (empty for a variant)
    cell: str           # grade_id of the solution cell it changes, e.g. "B1_code"
    code: str
    mode: str = "append"

    def __post_init__(self) -> None:
        if not self.id.startswith(self.question + "-"):
            raise ValueError(f"{self.id}: ids are '<question>-<name>' with a question id of the contract")
        if self.mode not in ("append", "region"):
            raise ValueError(f"{self.id}: mode is 'append' or 'region'")


def wrong(id: str, description: str, hint: str, cell: str, code: str, mode: str = "append") -> Entry:
    """A misconception: a wrong answer that must lose points on its question."""
    return Entry(id, id.split("-")[0], description, hint, cell, code, mode)


def variant(id: str, cell: str, code: str, mode: str = "append") -> Entry:
    """A correct answer written differently: it must keep full marks."""
    return Entry(id, id.split("-")[0], "", "", cell, code, mode)


def changed(code: str, old: str, new: str) -> str:
    """``code``, a correct answer, with its one occurrence of ``old`` replaced by ``new``: a wrong
    answer stated as the smallest change to a right one."""
    if code.count(old) != 1:
        raise ValueError(f"{old!r} occurs {code.count(old)} times in the code, not exactly once")
    return code.replace(old, new)


def phrasings(question: str, cell: str, name: str, answers: dict) -> list[Entry]:
    """Correct free-text answers as students write them, one variant ``<question>-says-<key>``
    per phrasing, each setting the variable ``name`` to it."""
    return [variant(f"{question}-says-{key}", cell, f"\n{name} = {value!r}\n") for key, value in answers.items()]


def edits(entry: Entry, source_cell: str) -> dict[str, str]:
    """The solution cell's new source, from the source notebook's version of that cell."""
    if entry.mode == "region":
        return {entry.cell: solved(replace_region(source_cell, entry.code))}
    return {entry.cell: solved(source_cell).rstrip("\n") + "\n\n\n" + entry.code.strip("\n") + "\n"}
