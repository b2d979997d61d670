"""GitHub Classroom's autograding for a release: ``.github/workflows/classroom.yml``, which a
student's repository (made from the release) runs on every push.

GitHub Classroom runs its grader in the student's own repository, which the student can read, and
so can anyone with the Actions log: no hidden check or reference can go there. The workflow runs the
*visible* checks only (``student_side/classroom.py``): one step to run the notebooks, then one
graded step per question, worth the points of that question's visible checks, so a student's points
are partial and say where to look. The hidden checks are graded centrally, from the same notebooks:
clone the classroom's repositories and run ``course autograde --submissions`` on them
(docs/where-to-grade.md).
"""
from __future__ import annotations

import json
from pathlib import Path

from autograder.grader_side import problem_set

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
PYTHON = "3.11"
INSTALL = ("python -m pip install --quiet torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && "
           "python -m pip install --quiet numpy matplotlib nbformat nbclient ipykernel")


def visible_points(ps: problem_set.ProblemSet) -> dict[str, float]:
    """question -> points of its visible checks, in the set's order (questions with none left out)."""
    points: dict[str, float] = {}
    for c in ps.checks:
        if not c.hidden:
            points[c.question] = points.get(c.question, 0) + c.points
    return {q: points[q] for q in ps.questions if q in points}


def workflow(ps: problem_set.ProblemSet) -> str:
    """The workflow's text for the set ``ps`` (YAML; every value JSON-quoted)."""
    q = json.dumps
    points = visible_points(ps)
    steps = [f"""      - name: {q(f"{question}: its visible checks")}
        id: {question.lower()}
        if: always()
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: {q(question)}
          setup-command: ""
          command: {q(f"python -m student_side.classroom {question}")}
          timeout: 1
          max-score: {q(int(p) if float(p).is_integer() else p)}""" for question, p in points.items()]
    env = "\n".join(f"          {question.upper()}_RESULTS: {q('${{ steps.' + question.lower() + '.outputs.result }}')}"
                    for question in points)
    total = sum(points.values())
    return f"""# GitHub Classroom: instant feedback on the visible checks of {ps.folder.name}, written by
# `course release`. Each question's step is worth the points of its visible checks ({total:g} in all);
# the hidden checks are not in this repository: the course grades them from the same notebooks.
name: Visible checks
on: [push, workflow_dispatch, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  visible-checks:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: {q(PYTHON)}
      - name: Install what the notebooks use
        run: {q(INSTALL)}
      - name: Run the notebooks
        if: always()
        run: python -m student_side.classroom run
{chr(10).join(steps)}
      - name: Report
        if: always()
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{env}
        with:
          runners: {q(",".join(question.lower() for question in points))}
"""


def ship(source_dir: Path, release_dir: Path) -> Path:
    """Write the workflow for the set at ``source_dir`` into ``release_dir``."""
    target = release_dir / WORKFLOW
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(workflow(problem_set.load(source_dir)))
    return target
