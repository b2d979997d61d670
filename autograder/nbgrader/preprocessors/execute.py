"""``nbgrader autograde`` through the sandbox: the preprocessor that takes the place of nbgrader's ``Execute``.

The course's ``nbgrader_config.py`` sets ``Autograde.autograde_preprocessors`` to ``AUTOGRADE``
(``preprocessors/__init__.py``):
nbgrader's own list with :class:`SandboxExecute` where ``Execute`` was. For each notebook nbgrader
hands it, ``SandboxExecute`` grades the student's submitted file with the pipeline of ``course
autograde`` (the student's cells run in a sandboxed child, every check runs in this process, no
test cell ever runs beside the student's code) and writes each test cell's output: a pass line, or
the student message as an ``error`` output. nbgrader's own ``SaveAutoGrades`` reads those outputs,
so the gradebook gets, check by check, the scores ``course autograde`` gives. Test cells keep the
source the students were given (the hidden-test lines are dropped), so feedback shows no hidden
test source.

A check whose outcome needs a TA (``Outcome.review``) scores 0 here; :class:`MarkForReview`, right
after ``SaveAutoGrades``, marks its grade ``needs_manual_grade`` so formgrader lists it.

One warm sandbox serves the whole nbgrader process: started for the first notebook, closed at exit.
"""
from __future__ import annotations

import atexit
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float

from autograder.escape import for_terminal
from autograder.nbgrader.context import assignment_of, coursedir_of, student_folder
from autograder.nbgrader.outputs import write_outcomes

if TYPE_CHECKING:
    from autograder.grader_side.assignment import Assignment
    from autograder.grader_side.pipeline.submission import Outcome
    from autograder.grader_side.sandbox.host import Sandbox


class SandboxExecute(NbGraderPreprocessor):
    """Grade the submitted notebook in the sandbox; write each test cell's outcome as its output."""

    timeout = Float(60.0, help="Wall-clock seconds one notebook may run in its sandbox").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        info = resources["nbgrader"]
        coursedir = coursedir_of(self)
        root = Path(coursedir.root)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, ".", "."))
        folder = student_folder(coursedir, info["student"])
        outcomes, flags, to_review = grade_notebook(info["student"], folder, info["assignment"], info["notebook"],
                                                    root, self.timeout, hide=(submitted,), nbgrader_only=True)
        for flag in flags:   # one line each: a line break in a flag could pass for a log line of nbgrader's
            self.log.warning("%s: %s", for_terminal(info["student"]), for_terminal(flag))
        review = write_outcomes(nb, outcomes, assignment_of(info["assignment"], root), info["notebook"])
        look = _checks_of(assignment_of(info["assignment"], root), to_review, outcomes)
        resources.setdefault("course", {}).update(review=review, look=look)
        return nb, resources


# ---- grading one notebook, in one warm sandbox per process -------------------------------------

_lock = threading.Lock()
_shared: dict[str, Sandbox] = {}
# The one slot of this process's sandbox (the Sandbox holds a machine-wide slot for it, so two nbgrader
# runs side by side, or beside `course autograde`, never give their sessions one uid).
SLOT = 0


def grade_notebook(student: str, folder: Path, assignment: str, notebook: str, root: Path, timeout: float,
                   hide: tuple[Path, ...] = (), nbgrader_only: bool = False
                   ) -> tuple[dict[str, Outcome], list[str], dict[str, str]]:
    """(check id -> Outcome, flags, question id -> why a TA should look) for one notebook of the submission in
    ``folder`` (the student's folder; with ``nbgrader_only``, its notebooks are in nbgrader's ``<assignment>/``): the
    pipeline's steps up to and including the judging of forbidden routes, on an assignment of that one notebook."""
    from autograder.grader_side import pipeline
    from autograder.grader_side.assignment import Assignment
    from autograder.grader_side.pipeline import routes

    env = pipeline.Env(Assignment(assignment, root, (notebook,)), _sandbox(root, timeout, hide), 0)
    env.slots.put(SLOT)
    sub = pipeline.Submission(student, folder, nbgrader_only=nbgrader_only)
    for step in pipeline.STEPS[: pipeline.STEPS.index(routes.run) + 1]:
        step(sub, env)
    return sub.outcomes, sub.flags, sub.to_review


def _checks_of(assignment: Assignment, questions: Collection[str], outcomes: Mapping[str, Outcome]) -> list[str]:
    """The checks (among ``outcomes``) of the given questions: their grades are listed for a TA."""
    return [c.id for c in assignment.checks if c.question in questions and c.id in outcomes]


def _sandbox(root: Path, timeout: float, hide: tuple[Path, ...]) -> Sandbox:
    """This process's sandbox, started on first use and closed when the process exits."""
    from autograder.grader_side.sandbox import grading_sandbox

    with _lock:
        if "sandbox" not in _shared:
            import torch

            torch.set_num_threads(1)   # the checks' tensors are tiny: more threads only spin (see api.autograde)
            sandbox = grading_sandbox(timeout, hide=(root, *hide))
            sandbox.__enter__()
            atexit.register(sandbox.__exit__, None, None, None)
            _shared["sandbox"] = sandbox
        return _shared["sandbox"]
