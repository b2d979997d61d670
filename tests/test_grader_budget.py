"""Reading a submission's source is bounded, and what the judge cannot prove waits for a TA, in
both graders.

One class: an honest student; one whose forbidden route sits beside a cell of 20,000 magic lines
(its reading runs out of time); one whose route sits beside a 26-byte cell that would fold to
megabytes; one whose B1 uses a torch function not on B1's list. `nbgrader autograde` grades it as
a TA types it, `course autograde` grades it again: the same gradebook check by check, every
question of the two attacks left to a TA (never silent points), the honest student untouched,
and no process of the run past 1 GB.
"""
from __future__ import annotations

import resource

import pytest
from nbgrader.api import Gradebook

import week4
import week4 as checks
from autograder import api
from autograder.grader_side.assignment import Assignment, solved
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import ASSIGNMENT, clone_course, course_checks, gradebook_checks

pytestmark = pytest.mark.slow

TIMEOUT = "20"
ROUTE = "\nlayer_norm_builtin = F.layer_norm\n\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n" \
        "    return layer_norm_builtin(x, x.shape[-1:], gamma, beta, eps)\n"
MAGIC_FLOOD = "".join(f"%time step_{i} = {i}\n" for i in range(20_000))
FOLD_BOMB = 'exec("%.3000000d" % 1)'
UNLISTED = "\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n    c = x - x.mean(-1, keepdim=True)\n" \
           "    return gamma * F.normalize(c, dim=-1) * c.shape[-1] ** 0.5 + beta\n"
ROUTE_QUESTIONS = {q for q in week4.RULES}


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    root = clone_course(course, tmp_path_factory.mktemp("budget"))
    a = Assignment(ASSIGNMENT, root)
    b1 = solved(next(c.source for c in a.cells("build") if c.grade_id == "B1_code"))
    submitted = root / "submitted"
    write_submission(submitted / "honest", a)
    write_submission(submitted / "x_magic_flood", a, edits={"B1_code": b1 + ROUTE}, extra_cells=[MAGIC_FLOOD])
    write_submission(submitted / "x_fold_bomb", a, edits={"B1_code": b1 + ROUTE}, extra_cells=[FOLD_BOMB])
    write_submission(submitted / "x_unlisted", a, edits={"B1_code": b1 + UNLISTED})
    done = api.nbgrader("autograde", ASSIGNMENT, "--force", f"--SandboxExecute.timeout={TIMEOUT}", repo=root)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10
    book = gradebook_checks(root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        waiting = {s.student_id: {g.name for nb in s.notebooks for g in nb.grades if g.needs_manual_grade}
                   for s in gb.assignment_submissions(ASSIGNMENT)}
    ours = api.autograde(ASSIGNMENT, submitted, workers=2, timeout=float(TIMEOUT), repo=root, gradebook=False)
    return done, book, waiting, ours, peak


def _checks_of(questions):
    return {c.id for c in checks.all_checks() if c.question in questions}


def test_the_honest_student_is_untouched(graded):
    done, book, waiting, ours, peak = graded
    assert sum(v for v in book["honest"].values() if v is not None) == 100.0
    assert ours["students"]["honest"]["score"] == 100.0 and not ours["students"]["honest"]["flags"]
    assert waiting["honest"] == {"C8_answer"}


@pytest.mark.parametrize("sid, b1", [("x_magic_flood", "awaiting a TA's review"), ("x_fold_bomb", "not scored")])
def test_a_notebook_the_judge_cannot_clear_keeps_no_silent_points(graded, sid, b1):
    """The flood's reading runs out of time: every route question waits for a TA. The bomb is
    read (its folding refused) and B1's route is still found; the rest waits for a TA, since the
    bomb's exec could have redefined anything."""
    done, book, waiting, ours, peak = graded
    result = ours["students"][sid]
    others = ROUTE_QUESTIONS - {"B1"}
    assert set(result["needs_manual_grade"]) >= others, result["needs_manual_grade"]
    for q in ROUTE_QUESTIONS:
        assert result["questions"][q]["score"] == 0.0, q
    assert all(row["review"] for q in others for row in result["questions"][q]["checks"])
    assert all(b1 in row["message"] for row in result["questions"]["B1"]["checks"])
    assert _checks_of(others) <= waiting[sid]                     # formgrader lists them
    assert all(book[sid][c] == 0 for c in _checks_of(ROUTE_QUESTIONS))
    assert result["questions"]["C1"]["score"] == result["questions"]["C1"]["max_score"]   # the rest is graded


def test_the_flood_is_out_of_time_and_the_bomb_is_not_folded(graded):
    done, book, waiting, ours, peak = graded
    flood = " ".join(ours["students"]["x_magic_flood"]["flags"])
    assert "budget" in flood, flood
    bomb = " ".join(ours["students"]["x_fold_bomb"]["flags"])
    assert "runs code built at run time" in bomb, bomb


def test_an_unlisted_function_waits_for_a_ta_in_both_graders(graded):
    done, book, waiting, ours, peak = graded
    result = ours["students"]["x_unlisted"]
    assert sorted(result["needs_manual_grade"]) == ["B1", "C8"] and result["score"] == 92.0
    assert "torch.nn.functional.normalize" in " ".join(result["flags"])
    assert _checks_of({"B1"}) <= waiting["x_unlisted"] and not (_checks_of({"B2", "B3", "B6", "B7"}) &
                                                               waiting["x_unlisted"])


def test_both_graders_agree_check_by_check(graded):
    done, book, waiting, ours, peak = graded
    for sid, rows in course_checks(ours).items():
        assert {k: v for k, v in book[sid].items() if k in rows} == rows, sid


def test_no_process_of_the_run_grew_past_one_gigabyte(graded):
    assert graded[4] < 1 << 30, graded[4] >> 20
