"""Checks for `norms`: the LayerNorm worked example (C5), LayerNorm (B1), RMSNorm (B2) and the
LayerNorm backward pass (B3)."""
import numpy as np
import torch

from autograder.checks import GRAD_ATOL, GRAD_RTOL, check, expect, expect_close
from solutions.reference import norms as ref


def _inputs(shape, seed, scale=3.0, shift=1.0, affine=True):
    """x (..., d) with gamma, beta (d,) drawn from a seeded generator."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * scale + shift
    d = shape[-1]
    if not affine:
        return x, torch.ones(d), torch.zeros(d)
    return x, 1 + 0.5 * torch.randn(d, generator=g), torch.randn(d, generator=g)


def _near_constant(shape, seed, spread=1e-3):
    """Rows that are almost constant: the normalizer is then dominated by eps."""
    g = torch.Generator().manual_seed(seed)
    level = 0.1 * torch.randn(shape[:-1] + (1,), generator=g)  # a small mean keeps float32 rounding far below atol
    return level + spread * torch.randn(shape, generator=g)


SHAPES = [(6,), (4, 7), (2, 3, 16), (2, 2, 3, 10)]

# ---- C5 --------------------------------------------------------------------------------------

@check("C5", points=3, hidden=True, says="q5_layer_norm_u holds the two numbers of the normalized u")
def test_C5_answer(student):
    value = np.asarray(student.value("q5_layer_norm_u"), dtype=np.float64).reshape(-1)
    expect(value.shape == (2,), "q5_layer_norm_u: give exactly two numbers, e.g. [a, b]")
    expect_close(value, np.array(ref.LAYER_NORM_U), "q5_layer_norm_u", atol=1e-4, rtol=0)


# ---- B1 --------------------------------------------------------------------------------------

@check("B1", points=2, hidden=False,
       says="layer_norm on the worked example [3, 1] gives [1, -1]; rows of a (2, 3, 8) input get mean 0, variance 1")
def test_B1_worked_example(student):
    got = student.call("layer_norm", torch.tensor([[3.0, 1.0]]), torch.ones(2), torch.zeros(2), eps=0.0,
                       forbid=("layer_norm",))
    expect_close(got, np.array([[1.0, -1.0]]), "layer_norm([[3, 1]]) with gamma=1, beta=0, eps=0")
    x, gamma, beta = _inputs((2, 3, 8), seed=11, affine=False)
    got = student.call("layer_norm", x, gamma, beta, forbid=("layer_norm",))
    expect(isinstance(got, np.ndarray) and got.shape == (2, 3, 8),
           "layer_norm must return a tensor of the input's shape (2, 3, 8)")
    expect(np.allclose(got.mean(-1), 0, atol=1e-5), "each row of layer_norm's output should have mean 0")
    expect(np.allclose(got.var(-1), 1, atol=1e-3),
           "each row should have (population) variance 1: divide by d, not d - 1, over the last dim")


@check("B1", points=4, hidden=True,
       says="layer_norm matches the reference for random gamma and beta, inputs with 0 to 3 leading dims")
def test_B1_random_affine(student):
    for seed, shape in enumerate(SHAPES):
        x, gamma, beta = _inputs(shape, seed=100 + seed)
        got = student.call("layer_norm", x, gamma, beta, forbid=("layer_norm",))
        expect_close(got, ref.layer_norm(x, gamma, beta),
                     f"layer_norm on an input of shape {shape} with random gamma and beta")


@check("B1", points=2, hidden=True,
       says="layer_norm handles nearly constant rows, where the place of eps matters, with default and given eps")
def test_B1_near_constant(student):
    for seed, (shape, eps) in enumerate([((3, 12), None), ((2, 4, 9), 1e-3)]):
        x = _near_constant(shape, seed=200 + seed)
        _, gamma, beta = _inputs(shape, seed=210 + seed)
        kwargs = {} if eps is None else {"eps": eps}
        got = student.call("layer_norm", x, gamma, beta, forbid=("layer_norm",), **kwargs)
        expect_close(got, ref.layer_norm(x, gamma, beta, **kwargs),
                     f"layer_norm on nearly constant rows ({'default eps' if eps is None else f'eps={eps}'})")


# ---- B2 --------------------------------------------------------------------------------------

@check("B2", points=1, hidden=False, says="rms_norm([3, 4]) with gamma=1, eps=0 gives [3, 4] / sqrt(12.5)")
def test_B2_worked_example(student):
    got = student.call("rms_norm", torch.tensor([3.0, 4.0]), torch.ones(2), eps=0.0, forbid=("rms_norm",))
    expect_close(got, np.array([3.0, 4.0]) / np.sqrt(12.5), "rms_norm([3, 4]) with gamma=1, eps=0")


@check("B2", points=2, hidden=True,
       says="rms_norm matches the reference for random gamma on inputs with a non-zero mean and leading dims")
def test_B2_random_gain(student):
    for seed, shape in enumerate(SHAPES):
        x, gamma, _ = _inputs(shape, seed=300 + seed)
        got = student.call("rms_norm", x, gamma, forbid=("rms_norm",))
        expect_close(got, ref.rms_norm(x, gamma), f"rms_norm on an input of shape {shape} with a random gamma")


@check("B2", points=2, hidden=True,
       says="rms_norm on rows of tiny magnitude, where eps dominates, with default and given eps")
def test_B2_tiny_rows(student):
    for seed, (shape, eps) in enumerate([((4, 8), None), ((2, 3, 6), 1e-4)]):
        x, gamma, _ = _inputs(shape, seed=400 + seed, scale=1e-4, shift=0.0)
        kwargs = {} if eps is None else {"eps": eps}
        got = student.call("rms_norm", x, gamma, forbid=("rms_norm",), **kwargs)
        expect_close(got, ref.rms_norm(x, gamma, **kwargs),
                     f"rms_norm on rows of size about 1e-4 ({'default eps' if eps is None else f'eps={eps}'})")


# ---- B3 --------------------------------------------------------------------------------------

def _backward_inputs(shape, seed, near_constant=False):
    """(grad_out, x, gamma) for one backward probe."""
    x, gamma, _ = _inputs(shape, seed=seed)
    if near_constant:
        x = _near_constant(shape, seed=seed)
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed + 1)), x, gamma


def _backward(student, probe, **kwargs):
    got = student.call("layer_norm_backward", *probe, **kwargs)
    expect(isinstance(got, list) and len(got) == 3,
           "layer_norm_backward must return a tuple (grad_x, grad_gamma, grad_beta)")
    return got


@check("B3", points=2, hidden=False,
       says="layer_norm_backward returns three gradients of the right shapes; grad_beta sums grad_out; "
            "each row of grad_x sums to 0")
def test_B3_shapes_and_sums(student):
    probe = _backward_inputs((2, 3, 4), seed=7)
    gx, gg, gb = _backward(student, probe)
    grad_out = probe[0]
    expect(all(isinstance(t, np.ndarray) for t in (gx, gg, gb)), "all three gradients must be tensors")
    expect(gx.shape == (2, 3, 4), f"grad_x must have x's shape (2, 3, 4), got {gx.shape}")
    expect(gg.shape == (4,) and gb.shape == (4,), "grad_gamma and grad_beta must have gamma's shape (4,)")
    expect_close(gb, grad_out.sum(dim=(0, 1)), "grad_beta (it is grad_out summed over every leading dim)",
                 GRAD_ATOL, GRAD_RTOL)
    expect(np.allclose(gx.sum(-1), 0, atol=1e-4), "each row of grad_x should sum to 0: subtract the mean term")


@check("B3", points=4, hidden=True, says="grad_x matches autograd through F.layer_norm for random inputs and gamma")
def test_B3_grad_x(student):
    for seed, shape in enumerate(SHAPES):
        probe = _backward_inputs(shape, seed=500 + 7 * seed)
        gx, _, _ = _backward(student, probe)
        expect_close(gx, ref.layer_norm_backward(*probe)[0], f"grad_x for an input of shape {shape}", GRAD_ATOL, GRAD_RTOL)


@check("B3", points=2, hidden=True,
       says="grad_gamma and grad_beta sum over every leading dim for inputs with 0 to 3 of them")
def test_B3_grad_params(student):
    for seed, shape in enumerate(SHAPES):
        probe = _backward_inputs(shape, seed=600 + 7 * seed)
        _, gg, gb = _backward(student, probe)
        _, want_g, want_b = ref.layer_norm_backward(*probe)
        expect_close(gg, want_g, f"grad_gamma for an input of shape {shape}", GRAD_ATOL, GRAD_RTOL)
        expect_close(gb, want_b, f"grad_beta for an input of shape {shape}", GRAD_ATOL, GRAD_RTOL)


@check("B3", points=2, hidden=True, says="the backward pass on nearly constant rows with a given eps")
def test_B3_near_constant(student):
    probe = _backward_inputs((3, 10), seed=700, near_constant=True)
    gx, _, _ = _backward(student, probe, eps=1e-3)
    expect_close(gx, ref.layer_norm_backward(*probe, eps=1e-3)[0], "grad_x on nearly constant rows with eps=1e-3", GRAD_ATOL, GRAD_RTOL)
