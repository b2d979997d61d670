"""One feedback page per student, made only from that student's entry in the results document.

The page says the total, named by the late penalty (before it; and, when the results carry the
penalty nbgrader's gradebook recorded, that penalty and the total after it), the score of every
question, and for each question that lost points what went wrong: the failure messages of the
checks (written for students: what was called, on what kind of input, how far off) and, when the
catalogue recognised the mistake, its name and hint. It is built from the results alone, so it can
only show what the results hold: never a hidden check's code, its probe values or the reference
solution (unlike nbgrader's own ``generate_feedback``, which copies the hidden test cells into the
page).

The page is ``templates/feedback.html.j2`` rendered with autoescaping (see ``pages``): one file
with inline CSS, no script and no external resource, and a Content-Security-Policy that would
refuse to run a script even if one slipped in.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grader_side.results import (
    CheckResult,
    QuestionResult,
    Results,
    StudentResult,
    as_results,
    as_student,
)
from autograder.reports import pages


def page(student: str, result: StudentResult | Mapping[str, Any], assignment: str) -> str:
    """The feedback page of ``student`` (their result, or their entry of the results document), as HTML text."""
    result = as_student(result)
    score, max_score = result.score or 0.0, result.max_score or 0.0
    penalty = result.late_penalty
    after = None if penalty is None else pages.after_late_penalty(score, penalty)
    shown = score if after is None else after
    questions = [_question(str(qid), q) for qid, q in result.questions.items()]
    grades = pages.to_grade_by_hand(result)
    reason = result.reason
    return pages.render(
        "feedback.html.j2", student=student, assignment=assignment,
        failed=result.status != "graded", score=score, max_score=max_score, penalty=penalty, after=after,
        share=0.0 if not max_score else max(0.0, min(1.0, float(shown) / float(max_score))),
        manual=[g for g in grades if not g.review], reviews=[g for g in grades if g.review],
        questions=questions, lost=[q.id for q in questions if q.lost],
        awaiting=[q.id for q in questions if q.awaiting],
        reason=reason and {"ours": result.status == "grader-error",
                           "parts": [part for part in str(reason).split("; ") if part.strip()]},
        load_errors=[(notebook, line) for notebook, lines in result.load_errors.items() for line in lines or []],
        flags=list(result.flags))


def write_pages(results: Results | Mapping[str, Any], folder: Path) -> list[Path]:
    """Write ``<folder>/<student>.html`` for every student (file names made safe); return the paths.
    ``results``: a ``Results``, or the results document ``autograde`` returns."""
    results = as_results(results)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    assignment = results.assignment
    written, used = [], set()
    for student, result in results.students.items():
        name = safe_name(str(student))
        while name.lower() in used:     # two ids that differ only in case, on a case-blind disk
            name = safe_name(name + "~")
        used.add(name.lower())
        path = folder / f"{name}.html"
        path.write_text(page(str(student), result, assignment), encoding="utf-8")
        written.append(path)
    return written


def safe_name(student: str) -> str:
    """A file name (without extension) for ``student`` that stays inside its folder.

    Letters, digits, ``.``, ``_`` and ``-`` are kept; anything else, a leading dot, an empty name or
    a name the reports use (``report``, ``index``) gets a short digest of the id appended, so two
    different ids never share a file.
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", student).lstrip(".")[:80]
    if name != student or not name or name.lower() in ("report", "index"):
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        name = f"{name or 'student'}-{digest}"
    return name


@dataclass
class _Question:
    """One question of the result, as the template shows it."""
    id: str
    topic: str
    manual: bool                  # graded by hand and not scored yet
    score: float | None
    max_score: float
    lost: bool                    # it lost points (not counting those awaiting a TA's review)
    awaiting: float               # points awaiting a TA's review
    lost_points: float
    pending: list[dict[str, Any]]     # checks awaiting a TA's review
    mistake: dict[str, str] | None    # the named misconception
    failing: list[dict[str, Any]]     # failed checks, grouped by message
    others: list[str]             # feedback lines but the one naming the mistake


def _question(qid: str, q: QuestionResult) -> _Question:
    """One question of the result, as the template shows it: a check whose points wait for a TA's
    review is listed as awaiting review, and its points are not counted as lost."""
    manual = q.score is None   # graded by hand and not scored yet (one left unanswered scores 0)
    rows = q.checks
    failing = [row for row in rows if not row.passed and not row.awaiting_review]
    awaiting = pages.points_awaiting(q)
    mistake = q.misconception
    feedback = [str(line) for line in q.feedback]
    score, max_score = None if q.score is None else float(q.score), float(q.max_score or 0)
    return _Question(
        id=qid, topic=pages.topic(qid, q, " notebook"), manual=manual, score=score, max_score=max_score,
        lost=pages.points_lost(q) or bool(q.manual) and score is not None and score < max_score,
        awaiting=0.0 if manual else awaiting,
        lost_points=0.0 if score is None else max(0.0, max_score - score - awaiting),
        pending=[{"id": str(row.id), "kind": "hidden test" if row.hidden else "test in your notebook",
                  "points": float(row.max_score or 0) - float(row.score or 0),
                  "message": row.message or "", "review": str(row.review)}
                 for row in rows if row.awaiting_review],
        mistake={"id": str(mistake.id), "description": str(mistake.description or "").strip(),
                 "hint": str(mistake.hint or "").strip()} if mistake else None,
        failing=[_group(rows) for rows in _by_message(failing)],
        others=feedback[1:] if mistake else feedback)   # the first line says the mistake


def _by_message(rows: list[CheckResult]) -> list[list[CheckResult]]:
    """Failed checks grouped by message (in order): a missing name fails every check the same way."""
    groups: dict[str, list[CheckResult]] = {}
    for row in rows:
        groups.setdefault(str(row.message or ""), []).append(row)
    return list(groups.values())


def _group(rows: list[CheckResult]) -> dict[str, Any]:
    """Failed checks that share a message: their ids, where they are, the points they cost."""
    hidden = sum(1 for row in rows if row.hidden)
    if len(rows) == 1:
        kind = "hidden test" if hidden else "test in your notebook"
    else:
        kind = ("hidden tests" if hidden == len(rows) else "tests in your notebook" if not hidden
                else f"{len(rows) - hidden} in your notebook, {hidden} hidden")
    return {"rows": [{"id": str(row.id)} for row in rows], "kind": kind,
            "lost": sum(float(row.max_score or 0) - float(row.score or 0) for row in rows),
            "message": rows[0].message or "this test did not pass",
            "reviews": [str(row.review) for row in rows if row.review]}
