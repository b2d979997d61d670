"""``nbgrader export``'s plugins: its own CSV with every cell made harmless, and Canvas's import file."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from nbgrader.api import Assignment, Gradebook, MissingEntry, Student
from nbgrader.plugins import CsvExportPlugin, ExportPlugin

from autograder.escape import for_csv, for_id
from autograder.reports.lms import read, summary, write


class CanvasExport(ExportPlugin):
    """``nbgrader export --exporter=autograder.nbgrader.plugins.export.CanvasExport [--to=FILE]``: Canvas's
    gradebook import file (default ``canvas.csv``) of the assignments and students nbgrader's
    ``--assignment``/``--student`` choose; students without ``lms_user_id`` listed beside it and
    warned about in nbgrader's log."""

    def export(self, gradebook: Gradebook) -> None:
        out = Path(self.to or "canvas.csv")
        table = read(gradebook, [str(a) for a in self.assignment], [str(s) for s in self.student])
        written = write(table, "canvas", out)
        self.log.info("%s", summary(written, "canvas"))
        for sid in written.missing:
            self.log.warning("no lms_user_id (Canvas ID) for student %s: not in %s", for_id(sid), out)


class NbgraderCsvExport(CsvExportPlugin):
    """``nbgrader export``'s CSV, the same columns and rows, written by Python's csv module (a comma
    in a name stays in its cell) with every cell made harmless for a spreadsheet (``for_csv``).
    The course's ``nbgrader_config.py`` makes it nbgrader's export plugin."""

    COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
               "raw_score", "late_submission_penalty", "score", "max_score")

    def export(self, gradebook: Gradebook) -> None:
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
    def _row(gradebook: Gradebook, assignment: Assignment, student: Student) -> dict[str, Any]:
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
