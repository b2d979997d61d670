"""Grading one submission, as an ordered list of steps, one module each.

``grade(task, env)`` is self-contained: a folder in, plain JSON-able results out, so the same
task can run in a thread here or on a cluster engine elsewhere. The order of the steps is
``STEPS``; each step reads and extends the ``Submission`` it is given.
"""
from __future__ import annotations

from pathlib import Path

from autograder.grader_side.pipeline import (
    diagnose,
    execute,
    locate,
    program,
    read,
    routes,
    score,
    tamper,
)
from autograder.grader_side.pipeline.submission import Cell, Env, Outcome, Submission
from autograder.grader_side.results import StudentResult

__all__ = ["Cell", "Env", "Outcome", "STEPS", "Submission", "grade", "grade_safely"]

STEPS = (
    locate.run,     # find each notebook in the student's folder
    read.run,       # parse it as data, with a one-line reason when it is not a notebook
    tamper.run,     # compare test and given cells with the source; flag every change
    program.run,    # the code to run: the student's cells, given cells from the source, no tests
    execute.run,    # run it in a sandbox and apply every check from this process
    routes.run,     # judge forbidden routes from the source: a route fails its question
    diagnose.run,   # name the misconception behind a lost point when the catalogue knows it
    score.run,      # points per question, feedback, status
)


def grade(student: str, folder: Path, env: Env, refused: dict[str, str] | None = None) -> dict:
    """Grade the submission in ``folder``; never raises for anything the submission contains.
    ``refused``: notebook -> why it was not read, for notebooks refused before (on the cluster, by
    the grader that sent the files)."""
    sub = Submission(student, Path(folder), problems=dict(refused or {}))
    for step in STEPS:
        step(sub, env)
    return sub.result


def grade_safely(student, folder, env, refused=None) -> dict:
    """One task; a bug in the grader fails this student with its reason, not the batch."""
    try:
        return grade(student, folder, env, refused)
    except Exception as exc:
        return StudentResult("grader-error", 0.0, env.assignment.max_score,
                             reason=f"the grader could not grade this submission: "
                                    f"{type(exc).__name__}: {exc}"[:400]).to_dict()
