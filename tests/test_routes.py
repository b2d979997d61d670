"""Forbidden routes are judged from the submitted source, in the grader (``grader_side/routes.py``).

The judge is tested on spellings of each route a student might write, on code that must stay
clean (a scratch cell comparing with the builtin, a dead first attempt, the given demo cells),
on the whole catalogue, and on garbage; then end to end through ``course autograde``, where a
route costs the question its points whatever the child says about itself.
"""
from __future__ import annotations

import random

import nbformat
import pytest

from autograder import api
from autograder.grader_side import checks, contract, routes
from autograder.grader_side.assignment import Assignment, notebook, solved
from autograder.grader_side.misconceptions import catalogue, edits, variants
from autograder.grader_side.pipeline import routes as step
from autograder.grader_side.pipeline.submission import Cell, Env, Outcome, Submission
from autograder.tooling.sampleclass import write_submission

GIVEN = "import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n" \
        "from student_side import check, ready\n"
HONEST_B1 = '''def layer_norm(x, gamma, beta, eps=1e-5):
    """gamma * (x - mu) / sqrt(sigma^2 + eps) + beta, as F.layer_norm computes it."""
    sigma2, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return gamma * (x - mu) / torch.sqrt(sigma2 + eps) + beta
'''


def _ln(body: str) -> str:
    return "def layer_norm(x, g, b, eps=1e-5):\n" + "".join(f"    {line}\n" for line in body.splitlines())


# (cells after the given imports, question, expected status, expected family or None)
CASES = {
    "honest": ([HONEST_B1], "B1", "clean", None),
    "scratch_compares_with_builtin": ([HONEST_B1, "x = torch.randn(3, 5)\ny = F.layer_norm(x, (5,))\n"
                                       "assert torch.allclose(layer_norm(x, torch.ones(5), torch.zeros(5)), y)"],
                                      "B1", "clean", None),
    "dead_first_attempt": ([_ln("return F.layer_norm(x, x.shape[-1:], g, b, eps)"), HONEST_B1], "B1", "clean", None),
    "local_named_like_a_global": (["x = F.layer_norm(torch.randn(2, 4), (4,))",
                                   _ln("x = x - x.mean(-1, keepdim=True)\nreturn g * x / x.std(-1, keepdim=True, "
                                       "correction=0) + b")], "B1", "clean", None),
    "syntax_error_elsewhere": ([HONEST_B1, "def broken(:\n    pass"], "B1", "clean", None),
    "functional": ([_ln("return F.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "torch_layer_norm": ([_ln("return torch.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "full_module_path": ([_ln("return torch.nn.functional.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                         "builtin"),
    "alias_in_another_cell": (["ln = F.layer_norm", _ln("return ln(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                              "builtin"),
    "imported_under_a_name": (["from torch.nn.functional import layer_norm as normalize\n" +
                               _ln("return normalize(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "module_in_a_helper": (["_norm = nn.LayerNorm(8)", _ln("return _norm(x)")], "B1", "route", "builtin"),
    "native_op": ([_ln("return torch.ops.aten.native_layer_norm(x, [x.shape[-1]], g, b, eps)[0]")], "B1", "route",
                  "builtin"),
    "op_named_in_a_string": ([_ln("op = torch._C._get_operation_overload('aten::native_layer_norm', 'default')\n"
                                  "return op(x, [x.shape[-1]], g, b, eps)[0]")], "B1", "route", "builtin"),
    "getattr_folded": ([_ln("return getattr(F, 'layer_' + 'norm')(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                       "builtin"),
    "getattr_reversed": ([_ln("return getattr(F, 'mron_reyal'[::-1])(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                         "builtin"),
    "module_dict": ([_ln("return F.__dict__['layer' + '_norm'](x, x.shape[-1:], g, b, eps)")], "B1", "route",
                    "builtin"),
    "group_norm": ([_ln("return F.group_norm(x.reshape(-1, 1, x.shape[-1]), 1, eps=eps).reshape(x.shape) * g + b")],
                   "B1", "route", "general-norm"),
    "torch_group_norm": ([_ln("return torch.group_norm(x.reshape(-1, 1, x.shape[-1]), 1).reshape(x.shape) * g + b")],
                         "B1", "route", "general-norm"),
    "instance_norm": ([_ln("return F.instance_norm(x.reshape(1, -1, x.shape[-1])).reshape(x.shape) * g + b")], "B1",
                      "route", "general-norm"),
    "rms_norm_of_centered_rows": ([_ln("c = x - x.mean(-1, keepdim=True)\nreturn F.rms_norm(c, c.shape[-1:], g, eps) "
                                       "+ b")], "B1", "route", "general-norm"),
    "star_import": (["from torch.nn.functional import *\n" + _ln("return group_norm(x, 1) * g + b")], "B1", "route",
                    "general-norm"),
    "dispatch_off": ([_ln("with torch._C.DisableTorchFunction():\n    return F.normalize(x)")], "B1", "route",
                     "dispatch-off"),
    "disabled_impl": ([_ln("return torch._C._disabled_torch_function_impl(F.normalize, (), (x,), {})")], "B1",
                      "route", "dispatch-off"),
    "clears_the_tripwire": ([_ln("import sys\nsys.modules['student_side.server'].FORBIDDEN.clear()\n"
                                 "return x")], "B1", "route", "dispatch-off"),
    "patches_torch_in_another_cell": ([HONEST_B1, "torch.var_mean = lambda x, **k: (F.layer_norm(x, x.shape[-1:]), 0)"],
                                      "B1", "route", "builtin"),
    "setattr_on_torch": ([HONEST_B1, "setattr(torch, 'sqrt', lambda t: F.group_norm(t, 1))"], "B1", "route",
                         "general-norm"),
    "patch_inside_a_function": ([HONEST_B1, "def setup():\n    torch.var_mean = F.layer_norm\nsetup()"], "B1", "route",
                                "builtin"),
    "exec_of_a_constant": (["exec('def layer_norm(x, g, b, eps=1e-5):\\n    return F.layer_norm(x, x.shape[-1:], g, b)')"],
                           "B1", "route", "builtin"),
    "line_magic": (["%time layer_norm = lambda x, g, b, eps=1e-5: F.layer_norm(x, x.shape[-1:], g, b, eps)"], "B1",
                   "route", "builtin"),
    "cell_magic": (["%%time\n" + _ln("return F.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "exec_with_its_own_namespace_elsewhere": ([HONEST_B1, "def rms_norm(x, g, eps=1e-6):\n    space = {}\n"
                                               "    exec(open('notes.py').read(), space)\n    return space['f'](x)"],
                                              "B1", "clean", None),
    "exec_into_globals_elsewhere": ([HONEST_B1, "def setup(code):\n    exec(code, globals())"], "B1", "unsure", None),
    "getattr_computed": (["import os\n" + _ln("return getattr(F, os.environ['NAME'])(x, x.shape[-1:], g, b, eps)")],
                         "B1", "unsure", None),
    "exec_computed": ([HONEST_B1, "import base64\nexec(base64.b64decode('bGF5ZXJfbm9ybQ==').decode())"], "B1", "unsure",
                      None),
    "star_import_of_math": (["from math import *\n" + _ln("return g * (x - x.mean(-1, keepdim=True)) / sqrt(2) + b")],
                            "B1", "clean", None),
    "name_no_cell_defines_after_a_star_import": (["from numpy import *\n" + _ln("return helper(x)")], "B1", "unsure",
                                                 None),
    "loads_a_saved_module": (["torch.save(nn.LayerNorm(8), 'ln.pt')", _ln("return torch.load('ln.pt', weights_only=False)(x)")],
                             "B1", "unsure", None),
    "unreadable_module": (["from my_helpers import normalize\n" + _ln("return normalize(x) * g + b")], "B1", "unsure",
                          None),
    "b2_builtin": (["def rms_norm(x, g, eps=1e-6):\n    return F.rms_norm(x, x.shape[-1:], g, eps)"], "B2", "route",
                   "builtin"),
    "b2_module": (["def rms_norm(x, g, eps=1e-6):\n    return nn.RMSNorm(x.shape[-1], eps=eps)(x) * g"], "B2", "route",
                  "builtin"),
    "b2_layer_norm_of_x_and_minus_x": (["def rms_norm(x, g, eps=1e-6):\n    y = torch.cat([x, -x], -1)\n"
                                        "    return F.layer_norm(y, y.shape[-1:], eps=eps)[..., :x.shape[-1]] * g"],
                                       "B2", "route", "general-norm"),
    "b3_autograd_grad": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n    x = x.requires_grad_()\n"
                          "    return torch.autograd.grad(layer_norm(x, gamma, 0 * gamma, eps), x, grad_out)"],
                         "B3", "route", "autograd"),
    "b3_backward": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n    x = x.requires_grad_()\n"
                     "    (layer_norm(x, gamma, 0 * gamma, eps) * grad_out).sum().backward()\n    return x.grad"],
                    "B3", "route", "autograd"),
    "b3_torch_func": (["from torch.func import vjp\ndef layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
                       "    return vjp(lambda t: t, x)[1](grad_out)"], "B3", "route", "autograd"),
    "b3_demo_cell_is_not_its_code": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n    return x, gamma, gamma",
                                      "leaves = [torch.randn(3, 4).requires_grad_()]\n"
                                      "F.layer_norm(leaves[0], (4,)).backward(torch.randn(3, 4))"], "B3", "clean", None),
    "b6_subclass": (["class PreNormBlock(nn.TransformerEncoderLayer):\n    pass"], "B6", "route", "transformer-layer"),
    "b6_borrowed_forward": (["_forward = nn.TransformerEncoderLayer.forward",
                             "class PreNormBlock(nn.Module):\n    def forward(self, x, causal=True):\n"
                             "        return _forward(self, x)"], "B6", "route", "transformer-layer"),
    "b6_functional_layer_norm_is_fine": (["class PreNormBlock(nn.Module):\n    def forward(self, x, causal=True):\n"
                                          "        return F.layer_norm(x, x.shape[-1:])"], "B6", "clean", None),
    "b6_scratch_comparison": (["class PreNormBlock(nn.Module):\n    pass",
                               "reference = nn.TransformerEncoderLayer(16, 4)\nprint(reference(torch.randn(2, 3, 16)))"],
                              "B6", "clean", None),
    "b7_base_patched_later": (["class PreNormBlock(nn.Module):\n    pass", "class PostNormBlock(PreNormBlock):\n    pass",
                               "PreNormBlock._mlp = lambda self, h: nn.Transformer()(h)"], "B7", "route",
                              "transformer-layer"),
}


@pytest.mark.parametrize("name", CASES)
def test_the_judge_on_one_spelling(name):
    cells, question, status, family = CASES[name]
    verdict = routes.judge([GIVEN, *cells], [question])[question]
    assert verdict.status == status, (verdict.findings, verdict.message())
    if family is not None:
        assert verdict.first.family == family
    if status == "route":
        message = verdict.message()
        assert message.startswith("not scored:") and question in message and "line" in message
    elif status == "unsure":
        assert "could not rule out" in verdict.message()
    else:
        assert verdict.message() == ""


def test_a_route_names_the_cell_and_line_it_is_on():
    cells = [GIVEN, HONEST_B1, "import torch.nn.functional as G\n\n\n" + _ln("return G.group_norm(x, 1)")]
    verdict = routes.judge(cells, ["B1"], lambda i: f"cell #{i}")["B1"]
    assert verdict.first.where == "cell #2, line 5" and verdict.first.code == "G.group_norm"


def test_the_course_solutions_and_every_correct_variant_are_clean():
    a = Assignment()
    for name in a.notebooks:
        assert {q: v.status for q, v in routes.judge_notebook(notebook(a, name)).items()} == \
               {q: "clean" for q in routes.RULES}
    for v in variants():
        nb = notebook(a, contract.QUESTIONS[v.question].notebook,
                      edits(v, {c.grade_id: c.source for c in a.cells(contract.QUESTIONS[v.question].notebook)}[v.cell]))
        judged = routes.judge_notebook(nb)
        assert all(verdict.status == "clean" for verdict in judged.values()), (v.id, judged)


# Catalogued wrong answers whose values are right: only the judge takes their points.
ROUTES = {"B1-calls-builtin": "builtin", "B1-torch-layer-norm": "builtin", "B1-group-norm-one-group": "general-norm",
          "B1-dispatch-off": "dispatch-off", "B1-aten-by-name": "builtin", "B2-calls-builtin": "builtin",
          "B2-rms-norm-module": "builtin", "B2-dispatch-off": "dispatch-off", "B3-autograd-grad": "autograd",
          "B3-calls-backward": "autograd", "B3-torch-func-vjp": "autograd",
          "B6-subclasses-encoder-layer": "transformer-layer", "B6-borrows-encoder-forward": "transformer-layer",
          "B7-subclasses-encoder-layer": "transformer-layer", "B7-borrows-encoder-forward": "transformer-layer"}


def test_every_catalogued_route_is_judged_one_and_no_other_entry_is():
    a = Assignment()
    by_id = {e.id: e for e in catalogue()}
    assert set(ROUTES) <= set(by_id)
    for e in by_id.values():
        name = contract.QUESTIONS[e.question].notebook
        nb = notebook(a, name, edits(e, {c.grade_id: c.source for c in a.cells(name)}[e.cell]))
        verdict = routes.judge_notebook(nb, [e.question]).get(e.question) if e.question in routes.RULES else None
        if e.id in ROUTES:
            assert verdict.status == "route" and verdict.first.family == ROUTES[e.id], (e.id, verdict)
        elif verdict is not None:
            assert verdict.status == "clean", (e.id, verdict.message())


def test_garbage_never_raises():
    rng = random.Random(9)
    garbage = ["(" * 5000, "x = " + "[" * 300 + "]" * 300, "\x00\xff", "def layer_norm(:", "%%bash\nrm -rf /",
               "layer_norm = " + " + ".join(["1"] * 20000), "exec(" * 200 + ")" * 200,
               _ln("return getattr(F, 'a' * 999999999)(x)"), _ln("return getattr(F, '%999999999s' % 'x')(x)"),
               "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(3000)), None, 42]
    for cells in ([g] for g in garbage):
        verdicts = routes.judge([GIVEN, *cells])
        assert set(verdicts) == set(routes.RULES)
    nested = "def layer_norm(x, g, b, eps=1e-5):\n    return " + "(" * 900 + "x" + ")" * 900
    assert routes.judge([GIVEN, nested], ["B1"])["B1"].status in ("clean", "unsure")


def test_judge_notebook_names_cells_by_their_grade_id():
    a = Assignment()
    e = next(e for e in catalogue() if e.id == "B1-group-norm-one-group")
    nb = notebook(a, "build", edits(e, {c.grade_id: c.source for c in a.cells("build")}["B1_code"]))
    verdict = routes.judge_notebook(nbformat.reads(nbformat.writes(nb), as_version=4), ["B1"])["B1"]
    assert verdict.first.where.startswith("cell B1_code, line ")


def test_nbgrader_is_told_which_test_cells_score_zero():
    a = Assignment()
    by_id = {e.id: e for e in catalogue()}
    source = {c.grade_id: c.source for c in a.cells("build")}
    nb = notebook(a, "build", {**edits(by_id["B3-calls-backward"], source["B3_code"]),
                               "B1_code": solved(source["B1_code"]) + "\nimport os\n" + _ln(
                                   "return getattr(torch, os.environ['OP'])(x)")})
    zero, notes = routes.judge_for_nbgrader(nb)
    assert set(zero) == {c.id for c in checks.all_checks() if c.question == "B3"}
    assert all(".backward" in message for message in zero.values())
    assert any(note.startswith("B3 not scored") for note in notes) and any("B1" in n and "getattr" in n for n in notes)
    assert routes.judge_for_nbgrader(notebook(a, "build")) == ({}, [])


# ---- the pipeline step: evidence from the child never decides ----------------------------------

def _submission(a, program, evidence=()):
    sub = Submission("s", a.source_dir)
    sub.programs["build"] = [GIVEN, *program]
    sub.cells["build"] = [Cell("code", source) for source in program]
    for c in checks.all_checks():
        if checks.notebook(c) == "build":
            sub.outcomes[c.id] = Outcome(True, evidence=tuple(evidence) if c.question == "B1" else ())
    return sub


def test_evidence_alone_flags_for_a_ta_and_changes_no_score():
    a = Assignment()
    sub = _submission(a, [HONEST_B1], evidence=("layer_norm",))
    step.run(sub, Env(a, sandbox=None))
    assert all(o.passed for o in sub.outcomes.values())
    assert any("B1" in f and "source shows no route" in f for f in sub.flags), sub.flags


def test_a_route_fails_every_check_of_its_question_only():
    a = Assignment()
    sub = _submission(a, [_ln("return F.group_norm(x.reshape(-1, 1, x.shape[-1]), 1).reshape(x.shape) * g + b")])
    step.run(sub, Env(a, sandbox=None))
    b1 = [c.id for c in checks.all_checks() if c.question == "B1"]
    assert b1 and all(not sub.outcomes[cid].passed and "F.group_norm" in sub.outcomes[cid].message for cid in b1)
    assert all(o.passed for cid, o in sub.outcomes.items() if cid not in b1)
    assert sub.diagnoses["B1"].id == "B1-group-norm-one-group"
    assert any("B1 not scored" in f for f in sub.flags)


# ---- end to end: course autograde in its sandbox ------------------------------------------------

def _b1(a, code):
    return {"B1_code": solved(next(c.source for c in a.cells("build") if c.grade_id == "B1_code")) + "\n\n" + code}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    a = Assignment()
    by_id = {e.id: e for e in catalogue()}
    build = {c.grade_id: c.source for c in a.cells("build")}
    root = tmp_path_factory.mktemp("routes")
    write_submission(root / "honest", a)
    for entry in ("B1-group-norm-one-group", "B1-dispatch-off", "B3-autograd-grad", "B6-borrows-encoder-forward"):
        write_submission(root / entry, a, edits=edits(by_id[entry], build[by_id[entry].cell]))
    write_submission(root / "unsure", a, edits=_b1(a, "import os\n\n" + _ln(
        "var, mu = getattr(torch, os.environ.get('STATS', 'var_mean'))(x, dim=-1, keepdim=True, correction=0)\n"
        "return g * (x - mu) / torch.sqrt(var + eps) + b")))
    return api.autograde("transformer-block", root, workers=2, timeout=30.0)["students"]


def test_routes_lose_their_question_in_course_autograde(graded):
    assert graded["honest"]["score"] == 100.0 and not graded["honest"]["flags"]
    for entry, lost in (("B1-group-norm-one-group", 8), ("B1-dispatch-off", 8), ("B3-autograd-grad", 10),
                        ("B6-borrows-encoder-forward", 10 + 8)):   # B7 inherits the borrowing class
        result = graded[entry]
        question = result["questions"][entry[:2]]
        assert question["score"] == 0.0, question
        assert ROUTES[question["misconception"]["id"]] == ROUTES[entry]   # named by the family of its route
        assert all("not scored" in row["message"] for row in question["checks"])
        assert result["score"] == 100.0 - lost, {q: v["score"] for q, v in result["questions"].items()}
        assert any(f"{entry[:2]} not scored" in flag for flag in result["flags"])


def test_an_uncertain_route_keeps_the_score_and_is_flagged(graded):
    result = graded["unsure"]
    assert result["score"] == 100.0
    assert any("could not rule out" in flag and "getattr" in flag for flag in result["flags"]), result["flags"]
    assert not any("not scored" in row["message"] for row in result["questions"]["B1"]["checks"])


def test_an_unsure_route_keeps_the_score_and_asks_a_ta_to_look(tmp_path):
    """A name built at run time: the grader cannot tell, so the score stands and the question is
    listed for a TA (results, and so the CSV and nbgrader's gradebook)."""
    from autograder.grader_side.assignment import Assignment, solved

    a = Assignment()
    build = {c.grade_id: c.source for c in a.cells("build")}
    unsure = solved(build["B1_code"]) + (
        "\nimport importlib\n\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n"
        "    name = bytes(int(c) for c in x.new_tensor([108, 97, 121, 101, 114, 95, 110, 111, 114, 109]).tolist())"
        ".decode()   # known only when it runs\n"
        "    f = getattr(importlib.import_module('torch.nn.functional'), name)\n"
        "    return f(x, x.shape[-1:], gamma, beta, eps)\n")
    write_submission(tmp_path / "class" / "unsure", a, edits={"B1_code": unsure})
    result = api.autograde("transformer-block", tmp_path / "class", workers=1)["students"]["unsure"]
    assert result["questions"]["B1"]["score"] == 8.0
    assert "B1" in result["needs_manual_grade"]
