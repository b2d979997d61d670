"""Step 7: name the misconception behind a lost point, when the catalogue knows it.

Every check records what the submission replied. For a question that lost points, each
catalogued wrong answer of that question is run on the same checks, once per batch (cached),
through the same sandbox as a submission: a wrong answer may patch torch while it runs, and the
grader's threads must never see that. When the submission's replies match an entry's replies on
every check of the question, the feedback names that entry.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from autograder.grader_side import misconceptions
from autograder.grader_side.assignment import notebook
from autograder.grader_side.free_text import normalize
from autograder.grader_side.misconceptions import Entry
from autograder.grader_side.pipeline import execute, program, read
from autograder.grader_side.pipeline.submission import Env, Outcome, Submission
from autograder.student_side.checks import ATOL, RTOL


def _unanswered(reply: Any) -> bool:
    """A reply saying the name is missing or still the release's stub."""
    return isinstance(reply, tuple) and (reply[0] == "missing" or reply == ("raised", "NotImplementedError"))


class Matcher:
    """Replays of the catalogue's wrong answers, computed on first use and kept for the batch."""

    def __init__(self, env: Env):
        self.env = env
        self.entries = env.assignment.set.catalogue
        self._replays: dict[str, dict[str, list[Any]]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def replay(self, entry: Entry) -> dict[str, list[Any]]:
        """check id -> the replies the entry's wrong answer gives on that check."""
        with self._lock:
            lock = self._locks.setdefault(entry.id, threading.Lock())
        with lock:   # one replay per entry; different entries replay in parallel
            if entry.id not in self._replays:
                self._replays[entry.id] = self._run(entry)
            return self._replays[entry.id]

    def _run(self, entry: Entry) -> dict[str, list[Any]]:
        # Imported here: an honest submission never gets this far, and a process that grades one
        # submission would otherwise import it (and jsonschema) before it could start the sandbox.
        import nbformat

        a = self.env.assignment
        name = a.questions[entry.question].notebook
        source = {c.grade_id: c.source for c in a.cells(name)}
        replay = Submission(entry.id, a.source_dir)
        edited = notebook(a, name, misconceptions.edits(entry, source[entry.cell]))
        replay.cells[name] = read.parse(nbformat.writes(edited).encode())
        program.run(replay, self.env)
        todo = [c for c in a.checks if c.question == entry.question]
        with self.env.slot() as slot:
            execute.run_notebook(replay, self.env, name, todo, slot)
        return {c.id: replay.outcomes[c.id].replies for c in todo}

    def diagnose(self, question: str, outcomes: dict[str, Outcome]) -> Entry | None:
        """The first entry of ``question`` whose replies match the submission's, or None."""
        for entry in self.entries:
            if entry.question == question:
                replay = self.replay(entry)
                informative = any(replies for replies in replay.values())
                if informative and all(_same(outcomes[cid].replies, replies) for cid, replies in replay.items()):
                    return entry
        return None


_matchers_lock = threading.Lock()


def run(sub: Submission, env: Env) -> None:
    a = env.assignment
    lost = {c.question for c in a.checks if c.id in sub.outcomes and not sub.outcomes[c.id].passed}
    # Only questions the submission answered: a missing name or a stub matches no misconception.
    answered = {c.question for c in a.checks if c.id in sub.outcomes
                and any(not _unanswered(r) for r in sub.outcomes[c.id].replies)}
    lost &= answered
    lost -= set(sub.diagnoses)      # already named (a forbidden route, by pipeline/routes.py)
    if not lost:
        return
    with _matchers_lock:
        if env.catalogue is None:
            env.catalogue = Matcher(env)
    for question in sorted(lost, key=list(a.questions).index):
        entry = env.catalogue.diagnose(question, sub.outcomes)
        if entry is not None:
            sub.diagnoses[question] = entry


def _same(a: Any, b: Any) -> bool:
    """Replies equal as data: arrays within the default tolerance, text once normalized,
    everything else exactly."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype == bool or b.dtype == bool:
            return bool(np.array_equal(a, b))
        return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), atol=ATOL, rtol=RTOL,
                                equal_nan=True))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, str) and isinstance(b, str):
        return normalize(a) == normalize(b)
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and bool(np.isclose(a, b))
    return type(a) is type(b) and a == b
