"""Step 8: points per question, feedback lines, status and reason: the result of one submission."""
from autograder.grader_side.pipeline.read import as_graded
from autograder.grader_side.pipeline.submission import Env, Submission
from autograder.grader_side.results import (
    CheckResult,
    Misconception,
    QuestionResult,
    StudentResult,
)
from autograder.student_side.checks import Check


def unanswered(sub: Submission, env: Env, qid: str) -> str | None:
    """Why nbgrader scores the hand-graded question ``qid`` 0 without a TA, as its gradebook records
    it (the feedback line), or None when a TA grades it. ``SaveAutoGrades`` gives an answer cell
    whose checksum is still the release's an automatic 0 and no ``needs_manual_grade``
    (``nbgrader.utils.determine_grade``), and every grade of a notebook that could not be read is
    recorded as 0 with none either. Of several cells with one id nbgrader keeps the last
    (``DeduplicateIds``), and it restores a cell's type and metadata from the source before the
    checksum, whatever the submission's metadata claims (``read.as_graded``), so only the source
    counts. A missing answer cell is one a TA looks at."""
    notebook = env.assignment.questions[qid].notebook
    if notebook in sub.problems or notebook not in sub.cells:
        return f"no response: {notebook}.ipynb could not be graded, so this answer scores 0 and is not listed for " \
               "grading by hand"
    released = env.assignment.cells(notebook, released=True)
    answers = [c for c in released if c.grade and c.solution and c.grade_id.startswith(qid + "_")]
    cells = as_graded(sub.cells[notebook], released)
    for answer in answers:
        mine = [c for c in cells if c.grade_id == answer.grade_id]
        if not mine or mine[-1].source != answer.source:
            return None
    return ("no response: the answer cell is as it was released, so it scores 0 and is not listed for grading by "
            "hand (nbgrader's rule)") if answers else None


def run(sub: Submission, env: Env) -> None:
    by_question: dict[str, list[Check]] = {}
    for c in env.assignment.checks:
        by_question.setdefault(c.question, []).append(c)
    questions: dict[str, QuestionResult] = {}
    total = 0.0
    topics = env.assignment.set.topics
    for qid, q in env.assignment.questions.items():
        about = {"topic": topics.get(qid) or topics.get(q.concept, q.concept), "notebook": q.notebook}
        if q.manual:
            why = unanswered(sub, env, qid)
            questions[qid] = QuestionResult(0.0 if why else None, float(q.points), [why or "graded by hand by a TA"],
                                            manual=True, **about)
            continue
        rows: list[CheckResult] = []
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
        questions[qid] = QuestionResult(score, float(q.points), feedback, rows, mistake, **about)
    unreadable = sorted(sub.problems)
    sub.result = StudentResult(
        status="failed" if len(unreadable) == len(env.assignment.notebooks) else "graded",
        score=total,
        max_score=env.assignment.max_score,
        reason="; ".join(sub.problems[n] for n in unreadable) or None,
        questions=questions,
        flags=list(sub.flags),
        needs_manual_grade=[qid for qid, q in env.assignment.questions.items()
                            if q.manual and questions[qid].score is None or qid in sub.to_review
                            or any(row.review for row in questions[qid].checks)],
        load_errors=dict(sub.load_errors),
    )
