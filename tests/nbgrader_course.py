"""Helpers the nbgrader tests share: an own copy of the session's course, and reading the gradebook."""
from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.api import Gradebook

ASSIGNMENT = "transformer-block"


def clone_course(course: Path, dest: Path) -> Path:
    """A private copy of the released course at ``dest``: sources, release, config, and a gradebook
    holding the assignment but no student (cheaper than releasing again)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("solutions", "assignments"):
        shutil.copytree(course / name, dest / name, symlinks=True)
    for name in ("nbgrader_config.py", "gradebook.db"):
        shutil.copy(course / name, dest / name)
    with Gradebook(f"sqlite:///{dest / 'gradebook.db'}") as gb:
        for student in list(gb.students):
            gb.remove_student(student.id)
    return dest


def gradebook_checks(course: Path, assignment: str = ASSIGNMENT) -> dict[str, dict[str, float | None]]:
    """student -> grade_id -> score nbgrader counts for it (manual if given, else auto)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student_id: {g.name: g.score for nb in s.notebooks for g in nb.grades}
                for s in gb.assignment_submissions(assignment)}


def course_checks(results: dict) -> dict[str, dict[str, float]]:
    """student -> check id -> points ``course autograde`` gave."""
    return {sid: {row["id"]: row["score"] for q in r.get("questions", {}).values() for row in q.get("checks", [])}
            for sid, r in results["students"].items()}
