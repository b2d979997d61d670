"""Checks for `params`: where the weights sit (C3), attention vs MLP weights (C4) and the full
parameter budget of a decoder-only model (B8)."""
import random

from autograder.grader_side.free_text import expect_answer
from autograder.student_side.checks import as_count, as_number, check, expect
from ...student_side.checks.params import _expect_counts
from ..reference import params as ref


@check("C3", points=2, hidden=True, says="q3_most_weights names the sublayer that holds most of a block's weights")
def test_C3_answer(student):
    expect_answer(student.value("q3_most_weights"), ref.MOST_WEIGHTS, ref.MOST_WEIGHTS_WRONG, "q3_most_weights")


@check("C4", points=2, hidden=True, says="attention_weights and mlp_weights for other widths, with and without d_ff, as ints")
def test_C4_counts(student):
    for d, d_ff in [(768, None), (96, 200), (5, 7)]:
        got = as_count(student.call("attention_weights", d), "attention_weights(d)")
        expect(got == ref.attention_weights(d), "attention_weights(d) is wrong for one of the hidden widths")
        args = (d,) if d_ff is None else (d, d_ff)
        got = as_count(student.call("mlp_weights", *args), f"mlp_weights({'d, d_ff' if d_ff else 'd'})")
        want = ref.mlp_weights(*args)
        expect(got == want, f"mlp_weights({'d, d_ff' if d_ff else 'd'}) is wrong for one of the hidden widths")


@check("C4", points=2, hidden=True, says="q4_ratio is the ratio of MLP to attention weights")
def test_C4_ratio(student):
    value = as_number(student.value("q4_ratio"), "q4_ratio")
    expect(abs(value - ref.RATIO) < 1e-9, "q4_ratio: that is not the MLP / attention ratio")


@check("B8", points=2, hidden=True, says="count_parameters on Llama 2 7B (RMSNorm, SwiGLU, no biases, untied)")
def test_B8_llama2_7b(student):
    _expect_counts(student, ref.LLAMA2_7B, ref.count_parameters(ref.LLAMA2_7B), "Llama 2 7B", show_expected=False)


@check("B8", points=3, hidden=True,
       says="count_parameters on random configs (every norm, MLP, bias and tying choice) equals a built model's count")
def test_B8_random_configs(student):
    rng = random.Random(8)
    for i in range(12):
        config = ref.random_config(rng)
        label = (f"random config {i + 1} of 12 ({config['norm']}, {config['mlp']}, bias={config['bias']}, "
                 f"tie_embeddings={config['tie_embeddings']})")
        _expect_counts(student, config, ref.count_parameters(config), label, show_expected=False)
