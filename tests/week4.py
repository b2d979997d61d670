"""The week-4 problem set (``solutions/transformer-block``), as most tests use it: its loaded set,
checks, catalogue, rules, references and visible check modules, and the judge on its rules."""
from __future__ import annotations

from autograder.grader_side import routes
from autograder.grader_side.assignment import REPO, Assignment

NAME = "transformer-block"
WEEK4 = Assignment(NAME, REPO)
SET = WEEK4.set
QUESTIONS = SET.questions
RULES = SET.rules


def all_checks():
    return SET.checks


def get(check_id: str):
    return WEEK4.check(check_id)


def uses(check):
    return SET.uses(check)


def catalogue():
    return SET.catalogue


def variants():
    return SET.variants


def reference(concept: str):
    """The hidden reference module of ``concept`` (``grading/reference/<concept>.py``)."""
    return SET.reference(concept)


def visible(concept: str):
    """The set's visible check module of ``concept`` (``student_side/checks/<concept>.py``)."""
    import importlib

    return importlib.import_module(f"{SET.package}.student_side.checks.{concept}")


def hidden(concept: str):
    """The set's hidden check module of ``concept`` (``grading/checks/<concept>.py``)."""
    import importlib

    return importlib.import_module(f"{SET.package}.grading.checks.{concept}")


def judge(sources, questions=None, labels=None):
    return routes.judge(sources, {q: RULES[q] for q in (questions or RULES)}, labels)


def judge_notebook(notebook, questions=None):
    return routes.judge_notebook(notebook, {q: RULES[q] for q in (questions or RULES)})


def notebook(check) -> str:
    return SET.notebook_of(check)


CONCEPTS = SET.concepts


def ready(*names: str, ns: dict) -> None:
    """The runtime's ``ready`` as a release of the set runs it: with the set's visible answer forms
    (``FORMS`` of ``student_side/checks/``) beside the runtime, as the released checks package has them."""
    from unittest import mock

    from autograder.student_side import checks as toolkit
    from autograder.student_side import notebook as runtime

    with mock.patch.object(toolkit, "forms", lambda: dict(SET.forms)):
        runtime.ready(*names, ns=ns)
