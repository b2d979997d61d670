"""What the feedback pages and the class report share: the Jinja2 environment that renders them,
and the words both use for questions and for what a TA grades by hand.

The markup is in ``templates/*.html.j2``, the CSS in ``static/*.css``. A page is rendered to one
self-contained file (the CSS inlined, figures as data URLs), since pages are mailed and opened
offline. Autoescaping is on for every template and undefined names are errors, so a value from
the results is always text on the page, never markup.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from autograder.grader_side.results import (
    CheckResult,
    QuestionResult,
    Results,
    StudentResult,
    as_results,
    as_student,
)

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

def render(template: str, styles: tuple[str, ...] = ("page.css",), **context) -> str:
    """The page ``template`` filled with ``context``, with the CSS files ``styles`` inlined."""
    css = "".join((STATIC / name).read_text(encoding="utf-8") for name in styles)
    return environment().get_template(template).render(style=Markup(css), **context)


@cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment of the pages: autoescaped, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(("html", "html.j2"), default_for_string=True, default=True),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=num, anchor=anchor, code_spans=code_spans)
    return env


# ---- filters ----------------------------------------------------------------------------------

def num(value) -> str:
    """A score as the pages write it: ``8``, ``2.5``, ``–`` for none."""
    if value is None:
        return "–"
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


def after_late_penalty(score, penalty) -> float:
    """The total after the late penalty, as ``nbgrader export`` works it out (never below 0)."""
    return max(0.0, float(score) - float(penalty))


def anchor(qid) -> str:
    """The id of a question's section on a page."""
    return "q-" + re.sub(r"[^A-Za-z0-9_-]", "_", str(qid))


def code_spans(text) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_code): the checks write names in `backticks`."""
    pieces = re.split(r"`([^`]{1,200})`", "" if text is None else str(text))
    return [(piece, i % 2 == 1) for i, piece in enumerate(pieces) if piece]


# ---- reading the results ----------------------------------------------------------------------

def question_order(results: Results | Mapping[str, Any]) -> list[str]:
    """The question ids of the results (or a results document), in the order they list them (the set's)."""
    return as_results(results).question_order()


def topic(qid: str, question: QuestionResult | Mapping[str, Any], notebook_word: str = "") -> str:
    """The topic of a question as its result states it, with its notebook:
    ``Counting parameters (build notebook)``."""
    q = question if isinstance(question, QuestionResult) else QuestionResult.from_dict(question)
    if not q.topic:
        return ""
    return f"{q.topic} ({q.notebook}{notebook_word})" if q.notebook else q.topic


def awaiting_review(row: CheckResult) -> bool:
    """True when a check's points wait for a TA: the grader could neither accept nor reject the
    answer (its ``review`` quotes it), so the 0 it holds is no verdict."""
    return row.awaiting_review


def points_awaiting(question: QuestionResult) -> float:
    """The points of an autograded question that wait for a TA's review."""
    return sum(float(row.max_score) - float(row.score) for row in question.checks if row.awaiting_review)


def points_lost(question: QuestionResult) -> bool:
    """True when an autograded question scored below its maximum by more than the points that
    wait for a TA's review."""
    if question.manual or question.score is None:
        return False
    return float(question.score) + points_awaiting(question) < float(question.max_score)


@dataclass(frozen=True)
class HandGraded:
    """A question a TA grades by hand in one result: one the contract leaves to a TA (``review``
    false), or one with an answer the grader sent to a TA (``review`` true)."""
    question: str
    points: float | None
    review: bool


def to_grade_by_hand(result: StudentResult) -> list[HandGraded]:
    """What a TA grades by hand in one result: the questions the contract leaves to a TA, then the
    questions of ``needs_manual_grade`` with an answer the grader sent to a TA for review (the
    check's ``review`` quotes it)."""
    questions = result.questions
    listed = set(map(str, result.needs_manual_grade))
    found = {str(qid): HandGraded(str(qid), q.max_score, False)
             for qid, q in questions.items()
             if q.manual and (q.score is None or str(qid) in listed)}   # not one scored 0 unanswered
    for qid in map(str, result.needs_manual_grade):
        if qid not in found:
            q = questions.get(qid)
            found[qid] = HandGraded(qid, q.max_score if q else None, not (q and q.manual))
    return list(found.values())


def hand_graded(result: StudentResult | Mapping[str, Any]) -> list[dict[str, Any]]:
    """``to_grade_by_hand`` of a result (or of a student of a results document), each as
    {"question", "points", "review"}."""
    return [asdict(g) for g in to_grade_by_hand(as_student(result))]
