"""Free-text answers graded as a careful human grader would: natural forms accepted, hedges and
wrong options rejected, anything else sent to a TA with the answer quoted (never a silent 0);
every argument of every contract function probed; IPython syntax in a cell harmless."""
from __future__ import annotations

import csv
import inspect

import pytest
import torch

import week4
import week4 as checks
import week4 as contract
from autograder import api
from autograder.grader_side.analysis import as_python
from autograder.grader_side.assignment import REPO, Assignment, solved
from autograder.grader_side.free_text import expect_answer, expect_parts, expect_sentence_pair, hedges
from autograder.grader_side.pipeline.program import PRELUDE
from autograder.reports.exports import write_csv
from autograder.student_side.checks import NeedsReview
from autograder.student_side.student import CheckFailed, Student, in_process
from autograder.tooling.sampleclass import trusted_namespace, write_submission
from week4 import catalogue, variants

pytestmark = pytest.mark.unit   # in this process: `make test-unit` (its sandboxed tests are marked)

blocks = week4.reference("blocks")
depth = week4.reference("depth")
positions = week4.reference("positions")

# The free-text questions and the names that hold their answers.
FREE_TEXT = {"C1": ("q1_sentences",), "C2": ("q2_residual_cousin",), "C3": ("q3_most_weights",),
             "C6": ("q6_decoder_sublayers", "q6_gpt_drops"), "C7": ("q7_2017_paper", "q7_modern_default")}


def _verdict(fn, *args) -> str:
    try:
        fn(*args)
    except NeedsReview as exc:
        return "review " + exc.answer
    except CheckFailed:
        return "rejected"
    return "accepted"


C2 = (depth.RESIDUAL_COUSIN, depth.RESIDUAL_COUSIN_WRONG, "q2_residual_cousin")


@pytest.mark.parametrize("answer, verdict", [
    ("LSTM", "accepted"),
    ("It is the LSTM.", "accepted"),
    ("long short-term memory", "accepted"),
    ("The LSTM, because its cell state is updated by addition.", "accepted"),
    ("The LSTM, not a plain RNN", "accepted"),                 # a wrong option denied
    ("LSTM or RNN", "rejected"),                               # a hedge
    ("LSTM/RNN", "rejected"),
    ("LSTM or GRU", "review 'LSTM or GRU'"),                   # the right one beside an unknown one
    ("either the LSTM or the GRU", "review 'either the LSTM or the GRU'"),
    ("LSTM/GRU", "review 'LSTM/GRU'"),
    ("a plain RNN", "rejected"),
    ("ResNet", "rejected"),
    ("GRU", "review 'GRU'"),                                   # neither right nor wrong: a TA decides
    ("the LSTM (a kind of RNN)", "review 'the LSTM (a kind of RNN)'"),
    ("not the LSTM", "review 'not the LSTM'"),
])
def test_a_single_answer_is_accepted_rejected_or_sent_to_a_ta(answer, verdict):
    assert _verdict(expect_answer, answer, *C2) == verdict


params = week4.reference("params")
C3 = (params.MOST_WEIGHTS, params.MOST_WEIGHTS_WRONG, "q3_most_weights")
PAPER = (blocks.PAPER_2017, blocks.MODERN_DEFAULT | blocks.NOT_A_PLACEMENT, "q7_2017_paper")
MODERN = (blocks.MODERN_DEFAULT, blocks.PAPER_2017 | blocks.NOT_A_PLACEMENT, "q7_modern_default")
GPT = (blocks.GPT_DROPS, set().union(blocks.NOT_A_SUBLAYER, *(v for k, v in blocks.DECODER_SUBLAYERS.items()
                                                              if k != "cross attention")), "q6_gpt_drops")
# Answers that name the right option and say something else of it than that it is the answer.
SAYS_OTHERWISE = [
    (C2, "I don't think it is the LSTM"), (C2, "LSTM & GRU"), (C2, "LSTM. Nope."), (C2, "non-LSTM"),
    (C2, "~~LSTM~~ GRU"),
    (C2, "LSTM \u2260 answer"), (C2, "hardly the LSTM"), (C2, "LSTM + GRU"), (C2, "LSTM with GRU"),
    (C2, "GRU beats LSTM"), (C2, "LSTM... nah"), (C2, "LSTM lol jk"), (C2, "\u274c LSTM"), (C2, "LSTM ain't it"),
    (C2, "the LSTM's successor"), (C2, "a cousin of LSTM"), (C2, "It's the highway network; LSTM came later"),
    (C3, "the MLP holds fewer"), (C3, "MLP is smaller"), (C3, "the MLP has the fewest weights"),
    (C3, "MLP is negligible"),
    (GPT, "GPT keeps cross-attention"), (GPT, "cross-attention is kept"), (GPT, "cross-attention stays"),
    (GPT, "GPT drops nothing; cross-attention is kept"), (GPT, "GPT uses cross-attention heavily"),
    (PAPER, "post-norm came later"), (PAPER, "post-norm is a myth"), (PAPER, "people think post-norm"),
    (PAPER, "post-norm only appeared in 2020"),
    (PAPER, "LayerNorm(x + Sublayer(x)) came later, the paper used the other one"),
    (MODERN, "pre-norm is obsolete"), (MODERN, "pre-norm hasn't caught on"),
    (MODERN, "pre-norm is what the 2017 paper used"),
    (MODERN, "pre-norm used to be the default"), (MODERN, "pre-norm in 2017, something else now"),
]


@pytest.mark.parametrize("question, answer", [
    (C3, "anything but MLP"), (C3, "everything except the MLP"), (C3, "other than the MLP"),
    (C3, "the opposite of the MLP"), (C3, "MLP no"), (C3, "MLP (not sure)"),
    (PAPER, "post-norm? no, pre-norm"), (PAPER, "post-norm is wrong"), (PAPER, "post-norm (not really)"),
    (PAPER, "post-norm, no wait, pre-norm"), (PAPER, "post-norm (no, pre-norm)"), (PAPER, "post-norm, it's wrong"),
    (MODERN, "pre-norm is wrong"), (MODERN, "pre-norm (not really)"),
    (C2, "LSTM? GRU?"), (C2, "GRU? LSTM?"), (C2, "LSTM and GRU"), (C2, "LSTM vs GRU"), (C2, "LSTM; GRU"),
    (C2, "LSTM (not sure, GRU?)"), (C2, "GRU (LSTM)"), (C2, "GRU, LSTM"), *SAYS_OTHERWISE,
], ids=lambda v: v if isinstance(v, str) else v[2])
def test_a_right_option_denied_doubted_taken_back_or_listed_with_another_earns_nothing_unread(question, answer):
    """A careful TA reads what is said about the right option, not only that it is there: each of
    these names it, and each goes to a TA (never full marks from the grader alone)."""
    accepted, wrong, what = question
    verdict = _verdict(lambda a: expect_answer(a, accepted, wrong, what, formulas=blocks.PLACEMENT_FORMULAS), answer)
    assert verdict.startswith("review") or verdict == "rejected", verdict


@pytest.mark.parametrize("question, answer", [
    (C3, "The MLP (feed-forward) sublayer"), (C3, "MLP, not attention"), (C3, "the MLP: 8d^2 weights per block"),
    (PAPER, "norm_first=False"), (PAPER, "post-norm, not pre-norm"), (PAPER, "LayerNorm(x + Sublayer(x))"),
    (MODERN, "pre-norm: the sublayer reads a normalized copy, the stream is never rescaled"),
    (C2, "LSTM: its cell state is updated by gated addition, a highway for the gradient"),
    (C2, "LSTM (Hochreiter & Schmidhuber, 1997)"), (MODERN, "pre-norm (GPT-2, Llama)"),
    (GPT, "Cross-attention, since GPT has no encoder to attend to."),
    (GPT, "The cross-attention (there is no encoder output)"),
], ids=lambda v: v if isinstance(v, str) else v[2])
def test_an_explanation_after_the_right_option_keeps_its_marks(question, answer):
    accepted, wrong, what = question
    assert _verdict(lambda a: expect_answer(a, accepted, wrong, what, formulas=blocks.PLACEMENT_FORMULAS),
                    answer) == "accepted"


@pytest.mark.parametrize("question, answer", [
    (MODERN, "RMSNorm first"), (MODERN, "pre-sublayer layer norm"), (MODERN, "pre-norm, maybe with RMSNorm"),
    (MODERN, "pre-norm, either LayerNorm or RMSNorm"),
    (C2, "LSTM (long short-term memory), possibly the most famous RNN"),
], ids=lambda v: v if isinstance(v, str) else v[2])
def test_a_right_answer_with_more_in_it_goes_to_a_ta_not_to_zero(question, answer):
    """A hedge or a wrong option's name in the explanation, or the right placement said in other
    words, is read by a TA: the grader alone never gives it 0."""
    accepted, wrong, what = question
    verdict = _verdict(lambda a: expect_answer(a, accepted, wrong, what, formulas=blocks.PLACEMENT_FORMULAS), answer)
    assert verdict.startswith("review"), verdict


def test_a_hedge_is_reviewed_with_the_reason_that_it_hedges():
    for answer in ("LSTM or GRU", "LSTM/GRU", "maybe the LSTM"):
        with pytest.raises(NeedsReview, match=r"\(it hedges between options\)"):
            expect_answer(answer, *C2)
    with pytest.raises(CheckFailed, match="your answer hedges between options: give one"):
        expect_answer("LSTM or RNN", *C2)


@pytest.mark.parametrize("text, hedged", [
    ("LSTM/GRU", True), ("pre / post", True), ("LSTM or GRU", True), ("1/-1", False), ("3/1", False),
    ("512 / 256", False), ("2:1", False), ("the LSTM, a 1997 design", False),
])
def test_a_slash_between_numbers_is_not_a_hedge(text, hedged):
    assert hedges(text) is hedged


C7_PAPER = (blocks.PAPER_2017, blocks.MODERN_DEFAULT | blocks.NOT_A_PLACEMENT, "q7_2017_paper",
            blocks.PLACEMENT_FORMULAS)
C7_MODERN = (blocks.MODERN_DEFAULT, blocks.PAPER_2017 | blocks.NOT_A_PLACEMENT, "q7_modern_default",
             blocks.PLACEMENT_FORMULAS)


@pytest.mark.parametrize("answer, paper, modern", [
    ("LayerNorm(x + Sublayer(x))", "accepted", "rejected"),           # the 2017 paper's own formula
    ("x + Sublayer(LayerNorm(x))", "rejected", "accepted"),
    ("LN(x+F(x))", "accepted", "rejected"),
    ("x <- Norm(x + F(x))", "accepted", "rejected"),
    ("x_{l+1} = LN(x_l + F(x_l))", "accepted", "rejected"),
    ("LayerNorm(x + Dropout(Sublayer(x)))", "accepted", "rejected"),
    ("Norm(Sublayer(x) + x)", "accepted", "rejected"),
    ("x = x + F(LN(x))", "rejected", "accepted"),
    ("h + Attention(RMSNorm(h))", "rejected", "accepted"),
    ("post-norm: LayerNorm(x + Sublayer(x))", "accepted", "rejected"),
    ("Add & Norm", "accepted", "rejected"),                           # the paper's figure label
    ("LayerNorm(x + Sublayer(x)) or x + Sublayer(LayerNorm(x))", "rejected", "rejected"),   # a hedge
    ("x + LN(F(x))", "review 'x + LN(F(x))'", "review 'x + LN(F(x))'"),     # neither placement: a TA reads it
])
def test_the_papers_formulas_name_their_placement(answer, paper, modern):
    assert _verdict(expect_answer, answer, *C7_PAPER) == paper
    assert _verdict(expect_answer, answer, *C7_MODERN) == modern


def test_an_answer_that_is_not_text_is_rejected_not_reviewed():
    for value in (None, 3, "", "   ", ["LSTM"]):
        assert _verdict(expect_answer, value, *C2) == "rejected", value


def test_the_longer_phrase_wins_where_two_options_overlap():
    wrong = blocks.MODERN_DEFAULT | blocks.NOT_A_PLACEMENT
    assert _verdict(expect_answer, "norm_first=False", blocks.PAPER_2017, wrong, "q") == "accepted"
    assert _verdict(expect_answer, "post layer norm", blocks.PAPER_2017, wrong, "q") == "accepted"
    assert _verdict(expect_answer, "RMSNorm", blocks.PAPER_2017, wrong, "q") == "rejected"


def _parts(value):
    return expect_parts(value, blocks.DECODER_SUBLAYERS, blocks.NOT_A_SUBLAYER, blocks.ATTENTION_LABELS, "q6")


def test_the_papers_bare_attention_label_is_resolved_by_elimination():
    labels = _parts(["Masked Multi-Head Attention", "Multi-Head Attention", "Feed Forward"])
    assert labels == {"Masked Multi-Head Attention": "masked self attention",
                      "Multi-Head Attention": "cross attention", "Feed Forward": "feed forward"}
    # with the masked one missing, the bare label cannot be placed: it is rejected, not guessed
    assert _verdict(_parts, ["Multi-Head Attention", "Multi-Head Attention", "Feed Forward"]) == "rejected"
    assert _verdict(_parts, ["masked self-attention", "layer norm", "MLP"]) == "rejected"
    assert _verdict(_parts, ["masked self-attention", "cross-attention", "a big matrix"]) == \
        "review 'masked self-attention / cross-attention / a big matrix'"


def test_sentences_with_the_same_words_in_another_order_go_to_a_ta():
    pair = positions.SENTENCES
    assert _verdict(expect_sentence_pair, ["The dog bites the man.", "A man bites a dog!"], pair, "q") == "accepted"
    assert _verdict(expect_sentence_pair, ["dog bites man", "man is bitten by dog"], pair, "q") == "rejected"
    assert _verdict(expect_sentence_pair, ["cat eats fish", "fish eats cat"], pair, "q").startswith("review")


def test_six_correct_phrasings_per_free_text_question_are_catalogued():
    """Each keeps full marks in the in-process run (test_misconceptions_inprocess) and in both
    graders (test_mutants)."""
    for qid, names in FREE_TEXT.items():
        phrased = [v for v in variants() if v.question == qid and any(f"{n} =" in v.code for n in names)]
        assert len(phrased) >= 6, (qid, [v.id for v in phrased])


@pytest.mark.parametrize("entry", [e for e in catalogue() if e.question in FREE_TEXT
                                   and any(f"\n{n} =" in e.code for n in FREE_TEXT[e.question])],
                         ids=lambda e: e.id)
def test_a_catalogued_wrong_free_text_answer_is_rejected_outright(entry):
    """Known wrong answers never cost a TA's time: they are rejected, not sent to review."""
    ns = {"__name__": "__main__", "torch": torch}
    exec(entry.code, ns)
    verdicts = []
    for c in checks.all_checks():
        if c.question == entry.question and set(checks.uses(c)) & set(ns):
            verdicts.append(_verdict(c.run, Student(in_process(ns))))
    assert "rejected" in verdicts and not any(v.startswith("review") for v in verdicts), verdicts


# ---- every argument of every contract function is probed ----------------------------------------

# (function, argument) -> the catalogued wrong answer that ignores the argument or hard-codes its
# default (for the inputs that pose the problem, x, f, d_model..., which no answer can ignore: one
# that mishandles them); test_mutants proves each loses points in both graders.
IGNORES_ARGUMENT = {
    ("permutes_with_input", "f"): "C1-shapes-only",
    ("permutes_with_input", "X"): "C1-shapes-only",
    ("permutes_with_input", "perm"): "C1-unpermuted-output",
    ("permutes_with_input", "atol"): "C1-atol-ignored",
    ("sinusoidal_positions", "n"): "C1-assert-for-odd-width",
    ("sinusoidal_positions", "d"): "C1-frequency-per-column",
    ("attention_weights", "d"): "C4-three-attention-matrices",
    ("mlp_weights", "d"): "C4-mlp-one-matrix",
    ("mlp_weights", "d_ff"): "C4-mlp-ignores-d-ff",
    ("layer_norm", "x"): "B1-normalizes-over-all-dims",
    ("layer_norm", "gamma"): "B1-no-gamma",
    ("layer_norm", "beta"): "B1-no-beta",
    ("layer_norm", "eps"): "B1-eps-hard-coded",
    ("rms_norm", "x"): "B2-centers",
    ("rms_norm", "gamma"): "B2-no-gamma",
    ("rms_norm", "eps"): "B2-eps-hard-coded",
    ("layer_norm_backward", "grad_out"): "B3-grad-out-ignored",
    ("layer_norm_backward", "x"): "B3-grad-gamma-uses-x",
    ("layer_norm_backward", "gamma"): "B3-no-gamma-in-g",
    ("layer_norm_backward", "eps"): "B3-eps-hard-coded",
    ("MLP", "d_model"): "B4-default-d-ff-equals-d",
    ("MLP", "d_ff"): "B4-d-ff-ignored",
    ("MLP", "activation"): "B4-gelu-always",
    ("SwiGLU", "d_model"): "B5-down-projection-shape",
    ("SwiGLU", "d_ff"): "B5-d-ff-ignored",
    ("swiglu_hidden_dim", "d_model"): "B5-unrounded-width",
    ("swiglu_hidden_dim", "multiple_of"): "B5-multiple-of-ignored",
    ("PreNormBlock.forward", "x"): "B6-residual-replaces",
    ("PreNormBlock.forward", "causal"): "B6-always-causal",
    ("PostNormBlock.forward", "x"): "B7-residual-replaces",
    ("PostNormBlock.forward", "causal"): "B7-always-causal",
    ("count_parameters", "vocab_size"): "B8-gpt2-vocabulary",
    ("count_parameters", "max_positions"): "B8-no-position-table",
    ("count_parameters", "d_model"): "B8-gpt2-width",
    ("count_parameters", "n_layers"): "B8-one-block",
    ("count_parameters", "d_ff"): "B8-d-ff-as-4d",
    ("count_parameters", "norm"): "B8-layernorm-always",
    ("count_parameters", "mlp"): "B8-swiglu-two-matrices",
    ("count_parameters", "bias"): "B8-biases-always",
    ("count_parameters", "tie_embeddings"): "B8-tied-counted-twice",
    ("stack_forward", "sublayers"): "B9-reverse-order",
    ("stack_forward", "x"): "B9-adds-stack-input",
    ("stack_forward", "residual"): "B9-always-residual",
    ("residual_jacobian", "f"): "B9-jacobian-without-identity",
    ("residual_jacobian", "x"): "B9-ones-instead-of-identity",
}
# The blocks' __init__ and helpers are given, not written by students; count_parameters takes one
# dict whose keys are its real arguments.
B8_CONFIG_KEYS = {"vocab_size", "max_positions", "d_model", "n_layers", "d_ff", "norm", "mlp", "bias",
                  "tie_embeddings"}


def test_every_argument_of_every_contract_function_has_a_catalogued_mutant_that_ignores_it():
    a = Assignment("transformer-block", REPO)
    arguments = set()
    for notebook in a.notebooks:
        ns = trusted_namespace(a, notebook)
        for q in contract.QUESTIONS.values():
            if q.notebook != notebook:
                continue
            for name in q.names:
                obj = ns[name]
                if name in ("PreNormBlock", "PostNormBlock"):
                    obj, name = obj.forward, f"{name}.forward"
                elif inspect.isclass(obj):
                    obj = obj.__init__
                elif not callable(obj):
                    continue
                params = [p for p in inspect.signature(obj).parameters if p != "self"]
                if name == "count_parameters":
                    params = sorted(B8_CONFIG_KEYS)
                arguments |= {(name, p) for p in params}
    assert arguments == set(IGNORES_ARGUMENT)
    known = {e.id for e in catalogue()}
    assert set(IGNORES_ARGUMENT.values()) <= known, set(IGNORES_ARGUMENT.values()) - known


# ---- IPython syntax, and a review all the way to the CSV -------------------------------------------

def test_ipython_syntax_becomes_harmless_python():
    ns = {"__name__": "__main__"}
    exec(PRELUDE, ns)
    for cell in ("files = !ls", "layer_norm?", "%time timed = 1 + 1", "%%time\ncell_timed = 3\n", "!pip install x",
                 "%matplotlib inline\nafter = 4"):
        exec(compile(as_python(cell), "<cell>", "exec"), ns)
    assert ns["files"] == [] and ns["timed"] == 2 and ns["cell_timed"] == 3 and ns["after"] == 4
    plain = "s = ('%d'\n% 4)  # what?\n"
    assert as_python(plain).rstrip("\n") == plain.rstrip("\n")


@pytest.mark.sandboxed
def test_a_review_and_ipython_syntax_through_course_autograde(tmp_path):
    a = Assignment("transformer-block", REPO)
    source = {c.grade_id: c.source for nb in a.notebooks for c in a.cells(nb)}
    # The student's C2 answer is one the grader cannot place; their B1 cell binds layer_norm only
    # through %time, next to a shell line and a help line: both must work as in Jupyter. Their B2
    # cell has a syntax error, which is what B2's checks report (not a missing rms_norm).
    b1 = (solved(source["B1_code"]).replace("def layer_norm(", "def _layer_norm(")
          + "\nfiles = !ls\n_layer_norm?\n%time layer_norm = _layer_norm\n")
    b2 = solved(source["B2_code"]).replace("keepdim=True)", "keepdim=True", 1)
    write_submission(tmp_path / "subs" / "ta", a, edits={
        "C2_code": 'q2_residual_cousin = "the GRU"\n', "B1_code": b1, "B2_code": b2})
    results = api.autograde(a.name, tmp_path / "subs", workers=1)
    mine = results["students"]["ta"]
    assert mine["score"] == 93.0, {q: v["score"] for q, v in mine["questions"].items()}
    for row in mine["questions"]["B2"]["checks"]:
        assert row["message"].startswith("`rms_norm` is not defined: the cell that defines it (B2_code) stopped with "
                                         "SyntaxError: "), row["message"]
        assert "<cell" not in row["message"] and "Fix that cell and run it again" in row["message"]
    c2 = mine["questions"]["C2"]
    (row,) = c2["checks"]
    assert row["score"] == 0.0 and not row["passed"] and row["review"] == "'the GRU'"
    assert "awaiting review" in c2["feedback"][0] and "'the GRU'" in c2["feedback"][0]
    assert mine["needs_manual_grade"] == ["C2", "C8"]
    assert mine["questions"]["B1"]["score"] == 8.0
    write_csv(results, tmp_path / "grades.csv")
    (line,) = list(csv.DictReader(open(tmp_path / "grades.csv")))
    assert line["needs_manual_grade"] == "C2 (C2_answer: review 'the GRU') C8"
