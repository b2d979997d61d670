"""Step 6: apply the route verdicts the judge gave on the submitted source.

``grader_side.routes.judge`` read the code each notebook ran (in ``program.py``'s request to the
bounded helper, ``analysis.py``) and decided, per question with a rule: ``route`` (the question's
code reaches a forbidden route: every check of it fails, with where), ``unsure`` (it could not
prove the code clean: the points of the checks that passed wait for a TA, who sees the reason
and the line, as for an answer the grader cannot place) or ``clean``. A judge that failed or ran
out of its budget makes every route question of the notebook ``unsure``. What the child reported
reaching while the checks ran is evidence only: when the source shows no route, the question
waits for a TA too.
"""
from __future__ import annotations

import threading

from autograder.grader_side import routes
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.misconceptions import Entry
from autograder.grader_side.pipeline.submission import Env, Outcome, Submission
from autograder.student_side.checks import Check

_known: dict[tuple[str, ...], Entry | None] = {}
_known_lock = threading.Lock()


def run(sub: Submission, env: Env) -> None:
    for notebook, reading in sub.readings.items():
        if reading.failure:
            _unread(sub, env.assignment, notebook, reading.failure)
        a = env.assignment
        for qid in [q for q in a.set.rules if a.questions[q].notebook == notebook]:
            verdict = reading.verdicts.get(qid) or _unjudged(a.set.rules[qid], reading.failure)
            mine = [c for c in a.checks if c.question == qid and c.id in sub.outcomes]
            evidence = sorted({b for c in mine for b in sub.outcomes[c.id].evidence})
            if verdict.status == "route":
                message = verdict.message()
                for c in mine:
                    old = sub.outcomes[c.id]
                    sub.outcomes[c.id] = Outcome(False, message, old.replies, evidence=old.evidence)
                f = verdict.first
                assert f is not None   # a route verdict has its finding
                sub.flags.append(f"{notebook}: {qid} not scored: {f.reason} ({f.code}, {f.where})")
                # Only an entry that takes the same route names it (None: no misconception at all,
                # not the behaviour matcher's guess: a route behaves exactly like torch).
                sub.diagnoses[qid] = _catalogued(env, notebook, qid, f)
            elif verdict.status == "unsure":
                _wait_for_a_ta(sub, notebook, qid, mine, verdict.message())
            elif evidence:
                _evidence_for_a_ta(sub, notebook, qid, mine)


def _evidence_for_a_ta(sub: Submission, notebook: str, qid: str, mine: list[Check]) -> None:
    """The points of ``qid``'s passed checks wait for a TA where the code reported reaching torch
    while they ran. A visible check goes by what visible checks saw: what the code did with a hidden
    check's inputs must not show in a result a student reads before grades are published."""
    for hidden in (False, True):
        group = [c for c in mine if c.hidden == hidden]
        seen = sorted({b for c in (mine if hidden else group) for b in sub.outcomes[c.id].evidence})
        if group and seen:
            _wait_for_a_ta(sub, notebook, qid, group,
                           f"{qid}: while the checks ran, the code reported reaching torch's {', '.join(seen)}, "
                           "though its source shows no route to it; check it by hand")


def _unread(sub: Submission, a: Assignment, notebook: str, failure: str) -> None:
    """The notebook's cells ran as written (IPython syntax untransformed): a check that failed may
    have failed for the grader's reason, not the student's, so its points wait for a TA too."""
    why = f"{failure}; its cells ran as written (IPython syntax not transformed): check it by hand"
    for c in a.checks:
        old = sub.outcomes.get(c.id)
        if old is not None and a.set.notebook_of(c) == notebook and not old.passed and not old.review:
            sub.outcomes[c.id] = Outcome(False, f"awaiting a TA's review: {why}", old.replies, review=why,
                                         evidence=old.evidence)


def _unjudged(rule: routes.Rule, failure: str) -> routes.Verdict:
    why = failure or "the grader could not read this notebook's code"
    return routes.Verdict(rule.question, [routes.Finding("unsure", "judge", why, "the whole notebook", "")], rule)


def _wait_for_a_ta(sub: Submission, notebook: str, qid: str, mine: list[Check], why: str) -> None:
    """The points of ``qid``'s passed checks wait for a TA (nbgrader's needs_manual_grade)."""
    if f"{notebook}: {why}" not in sub.flags:
        sub.flags.append(f"{notebook}: {why}")
    sub.to_review[qid] = why
    for c in mine:
        old = sub.outcomes[c.id]
        if old.passed:
            sub.outcomes[c.id] = Outcome(False, f"awaiting a TA's review: {why}", old.replies, review=why,
                                         evidence=old.evidence)


def _catalogued(env: Env, notebook: str, question: str, finding: routes.Finding) -> Entry | None:
    """The first catalogue entry of ``question`` whose code takes the same route (the same family,
    forbidden member and way: "uses" or "subclasses"): a route no entry takes names no misconception."""
    key = (str(env.assignment.source_dir), question, finding.family, finding.name, finding.reason.split(" ", 1)[0])
    with _known_lock:
        if key not in _known:
            given = [c.source for c in env.assignment.given(notebook).values()]
            rules = {question: env.assignment.set.rules[question]}
            _known[key] = next((e for e in env.assignment.set.catalogue if e.question == question and e.mode == "append"
                                and (v := routes.judge(given + [e.code], rules)[question]).status == "route"
                                and v.first is not None
                                and (v.first.family, v.first.name, v.first.reason.split(" ", 1)[0]) == key[2:]),
                               None)
        return _known[key]
