"""Checks for `mlp`: the position-wise MLP (B4) and SwiGLU with its hidden width (B5).
C8 (why the nonlinearity is needed) is graded by hand."""
import functools

import torch

from autograder.student_side.checks import as_count, check, expect, expect_close, seeded
from ..reference import mlp as ref


@functools.lru_cache(maxsize=None)
def _reference(cls, seed, *args):
    """A reference module with seeded random weights, and its state_dict (made once per run)."""
    module = seeded(cls(*args), seed)
    return module, module.state_dict()


def _x(shape, seed, scale=4.0):
    """Large enough inputs that GELU's curved region (where approximations differ) is used."""
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale


@check("B4", points=3, hidden=True,
       says="MLP with exact GELU matches the reference with random weights, d_ff other than 4d, batched inputs")
def test_B4_gelu(student):
    for seed, (d, d_ff, shape) in enumerate([(8, None, (5, 8)), (12, 20, (2, 3, 12)), (6, 50, (4, 6))]):
        module, state = _reference(ref.MLP, 800 + seed, d, d_ff, "gelu")
        x = _x(shape, seed)
        (got,) = student.module("MLP", (d, d_ff, "gelu"), state=state, forwards=[((x,), {})])
        expect_close(got, module(x),
                     f"MLP(d, {'d_ff' if d_ff else 'None'}, 'gelu') on an input with {len(shape) - 1} leading dim(s)")


@check("B4", points=1, hidden=True, says="MLP with activation='relu' matches the reference")
def test_B4_relu(student):
    module, state = _reference(ref.MLP, 850, 10, 24, "relu")
    x = _x((3, 4, 10), 1)
    (got,) = student.module("MLP", (10, 24), {"activation": "relu"}, state=state, forwards=[((x,), {})])
    expect_close(got, module(x), "MLP(d, d_ff, activation='relu') on an input with 2 leading dims")


@check("B4", points=1, hidden=True, says="MLP raises ValueError for an activation other than 'gelu' and 'relu'")
def test_B4_unknown_activation(student):
    x = _x((2, 8), 3)
    for activation in ("tanh", "swish"):
        error = student.module_error("MLP", (8, None, activation), forwards=[((x,), {})])
        expect(error is not None and error.startswith("ValueError"),
               "MLP(d, d_ff, activation) with an activation other than 'gelu' or 'relu' should raise ValueError"
               + (f" (it raised {error.partition(':')[0]})" if error else " (it ran without complaint)"))


# (d_model, multiple_of): int(8d/3) with a fraction of 2/3 (d = 3k + 1), where round() and ceil()
# differ from int(), with multiple_of = 1 and with a multiple int() lands on exactly.
WIDTHS = [(1000, 64), (333, 32), (96, 1), (4096, 1024), (7, 1), (5, 1), (4, 2)]


@check("B5", points=1, hidden=True, says="swiglu_hidden_dim for other widths and multiple_of values, as an int")
def test_B5_hidden_dim_random(student):
    for d, multiple in WIDTHS:
        got = as_count(student.call("swiglu_hidden_dim", d, multiple_of=multiple), "swiglu_hidden_dim(d, multiple_of)")
        want = ref.swiglu_hidden_dim(d, multiple_of=multiple)
        expect(got == want, "swiglu_hidden_dim(d, multiple_of) is wrong for one of the hidden widths: take "
                            "int(2 * 4 * d / 3), which truncates, then round it up to a multiple of multiple_of")


@check("B5", points=3, hidden=True, says="SwiGLU matches w2(silu(w1 x) * w3 x) with random weights on batched inputs")
def test_B5_forward(student):
    for seed, (d, d_ff, shape) in enumerate([(8, 16, (5, 8)), (12, 30, (2, 3, 12))]):
        module, state = _reference(ref.SwiGLU, 900 + seed, d, d_ff)
        x = _x(shape, 10 + seed, scale=2.0)
        (got,) = student.module("SwiGLU", (d, d_ff), state=state, forwards=[((x,), {})])
        expect_close(got, module(x), f"SwiGLU(d, d_ff) on an input with {len(shape) - 1} leading dim(s)")
