"""Step 3: compare the submission's test and given cells with the source; flag every change.

Nothing flagged here changes a score: tests always come from the source (the submission's own
test cells never run), so this step only tells the TA what was touched.
"""
import re

from autograder.grader_side.assignment import Assignment
from autograder.grader_side.pipeline.submission import Env, Submission

# A check call typed into a cell: the id it names, when it is a string literal.
_CHECK_CALL = re.compile(r"\b(?:hidden_)?check\(\s*['\"]([^'\"]+)['\"]")


def retyped(source: str, assignment: Assignment) -> bool:
    """Whether ``source`` calls one of the set's checks (outside the source's test cell, a retyped one)."""
    return any(cid in assignment.set.by_id for cid in _CHECK_CALL.findall(source))


def run(sub: Submission, env: Env) -> None:
    for notebook, cells in sub.cells.items():
        tests, given = env.assignment.tests(notebook), env.assignment.given(notebook)
        known = {c.grade_id for c in env.assignment.cells(notebook, released=True)}
        seen: dict[str, int] = {}
        for cell in cells:
            if cell.grade and cell.grade_id not in known:
                sub.flags.append(f"{notebook}: a cell claims to be graded ({cell.grade_id or 'no id'}, "
                                 f"{cell.points!r} points) but is not one of the course's: ignored")
            if cell.grade_id in tests or cell.grade_id in given:
                seen[cell.grade_id] = seen.get(cell.grade_id, 0) + 1
                original = tests.get(cell.grade_id) or given[cell.grade_id]
                if cell.source.strip() != original.source.strip():
                    sub.flags.append(f"{notebook}: cell {cell.grade_id} was edited")
                if cell.grade_id in tests and cell.points != original.points:
                    sub.flags.append(f"{notebook}: points of {cell.grade_id} changed to {cell.points!r}")
            elif cell.cell_type == "code" and retyped(cell.source, env.assignment):
                sub.flags.append(f"{notebook}: a check was retyped outside its test cell")
        for grade_id in tests:
            if grade_id not in seen:
                sub.flags.append(f"{notebook}: test cell {grade_id} was deleted")
        for grade_id, count in seen.items():
            if count > 1:
                sub.flags.append(f"{notebook}: cell {grade_id} appears {count} times")
