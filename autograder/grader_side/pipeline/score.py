"""Step 8: points per question, feedback lines, status and reason: the result of one submission."""
from autograder.grader_side import checks, contract
from autograder.grader_side.results import (
    CheckResult,
    Misconception,
    QuestionResult,
    StudentResult,
)


def run(sub, env):
    by_question: dict[str, list] = {}
    for c in checks.all_checks():
        by_question.setdefault(c.question, []).append(c)
    questions, total = {}, 0.0
    for qid, q in contract.QUESTIONS.items():
        if q.manual:
            questions[qid] = QuestionResult(None, float(q.points), ["graded by hand by a TA"], manual=True)
            continue
        rows = []
        for c in by_question.get(qid, []):
            outcome = sub.outcomes[c.id]
            rows.append(CheckResult(c.id, float(c.points) if outcome.passed else 0.0, float(c.points), c.hidden,
                                    outcome.passed, outcome.message, outcome.review))
        feedback = [f"{row.id} ({'awaiting review' if row.review else f'-{row.max_score:g}'}): {row.message}"
                    for row in rows if not row.passed]
        entry = sub.diagnoses.get(qid)
        mistake = Misconception(entry.id, entry.description, entry.hint) if entry else None
        if mistake:
            feedback.insert(0, f"This looks like a known mistake: {mistake.description} Hint: {mistake.hint}")
        score = sum(row.score for row in rows)
        total += score
        questions[qid] = QuestionResult(score, float(q.points), feedback, rows, mistake)
    unreadable = sorted(sub.problems)
    sub.result = StudentResult(
        status="failed" if len(unreadable) == len(env.assignment.notebooks) else "graded",
        score=total,
        max_score=env.assignment.max_score,
        reason="; ".join(sub.problems[n] for n in unreadable) or None,
        questions=questions,
        flags=sub.flags,
        needs_manual_grade=[qid for qid, q in contract.QUESTIONS.items()
                            if q.manual or qid in sub.to_review or any(row.review for row in questions[qid].checks)],
        load_errors=sub.load_errors,
    ).to_dict()
