"""The results document: what grading a class produces, typed.

``course autograde`` writes it as ``results.json``; the reports, the CSV, Gradescope's files and
nbgrader's gradebook are all made from it. ``docs/results.schema.json`` is its JSON Schema (the
tests validate every document they produce against it). Meaning lives in fields, never in the
wording of a message: a named misconception is ``QuestionResult.misconception``, a disagreement
with nbgrader is ``StudentResult.disagreements``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Status = Literal["graded", "failed", "grader-error"]
NOT_WRITTEN = "not written to nbgrader's gradebook: "   # a student's flag, when recording them failed


@dataclass
class Misconception:
    """A catalogued wrong answer the submission behaves like."""
    id: str
    description: str
    hint: str


@dataclass
class CheckResult:
    id: str
    score: float
    max_score: float
    hidden: bool
    passed: bool
    message: str = ""              # for the student; empty when passed
    review: str | None = None      # the answer, quoted, when a TA must decide (the score is then provisional)


@dataclass
class QuestionResult:
    score: float | None            # None: graded by hand
    max_score: float
    feedback: list[str] = field(default_factory=list)   # lines for the student, in order
    checks: list[CheckResult] = field(default_factory=list)
    misconception: Misconception | None = None
    manual: bool = False
    topic: str = ""                # what the question is about, in the set's words (its TOPICS)
    notebook: str = ""             # the notebook it is in


@dataclass
class StudentResult:
    status: Status
    score: float                   # the autograded points, before the late penalty (see late_penalty)
    max_score: float
    reason: str | None = None      # why (part of) the submission could not be graded, one line per notebook
    questions: dict[str, QuestionResult] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)                 # what a TA should look at
    needs_manual_grade: list[str] = field(default_factory=list)    # question ids a TA grades or reviews
    load_errors: dict[str, list[str]] = field(default_factory=dict)  # notebook -> cells that raised
    disagreements: list[str] = field(default_factory=list)         # checks nbgrader scored differently
    # The points the late penalty takes off, as nbgrader's gradebook holds it once the student is
    # recorded there (the sum of its notebooks' late_submission_penalty: what ``nbgrader export``
    # takes off its raw_score; 0 when on time); None where no gradebook worked it out.
    late_penalty: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Results:
    assignment: str
    isolation: dict
    workers: int
    seconds: float
    students: dict[str, StudentResult]

    def to_dict(self) -> dict:
        return asdict(self)


def student_from_dict(data: dict) -> StudentResult:
    """A ``StudentResult`` back from its JSON form."""
    questions = {}
    for qid, q in (data.get("questions") or {}).items():
        checks = [CheckResult(**row) for row in q.get("checks") or []]
        mistake = Misconception(**q["misconception"]) if q.get("misconception") else None
        questions[qid] = QuestionResult(q["score"], q["max_score"], list(q.get("feedback") or []), checks,
                                        mistake, bool(q.get("manual")), str(q.get("topic") or ""),
                                        str(q.get("notebook") or ""))
    return StudentResult(**{**data, "questions": questions})


def from_dict(data: dict) -> Results:
    """A ``Results`` back from its JSON form (``results.json``)."""
    return Results(data["assignment"], data["isolation"], data["workers"], data["seconds"],
                   {sid: student_from_dict(r) for sid, r in data["students"].items()})
