"""Grading one submission, as an ordered list of steps, one module each.

``grade(task, env)`` is self-contained: a folder in, a ``StudentResult`` out (plain data,
``to_dict`` for a pipe), so the same task can run in a thread here or on a cluster engine
elsewhere. The order of the steps is ``STEPS``; each step reads and extends the ``Submission`` it
is given.
"""
from __future__ import annotations

import logging
import traceback
from pathlib import Path

from autograder.escape import for_terminal, for_terminal_lines
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
_STEP_MODULES = {step.__module__ for step in STEPS}
log = logging.getLogger(__name__)


def grade(student: str, folder: Path, env: Env, refused: dict[str, str] | None = None) -> StudentResult:
    """Grade the submission in ``folder``; never raises for anything the submission contains.
    ``refused``: notebook -> why it was not read, for notebooks refused before (on the cluster, by
    the grader that sent the files)."""
    sub = Submission(student, Path(folder), problems=dict(refused or {}))
    for step in STEPS:
        step(sub, env)
    if sub.result is None:
        raise RuntimeError("the pipeline's last step (score) left no result")
    return sub.result


def grade_safely(student: str, folder: Path, env: Env, refused: dict[str, str] | None = None) -> StudentResult:
    """One task; a bug in the grader fails this student with its reason, not the batch. The reason
    says what failed (the step, the grader's line, the error: ``failed_at``) and the whole
    traceback is logged, so one such result is enough to find its cause."""
    try:
        return grade(student, folder, env, refused)
    except Exception as exc:
        log.error("the grader could not grade %s:\n%s", for_terminal(student),
                  for_terminal_lines("".join(traceback.format_exception(exc))))
        return StudentResult("grader-error", 0.0, env.assignment.max_score,
                             reason=f"the grader could not grade this submission ({failed_at(exc)}): "
                                    f"{type(exc).__name__}: {for_terminal(exc)}"[:400])


def failed_at(exc: BaseException) -> str:
    """Where grading stopped, in one line: the step that was running (the outermost frame in a
    step's module: a step may call another's helpers) and the grader's innermost line
    (``module:line in function``), e.g. ``step execute, at autograder.grader_side.sandbox.host:321 in _ask``."""
    frames = [(frame.f_globals.get("__name__", ""), frame.f_code.co_name, line)
              for frame, line in traceback.walk_tb(exc.__traceback__)]
    step = next((module.rsplit(".", 1)[-1] for module, _, _ in frames if module in _STEP_MODULES), "none")
    ours = [f"{module}:{line} in {function}" for module, function, line in frames if module.startswith("autograder.")]
    return f"step {step}, at {ours[-1] if ours else 'an unknown line'}"
