"""Checks for `norms`: the LayerNorm worked example (C5), LayerNorm (B1), RMSNorm (B2) and the
LayerNorm backward pass (B3)."""
import numpy as np

from autograder.student_side.checks import GRAD_ATOL, GRAD_RTOL, as_numbers, check, expect_close
from ...student_side.checks.norms import (
    BUILTIN_LAYER_NORM,
    BUILTIN_RMS_NORM,
    _backward,
    _backward_inputs,
    _inputs,
    _near_constant,
)
from ..reference import norms as ref

SHAPES = [(6,), (4, 7), (2, 3, 16), (2, 2, 3, 10)]


# ---- C5 --------------------------------------------------------------------------------------

@check("C5", points=3, hidden=True, says="q5_layer_norm_u holds the two numbers of the normalized u")
def test_C5_answer(student):
    value = as_numbers(student.value("q5_layer_norm_u"), 2, "q5_layer_norm_u")
    expect_close(value, np.array(ref.LAYER_NORM_U), "q5_layer_norm_u", atol=1e-4, rtol=0)


# ---- B1 --------------------------------------------------------------------------------------

@check("B1", points=3, hidden=True,
       says="layer_norm matches the reference for random gamma and beta, inputs with 0 to 3 leading dims")
def test_B1_random_affine(student):
    for seed, shape in enumerate(SHAPES):
        x, gamma, beta = _inputs(shape, seed=100 + seed)
        got = student.call("layer_norm", x, gamma, beta, forbid=BUILTIN_LAYER_NORM)
        expect_close(got, ref.layer_norm(x, gamma, beta),
                     f"layer_norm on an input with {len(shape) - 1} leading dim(s), random gamma and beta")


@check("B1", points=2, hidden=True,
       says="layer_norm handles nearly constant rows, where the place of eps matters, with default and given eps")
def test_B1_near_constant(student):
    for seed, (shape, eps) in enumerate([((3, 12), None), ((2, 4, 9), 1e-3)]):
        x = _near_constant(shape, seed=200 + seed)
        _, gamma, beta = _inputs(shape, seed=210 + seed)
        kwargs = {} if eps is None else {"eps": eps}
        got = student.call("layer_norm", x, gamma, beta, forbid=BUILTIN_LAYER_NORM, **kwargs)
        expect_close(got, ref.layer_norm(x, gamma, beta, **kwargs),
                     f"layer_norm on nearly constant rows ({'default eps' if eps is None else f'eps={eps}'})")


# ---- B2 --------------------------------------------------------------------------------------

@check("B2", points=1, hidden=True,
       says="rms_norm matches the reference for random gamma on inputs with a non-zero mean and leading dims")
def test_B2_random_gain(student):
    for seed, shape in enumerate(SHAPES):
        x, gamma, _ = _inputs(shape, seed=300 + seed)
        got = student.call("rms_norm", x, gamma, forbid=BUILTIN_RMS_NORM)
        expect_close(got, ref.rms_norm(x, gamma),
                     f"rms_norm on an input with {len(shape) - 1} leading dim(s), random gamma")


@check("B2", points=2, hidden=True,
       says="rms_norm on rows of tiny magnitude, where eps dominates, with default and given eps")
def test_B2_tiny_rows(student):
    for seed, (shape, eps) in enumerate([((4, 8), None), ((2, 3, 6), 1e-4)]):
        x, gamma, _ = _inputs(shape, seed=400 + seed, scale=1e-4, shift=0.0)
        kwargs = {} if eps is None else {"eps": eps}
        got = student.call("rms_norm", x, gamma, forbid=BUILTIN_RMS_NORM, **kwargs)
        expect_close(got, ref.rms_norm(x, gamma, **kwargs),
                     f"rms_norm on rows of size about 1e-4 ({'default eps' if eps is None else f'eps={eps}'})")


# ---- B3 --------------------------------------------------------------------------------------

@check("B3", points=2, hidden=True, says="grad_x matches autograd through F.layer_norm for random inputs and gamma")
def test_B3_grad_x(student):
    for seed, shape in enumerate(SHAPES):
        inputs = _backward_inputs(shape, seed=500 + 7 * seed)
        gx, _, _ = _backward(student, inputs)
        expect_close(gx, ref.layer_norm_backward(*inputs)[0],
                     f"grad_x for an input with {len(shape) - 1} leading dim(s)", GRAD_ATOL, GRAD_RTOL)


@check("B3", points=2, hidden=True,
       says="grad_gamma and grad_beta sum over every leading dim for inputs with 0 to 3 of them")
def test_B3_grad_params(student):
    for seed, shape in enumerate(SHAPES):
        inputs = _backward_inputs(shape, seed=600 + 7 * seed)
        _, gg, gb = _backward(student, inputs)
        _, want_g, want_b = ref.layer_norm_backward(*inputs)
        expect_close(gg, want_g, f"grad_gamma for an input with {len(shape) - 1} leading dim(s)", GRAD_ATOL, GRAD_RTOL)
        expect_close(gb, want_b, f"grad_beta for an input with {len(shape) - 1} leading dim(s)", GRAD_ATOL, GRAD_RTOL)


@check("B3", points=2, hidden=True, says="the backward pass on nearly constant rows with a given eps")
def test_B3_near_constant(student):
    inputs = _backward_inputs((3, 10), seed=700, near_constant=True)
    gx, _, _ = _backward(student, inputs, eps=1e-3)
    expect_close(gx, ref.layer_norm_backward(*inputs, eps=1e-3)[0], "grad_x on nearly constant rows with eps=1e-3", GRAD_ATOL, GRAD_RTOL)
