"""The results document: what grading a class produces, typed.

``course autograde`` writes it as ``results.json``; the reports, the CSV, Gradescope's files and
nbgrader's gradebook are all made from it. ``docs/results.schema.json`` is its JSON Schema (the
tests validate every document they produce against it). Meaning lives in fields, never in the
wording of a message: a named misconception is ``QuestionResult.misconception``, a disagreement
with nbgrader is ``StudentResult.disagreements``.

Every module of the grader passes these classes. The JSON form (``to_dict``, ``from_dict``) is
for the boundaries only: ``results.json`` written or read, the gradebook recorder's pipe, a Dask
task's return, Gradescope's files and the public return of ``api.autograde``/``api.grade``. The
report functions also take the JSON document a caller got from ``api.autograde`` (``as_results``),
so that a script holding ``results.json`` needs no conversion.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["graded", "failed", "grader-error"]
NOT_WRITTEN = "not written to nbgrader's gradebook: "   # a student's flag, when recording them failed
Json = dict[str, Any]


@dataclass
class Misconception:
    """A catalogued wrong answer the submission behaves like."""
    id: str
    description: str
    hint: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Misconception:
        return cls(str(data["id"]), str(data["description"]), str(data["hint"]))


@dataclass
class CheckResult:
    """One check of one submission, scored."""
    id: str
    score: float
    max_score: float
    hidden: bool
    passed: bool
    message: str = ""              # for the student; empty when passed
    review: str | None = None      # the answer, quoted, when a TA must decide (the score is then provisional)

    @property
    def awaiting_review(self) -> bool:
        """True when the check's points wait for a TA: the grader could neither accept nor reject the
        answer (``review`` quotes it), so the 0 it holds is no verdict."""
        return bool(self.review) and not self.passed

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        return cls(**data)


@dataclass
class QuestionResult:
    """One question of one submission: its points, its checks and what the student reads."""
    score: float | None            # None: graded by hand
    max_score: float
    feedback: list[str] = field(default_factory=list)   # lines for the student, in order
    checks: list[CheckResult] = field(default_factory=list)
    misconception: Misconception | None = None
    manual: bool = False
    topic: str = ""                # what the question is about, in the set's words (its TOPICS)
    notebook: str = ""             # the notebook it is in

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuestionResult:
        named = data.get("misconception")
        return cls(data["score"], data["max_score"], list(data.get("feedback") or []),
                   [CheckResult.from_dict(row) for row in data.get("checks") or []],
                   Misconception.from_dict(named) if named else None, bool(data.get("manual")),
                   str(data.get("topic") or ""), str(data.get("notebook") or ""))


@dataclass
class StudentResult:
    """One submission, graded."""
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

    def checks(self) -> list[tuple[str, CheckResult]]:
        """Every check of every question, as (question id, check), in the results' order."""
        return [(qid, row) for qid, q in self.questions.items() for row in q.checks]

    def to_dict(self) -> Json:
        """The JSON form (a student of ``results.json``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StudentResult:
        """A ``StudentResult`` back from its JSON form (nothing shared with ``data``: changing one
        leaves the other as it was)."""
        questions = {str(qid): QuestionResult.from_dict(q) for qid, q in (data.get("questions") or {}).items()}
        lists = {name: list(data[name]) for name in ("flags", "needs_manual_grade", "disagreements") if name in data}
        errors = {str(notebook): list(lines) for notebook, lines in (data.get("load_errors") or {}).items()}
        return cls(**{**data, **lists, "questions": questions, "load_errors": errors})

    def replace_with(self, other: StudentResult) -> None:
        """Become ``other`` in place (the recorder's child sends back the student as it recorded them,
        and whoever holds this object sees the change)."""
        self.__dict__.update(other.__dict__)


@dataclass
class Results:
    """A class, graded: ``results.json``."""
    assignment: str
    isolation: dict[str, Any]      # what the sandbox enforced (workers that differ: a list of values)
    workers: int
    students: dict[str, StudentResult]
    seconds: float = 0.0
    nbgrader_seconds: float | None = None   # the demo's nbgrader autograde time on the same class

    def to_dict(self) -> Json:
        """The JSON form, its keys in ``results.json``'s order (``nbgrader_seconds`` only when set)."""
        doc: Json = {"assignment": self.assignment, "isolation": dict(self.isolation), "workers": self.workers,
                     "students": {sid: r.to_dict() for sid, r in self.students.items()}, "seconds": self.seconds}
        if self.nbgrader_seconds is not None:
            doc["nbgrader_seconds"] = self.nbgrader_seconds
        return doc

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Results:
        """A ``Results`` back from its JSON form (``results.json``). A part of one (a test's, a
        script's) gets an empty assignment and isolation, no workers and no time for what it lacks."""
        return cls(str(data.get("assignment", "")), dict(data.get("isolation") or {}), data.get("workers", 0),
                   {str(sid): StudentResult.from_dict(r) for sid, r in (data.get("students") or {}).items()},
                   data.get("seconds", 0.0), data.get("nbgrader_seconds"))

    def question_order(self) -> list[str]:
        """The question ids, in the order the students' results list them (the set's)."""
        order: list[str] = []
        for r in self.students.values():
            order += [qid for qid in r.questions if qid not in order]
        return order


def student_from_dict(data: Mapping[str, Any]) -> StudentResult:
    """A ``StudentResult`` back from its JSON form."""
    return StudentResult.from_dict(data)


def from_dict(data: Mapping[str, Any]) -> Results:
    """A ``Results`` back from its JSON form (``results.json``)."""
    return Results.from_dict(data)


def as_results(results: Results | Mapping[str, Any]) -> Results:
    """``results`` typed: a ``Results`` as it is, a results document (JSON) read once."""
    return results if isinstance(results, Results) else Results.from_dict(results)


def as_student(result: StudentResult | Mapping[str, Any]) -> StudentResult:
    """``result`` typed: a ``StudentResult`` as it is, a student of a results document read once."""
    return result if isinstance(result, StudentResult) else StudentResult.from_dict(result)


def refresh(doc: dict[str, Any], results: Results) -> None:
    """Make the JSON document ``doc`` (which ``results`` was read from) say what ``results`` says now:
    a public function handed a document changes it in place, as it changes a ``Results``. Each
    student's dict is refreshed in place, so a caller holding one sees the change too."""
    students = doc.setdefault("students", {})
    for sid, result in results.students.items():
        refresh_student(students.setdefault(sid, {}), result)


def refresh_student(doc: dict[str, Any], result: StudentResult) -> None:
    """``refresh`` for one student's JSON form."""
    doc.clear()
    doc.update(result.to_dict())


__all__ = ["NOT_WRITTEN", "CheckResult", "Json", "Misconception", "QuestionResult", "Results", "Status",
           "StudentResult", "as_results", "as_student", "from_dict", "refresh", "refresh_student",
           "student_from_dict"]
