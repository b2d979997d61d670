"""What leaves the grader as files: the results document, the class CSV, and Gradescope's format."""
from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autograder.compat import moved
from autograder.escape import for_csv, for_id, for_terminal, for_terminal_lines
from autograder.grader_side.results import (
    CheckResult,
    QuestionResult,
    Results,
    StudentResult,
    as_results,
    as_student,
)
from autograder.reports import pages


def write_csv(results: Results | Mapping[str, Any], path: Path) -> None:
    """A row per student: a column per question, the total before the late penalty, the penalty and
    the total after it (as ``nbgrader export``'s raw_score, late_submission_penalty and score; the
    last two blank where no gradebook worked the penalty out), status, needs-manual-grade, flags,
    reason. No column is a bare "score": each total says which side of the penalty it is. ``results``:
    a ``Results``, or the results document ``autograde`` returns."""
    results = as_results(results)
    qids = results.question_order()
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", *qids, "score_before_late_penalty", "late_penalty", "score_after_late_penalty",
                      "max_score", "status", "needs_manual_grade", "flags", "reason"])
        for sid, r in results.students.items():
            q = r.questions
            scores = [q[qid].score if qid in q else None for qid in qids]
            manual = [qid + "".join(f" ({row.id}: review {row.review})"
                                    for row in (q[qid].checks if qid in q else []) if row.review)
                      for qid in r.needs_manual_grade]
            penalty = r.late_penalty
            after = "" if penalty is None else pages.after_late_penalty(r.score, penalty)
            out.writerow([for_csv(cell) for cell in (
                for_id(sid), *["" if s is None else s for s in scores], r.score,
                "" if penalty is None else penalty, after, r.max_score,
                r.status, " ".join(manual), " | ".join(r.flags),
                r.reason or "")])


def write_json(doc: Results | Mapping[str, Any], path: Path) -> None:
    """Write ``doc`` (the results, typed or as their document, or any JSON document such as
    Gradescope's) to ``path`` as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = doc.to_dict() if isinstance(doc, Results) else doc
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")


# Gradescope's visibility for a check: hidden checks stay out of a student's sight until grades are
# published; with one such test, Gradescope also hides the total score ("If test cases are hidden,
# students will not be able to see their total score", "Autograder Specifications").
SHOWN, UNTIL_PUBLISHED = "visible", "after_published"
# Names, outputs and the top-level output are shown as text, never read as HTML or Markdown
# (the top level's default, "simple_format", renders HTML).
TEXT = "text"


def gradescope(result: StudentResult | Mapping[str, Any], execution_time: float | None = None,
               isolation: Mapping[str, Any] | None = None, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """Gradescope's results.json for one graded submission (the format of
    gradescope-autograders.readthedocs.io, "Autograder Specifications"): a test per check, numbered
    ``<question>.<n>`` in the results' order, hidden ones ``after_published``; a check whose points
    wait for a TA says it is awaiting review, in its own test.

    Nothing a hidden check decided is shown before grades are published: its verdict, score and
    review note are in its own ``after_published`` test only, and the total (which counts it) is
    hidden by Gradescope while such a test exists. The top-level ``output`` (always shown) holds
    only what a student needs and no hidden check decides: the reason a submission could not be
    graded, what is graded by hand, the questions whose visible checks wait for a TA, that hidden
    checks are shown once grades are published, and ``notes`` (which files were graded). A named
    misconception is a tag of its question's failed hidden tests (shown with them). The isolation
    the code ran under, when given, is for staff: ``extra_data``, which Gradescope stores and does
    not show. Every string leaves through the one sanitizer, one record a line
    (``autograder/escape.py``): a submission's error texts, answers and file names reach them.
    The grader's own stdout is for the instructor only (``stdout_visibility: hidden``): the whole
    isolation record, the machine's folders (``HOST_PATHS``) included, goes there. ``result``: a
    ``StudentResult``, or a student of the results document ``autograde`` returns."""
    result = as_student(result)
    questions = result.questions
    tests = [_gradescope_test(qid, n, row, _tags(q)) for qid, q in questions.items()
             for n, row in enumerate(q.checks, 1)]
    lines = [f"could not be graded: {result.reason}"] if result.reason else []
    manual = [f"{qid} ({q.max_score:g} points)" for qid, q in questions.items()
              if q.manual and qid in result.needs_manual_grade]
    if manual:
        lines.append(f"graded by hand later, not in this score: {', '.join(manual)}")
    lines += [f"{qid}: {q.feedback[0]}" for qid, q in questions.items()      # 0, and no TA will grade it
              if q.manual and qid not in result.needs_manual_grade and q.feedback[:1]
              and q.feedback[0].startswith("no response: ")]
    waiting = [qid for qid, q in questions.items() if any(awaiting(row) and not row.hidden for row in q.checks)]
    if waiting:
        lines.append(f"awaiting a TA's review, not in this score yet: {', '.join(waiting)}")
    if any(row.hidden for _, row in result.checks()):
        lines.append("hidden checks: their results, and any answer of yours a TA reads, are shown when grades "
                     "are published; until then the total is hidden")
    lines += list(notes)
    doc: dict[str, Any] = {"score": result.score, "output": "\n".join(for_terminal(line) for line in lines),
           "output_format": TEXT, "test_output_format": TEXT, "test_name_format": TEXT, "tests": tests,
           "visibility": SHOWN, "stdout_visibility": "hidden"}
    if isolation is not None:    # for staff: Gradescope keeps extra_data and shows it to no student; the machine's
        # folders only in the runner's stdout, in case a platform ever shows extra_data
        kept = {k: v for k, v in isolation.items() if k not in HOST_PATHS}
        doc["extra_data"] = {"isolation": for_terminal(describe_isolation(kept))}
    if execution_time is not None:
        doc["execution_time"] = max(0, round(execution_time))
    return doc


def awaiting(row: CheckResult) -> bool:
    """Whether a check's points wait for a TA (its score is 0 until a TA decides)."""
    return row.awaiting_review


def _tags(question: QuestionResult) -> list[str]:
    """The misconception the grader named for a question, as Gradescope tags ([] when none)."""
    named = question.misconception
    return [for_terminal(named.id)] if named is not None and named.id else []


def _gradescope_test(qid: str, n: int, row: CheckResult, tags: Sequence[str] = ()) -> dict[str, Any]:
    """One check as a Gradescope test, its strings sanitized: shown at once, or once grades are
    published when the check is hidden. ``tags`` (the question's named misconception) go on a
    failed hidden test only: a hidden check may be what named it, and a visible test is shown
    before grades are published."""
    output = row.message or "passed"
    if awaiting(row):
        if output.startswith("awaiting"):   # a route the grader could not rule out: the message says why
            output = f"{output} (a TA decides these points)"
        else:                               # an answer it could not place: quoted
            output = f"awaiting review: a TA decides these points ({output}; your answer: {row.review})"
    test: dict[str, Any] = {
        "name": for_terminal(row.id), "number": for_terminal(f"{qid}.{n}"), "score": row.score,
        "max_score": row.max_score, "status": "passed" if row.passed else "failed",
        "output": for_terminal_lines(output), "visibility": UNTIL_PUBLISHED if row.hidden else SHOWN}
    if tags and row.hidden and not row.passed:
        test["tags"] = list(tags)
    return test


# Fields of the sandbox's isolation record that name the grading machine's folders: for staff only.
HOST_PATHS = ("visible_read_only", "cut_out", "files")


def describe_isolation(isolation: dict) -> str:
    """The sandbox's ``isolation`` record as one line: every field it reported, as it reported it
    (``weak`` first: why namespaces could not be had)."""
    def text(value) -> str:
        return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)

    keys = sorted(isolation, key=lambda k: k != "weak")
    return "; ".join(f"{k}: {text(isolation[k])}" for k in keys) or "none reported"


def __getattr__(name: str):
    """nbgrader's export plugins live in ``autograder.nbgrader.plugins.export``; a course folder whose
    ``nbgrader_config.py`` still imports one from here gets it from there (``compat.moved``)."""
    return moved(__name__, name)
