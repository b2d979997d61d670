"""Checks for `params`: where the weights sit (C3), attention vs MLP weights (C4) and the full
parameter budget of a decoder-only model (B8)."""

from . import as_count, as_number, as_text, check, expect

# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "q3_most_weights": lambda v: as_text(v, "q3_most_weights"),
    "q4_ratio": lambda v: as_number(v, "q4_ratio"),
}

PARTS = ("embeddings", "attention", "mlp", "norms", "total")


@check("C4", points=2, hidden=False, says="attention_weights and mlp_weights give 256 and 512 for d=8, 64 and 128 for d=4")
def test_C4_worked_example(student):
    for d, attention, mlp in [(8, 256, 512), (4, 64, 128)]:
        got = (as_count(student.call("attention_weights", d), f"attention_weights({d})"),
               as_count(student.call("mlp_weights", d), f"mlp_weights({d})"))
        expect(got == (attention, mlp), f"for d={d} expected {attention} attention and {mlp} MLP weights, got {got}")


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
