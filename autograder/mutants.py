"""The mutation report of one problem set: does every grader take points off every catalogued
wrong answer, and keep full marks for every correct answer written differently?

For each grader (``course`` = ``course autograde``, ``nbgrader`` = ``nbgrader autograde`` as the
course configures it, through the sandbox), every catalogue entry becomes a submission of the one
notebook it changes; the entry is *killed* when its question scores below full marks. The score
per question is the share of its entries killed; a variant that loses a point is a false reject.
"""
from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograder import api
from autograder.grader_side import misconceptions
from autograder.grader_side.assignment import Assignment
from autograder.tooling.sampleclass import write_submission

GRADERS = ("course", "nbgrader")


@dataclass
class Report:
    assignment: Assignment
    scores: dict = field(default_factory=dict)        # grader -> entry id -> question score
    failed: dict = field(default_factory=dict)        # grader -> entry id -> ids of the checks it failed
    entries: list = field(default_factory=list)
    variants: list = field(default_factory=list)

    def unexercised(self, grader: str) -> list[str]:
        """Checks that no catalogued wrong answer fails: checks nothing proves can fail."""
        failed = set().union(*(self.failed[grader][e.id] for e in self.entries))
        return [c.id for c in self.assignment.checks if c.id not in failed]

    def survivors(self, grader: str) -> list[str]:
        """Wrong answers that kept full marks on their question."""
        return [e.id for e in self.entries
                if self.scores[grader][e.id] >= self.points(e.question)]

    def false_rejects(self, grader: str) -> list[str]:
        """Correct answers that lost points."""
        return [v.id for v in self.variants
                if self.scores[grader][v.id] < self.points(v.question)]

    def points(self, question: str) -> float:
        return self.assignment.questions[question].points

    def table(self) -> list[list[str]]:
        """question, entries, then killed/total per grader and false rejects per grader."""
        graders = list(self.scores)
        rows = [["question", "entries", *[f"{g} killed" for g in graders], *[f"{g} false rejects" for g in graders]]]
        for qid in self.assignment.questions:
            mine = [e for e in self.entries if e.question == qid]
            if not mine:
                continue
            killed = [sum(self.scores[g][e.id] < self.points(qid) for e in mine) for g in graders]
            rejects = [sum(self.scores[g][v.id] < self.points(qid)
                           for v in self.variants if v.question == qid) for g in graders]
            rows.append([qid, str(len(mine)), *[f"{k}/{len(mine)} ({100 * k / len(mine):.0f}%)" for k in killed],
                         *map(str, rejects)])
        return rows

    @property
    def perfect(self) -> bool:
        return all(not self.survivors(g) and not self.false_rejects(g) for g in self.scores)


def run(assignment: str, graders=GRADERS, workers: int = 0, repo: Path | None = None) -> Report:
    """The mutation report of the set ``assignment`` of the course in ``repo`` (default: the course
    folder this runs in), graded in a throwaway copy of it."""
    with tempfile.TemporaryDirectory() as tmp:
        course = Path(tmp) / "template"
        template = api.make_course(course, assignment, repo)
        report = Report(template, entries=template.set.catalogue, variants=template.set.variants)
        submissions = pack(template, report.entries + report.variants)
        halves = [submissions[0::2], submissions[1::2]] if "nbgrader" in graders else [submissions]
        courses = [_course(course, assignment, Path(tmp) / f"course{i}", half) for i, half in enumerate(halves)]
        if "course" in graders:
            report.scores["course"], report.failed["course"] = {}, {}
            for root, packed in courses:
                students = api.grade_class(assignment, root / "submitted", workers=workers, repo=root).students
                for sid, entries in packed.items():
                    for e in entries:
                        question = students[sid].questions[e.question]
                        report.scores["course"][e.id] = question.score
                        report.failed["course"][e.id] = {r.id for r in question.checks if not r.passed}
        if "nbgrader" in graders:
            with ThreadPoolExecutor(len(courses)) as pool:   # one nbgrader per course folder, side by side
                parts = list(pool.map(lambda c: _nbgrader_scores(template, *c), courses))
            report.scores["nbgrader"] = {k: v for part, _ in parts for k, v in part.items()}
            report.failed["nbgrader"] = {k: v for _, part in parts for k, v in part.items()}
    return report


def pack(a: Assignment, entries) -> list[list]:
    """Group entries into submissions of one notebook, at most one entry per question (and never
    two questions whose solution cells build on each other: the set's ``BUILDS_ON``), so each
    notebook is graded once for several entries."""
    groups: list[list] = []
    builds_on, questions = a.set.builds_on, a.questions
    for entry in entries:
        notebook, slot = questions[entry.question].notebook, builds_on.get(entry.question, entry.question)
        for group in groups:
            if (questions[group[0].question].notebook == notebook
                    and slot not in {builds_on.get(e.question, e.question) for e in group}):
                group.append(entry)
                break
        else:
            groups.append([entry])
    return groups


def _course(template: Path, assignment: str, root: Path, groups) -> tuple[Path, dict]:
    """A copy of the fresh course ``template`` with one submission per group (only the notebook it
    changes)."""
    shutil.copytree(template, root, symlinks=True)
    a = Assignment(assignment, root)
    packed = {}
    for number, group in enumerate(groups):
        notebook = a.questions[group[0].question].notebook
        source = {c.grade_id: c.source for c in a.cells(notebook)}
        edits = {k: v for e in group for k, v in misconceptions.edits(e, source[e.cell]).items()}
        sid = f"m{number:03d}"
        write_submission(root / "submitted" / sid, a, edits, only=(notebook,))
        packed[sid] = group
    return root, packed


def _nbgrader_scores(a: Assignment, root: Path, packed: dict) -> tuple[dict, dict]:
    """(entry id -> question score, entry id -> failed check ids) from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    api.nbgrader("autograde", a.name, "--force", "--log-level=ERROR", repo=root)
    ids = {c.id: c.question for c in a.checks}
    scores, failed = {}, {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for sid, entries in packed.items():
            grades = [g for nb in gb.find_submission(a.name, sid).notebooks for g in nb.grades]
            for e in entries:
                mine = [g for g in grades if ids.get(g.name) == e.question]
                scores[e.id] = sum(g.auto_score or 0.0 for g in mine)
                failed[e.id] = {g.name for g in mine if (g.auto_score or 0.0) < g.max_score}
    return scores, failed
