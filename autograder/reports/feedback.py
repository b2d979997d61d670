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
from pathlib import Path

from autograder.reports import pages


def page(student: str, result: dict, assignment: str) -> str:
    """The feedback page of ``student`` (their entry of the results document), as HTML text."""
    score, max_score = result.get("score") or 0.0, result.get("max_score") or 0.0
    penalty = result.get("late_penalty")
    after = None if penalty is None else pages.after_late_penalty(score, penalty)
    shown = score if after is None else after
    questions = [_question(str(qid), q) for qid, q in (result.get("questions") or {}).items()]
    grades = pages.hand_graded(result)
    reason = result.get("reason")
    return pages.render(
        "feedback.html.j2", student=student, assignment=assignment,
        failed=result.get("status") != "graded", score=score, max_score=max_score, penalty=penalty, after=after,
        share=0.0 if not max_score else max(0.0, min(1.0, float(shown) / float(max_score))),
        manual=[g for g in grades if not g["review"]], reviews=[g for g in grades if g["review"]],
        questions=questions, lost=[q["id"] for q in questions if q["lost"]],
        awaiting=[q["id"] for q in questions if q["awaiting"]],
        reason=reason and {"ours": result.get("status") == "grader-error",
                           "parts": [part for part in str(reason).split("; ") if part.strip()]},
        load_errors=[(notebook, line) for notebook, lines in (result.get("load_errors") or {}).items()
                     for line in lines or []],
        flags=list(result.get("flags") or []))


def write_pages(results: dict, folder: Path) -> list[Path]:
    """Write ``<folder>/<student>.html`` for every student (file names made safe); return the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    assignment = results.get("assignment", "")
    written, used = [], set()
    for student, result in results.get("students", {}).items():
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


def _question(qid: str, q: dict) -> dict:
    """One question of the result, as the template shows it: a check whose points wait for a TA's
    review is listed as awaiting review, and its points are not counted as lost."""
    manual = q.get("score") is None   # graded by hand and not scored yet (one left unanswered scores 0)
    rows = q.get("checks") or []
    failing = [row for row in rows if not row.get("passed") and not pages.awaiting_review(row)]
    awaiting = pages.points_awaiting(q)
    mistake = q.get("misconception")
    feedback = [str(line) for line in q.get("feedback") or []]
    score, max_score = None if manual else float(q["score"]), float(q.get("max_score") or 0)
    return {"id": qid, "topic": pages.topic(qid, q, " notebook"), "manual": manual,
            "score": score, "max_score": max_score,
            "lost": pages.points_lost(q) or bool(q.get("manual")) and score is not None and score < max_score,
            "awaiting": 0.0 if manual else awaiting,
            "lost_points": 0.0 if score is None else max(0.0, max_score - score - awaiting),
            "pending": [{"id": str(row.get("id", "")),
                         "kind": "hidden test" if row.get("hidden") else "test in your notebook",
                         "points": float(row.get("max_score") or 0) - float(row.get("score") or 0),
                         "message": row.get("message") or "", "review": str(row["review"])}
                        for row in rows if pages.awaiting_review(row)],
            "mistake": mistake and {"id": str(mistake["id"]),
                                    "description": str(mistake.get("description") or "").strip(),
                                    "hint": str(mistake.get("hint") or "").strip()},
            "failing": [_group(rows) for rows in _by_message(failing)],
            "others": feedback[1:] if mistake else feedback}   # the first line says the mistake


def _by_message(rows: list[dict]) -> list[list[dict]]:
    """Failed checks grouped by message (in order): a missing name fails every check the same way."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(str(row.get("message") or ""), []).append(row)
    return list(groups.values())


def _group(rows: list[dict]) -> dict:
    """Failed checks that share a message: their ids, where they are, the points they cost."""
    hidden = sum(1 for row in rows if row.get("hidden"))
    if len(rows) == 1:
        kind = "hidden test" if hidden else "test in your notebook"
    else:
        kind = ("hidden tests" if hidden == len(rows) else "tests in your notebook" if not hidden
                else f"{len(rows) - hidden} in your notebook, {hidden} hidden")
    return {"rows": [{"id": str(row.get("id", ""))} for row in rows], "kind": kind,
            "lost": sum(float(row.get("max_score") or 0) - float(row.get("score") or 0) for row in rows),
            "message": rows[0].get("message") or "this test did not pass",
            "reviews": [str(row["review"]) for row in rows if row.get("review")]}
