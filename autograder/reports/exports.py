"""What leaves the grader as files: the results document, the class CSV, and Gradescope's format."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from autograder.grader_side import contract
from autograder.reports.escape import for_csv


def write_csv(results: dict, path: Path) -> None:
    """A row per student: a column per question, total, status, needs-manual-grade, flags, reason."""
    qids = list(contract.QUESTIONS)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student", *qids, "score", "max_score", "status", "needs_manual_grade", "flags", "reason"])
        for sid, r in results["students"].items():
            q = r.get("questions", {})
            scores = [q.get(qid, {}).get("score") for qid in qids]
            manual = [qid + "".join(f" ({row['id']}: review {row['review']})" for row in q.get(qid, {}).get("checks", [])
                                    if row.get("review")) for qid in r.get("needs_manual_grade", [])]
            out.writerow([for_csv(cell) for cell in (
                sid, *["" if s is None else s for s in scores], r["score"], r["max_score"],
                r["status"], " ".join(manual), " | ".join(r.get("flags", [])),
                r.get("reason") or "")])


def write_json(doc: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


def gradescope(result: dict) -> dict:
    """Gradescope's results.json for one graded submission: a test per check, hidden ones shown
    only after grades are published."""
    tests = []
    for qid, q in result.get("questions", {}).items():
        for row in q.get("checks", []):
            tests.append({"name": f"{row['id']}", "score": row["score"], "max_score": row["max_score"],
                          "output": row["message"] or "passed",
                          "visibility": "after_published" if row["hidden"] else "visible"})
    output = result.get("reason") or ""
    return {"score": result["score"], "output": output, "tests": tests, "visibility": "visible"}
