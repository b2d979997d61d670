"""Checks for `costs`: attention's score matrices in every block of a stack (C2), the weights of a
layer and of a model (C3), the memory the weights take (C4), and the context length at which
attention's work per token reaches the weights' (C5)."""
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
    **{name: (lambda v, name=name: as_number(v, name)) for name in ("c2_double_T", "c2_double_N", "c3_double_d",
                                                                     "c5_crossover_4096")},
    **{name: (lambda v, name=name: _count_of_weights(v, name)) for name in ("c3_layer_4096", "c3_estimate_7b")},
    **{name: (lambda v, name=name: as_number(v, name, GB)) for name in ("c4_7b_gb", "c4_70b_4bit_gb")},
}


@check("C2", points=1, hidden=False,
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


def expect_crossover(student, d: int, hidden: bool = False) -> None:
    """``crossover_length(d)`` is the first T at which the student's own ``attention_work`` reaches
    their ``layer_weights`` (so a slip in C3 is not charged twice); a hidden width is not named."""
    shown = "crossover_length(d)" if hidden else f"crossover_length({d})"
    T = as_count(student.call("crossover_length", d), shown)
    weights = as_count(student.call("layer_weights", d), "layer_weights(d)" if hidden else f"layer_weights({d})")
    reached = as_count(student.call("attention_work", T, d), "attention_work(T, d)") >= weights
    before = as_count(student.call("attention_work", T - 1, d), "attention_work(T, d)") >= weights
    expect(reached and not before,
           f"{shown} is not the first T at which your attention_work reaches your layer_weights for one of the hidden "
           "widths" if hidden else
           f"{shown} is {T}, but the first T at which your attention_work(T, {d}) reaches your layer_weights({d}) = "
           f"{weights} is {'smaller' if before else 'larger'}")


@check("C5", points=1, hidden=False,
       says="attention_work gives 12 for T=3, d=2 and 40 for T=5, d=4; crossover_length(3) is the first T at which "
            "your attention_work reaches your layer_weights(3)")
def test_C5_worked_example(student):
    for (T, d), want in [((3, 2), 12), ((5, 4), 40)]:
        got = as_count(student.call("attention_work", T, d), f"attention_work({T}, {d})")
        expect(got == want, f"attention_work({T}, {d}) should be {want}, got {got}: the query meets T keys of d "
                            "numbers each, and the output mixes T value vectors of d numbers each")
    expect_crossover(student, 3)
