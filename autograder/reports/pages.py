"""What the feedback pages and the class report share: the Jinja2 environment that renders them,
and the words both use for questions and for what a TA grades by hand.

The markup is in ``templates/*.html.j2``, the CSS in ``static/*.css``. A page is rendered to one
self-contained file (the CSS inlined, figures as data URLs), since pages are mailed and opened
offline. Autoescaping is on for every template and undefined names are errors, so a value from
the results is always text on the page, never markup.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import jinja2
from markupsafe import Markup

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

def question_order(results: dict) -> list[str]:
    """The question ids of a results document, in the order its results list them (the set's)."""
    order: list[str] = []
    for r in (results.get("students") or {}).values():
        order += [str(qid) for qid in r.get("questions") or {} if str(qid) not in order]
    return order


def topic(qid: str, question: dict, notebook_word: str = "") -> str:
    """The topic of a question as its result states it, with its notebook:
    ``Counting parameters (build notebook)``."""
    words, notebook = question.get("topic"), question.get("notebook")
    if not words:
        return ""
    return f"{words} ({notebook}{notebook_word})" if notebook else str(words)


def awaiting_review(row: dict) -> bool:
    """True when a check's points wait for a TA: the grader could neither accept nor reject the
    answer (its ``review`` quotes it), so the 0 it holds is no verdict."""
    return bool(row.get("review")) and not row.get("passed")


def points_awaiting(question: dict) -> float:
    """The points of an autograded question that wait for a TA's review."""
    return sum(float(row.get("max_score") or 0) - float(row.get("score") or 0)
               for row in question.get("checks") or [] if awaiting_review(row))


def points_lost(question: dict) -> bool:
    """True when an autograded question scored below its maximum by more than the points that
    wait for a TA's review."""
    if question.get("manual") or question.get("score") is None:
        return False
    return float(question["score"]) + points_awaiting(question) < float(question.get("max_score") or 0)


def hand_graded(result: dict) -> list[dict]:
    """What a TA grades by hand in one result, as {"question", "points", "review"}: the questions the
    contract leaves to a TA (``review`` false), then the questions of ``needs_manual_grade`` with an
    answer the grader sent to a TA for review (``review`` true; the check's ``review`` quotes it)."""
    questions = result.get("questions") or {}
    listed = set(map(str, result.get("needs_manual_grade") or []))
    found = {str(qid): {"question": str(qid), "points": q.get("max_score"), "review": False}
             for qid, q in questions.items()
             if q.get("manual") and (q.get("score") is None or str(qid) in listed)}   # not one scored 0 unanswered
    for qid in map(str, result.get("needs_manual_grade") or []):
        if qid not in found:
            found[qid] = {"question": qid, "points": (questions.get(qid) or {}).get("max_score"),
                          "review": not (questions.get(qid) or {}).get("manual")}
    return list(found.values())
