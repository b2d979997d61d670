"""Step 5: run each notebook's code in a sandboxed child and apply its checks from here.

The child only ever answers requests with plain data; every comparison happens in this
process. When the child dies (an ``os._exit``, a crash, a timeout) the check in flight and the
rest of its question fail with the reason, and a fresh child is started for the next question,
at most ``MAX_RESTARTS`` times per notebook.
"""
import ast
import functools
import re
from collections.abc import Callable
from typing import Any

from autograder.grader_side import syntax
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.pipeline.submission import Env, Outcome, Submission
from autograder.grader_side.problem_set import ProblemSet
from autograder.grader_side.sandbox import ChildDied, Session
from autograder.student_side.checks import Check, NeedsReview
from autograder.student_side.student import CheckFailed, Student, Transport

MAX_RESTARTS = 4


class StudentCrashed(Exception):
    """The process running the submission died; a fresh one is started for the next question."""


def run(sub: Submission, env: Env) -> None:
    for notebook in env.assignment.notebooks:
        # The answers (the set's answer variables) are read before any of the student's functions is called:
        # code called with hidden inputs could otherwise write them into an answer, which a TA's
        # review or the feedback would then quote. Then the visible checks, before any hidden one: code
        # could otherwise keep what a hidden check handed it (or crash on it) and show it in a visible result.
        a = env.assignment.set
        todo = sorted((c for c in a.checks if a.notebook_of(c) == notebook),
                      key=lambda c: (not _reads_answers_only(a, c), c.hidden))
        if notebook in sub.problems:
            for c in todo:
                sub.outcomes[c.id] = Outcome(False, sub.problems[notebook])
        else:
            with env.slot() as slot:
                run_notebook(sub, env, notebook, todo, slot)
        _drop_replies(sub, todo)


def _reads_answers_only(a: ProblemSet, check: Check) -> bool:
    """Whether ``check`` reads only answer variables (those with a form: ``FORMS``), calling nothing."""
    return all(name in a.forms for name in a.uses(check))


def _drop_replies(sub: Submission, todo: list[Check]) -> None:
    """Replies only serve to name the mistake behind a lost point: once the checks have judged
    them, drop those of every question that lost none."""
    lost = {c.question for c in todo if c.id in sub.outcomes and not sub.outcomes[c.id].passed}
    for c in todo:
        if c.question not in lost and c.id in sub.outcomes:
            sub.outcomes[c.id].replies = []


def run_notebook(sub: Submission, env: Env, notebook: str, todo: list[Check], slot: int) -> None:
    """Run ``todo`` (checks of ``notebook``) on the submission's program in a sandboxed child."""
    session: Session | None = None
    restarts = 0
    shown = shown_only(env.assignment, notebook)
    try:
        for index, check in enumerate(todo):
            if check.id in sub.outcomes:   # the rest of a question whose check crashed the child
                continue
            if session is None:
                try:
                    session = env.sandbox.open(sub.programs[notebook], slot)
                except ChildDied as exc:
                    reason = f"{notebook}.ipynb did not finish running: {exc}"
                    sub.flags.append(reason)
                    for c in todo[index:]:
                        sub.outcomes[c.id] = Outcome(False, reason)
                    return
                sub.load_errors.setdefault(notebook, [
                    f"cell {i} raised {r.get('error')}" for i, r in enumerate(session.load_report) if not r.get("ok")])
            # What the child says it reached is evidence only: routes are judged by pipeline/routes.py.
            student = Student(_transport(session, ChildDied), forbidden_fails=False,
                              why_missing=_why_missing(sub, notebook, session.load_report, shown))
            try:
                check.run(student)
                sub.outcomes[check.id] = Outcome(True, "", student.replies, evidence=tuple(sorted(student.evidence)))
            except NeedsReview as exc:
                sub.outcomes[check.id] = Outcome(False, str(exc), student.replies, review=exc.answer,
                                                 evidence=tuple(sorted(student.evidence)))
            except CheckFailed as exc:
                sub.outcomes[check.id] = Outcome(False, str(exc), student.replies,
                                                 evidence=tuple(sorted(student.evidence)))
            except StudentCrashed as exc:
                reason = f"your code stopped the process that runs your notebook: {exc}"
                sub.flags.append(f"{notebook}: the process running the code died during {check.id}: {exc}")
                for c in todo[index:]:
                    if c.question == check.question:
                        sub.outcomes[c.id] = Outcome(False, reason)
                session.close()
                session, restarts = None, restarts + 1
                if restarts > MAX_RESTARTS:
                    for c in todo[index + 1:]:
                        sub.outcomes.setdefault(c.id, Outcome(False, "not run: your code stopped the process "
                                                                     f"that runs your notebook {restarts} times"))
                    return
            except Exception as exc:  # a reply of a shape the check did not expect
                sub.outcomes[check.id] = Outcome(False, f"could not be checked: {type(exc).__name__}: {exc}"[:300])
                sub.flags.append(f"{notebook}: {check.id} could not compare the reply ({type(exc).__name__})")
    finally:
        if session is not None:
            session.close()


def shown_only(a: Assignment, notebook: str) -> frozenset[str]:
    """The names only the given cells the grader never runs define (``grader=skip``: a cell that shows
    the student something, such as loading week 5's trained model)."""
    return frozenset().union(*(_defined(cell.source) for cell in a.given(notebook).values()
                               if cell.skip_when_grading))


@functools.lru_cache(maxsize=256)
def _defined(source: str) -> frozenset[str]:
    """The names a course cell assigns or imports (parsed once: every submission asks)."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} |
                     {alias.asname or alias.name.partition(".")[0] for n in ast.walk(tree)
                      if isinstance(n, (ast.Import, ast.ImportFrom)) for alias in n.names})


def _why_missing(sub: Submission, notebook: str, load_report: list[dict[str, Any]],
                 shown: frozenset[str] = frozenset()) -> Callable[[str], str | None]:
    """For a name the notebook did not define: the error of the cell that should have defined it
    (the last cell that stopped with an error and mentions the name), so a syntax error is reported
    as that cell's error, not as a name that is missing. A name that cell missed because only a
    cell the grader does not run defines it (``shown``) is said so: the cell ran in the notebook."""
    program, ids = sub.programs.get(notebook, []), sub.program_ids.get(notebook, [])
    failed = [i for i, r in enumerate(load_report) if not r.get("ok") and i < len(program)]

    def explain(name: str) -> str | None:
        cells = [i for i in reversed(failed) if defines(program[i], name)] or [
            i for i in reversed(failed) if mentions(program[i], name)
            and f"name {name!r} is not defined" not in str(load_report[i].get("error"))]
        if not cells:
            return None
        i = cells[0]
        where = f" ({ids[i]})" if i < len(ids) and ids[i] else ""
        error = CELL_NAME.sub("", str(load_report[i].get("error")))
        lacked = re.search(r"NameError: name '(\w+)' is not defined", error)
        if lacked and lacked.group(1) in shown:
            return (f"`{name}` is not defined: the cell that defines it{where} uses `{lacked.group(1)}`, which only "
                    "a cell the grader does not run defines (a cell that shows you something, such as loading the "
                    "trained model). Write the value itself there, as the TODO box asks")
        return (f"`{name}` is not defined: the cell that defines it{where} stopped with {error}. "
                "Fix that cell and run it again")
    return explain


def defines(source: str, name: str) -> bool:
    """Whether ``source`` (parsable or not) defines ``name``: ``def name``, ``class name``, ``name =``."""
    return bool(re.search(rf"^\s*(?:(?:async\s+)?def|class)\s+{re.escape(name)}\b"
                          rf"|^\s*{re.escape(name)}\s*(?::[^=\n]*)?=(?!=)",
                          source, re.MULTILINE))


def mentions(source: str, name: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", source))


# "<cell 7>, " in a compile error: the grader's own numbering of the cells it runs, not the notebook's.
CELL_NAME = re.compile(r"<cell \d+>,?\s*")


def _transport(session: Session, died: type[BaseException]) -> Transport:
    def send(header: dict[str, Any], blobs: list[Any]) -> tuple[Any, ...]:
        try:
            return session.request(header, blobs)
        except died as exc:
            raise StudentCrashed(str(exc)) from None
    return send
