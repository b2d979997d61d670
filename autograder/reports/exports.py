"""What leaves the grader as files: the results document, the class CSV, and Gradescope's format."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from autograder.reports import pages
from autograder.reports.escape import for_csv


def write_csv(results: dict, path: Path) -> None:
    """A row per student: a column per question, total, status, needs-manual-grade, flags, reason."""
    qids = pages.question_order(results)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", *qids, "score", "max_score", "status", "needs_manual_grade", "flags", "reason"])
        for sid, r in results["students"].items():
            q = r.get("questions", {})
            scores = [q.get(qid, {}).get("score") for qid in qids]
            manual = [qid + "".join(f" ({row['id']}: review {row['review']})"
                                    for row in q.get(qid, {}).get("checks", []) if row.get("review"))
                      for qid in r.get("needs_manual_grade", [])]
            out.writerow([for_csv(cell) for cell in (
                sid, *["" if s is None else s for s in scores], r["score"], r["max_score"],
                r["status"], " ".join(manual), " | ".join(r.get("flags", [])),
                r.get("reason") or "")])


class NbgraderCsvExport(CsvExportPlugin):
    """``nbgrader export``'s CSV, the same columns and rows, written by Python's csv module (a comma
    in a name stays in its cell) with every cell made harmless for a spreadsheet (``for_csv``).
    The course's ``nbgrader_config.py`` makes it nbgrader's export plugin."""

    COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
               "raw_score", "late_submission_penalty", "score", "max_score")

    def export(self, gradebook) -> None:
        path = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", path)
        with open(path, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(self.COLUMNS)
            assignments, students = set(map(str, self.assignment)), set(map(str, self.student))
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    row = self._row(gradebook, assignment, student)
                    out.writerow([for_csv("" if row[k] is None else str(row[k])) for k in self.COLUMNS])

    @staticmethod
    def _row(gradebook, assignment, student) -> dict:
        """As nbgrader's exporter computes it: no submission scores 0; the score is after the late penalty."""
        row = dict(assignment=assignment.name, duedate=assignment.duedate, student_id=student.id,
                   last_name=student.last_name, first_name=student.first_name, email=student.email,
                   max_score=assignment.max_score)
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
        except MissingEntry:
            return dict(row, timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
        penalty = submission.late_submission_penalty
        return dict(row, timestamp=submission.timestamp, raw_score=submission.score, late_submission_penalty=penalty,
                    score=max(0.0, submission.score - penalty))


def write_json(doc: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


def gradescope(result: dict, execution_time: float | None = None, isolation: dict | None = None,
               notes: tuple[str, ...] = ()) -> dict:
    """Gradescope's results.json for one graded submission (the format of
    gradescope-autograders.readthedocs.io, "Autograder Specifications"): a test per check, numbered
    ``<question>.<n>`` in the results' order, hidden ones shown only after grades are published; a
    check whose points wait for a TA says it is awaiting review. The top-level ``output`` holds the
    reason a submission could not be graded, what is graded by hand, ``notes`` and, when given, the
    isolation the student's code ran under, exactly as the sandbox reported it. The grader's own
    stdout is for the instructor only (``stdout_visibility: hidden``)."""
    tests = []
    for qid, q in result.get("questions", {}).items():
        for n, row in enumerate(q.get("checks", []), 1):
            output = row["message"] or "passed"
            if row.get("review") and not row.get("passed"):
                if output.startswith("awaiting"):   # a route the grader could not rule out: the message says why
                    output = f"{output} (a TA decides these points)"
                else:                               # an answer it could not place: quoted
                    output = f"awaiting review: a TA decides these points ({output}; your answer: {row['review']})"
            tests.append({"name": f"{row['id']}", "number": f"{qid}.{n}", "score": row["score"],
                          "max_score": row["max_score"], "status": "passed" if row.get("passed") else "failed",
                          "output": output, "visibility": "after_published" if row["hidden"] else "visible"})
    lines = [f"could not be graded: {result['reason']}"] if result.get("reason") else []
    manual = [f"{qid} ({q['max_score']:g} points)" for qid, q in result.get("questions", {}).items() if q.get("manual")]
    if manual:
        lines.append(f"graded by hand later, not in this score: {', '.join(manual)}")
    waiting = [qid for qid, q in result.get("questions", {}).items()
               if any(row.get("review") and not row.get("passed") for row in q.get("checks") or [])]
    if waiting:
        lines.append(f"awaiting a TA's review, not in this score yet: {', '.join(waiting)}")
    lines += list(notes)
    if isolation is not None:
        lines.append("isolation: " + describe_isolation(isolation))
    doc = {"score": result["score"], "output": "\n".join(lines), "tests": tests, "visibility": "visible",
           "stdout_visibility": "hidden"}
    if execution_time is not None:
        doc["execution_time"] = max(0, round(execution_time))
    return doc


def describe_isolation(isolation: dict) -> str:
    """The sandbox's ``isolation`` record as one line: every field it reported, as it reported it
    (``weak`` first: why namespaces could not be had)."""
    def text(value) -> str:
        return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)

    keys = sorted(isolation, key=lambda k: k != "weak")
    return "; ".join(f"{k}: {text(isolation[k])}" for k in keys) or "none reported"
