"""Checks for `positions`: why attention needs positions and the sinusoidal table (C1)."""
import math

import numpy as np
import torch

from autograder.checks import check, expect, expect_close, normalize
from autograder.student import probe
from solutions.reference import positions as ref


@check("C1", points=2, hidden=True, says="q1_sentences holds the two sentences that lose their difference")
def test_C1_sentences(student):
    value = student.value("q1_sentences")
    expect(isinstance(value, list) and len(value) == 2 and all(isinstance(s, str) for s in value),
           "q1_sentences: give a list (or tuple) of exactly two strings")
    expect({normalize(s) for s in value} == {normalize(s) for s in ref.SENTENCES},
           "q1_sentences: these are not the two sentences of the lesson's example")


@check("C1", points=2, hidden=False,
       says="sinusoidal_positions(4, 8) has shape (4, 8) and matches published values of rows 0, 1 and 3")
def test_C1_positions_example(student):
    pe = student.call("sinusoidal_positions", 4, 8)
    expect(isinstance(pe, np.ndarray) and pe.shape == (4, 8), "sinusoidal_positions(4, 8) must return a (4, 8) tensor")
    expect_close(pe[0], [0, 1] * 4, "row 0 (position 0): sin(0) = 0 in even columns, cos(0) = 1 in odd ones")
    expect_close(pe[1, :4], [math.sin(1), math.cos(1), math.sin(0.1), math.cos(0.1)],
                 "row 1, columns 0-3 (frequencies 1 and 1/10000^(2/8) = 0.1)")
    expect_close(pe[3, 6:], [math.sin(0.003), math.cos(0.003)], "row 3, columns 6-7 (frequency 1/10000^(6/8))")


@check("C1", points=1, hidden=True, says="sinusoidal_positions matches the formula for other lengths and widths")
def test_C1_positions_random(student):
    for n, d in [(7, 16), (50, 64), (1, 2), (10, 6)]:
        expect_close(student.call("sinusoidal_positions", n, d), ref.sinusoidal_positions(n, d),
                     f"sinusoidal_positions({n}, {d})")


@check("C1", points=1, hidden=True, says="sinusoidal_positions raises ValueError for an odd width")
def test_C1_odd_width(student):
    error = student.error("sinusoidal_positions", 5, 7)
    expect(error is not None and error.startswith("ValueError"),
           "sinusoidal_positions(5, 7) should raise ValueError: sin/cos pairs need an even d")


def _permutation_probes(seed):
    """The lesson's four functions with random weights, one that only reorders rows, and the answers."""
    g = torch.Generator().manual_seed(seed)
    T, d = 6, 8
    w = lambda: torch.randn(d, d, generator=g) / math.sqrt(d)
    attention = dict(wq=w(), wk=w(), wv=w())
    return torch.randn(T, d, generator=g), torch.randperm(T, generator=g), [
        ("unmasked self-attention", probe("attention", **attention, causal=False, positions=None), True),
        ("self-attention on X + positions",
         probe("attention", **attention, causal=False, positions=torch.randn(T, d, generator=g)), False),
        ("causal self-attention", probe("attention", **attention, causal=True, positions=None), False),
        ("a row-wise MLP", probe("rowwise_mlp", w1=w(), w2=w()), True),
        # Same values, other order: tells a row-by-row comparison from one that ignores order.
        ("a function that shifts the rows by one", probe("roll_rows"), False),
    ]


@check("C1", points=2, hidden=True,
       says="permutes_with_input gives the right answer for attention with and without positions or a causal "
            "mask, for a row-wise MLP, and for a function that only reorders rows")
def test_C1_permutes(student):
    for seed in (1, 2):
        X, perm, cases = _permutation_probes(seed)
        for label, f, answer in cases:
            got = student.call("permutes_with_input", f, X, perm)
            if isinstance(got, np.ndarray) and got.shape == () and got.dtype == bool:
                got = bool(got)
            expect(isinstance(got, bool), "permutes_with_input must return True or False")
            expect(got == answer, f"permutes_with_input(f, X, perm) is wrong for f = {label}")
