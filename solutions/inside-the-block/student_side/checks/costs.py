"""Checks for `costs`: attention's score matrices in every block of a stack (C2), the weights of a
layer and of a model (C3), and the memory the weights take (C4)."""
import numpy as np

from ..numbers import GB
from . import as_count, as_number, check, expect


def _count_of_weights(value, name: str) -> float:
    """A C3 count as the grader reads it, and a count of weights: a layer of width 4096 holds at
    least 4096 x 4096 of them, so a smaller number is a count in millions or billions."""
    got = as_number(value, name)
    expect(got >= 4096 ** 2, f"{name} reads as {got:g}, fewer weights than one 4096 x 4096 matrix holds: give the "
                             "count itself, not in millions or billions")
    return got


# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    **{name: (lambda v, name=name: as_number(v, name)) for name in ("c2_double_T", "c2_double_N", "c3_double_d")},
    **{name: (lambda v, name=name: _count_of_weights(v, name)) for name in ("c3_layer_4096", "c3_estimate_7b")},
    **{name: (lambda v, name=name: as_number(v, name, GB)) for name in ("c4_7b_gb", "c4_70b_4bit_gb")},
}


@check("C2", points=2, hidden=False,
       says="attention_scores gives 16 for one sequence, one head, T=4, one block, and 1536 for "
            "batch=2, heads=4, T=8, n_layers=3")
def test_C2_worked_example(student):
    for args, want in [((1, 1, 4, 1), 16), ((2, 4, 8, 3), 1536)]:
        got = as_count(student.call("attention_scores", *args), f"attention_scores{args}")
        expect(got == want, f"attention_scores{args} should be {want}, got {got}: every head of every block "
                            "scores each of the T queries against each of the T keys, for every sequence of the batch")


@check("C3", points=2, hidden=False,
       says="layer_weights gives 192 for d=4 and 768 for d=8; model_weights(8, 2, 10) is 1696")
def test_C3_worked_example(student):
    for d, want in [(4, 192), (8, 768)]:
        got = as_count(student.call("layer_weights", d), f"layer_weights({d})")
        expect(got == want, f"layer_weights({d}) should be {want}, got {got}: count attention's four d x d "
                            "matrices and the MLP's two matrices (d_ff = 4d), without biases")
    got = as_count(student.call("model_weights", 8, 2, 10), "model_weights(8, 2, 10)")
    expect(got == 1696, f"model_weights(8, 2, 10) should be 1696 (two layers of 768 and two 10 x 8 tables), got {got}")


@check("C4", points=1, hidden=False,
       says="weights_memory_gb(1e9) is 2.0 GB at the default 16 bits, and 4.0 GB with bits=32")
def test_C4_worked_example(student):
    for args, kwargs, want in [((1e9,), {}, 2.0), ((1e9,), {"bits": 32}, 4.0)]:
        shown = f"weights_memory_gb(1e9{', bits=32' if kwargs else ''})"
        got = as_number(student.call("weights_memory_gb", *args, **kwargs), shown)
        expect(bool(np.isclose(got, want, rtol=1e-6, atol=0)),
               f"{shown} should be {want} GB, got {got:g}: bytes = parameters x bits / 8, and a GB here is 10^9 bytes")
