"""The rubrics of the hand-graded questions (week 4's C8, week 5's B6) are ones two TAs would apply
alike: one element per idea, each worth all of its points or none, with what earns it and what does
not; three anchor answers (full, half, little) scored element by element; the elements' points add
up to the question's; and all of it sits in nbgrader's mark-scheme region, which the release leaves
out (nbgrader's own ClearMarkScheme, configured as the course configures it, run on the notebook
``authoring`` builds from the set's ``.pct.py``)."""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from nbgrader.preprocessors import ClearMarkScheme

from autograder.grader_side import problem_set
from autograder.grader_side.assignment import REPO
from autograder.tooling import authoring

# (set, notebook, question): every answer cell the course grades by hand
HAND_GRADED = [("transformer-block", "concepts", "C8"), ("inside-the-block", "build", "B6")]
ANCHORS = ("full", "half", "little")
ROW = re.compile(r"^\|(.*)\|\s*$")


@dataclass
class Rubric:
    points: float                              # the answer cell's points
    cell: str                                  # the rubric cell's markdown, as the source notebook holds it
    scheme: str                                # what lies between BEGIN and END MARK SCHEME
    elements: dict[str, float]                 # element name -> its points, in table order
    scores: dict[str, list[float]]             # anchor kind -> its score per element, then the total


def _rows(text: str) -> list[list[str]]:
    """The cells of every markdown table row of ``text`` (separator rows left out)."""
    rows = [[c.strip() for c in m.group(1).split("|")] for line in text.splitlines() if (m := ROW.match(line.strip()))]
    return [r for r in rows if not all(set(c) <= set("-: ") for c in r)]


def rubric(set_name: str, notebook: str, question: str) -> Rubric:
    source = (REPO / "solutions" / set_name / f"{notebook}.pct.py").read_text()
    cells = authoring.parse(source, notebook)
    ids = [attrs.get("grade_id") for _, attrs, _ in cells]
    answer = ids.index(f"{question}_answer")
    assert ids[answer + 1] == f"{question}_rubric", f"{question}'s rubric cell must follow its answer cell"
    points = float(cells[answer][1]["points"])
    cell = authoring._uncomment(cells[answer + 1][2])
    begin, end = cell.index("BEGIN MARK SCHEME"), cell.index("END MARK SCHEME")
    scheme = cell[cell.index("\n", begin) + 1:cell.rindex("\n", 0, end)]
    rows = _rows(scheme)
    elements = {}
    for row in rows:
        named = re.match(r"\*\*(.+?)\.\*\*", row[0])
        if named and len(row) == 4:
            elements[named.group(1)] = float(row[1])
    header = next(r for r in rows if r[0] == "anchor")
    scores = {}
    for row in rows:
        kind = re.match(r"(\w+) ·", row[0])
        if kind and kind.group(1) in ANCHORS:
            scores[kind.group(1)] = [float(c) for c in row[1:]]
    assert header[1:-1] == list(elements), f"{question}: the anchor table's columns are not the elements"
    return Rubric(points, cell, scheme, elements, scores)


@pytest.mark.parametrize("set_name,notebook,question", HAND_GRADED)
def test_the_rubric_has_one_element_per_idea_worth_the_questions_points(set_name, notebook, question):
    r = rubric(set_name, notebook, question)
    assert len(r.elements) >= 3, r.elements
    assert sum(r.elements.values()) == r.points, (r.elements, r.points)
    for row in _rows(r.scheme):
        if re.match(r"\*\*(.+?)\.\*\*", row[0]) and len(row) == 4:
            earns, does_not = row[2], row[3]
            assert earns and does_not, f"{question}: element {row[0]} must say what earns it and what does not"
    # all or nothing per element: no blanket rule for a vague or partial element
    assert not re.search(r"half a point|half the points|vague", r.scheme, re.I)


@pytest.mark.parametrize("set_name,notebook,question", HAND_GRADED)
def test_three_anchor_answers_are_scored_element_by_element(set_name, notebook, question):
    r = rubric(set_name, notebook, question)
    assert list(r.scores) == list(ANCHORS)
    for kind, scores in r.scores.items():
        *per_element, total = scores
        assert len(per_element) == len(r.elements)
        for score, points in zip(per_element, r.elements.values(), strict=True):
            assert score in (0.0, points), f"{question} anchor {kind}: an element earns all its points or none"
        assert sum(per_element) == total
        text = re.search(rf"\*Anchor ({kind}), ([\d.]+) of ([\d.]+)\.\*\s*\n>\s*\S", r.scheme)
        assert text, f"{question}: the {kind} anchor's answer is not in the mark scheme"
        assert float(text.group(2)) == total and float(text.group(3)) == r.points
    assert r.scores["full"][-1] == r.points
    assert r.scores["half"][-1] == r.points / 2
    assert 0 < r.scores["little"][-1] <= r.points / 4


@pytest.mark.parametrize("set_name,notebook,question", HAND_GRADED)
def test_the_release_carries_neither_the_elements_nor_the_anchors(set_name, notebook, question):
    r = rubric(set_name, notebook, question)
    folder = REPO / "solutions" / set_name
    nb = authoring.build_notebook((folder / f"{notebook}.pct.py").read_text(), notebook, problem_set.load(folder))
    (source_cell,) = [c for c in nb.cells if c.metadata["nbgrader"]["grade_id"] == f"{question}_rubric"]
    assert source_cell.source == r.cell
    clear = ClearMarkScheme(enforce_metadata=False)     # as nbgrader_config.py sets it for the release
    released, _ = clear.preprocess(nb, {})
    (cell,) = [c for c in released.cells if c.metadata["nbgrader"]["grade_id"] == f"{question}_rubric"]
    assert f"graded by hand, out of {r.points:g} points" in cell.source
    text = "\n".join(c.source for c in released.cells)
    for leak in ("MARK SCHEME", "Anchor", "rubric", *(f"**{name}.**" for name in r.elements)):
        assert leak not in text, f"the release of {set_name}/{notebook} carries {leak!r}"
