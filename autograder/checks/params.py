"""Checks for `params`: where the weights sit (C3), attention vs MLP weights (C4) and the full
parameter budget of a decoder-only model (B8)."""
import random

from autograder.checks import check, expect, expect_answer
from solutions.reference import params as ref

PARTS = ("embeddings", "attention", "mlp", "norms", "total")


@check("C3", points=2, hidden=True, says="q3_most_weights names the sublayer that holds most of a block's weights")
def test_C3_answer(student):
    expect_answer(student.value("q3_most_weights"), ref.MOST_WEIGHTS, ref.MOST_WEIGHTS_WRONG, "q3_most_weights")


@check("C4", points=2, hidden=False, says="attention_weights and mlp_weights give 256 and 512 for d=8, 64 and 128 for d=4")
def test_C4_worked_example(student):
    for d, attention, mlp in [(8, 256, 512), (4, 64, 128)]:
        got = student.call("attention_weights", d), student.call("mlp_weights", d)
        expect(got == (attention, mlp), f"for d={d} expected {attention} attention and {mlp} MLP weights, got {got}")


@check("C4", points=2, hidden=True, says="attention_weights and mlp_weights for other widths, with and without d_ff")
def test_C4_counts(student):
    for d, d_ff in [(768, None), (96, 200), (5, 7)]:
        got = student.call("attention_weights", d)
        expect(got == ref.attention_weights(d), f"attention_weights({d}) should be {ref.attention_weights(d)}, got {got!r}")
        args = (d,) if d_ff is None else (d, d_ff)
        got = student.call("mlp_weights", *args)
        want = ref.mlp_weights(*args)
        expect(got == want, f"mlp_weights{args if d_ff else f'({d})'} should be {want}, got {got!r}")


@check("C4", points=2, hidden=True, says="q4_ratio is the ratio of MLP to attention weights")
def test_C4_ratio(student):
    value = student.value("q4_ratio")
    expect(isinstance(value, (int, float)) and not isinstance(value, bool), "q4_ratio: give a number")
    expect(abs(value - ref.RATIO) < 1e-9, "q4_ratio: that is not the MLP / attention ratio")


def _expect_counts(student, config, want, label):
    got = student.call("count_parameters", config)
    expect(isinstance(got, dict) and set(PARTS) <= set(got),
           f"count_parameters must return a dict with the keys {', '.join(PARTS)}")
    for part in PARTS:
        expect(type(got[part]) is int, f"count_parameters: {part} must be an int, got {type(got[part]).__name__}")
        expect(got[part] == want[part], f"count_parameters for {label}: {part} should be {want[part]:,}, got {got[part]:,}")


@check("B8", points=3, hidden=False,
       says="count_parameters on GPT-2 small gives 124,439,808 = 39,383,808 + 28,348,416 + 56,669,184 + 38,400")
def test_B8_gpt2_small(student):
    gpt2 = {"vocab_size": 50257, "max_positions": 1024, "d_model": 768, "n_layers": 12, "d_ff": 3072,
            "norm": "layernorm", "mlp": "gelu", "bias": True, "tie_embeddings": True}   # the published config
    want = dict(embeddings=39_383_808, attention=28_348_416, mlp=56_669_184, norms=38_400, total=124_439_808)
    _expect_counts(student, gpt2, want, "GPT-2 small")


@check("B8", points=2, hidden=True, says="count_parameters on Llama 2 7B (RMSNorm, SwiGLU, no biases, untied)")
def test_B8_llama2_7b(student):
    _expect_counts(student, ref.LLAMA2_7B, ref.count_parameters(ref.LLAMA2_7B), "Llama 2 7B")


@check("B8", points=5, hidden=True,
       says="count_parameters on random configs (every norm, MLP, bias and tying choice) equals a built model's count")
def test_B8_random_configs(student):
    rng = random.Random(8)
    for _ in range(12):
        config = ref.random_config(rng)
        _expect_counts(student, config, ref.count_parameters(config), f"the config {config}")
