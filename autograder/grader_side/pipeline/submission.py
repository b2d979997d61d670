"""What the steps of the pipeline share: the submission being graded and the batch it is in."""
from __future__ import annotations

import queue
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grader_side.assignment import Assignment


@dataclass
class Cell:
    """One cell of a submitted notebook, as far as the grader cares."""
    cell_type: str
    source: str
    grade_id: str = ""
    grade: bool = False
    locked: bool = False
    points: object = None
    solution: bool = False


@dataclass
class Outcome:
    """The result of one check on one submission."""
    passed: bool
    message: str = ""
    replies: list = field(default_factory=list)
    review: str | None = None    # the student's answer, quoted, when a TA must decide (not passed until then)
    evidence: tuple = ()    # forbidden builtins the child said the code reached (evidence only)


@dataclass
class Submission:
    student: str
    folder: Path
    nbgrader_only: bool = False                     # notebooks only in nbgrader's <assignment>/ folder
    paths: dict = field(default_factory=dict)       # notebook -> its path in the folder, as parts
    cells: dict = field(default_factory=dict)       # notebook -> [Cell]
    problems: dict = field(default_factory=dict)    # notebook -> why it cannot be graded (one line)
    flags: list = field(default_factory=list)       # what the TA should look at (tampering, crashes)
    programs: dict = field(default_factory=dict)    # notebook -> [code to run, in order]
    readings: dict = field(default_factory=dict)    # notebook -> analysis.Reading (route verdicts)
    program_ids: dict = field(default_factory=dict)  # notebook -> [grade_id of each code of programs ("" if none)]
    load_errors: dict = field(default_factory=dict)  # notebook -> [cell errors while loading]
    outcomes: dict = field(default_factory=dict)    # check id -> Outcome
    to_review: dict = field(default_factory=dict)   # question id -> why a TA should look (its score stands)
    diagnoses: dict = field(default_factory=dict)   # question id -> misconception entry (None: none to name)
    result: dict = field(default_factory=dict)


@dataclass
class Env:
    """What every task of a batch shares: the trusted assignment, the sandbox, and one slot per
    worker (a slot is a dedicated uid for the child, so two children never share one)."""
    assignment: Assignment
    sandbox: object
    workers: int = 1
    catalogue: object = None        # diagnose.Matcher, built on first use
    slots: queue.Queue = field(default_factory=queue.Queue)

    def __post_init__(self):
        for slot in range(self.workers):
            self.slots.put(slot)

    @contextmanager
    def slot(self):
        slot = self.slots.get()
        try:
            yield slot
        finally:
            self.slots.put(slot)
