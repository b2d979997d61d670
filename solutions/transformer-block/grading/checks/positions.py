"""Checks for `positions`: why attention needs positions and the sinusoidal table (C1)."""
import math

import numpy as np
import torch

from autograder.student_side import callables
from autograder.grader_side.free_text import expect_sentence_pair
from autograder.student_side.checks import check, expect, expect_close
from autograder.student_side.student import function_arg
from ..reference import positions as ref


@check("C1", points=2, hidden=True, says="q1_sentences holds the two sentences that lose their difference")
def test_C1_sentences(student):
    expect_sentence_pair(student.value("q1_sentences"), ref.SENTENCES, "q1_sentences")


@check("C1", points=1, hidden=True,
       says="sinusoidal_positions matches the formula for other lengths and widths, as a float32 table")
def test_C1_positions_random(student):
    for i, (n, d) in enumerate([(7, 16), (50, 64), (1, 2), (10, 6)]):
        got = student.call("sinusoidal_positions", n, d)
        expect_close(got, ref.sinusoidal_positions(n, d), f"sinusoidal_positions(n, d) for hidden size {i + 1} of 4")
        expect(got.dtype == np.float32, f"sinusoidal_positions(n, d) returns a {got.dtype.name} table where the TODO "
                                        "asks for float32: cast at the end (.float())")


@check("C1", points=1, hidden=True, says="sinusoidal_positions raises ValueError for an odd width")
def test_C1_odd_width(student):
    error = student.error("sinusoidal_positions", 5, 7)
    expect(error is not None and error.startswith("ValueError"),
           "sinusoidal_positions(n, d) with an odd d should raise ValueError: sin/cos pairs need an even d")


def _permutation_probes(seed):
    """The lesson's four functions with random weights, one that only reorders rows, and the answers."""
    g = torch.Generator().manual_seed(seed)
    T, d = 6, 8
    w = lambda: torch.randn(d, d, generator=g) / math.sqrt(d)
    attention = dict(wq=w(), wk=w(), wv=w())
    return torch.randn(T, d, generator=g), torch.randperm(T, generator=g), [
        ("unmasked self-attention", function_arg("attention", **attention, causal=False, positions=None), True),
        ("self-attention on X + positions",
         function_arg("attention", **attention, causal=False, positions=torch.randn(T, d, generator=g)), False),
        ("causal self-attention", function_arg("attention", **attention, causal=True, positions=None), False),
        ("a row-wise MLP", function_arg("rowwise_mlp", w1=w(), w2=w()), True),
        # Same values, other order: tells a row-by-row comparison from one that ignores order.
        ("a function that shifts the rows by one", function_arg("roll_rows"), False),
    ]


def _as_bool(got):
    if isinstance(got, np.ndarray) and got.shape == () and got.dtype == bool:
        got = bool(got)
    expect(isinstance(got, bool), "permutes_with_input must return True or False")
    return got


@check("C1", points=1, hidden=True,
       says="permutes_with_input gives the right answer for attention with and without positions or a causal "
            "mask, for a row-wise MLP, and for a function that only reorders rows")
def test_C1_permutes(student):
    for seed in (1, 2):
        X, perm, cases = _permutation_probes(seed)
        for label, f, answer in cases:
            got = _as_bool(student.call("permutes_with_input", f, X, perm))
            expect(got == answer, f"permutes_with_input(f, X, perm) is wrong for f = {label}")


@check("C1", points=1, hidden=True,
       says="permutes_with_input compares within the atol it is given and no relative tolerance, on functions "
            "that are order-blind up to a small error")
def test_C1_permutes_atol(student):
    _within_atol(student)
    _no_relative_tolerance(student)


def _within_atol(student):
    """Attention on X + tiny positions: True with an atol above its gap, False below it."""
    g = torch.Generator().manual_seed(4)
    T, d = 6, 8
    w = lambda: torch.randn(d, d, generator=g) / math.sqrt(d)
    spec = dict(wq=w(), wk=w(), wv=w(), causal=False, positions=1e-2 * torch.randn(T, d, generator=g))
    X, perm = torch.randn(T, d, generator=g), torch.randperm(T, generator=g)
    f = callables.build({"kind": "attention", **spec})
    gap = float((f(X[perm]) - f(X)[perm]).abs().max())      # how far f is from order-blind
    for atol, answer in [(4 * gap, True), (gap / 4, False)]:
        got = _as_bool(student.call("permutes_with_input", function_arg("attention", **spec), X, perm, atol=atol))
        expect(got == answer, f"permutes_with_input(f, X, perm, atol=...) is wrong for an f whose two sides differ "
                              f"by {'less' if answer else 'more'} than atol: compare within the atol you are given")


def _no_relative_tolerance(student):
    """Large outputs (about 1e3) whose two sides differ by a gap far below any relative tolerance
    (1e-5 of the values) but above atol: only a pure atol comparison says False. float64 keeps the
    gap clear of rounding."""
    g = torch.Generator().manual_seed(5)
    T, d = 6, 8
    w = lambda scale=1.0: scale * torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    spec = dict(wq=w(1e-2), wk=w(1e-2), wv=w() + 1.0, causal=False,
                positions=1e-3 * torch.randn(T, d, generator=g, dtype=torch.float64))
    X = torch.randn(T, d, generator=g, dtype=torch.float64) + 100.0      # (T, d), far from 0
    perm = torch.randperm(T, generator=g)
    f = callables.build({"kind": "attention", **spec})
    gap = float((f(X[perm]) - f(X)[perm]).abs().max())
    got = _as_bool(student.call("permutes_with_input", function_arg("attention", **spec), X, perm, atol=gap / 4))
    expect(got is False, "permutes_with_input(f, X, perm, atol=...) is wrong for an f with large outputs whose two "
                         "sides differ by more than atol: compare with atol alone and rtol=0 (torch.allclose's "
                         "default rtol adds a tolerance that grows with the values)")
