"""Checks for `params`: where the weights sit (C3), attention vs MLP weights (C4) and the full
parameter budget of a decoder-only model (B8)."""

from . import as_count, as_number, as_text, check, expect

# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "q3_most_weights": lambda v: as_text(v, "q3_most_weights"),
    "q4_ratio": lambda v: as_number(v, "q4_ratio"),
}

PARTS = ("embeddings", "attention", "mlp", "norms", "total")


@check("C4", points=2, hidden=False,
       says="attention_weights gives 144 for d=6 and 64 for d=4; mlp_weights(6, 10) is 120, mlp_weights(4, 10) 80")
def test_C4_worked_example(student):
    # Widths where d_ff is given: the default width's counts are left to the hidden checks, since
    # any pair of them shows the ratio q4_ratio asks for.
    for d, want in [(6, 144), (4, 64)]:
        got = as_count(student.call("attention_weights", d), f"attention_weights({d})")
        expect(got == want, f"attention_weights({d}) should be {want}, got {got}: attention has four d x d "
                            "projections, no biases")
    for d, d_ff, want in [(6, 10, 120), (4, 10, 80)]:
        got = as_count(student.call("mlp_weights", d, d_ff), f"mlp_weights({d}, {d_ff})")
        expect(got == want, f"mlp_weights({d}, {d_ff}) should be 2 * {d} * {d_ff} = {want}, got {got!r}: two matrices, "
                            "d -> d_ff and back, no biases; use the d_ff you are given, and 4d only when it is None")


def _expect_counts(student, config, want, label, show_expected=True):
    got = student.call("count_parameters", config)
    expect(isinstance(got, dict) and set(PARTS) <= set(got),
           f"count_parameters must return a dict with the keys {', '.join(PARTS)}")
    for part in PARTS:
        count = as_count(got[part], f"count_parameters: {part}")
        shown = f"should be {want[part]:,}, got {count:,}" if show_expected else "is wrong"   # hidden: no value
        expect(count == want[part], f"count_parameters for {label}: {part} {shown}")


@check("B8", points=3, hidden=False,
       says="count_parameters on GPT-2 small gives 124,439,808 = 39,383,808 + 28,348,416 + 56,669,184 + 38,400")
def test_B8_gpt2_small(student):
    gpt2 = {"vocab_size": 50257, "max_positions": 1024, "d_model": 768, "n_layers": 12, "d_ff": 3072,
            "norm": "layernorm", "mlp": "gelu", "bias": True, "tie_embeddings": True}   # the published config
    want = dict(embeddings=39_383_808, attention=28_348_416, mlp=56_669_184, norms=38_400, total=124_439_808)
    _expect_counts(student, gpt2, want, "GPT-2 small")


# Two small configs whose counts can be added up by hand (the breakdowns are in the check's messages).
SMALL = [
    ({"vocab_size": 10, "max_positions": 6, "d_model": 4, "n_layers": 2, "d_ff": 6, "norm": "rmsnorm",
      "mlp": "swiglu", "bias": True, "tie_embeddings": False},
     dict(embeddings=104, attention=160, mlp=176, norms=20, total=460),
     "a small untied RMSNorm/SwiGLU config with biases (V=10, P=6, d=4, N=2, d_ff=6): embeddings 40 + 24 + an "
     "unembedding of 40 without bias; attention 2 * (64 + 16); mlp 2 * (3 * 24 + 6 + 6 + 4); norms 5 * 4 (no beta)"),
    ({"vocab_size": 10, "max_positions": 0, "d_model": 4, "n_layers": 1, "d_ff": 8, "norm": "layernorm",
      "mlp": "gelu", "bias": False, "tie_embeddings": True},
     dict(embeddings=40, attention=64, mlp=64, norms=12, total=180),
     "a small tied LayerNorm/GELU config without biases (V=10, P=0, d=4, N=1, d_ff=8): embeddings 40; attention "
     "64; mlp 2 * 4 * 8; norms 3 * 4 (gamma only)"),
]


@check("B8", points=2, hidden=False,
       says="count_parameters on two small configs: an untied RMSNorm/SwiGLU one with biases gives 460, a tied "
            "LayerNorm/GELU one without biases gives 180")
def test_B8_small_configs(student):
    for config, want, label in SMALL:
        _expect_counts(student, config, want, label)
