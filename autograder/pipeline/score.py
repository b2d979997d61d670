"""Step 7: points per question, feedback lines, status and reason: the result of one submission."""
from autograder import checks


def run(sub, env):
    questions, total = {}, 0.0
    by_question: dict[str, list] = {}
    for c in checks.all_checks():
        by_question.setdefault(c.question, []).append(c)
    for qid, q in checks.QUESTIONS.items():
        if q.manual:
            questions[qid] = {"score": None, "max_score": float(q.points), "manual": True,
                              "feedback": ["graded by hand by a TA"], "misconception": None}
            continue
        score, feedback, check_rows = 0.0, [], []
        for c in by_question.get(qid, []):
            outcome = sub.outcomes[c.id]
            earned = float(c.points) if outcome.passed else 0.0
            score += earned
            check_rows.append({"id": c.id, "score": earned, "max_score": float(c.points), "hidden": c.hidden,
                               "passed": outcome.passed, "message": outcome.message})
            if not outcome.passed:
                feedback.append(f"{c.id} (-{c.points:g}): {outcome.message}")
        entry = sub.diagnoses.get(qid)
        if entry is not None:
            feedback.insert(0, f"This looks like a known mistake: {entry['description']} Hint: {entry['hint']}")
        total += score
        questions[qid] = {"score": score, "max_score": float(q.points), "feedback": feedback,
                          "misconception": entry["id"] if entry else None, "checks": check_rows}
    unreadable = sorted(sub.problems)
    status = "failed" if len(unreadable) == len(env.assignment.notebooks) else "graded"
    sub.result = {
        "status": status,
        "reason": "; ".join(sub.problems[n] for n in unreadable) or None,
        "score": total,
        "max_score": env.assignment.max_score,
        "questions": questions,
        "flags": sub.flags,
        "needs_manual_grade": [qid for qid, q in checks.QUESTIONS.items() if q.manual],
        "load_errors": sub.load_errors,
    }
