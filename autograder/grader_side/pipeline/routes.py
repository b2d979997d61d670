"""Step 6: judge forbidden routes from the submitted source, in this process.

``grader_side.routes.judge`` reads the code each notebook ran (its program) and decides, per
question with a rule, whether that question's code reaches a forbidden route. A route fails
every check of the question with a message saying where; an uncertain verdict (an attribute
name or code computed at run time) keeps the score and is flagged for a TA with the reason. What
the child reported reaching while the checks ran is evidence only: it never changes a score, and
when the source shows no route it is flagged for a TA.
"""
from __future__ import annotations

import threading

from autograder.grader_side import checks, contract, routes
from autograder.grader_side.pipeline.program import PRELUDE
from autograder.grader_side.pipeline.submission import Outcome

_known: dict[tuple[str, str], object] = {}
_known_lock = threading.Lock()


def run(sub, env):
    for notebook, program in sub.programs.items():
        questions = [q for q in routes.RULES if contract.QUESTIONS[q].notebook == notebook]
        if not questions:
            continue
        program = ["" if source is PRELUDE else source for source in program]   # the grader's own line
        labels = _labels(sub.cells.get(notebook, []), program)
        try:
            verdicts = routes.judge(program, questions, labels)
        except Exception as exc:   # a bug in the judge must not cost the student a grade
            sub.flags.append(f"{notebook}: forbidden routes could not be judged ({type(exc).__name__}); "
                             f"check {', '.join(questions)} by hand")
            continue
        for qid, verdict in verdicts.items():
            mine = [c for c in checks.all_checks() if c.question == qid and c.id in sub.outcomes]
            evidence = sorted({b for c in mine for b in sub.outcomes[c.id].evidence})
            if verdict.status == "route":
                message = verdict.message()
                for c in mine:
                    old = sub.outcomes[c.id]
                    sub.outcomes[c.id] = Outcome(False, message, old.replies, evidence=old.evidence)
                f = verdict.first
                sub.flags.append(f"{notebook}: {qid} not scored: {f.reason} ({f.code}, {f.where})")
                entry = _catalogued(env, notebook, qid, f.family)
                if entry is not None:
                    sub.diagnoses[qid] = entry
            elif verdict.status == "unsure":
                sub.flags.append(f"{notebook}: {verdict.message()}")
                sub.to_review[qid] = verdict.message()
            elif evidence:
                why = (f"{qid}: while the checks ran, the code reported reaching torch's {', '.join(evidence)}, "
                       "though its source shows no route to it; check it by hand")
                sub.flags.append(f"{notebook}: {why}")
                sub.to_review[qid] = why


def _labels(cells, program):
    """Name each program entry by the submitted cell it came from (its grade_id, else its place)."""
    places = {}
    code_number = 0
    for cell in cells:
        if cell.cell_type != "code":
            continue
        code_number += 1
        places.setdefault(cell.source, f"cell {cell.grade_id[:40]}" if cell.grade_id else f"code cell {code_number}")
    names = [places.get(source, "a cell the course gives") for source in program]
    return lambda i: names[i] if 0 <= i < len(names) else f"cell {i + 1}"


def _catalogued(env, notebook, question, family):
    """The first catalogue entry of ``question`` whose code takes a route of the same family."""
    key = (question, family)
    with _known_lock:
        if key not in _known:
            from autograder.grader_side import misconceptions

            given = [c.source for c in env.assignment.given(notebook).values()]
            _known[key] = next((e for e in misconceptions.catalogue() if e.question == question and e.mode == "append"
                                and (v := routes.judge(given + [e.code], [question])[question]).status == "route"
                                and v.first.family == family), None)
        return _known[key]
