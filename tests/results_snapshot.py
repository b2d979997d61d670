"""The results every catalogued wrong answer and the demo's sample class get, kept in
``tests/data/results/<set>.json`` so a change meant to alter no verdict (speed, a new layout of the
code) is held to that: every check's score, verdict, message and review note, every question's
feedback and named misconception, every student's status, reason and flags.

Write them anew only for a change that means to alter a verdict or a message, and say so in its
commit: ``.venv/bin/python tests/results_snapshot.py`` (about two minutes).
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SNAPSHOTS = HERE / "data" / "results"
TIMEOUT = 15.0
# Floats in messages are held to 4 significant digits: the last digits of a torch result may
# differ between CPUs (vector instructions), and no verdict hangs on them.
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _rounded(text):
    if not isinstance(text, str):
        return text
    return NUMBER.sub(lambda m: f"{float(m.group()):.4g}", text)


def fingerprint(student: dict) -> dict:
    """What of a student's results a refactoring must leave as it was (no timing, no machine)."""
    keep = {k: v for k, v in student.items() if k != "questions"}
    keep["reason"] = _rounded(keep.get("reason"))
    keep["flags"] = [_rounded(f) for f in keep.get("flags") or []]
    keep["questions"] = {
        qid: {**{k: v for k, v in q.items() if k not in ("checks", "feedback")},
              "feedback": [_rounded(line) for line in q.get("feedback") or []],
              "checks": [{**row, "message": _rounded(row.get("message")), "review": _rounded(row.get("review"))}
                         for row in q.get("checks") or []]}
        for qid, q in (student.get("questions") or {}).items()}
    return keep


def write_class(folder: Path, name: str) -> list[str]:
    """The demo's sample class of set ``name``, then a student per catalogue entry (both notebooks
    written, the entry's wrong answer in its cell), in ``folder/submitted``."""
    from autograder import demo
    from autograder.grader_side import misconceptions
    from autograder.grader_side.assignment import REPO, Assignment
    from autograder.tooling.sampleclass import write_submission

    a = Assignment(name, REPO)
    ids = demo.build_class(folder, a)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    for entry in a.set.catalogue:
        write_submission(folder / "submitted" / f"catalogue-{entry.id}", a,
                         misconceptions.edits(entry, source[entry.cell]))
        ids.append(f"catalogue-{entry.id}")
    return ids


def graded(name: str, folder: Path) -> dict:
    """``course autograde`` of the class ``write_class`` writes, kept small: the first solution's
    fingerprint whole, and for every student the questions whose results differ from it (the
    others listed by id), which is all of it, without a copy of the same rows per student."""
    from autograder import api

    write_class(folder, name)
    doc = api.autograde(name, folder / "submitted", workers=2, timeout=TIMEOUT)
    students = {sid: fingerprint(r) for sid, r in sorted(doc["students"].items())}
    solution = students[next(sid for sid in students if sid.endswith("-solution"))]["questions"]
    for result in students.values():
        questions = result.pop("questions")
        result["questions as the solution's"] = sorted(q for q in questions if questions[q] == solution.get(q))
        result["questions"] = {q: v for q, v in questions.items() if v != solution.get(q)}
    return {"solution": solution, "students": students}


def main() -> int:
    from autograder.course import problem_sets
    from autograder.grader_side.assignment import REPO

    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    for name in problem_sets(REPO):
        with tempfile.TemporaryDirectory() as tmp:
            (SNAPSHOTS / f"{name}.json").write_text(dumps(graded(name, Path(tmp))))
    return 0


def dumps(kept: dict) -> str:
    """``graded``'s answer as JSON with one student a line, so a change shows as the students it changed."""
    def one(value) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    rows = ",\n".join(f"{one(sid)}:{one(r)}" for sid, r in kept["students"].items())
    return f'{{"solution":{one(kept["solution"])},\n"students":{{\n{rows}\n}}}}\n'



if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    sys.exit(main())
