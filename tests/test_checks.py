"""The check registry: points add up to the contract, the course's solutions pass every check,
the untouched release passes none, and visible checks need no reference."""
import re
from fractions import Fraction

import numpy as np
import pytest
import torch

import week4
import week4 as checks
import week4 as contract
from autograder.grader_side.in_kernel import hidden_check as run_check
from autograder.student_side.student import CheckFailed
from autograder.tooling.sampleclass import trusted_namespace
from week4 import ready


def test_points_add_up_to_the_contract():
    totals = {}
    for c in checks.all_checks():
        totals[c.question] = totals.get(c.question, 0) + c.points
    for qid, q in contract.QUESTIONS.items():
        assert totals.get(qid, 0) == (0 if q.manual else q.points), qid
    assert sum(totals.values()) == 100


def test_every_check_is_named_for_its_question():
    for c in checks.all_checks():
        assert c.id.startswith(c.question + "_") and c.says and checks.uses(c)
        assert set(checks.uses(c)) <= set(contract.QUESTIONS[c.question].names)


@pytest.fixture(scope="module")
def solved(assignment):
    return {name: trusted_namespace(assignment, name) for name in assignment.notebooks}


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_the_solution_passes(check, solved):
    run_check(week4.NAME, check.id, solved[checks.notebook(check)])
    ready(*checks.uses(check), ns=solved[checks.notebook(check)])


@pytest.fixture(scope="module")
def released(assignment):
    """The release as a student receives it: every stub still raising NotImplementedError."""
    from autograder.grader_side.assignment import notebook

    spaces = {}
    for name in assignment.notebooks:
        ns = {"__name__": "__main__"}
        for cell in notebook(assignment, name, untouched=True).cells:
            if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade"):
                try:
                    exec(cell.source.replace("from student_side import check, ready", ""), ns)
                except NotImplementedError:
                    pass
        spaces[name] = ns
    return spaces


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_the_release_fails_with_a_pointer(check, released):
    with pytest.raises(CheckFailed, match="TODO box|is not defined|NotImplementedError"):
        run_check(week4.NAME, check.id, released[checks.notebook(check)])
    with pytest.raises(CheckFailed, match="TODO box|is not defined"):
        ready(*checks.uses(check), ns=released[checks.notebook(check)])


def _requested(check, ns: dict) -> list[str]:
    """The student's names ``check`` asks the notebook for, in order, when it runs on ``ns``."""
    from autograder.student_side.student import Student, in_process

    send, asked = in_process(ns), []

    def recording(header, blobs):
        asked.append(header["name"])
        return send(header, blobs)
    try:
        check.run(Student(recording))
    except CheckFailed:
        pass
    return list(dict.fromkeys(asked))


def _named(message: str) -> str:
    found = re.search(r"`(\w+)`", message)
    assert found, f"the message names no name: {message!r}"
    return found.group(1)


@pytest.mark.parametrize("check", checks.all_checks(), ids=lambda c: c.id)
def test_on_the_release_a_check_names_the_first_name_it_needs(check, solved, released):
    """The untouched release: the check, and its hidden cell's ready(...), name the same name, one
    the check asks the notebook for when it grades (not another name of the question)."""
    ns = released[checks.notebook(check)]
    with pytest.raises(CheckFailed) as failed:
        run_check(week4.NAME, check.id, ns)
    with pytest.raises(CheckFailed) as not_ready:
        ready(*checks.uses(check), ns=ns)
    first = _requested(check, ns)[-1]            # the request it stopped on
    assert _named(str(failed.value)) == _named(str(not_ready.value)) == first
    assert first in _requested(check, solved[checks.notebook(check)])
    assert set(_requested(check, solved[checks.notebook(check)])) <= set(checks.uses(check))


def test_a_name_a_check_can_do_without_is_not_asked_for(solved, capsys):
    """C6_gpt_drops reads q6_decoder_sublayers only for a bare "Multi-Head Attention", and goes on
    without it: a notebook that has only q6_gpt_drops is ready for it, and passes it."""
    assert checks.uses(checks.get("C6_gpt_drops")) == ("q6_gpt_drops",)
    ns = _answers(q6_gpt_drops=solved["concepts"]["q6_gpt_drops"])
    ready(*checks.uses(checks.get("C6_gpt_drops")), ns=ns)
    run_check(week4.NAME, "C6_gpt_drops", ns)
    assert checks.uses(checks.get("C1_permutes_atol")) == ("permutes_with_input",)   # through its helpers


# The lesson's "where students get stuck" points, as catalogued wrong answers, and what the visible
# check they fail must say: a student who runs the release top to bottom is told, before grading.
STUCK_POINTS = {
    "B1-sample-variance": ("B1_worked_example", "you divided by d - 1"),
    "B4-tanh-gelu": ("B4_structure_example", "tanh approximation of GELU"),
    "B6-residual-replaces": ("B6_residual", "it never replaces x"),
    "B6-adds-normalized-input": ("B6_residual", "not to the normalized copy"),
    "B7-residual-replaces": ("B7_residual", "it never replaces x"),
    "B7-pre-norm-wiring": ("B7_residual", "as a pre-norm block does"),
    "B7-normalizes-sublayer-output": ("B7_residual", "post-norm normalizes the sum"),
    "B9-residual-replaces": ("B9_stack_example", "residual=True"),
}


@pytest.mark.parametrize("entry_id", [e for e, (_, says) in STUCK_POINTS.items() if says])
def test_a_stuck_point_fails_a_visible_check_that_names_it(entry_id, assignment):
    from autograder.grader_side.misconceptions import edits
    from week4 import catalogue

    entry = next(e for e in catalogue() if e.id == entry_id)
    check_id, says = STUCK_POINTS[entry_id]
    assert not checks.get(check_id).hidden
    name = checks.notebook(checks.get(check_id))
    source = {c.grade_id: c.source for c in assignment.cells(name)}
    ns = trusted_namespace(assignment, name, edits(entry, source[entry.cell]))
    with pytest.raises(CheckFailed, match=says):
        run_check(week4.NAME, check_id, ns)


# ---- every right answer in any natural form earns its points -----------------------------------

def _outcome(check_id: str, ns: dict) -> str:
    """'passed', 'review', or the failure message of one check on ``ns``."""
    from autograder.student_side.checks import NeedsReview

    try:
        run_check(week4.NAME, check_id, ns)
    except NeedsReview:
        return "review"
    except CheckFailed as exc:
        return str(exc)
    return "passed"


def _answers(**names) -> dict:
    return {"__name__": "__main__", **names}


@pytest.mark.parametrize("ratio", [
    2, 2.0, np.float32(2.0), np.int64(2), torch.tensor(2.0), torch.tensor(2), torch.tensor(2.0, dtype=torch.float64),
    Fraction(512, 256), "2", "2.0", " 2 ", "512/256", "2:1", "2, since the MLP has 8 d^2 weights and attention 4 d^2",
], ids=repr)
def test_a_ratio_in_any_number_form_earns_its_points(ratio):
    assert _outcome("C4_ratio", _answers(q4_ratio=ratio)) == "passed"


@pytest.mark.parametrize("ratio, outcome", [
    (3, "not the MLP / attention ratio"),
    ("0.5", "not the MLP / attention ratio"),
    (torch.tensor(0.5), "not the MLP / attention ratio"),
    (torch.tensor([2.0]), "give one number, not a tensor of shape (1,)"),
    ([2.0], "give a number"),
    (True, "give a number"),
    ("two", "review"),                     # text the grader cannot read as a number: a TA decides
    ("2 or 3", "review"),                  # a leading number before a hedge is not taken
], ids=repr)
def test_a_ratio_that_is_wrong_or_unreadable_does_not(ratio, outcome):
    got = _outcome("C4_ratio", _answers(q4_ratio=ratio))
    assert got == outcome if outcome == "review" else outcome in got


@pytest.mark.parametrize("pair", [
    [1, -1], (1.0, -1.0), torch.tensor([1.0, -1.0]), np.array([1.0, -1.0]), torch.tensor([[1.0, -1.0]]),
    list(torch.tensor([1.0, -1.0])), [np.float32(1), torch.tensor(-1.0)], "[1, -1]", "1, -1", "(1.0, -1.0)", "1 -1",
], ids=repr)
def test_two_numbers_in_any_form_earn_their_points(pair):
    assert _outcome("C5_answer", _answers(q5_layer_norm_u=pair)) == "passed"


@pytest.mark.parametrize("pair, outcome", [
    ([1, 1], "off"), ("[1, 1]", "off"), ([1, -1, 0], "exactly 2 numbers"), (torch.ones(3), "this tensor holds 3"),
    (["1", "-1"], "as numbers, not as text"), ("1/-1", "review"), ("u = [1, -1]", "review"),
], ids=repr)
def test_two_numbers_that_are_wrong_or_unreadable_do_not(pair, outcome):
    got = _outcome("C5_answer", _answers(q5_layer_norm_u=pair))
    assert got == outcome if outcome == "review" else outcome in got


def test_counts_as_numpy_or_0d_int_tensors_earn_their_points_floats_do_not():
    as_tensors = _answers(attention_weights=lambda d: torch.tensor(4 * d * d),
                          mlp_weights=lambda d, d_ff=None: np.int64(2 * d * (d_ff or 4 * d)))
    for check_id in ("C4_worked_example", "C4_counts"):
        assert _outcome(check_id, as_tensors) == "passed"
    as_floats = _answers(attention_weights=lambda d: 4.0 * d * d,
                         mlp_weights=lambda d, d_ff=None: 2 * d * (d_ff or 4 * d))
    assert "must be an int, got a float" in _outcome("C4_counts", as_floats)


def test_ready_says_when_an_answer_cannot_be_graded_in_its_form_never_whether_it_is_right(capsys):
    ready("q4_ratio", ns=_answers(q4_ratio=3.5))                       # wrong, but gradable
    ready("q4_ratio", "q5_layer_norm_u", ns=_answers(q4_ratio=torch.tensor(2.0), q5_layer_norm_u="[3, 1]"))
    ready("q2_residual_cousin", ns=_answers(q2_residual_cousin="the GRU"))   # a TA's question, not a form problem
    assert capsys.readouterr().out.count("written") == 3
    for ns, says in [(_answers(q4_ratio=[2.0]), "cannot grade `q4_ratio` in this form"),
                     (_answers(q4_ratio=torch.ones(2)), "not a tensor of shape (2,)"),
                     (_answers(q4_ratio="two"), "cannot read it as one number"),
                     (_answers(q5_layer_norm_u=[1.0]), "exactly 2 numbers"),
                     (_answers(q1_sentences="dog bites man, man bites dog"), "exactly 2 strings"),
                     (_answers(q6_decoder_sublayers=["masked self-attention", "cross-attention"]), "exactly 3 strings"),
                     (_answers(q7_2017_paper=None), "answer with a short string"),
                     (_answers(q4_ratio=object()), "cannot send a object"),
                     (_answers(attention_weights=256), "it is a int, and the checks call it")]:
        with pytest.raises(CheckFailed, match=re.escape(says)):
            ready(*[n for n in ns if n != "__name__"], ns=ns)


def test_numbers_of_other_python_types_travel_as_plain_numbers():
    import enum

    from autograder.student_side import wire

    class Width(enum.IntEnum):
        D = 8

    header, blobs = wire.pack([Fraction(1, 4), Width.D, np.float32(0.5), torch.tensor(2.0)])
    got = wire.unpack(header, blobs)
    assert got[:3] == [0.25, 8, 0.5] and type(got[1]) is int
    assert isinstance(got[3], np.ndarray) and got[3].shape == ()


# ---- modules that also hold their submodules in another container -------------------------------

def _build_ns(code: str) -> dict:
    ns = {"__name__": "__main__"}
    exec("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + code, ns)
    return ns


ALSO_IN_A_SEQUENTIAL = '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        if activation not in ("gelu", "relu"):
            raise ValueError(activation)
        d_ff = d_ff or 4 * d_model
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(self.linear1, nn.GELU() if activation == "gelu" else nn.ReLU(), self.linear2)
        self.register_buffer("calls", torch.zeros(()))      # a buffer of its own: keeps its value

    def forward(self, x):
        return self.net(x)
'''


def test_an_mlp_whose_layers_are_also_in_a_sequential_earns_every_point():
    ns = _build_ns(ALSO_IN_A_SEQUENTIAL)
    assert {c.id: _outcome(c.id, ns) for c in checks.all_checks() if c.question == "B4"} == {
        c.id: "passed" for c in checks.all_checks() if c.question == "B4"}


def test_a_container_of_new_layers_is_still_missing_weights():
    ns = _build_ns(ALSO_IN_A_SEQUENTIAL.replace("nn.Sequential(self.linear1,",
                                                "nn.Sequential(nn.Linear(d_model, d_ff),"))
    hidden, visible = _outcome("B4_gelu", ns), _outcome("B4_structure_example", ns)
    assert "missing: parameters of its own that the weights do not name, listed by the visible checks" in hidden
    assert "net.0" not in hidden      # the module's own names: only where the input is visible
    assert "should have parameters" in visible and "'net.0.weight'" in visible, visible


def test_swiglu_projections_also_in_a_module_list_earn_every_point():
    ns = _build_ns('''
class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.projections = nn.ModuleList([nn.Linear(d_model, d_ff, bias=False), nn.Linear(d_model, d_ff, bias=False),
                                          nn.Linear(d_ff, d_model, bias=False)])
        self.w1, self.w3, self.w2 = self.projections       # registered after the list

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def swiglu_hidden_dim(d_model, multiple_of=256):
    return -(-(8 * d_model // 3) // multiple_of) * multiple_of
''')
    assert all(_outcome(c.id, ns) == "passed" for c in checks.all_checks() if c.question == "B5")
    tied = _build_ns('''
class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w3 = self.w1                                   # one tensor for two projections: one is missing
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
''')
    assert "should have parameters" in _outcome("B5_structure", tied)


# ---- probes of what the TODO boxes ask, each with the catalogued answer that fails it -----------

PROBES = {
    "B4-unknown-activation-accepted": ("B4_unknown_activation", "should raise ValueError (it ran without complaint)"),
    "B4-asserts-activation": ("B4_unknown_activation", "(it raised AssertionError)"),
    "B5-rounds-hidden-to-nearest": ("B5_hidden_dim_random", "which truncates"),
    "B5-ceil-hidden": ("B5_hidden_dim_random", "which truncates"),
    "B5-float-width": ("B5_hidden_dim_example", "must be an int, got a float"),
    "C1-allclose-default-rtol": ("C1_permutes_atol", "rtol=0"),
    "C1-float64-table": ("C1_positions_random", "float32"),
    "C4-float-counts": ("C4_worked_example", "must be an int, got a float"),
}


@pytest.mark.parametrize("entry_id", PROBES)
def test_a_probe_fails_its_catalogued_wrong_answer_and_only_that_check(entry_id):
    from autograder.grader_side.assignment import REPO, Assignment
    from autograder.grader_side.misconceptions import edits
    from week4 import catalogue

    a = Assignment("transformer-block", REPO)
    entry = next(e for e in catalogue() if e.id == entry_id)
    check_id, says = PROBES[entry_id]
    name = contract.QUESTIONS[entry.question].notebook
    ns = trusted_namespace(a, name, edits(entry, {c.grade_id: c.source for c in a.cells(name)}[entry.cell]))
    assert says in _outcome(check_id, ns)
    assert _outcome(check_id, trusted_namespace(a, name)) == "passed"


# ---- a syntax error is reported as that cell's error ---------------------------------------------

def test_a_syntax_error_in_the_defining_cell_is_named_in_the_notebook():
    broken = "def layer_norm(x, gamma, beta, eps=1e-5):\n    return (x - x.mean(-1, keepdim=True)\n"
    ns = _answers(In=["", broken, "layer_norm(1, 2, 3)"])
    for run in (lambda: ready("layer_norm", ns=ns), lambda: run_check(week4.NAME, "B1_worked_example", ns)):
        with pytest.raises(CheckFailed, match=r"the cell that defines it has a syntax error \(line 2: "):
            run()
    with pytest.raises(CheckFailed, match="is not defined yet"):     # no such cell: the usual pointer
        ready("layer_norm", ns=_answers(In=["", "x = 1"]))
