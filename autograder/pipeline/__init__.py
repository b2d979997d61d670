"""Grading one submission, as an ordered list of steps, one module each.

``grade(task, env)`` is self-contained: a folder in, plain JSON-able results out, so the same
task can run in a thread here or on a cluster engine elsewhere. The order of the steps is
``STEPS``; each step reads and extends the ``Submission`` it is given.
"""
from __future__ import annotations

import queue
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import Assignment


@dataclass
class Cell:
    """One cell of a submitted notebook, as far as the grader cares."""
    cell_type: str
    source: str
    grade_id: str = ""
    grade: bool = False
    locked: bool = False
    points: object = None


@dataclass
class Outcome:
    """The result of one check on one submission."""
    passed: bool
    message: str = ""
    replies: list = field(default_factory=list)


@dataclass
class Submission:
    student: str
    folder: Path
    paths: dict = field(default_factory=dict)       # notebook -> Path of the submitted file
    cells: dict = field(default_factory=dict)       # notebook -> [Cell]
    problems: dict = field(default_factory=dict)    # notebook -> why it cannot be graded (one line)
    flags: list = field(default_factory=list)       # what the TA should look at (tampering, crashes)
    programs: dict = field(default_factory=dict)    # notebook -> [code to run, in order]
    load_errors: dict = field(default_factory=dict)  # notebook -> [cell errors while loading]
    outcomes: dict = field(default_factory=dict)    # check id -> Outcome
    diagnoses: dict = field(default_factory=dict)   # question id -> misconception entry
    result: dict = field(default_factory=dict)


@dataclass
class Env:
    """What every task of a batch shares: the trusted assignment, the sandbox, and one slot per
    worker (a slot is a dedicated uid for the child, so two children never share one)."""
    assignment: Assignment
    sandbox: object
    workers: int = 1
    catalogue: object = None        # autograder.pipeline.diagnose.Matcher, built on first use
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


from autograder.pipeline import diagnose, execute, locate, program, read, score, tamper  # noqa: E402

STEPS = (
    locate.run,     # find each notebook in the student's folder
    read.run,       # parse it as data, with a one-line reason when it is not a notebook
    tamper.run,     # compare test and given cells with the source; flag every change
    program.run,    # the code to run: the student's cells, given cells from the source, no tests
    execute.run,    # run it in a sandbox and apply every check from this process
    diagnose.run,   # name the misconception behind a lost point when the catalogue knows it
    score.run,      # points per question, feedback, status
)


def grade(student: str, folder: Path, env: Env) -> dict:
    """Grade the submission in ``folder``; never raises for anything the submission contains."""
    sub = Submission(student, Path(folder))
    for step in STEPS:
        step(sub, env)
    return sub.result
