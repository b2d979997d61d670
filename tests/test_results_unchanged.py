"""Every verdict the grader gives the whole catalogue and the demo's sample class, held to the
results kept in ``tests/data/results/`` (``tests/results_snapshot.py`` says what is kept and how to
write it anew): a change that means to alter no verdict, message or flag alters none. With
``tests/test_mutants.py``'s "both graders fail the same checks on every entry" and the demo's test
of nbgrader against ``course autograde``, this holds ``nbgrader autograde`` too."""
from __future__ import annotations

import json

import pytest

from results_snapshot import SNAPSHOTS, graded

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(p.stem for p in SNAPSHOTS.glob("*.json")))
def test_every_verdict_is_the_one_kept(name, tmp_path):
    kept = json.loads((SNAPSHOTS / f"{name}.json").read_text())
    now = json.loads(json.dumps(graded(name, tmp_path)))
    assert now["solution"] == kept["solution"]
    changed = {sid: {"kept": kept["students"].get(sid), "now": r} for sid, r in now["students"].items()
               if r != kept["students"].get(sid)}
    missing = sorted(set(kept["students"]) - set(now["students"]))
    assert not changed and not missing, json.dumps({"changed": dict(list(changed.items())[:3]),
                                                    "missing": missing}, indent=1)[:6000]


def test_every_set_has_its_results_kept():
    from autograder.course import problem_sets
    from autograder.grader_side.assignment import REPO

    assert sorted(p.stem for p in SNAPSHOTS.glob("*.json")) == sorted(problem_sets(REPO))
