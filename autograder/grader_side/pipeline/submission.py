"""What the steps of the pipeline share: the submission being graded and the batch it is in."""
from __future__ import annotations

import queue
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from autograder.grader_side.assignment import Assignment
from autograder.grader_side.results import StudentResult

if TYPE_CHECKING:   # (these import this module: types only)
    from autograder.grader_side.analysis import Reading
    from autograder.grader_side.misconceptions import Entry
    from autograder.grader_side.sandbox import Sandbox


@dataclass
class Cell:
    """One cell of a submitted notebook, as far as the grader cares."""
    cell_type: str
    source: str
    grade_id: str = ""
    grade: bool = False
    locked: bool = False
    points: object = None     # as the submission's metadata claims it: anything
    solution: bool = False


@dataclass
class Outcome:
    """The result of one check on one submission."""
    passed: bool
    message: str = ""
    replies: list[Any] = field(default_factory=list)   # what the code replied to each request (plain data)
    review: str | None = None    # the student's answer, quoted, when a TA must decide (not passed until then)
    evidence: tuple[str, ...] = ()    # forbidden builtins the child said the code reached (evidence only)


@dataclass
class Submission:
    """One submission as the steps read and extend it, from its folder to its ``result``."""
    student: str
    folder: Path
    nbgrader_only: bool = False                     # notebooks only in nbgrader's <assignment>/ folder
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)   # notebook -> its path in the folder, as parts
    cells: dict[str, list[Cell]] = field(default_factory=dict)        # notebook -> its cells
    problems: dict[str, str] = field(default_factory=dict)   # notebook -> why it cannot be graded (one line)
    flags: list[str] = field(default_factory=list)           # what the TA should look at (tampering, crashes)
    programs: dict[str, list[str]] = field(default_factory=dict)      # notebook -> [code to run, in order]
    readings: dict[str, Reading] = field(default_factory=dict)        # notebook -> its reading (route verdicts)
    program_ids: dict[str, list[str]] = field(default_factory=dict)   # notebook -> [grade_id of each code of
    #                                                                   programs ("" if none)]
    load_errors: dict[str, list[str]] = field(default_factory=dict)   # notebook -> [cell errors while loading]
    outcomes: dict[str, Outcome] = field(default_factory=dict)        # check id -> its outcome
    to_review: dict[str, str] = field(default_factory=dict)  # question id -> why a TA should look (its score stands)
    diagnoses: dict[str, Entry | None] = field(default_factory=dict)  # question id -> catalogue entry (None: none
    #                                                                   to name)
    result: StudentResult | None = None             # what step 8 (score) made of it


class Catalogue(Protocol):
    """The catalogue as a batch consults it (``diagnose.Matcher``, built by step 7 on first use)."""

    def diagnose(self, question: str, outcomes: dict[str, Outcome]) -> Entry | None:
        """The entry whose wrong answer gives the same replies on every check of ``question``."""


@dataclass
class Env:
    """What every task of a batch shares: the trusted assignment, the sandbox, and one slot per
    worker (a slot is a dedicated uid for the child, so two children never share one)."""
    assignment: Assignment
    sandbox: Sandbox
    workers: int = 1
    catalogue: Catalogue | None = None      # the catalogue's replays, built on first use (pipeline.diagnose)
    slots: queue.Queue[int] = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        for slot in range(self.workers):
            self.slots.put(slot)

    @contextmanager
    def slot(self) -> Iterator[int]:
        """A worker's slot for the time of the block (waits for one to be free)."""
        slot = self.slots.get()
        try:
            yield slot
        finally:
            self.slots.put(slot)
