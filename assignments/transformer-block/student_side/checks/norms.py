"""Checks for `norms`: the LayerNorm worked example (C5), LayerNorm (B1), RMSNorm (B2) and the
LayerNorm backward pass (B3)."""
import numpy as np
import torch

from . import GRAD_ATOL, GRAD_RTOL, as_numbers, check, expect, expect_close

# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "q5_layer_norm_u": lambda v: as_numbers(v, 2, "q5_layer_norm_u"),
}

# What the tripwires of B1 and B2 watch for: torch's own implementations (function names), by the
# name a message uses for them.
BUILTIN_LAYER_NORM = {"layer_norm": ("layer_norm", "native_layer_norm")}
BUILTIN_RMS_NORM = {"rms_norm": ("rms_norm", "_fused_rms_norm")}


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


# ---- B1 --------------------------------------------------------------------------------------

@check("B1", points=2, hidden=False,
       says="rows of a (2, 3, 8) input get mean 0 and population variance 1; the worked example "
            "[2, 4, 4, 4, 5, 5, 7, 9] with gamma=1, beta=0, eps=0 gives [-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2]")
def test_B1_worked_example(student):
    x, gamma, beta = _inputs((2, 3, 8), seed=11, affine=False)
    got = student.call("layer_norm", x, gamma, beta, forbid=BUILTIN_LAYER_NORM)
    expect(isinstance(got, np.ndarray) and got.shape == (2, 3, 8),
           "layer_norm must return a tensor of the input's shape (2, 3, 8)")
    expect(np.allclose(got.mean(-1), 0, atol=1e-5),
           "each row of layer_norm's output should have mean 0: subtract each row's own mean, over the last dim")
    variance = got.var(-1)   # numpy's var divides by d: the population variance
    expect(not all(abs(v - 7 / 8) < 1e-3 for v in variance.reshape(-1).tolist()),
           "each row has variance 7/8 instead of 1: you divided by d - 1 (the sample variance, torch.var's "
           "default). Layer norm uses the population variance: divide by d (correction=0)")
    expect(np.allclose(variance, 1, atol=1e-3),
           "each row should have (population) variance 1: divide by sqrt(variance + eps), over the last dim")
    got = student.call("layer_norm", torch.tensor([[2.0, 4, 4, 4, 5, 5, 7, 9]]), torch.ones(8), torch.zeros(8),
                       eps=0.0, forbid=BUILTIN_LAYER_NORM)
    expect_close(got, np.array([[-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2]]),
                 "layer_norm([[2, 4, 4, 4, 5, 5, 7, 9]]) with gamma=1, beta=0, eps=0 (mean 5, standard deviation 2)")


@check("B1", points=1, hidden=False,
       says="the worked example [2, 4, 4, 4, 5, 5, 7, 9] with gamma=2, beta=1, eps=0 gives [-2, 0, 0, 0, 1, 1, 3, 5]")
def test_B1_affine_example(student):
    got = student.call("layer_norm", torch.tensor([[2.0, 4, 4, 4, 5, 5, 7, 9]]), torch.full((8,), 2.0),
                       torch.ones(8), eps=0.0, forbid=BUILTIN_LAYER_NORM)
    expect_close(got, np.array([[-2.0, 0, 0, 0, 1, 1, 3, 5]]),
                 "layer_norm([[2, 4, 4, 4, 5, 5, 7, 9]]) with gamma=2, beta=1, eps=0 (normalize to "
                 "[-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2], then multiply by gamma and add beta)")


# ---- B2 --------------------------------------------------------------------------------------

@check("B2", points=1, hidden=False, says="rms_norm([3, 4]) with gamma=1, eps=0 gives [3, 4] / sqrt(12.5)")
def test_B2_worked_example(student):
    got = student.call("rms_norm", torch.tensor([3.0, 4.0]), torch.ones(2), eps=0.0, forbid=BUILTIN_RMS_NORM)
    expect_close(got, np.array([3.0, 4.0]) / np.sqrt(12.5), "rms_norm([3, 4]) with gamma=1, eps=0")


@check("B2", points=1, hidden=False,
       says="rms_norm([3, 4]) with gamma=[2, 0.5] and eps=0, with eps=12.5, and rms_norm([0.001, 0.001]) with the "
            "default eps")
def test_B2_gain_and_eps_example(student):
    x = torch.tensor([3.0, 4.0])
    got = student.call("rms_norm", x, torch.tensor([2.0, 0.5]), eps=0.0, forbid=BUILTIN_RMS_NORM)
    expect_close(got, np.array([3.0 * 2, 4.0 * 0.5]) / np.sqrt(12.5),
                 "rms_norm([3, 4]) with gamma=[2, 0.5], eps=0 (divide by sqrt(12.5), then multiply by gamma)")
    got = student.call("rms_norm", x, torch.ones(2), eps=12.5, forbid=BUILTIN_RMS_NORM)
    expect_close(got, np.array([0.6, 0.8]),
                 "rms_norm([3, 4]) with gamma=1, eps=12.5 (the mean square 12.5 plus eps 12.5 is 25, under the "
                 "square root: divide by 5; use the eps you are given)")
    got = student.call("rms_norm", torch.tensor([0.001, 0.001]), torch.ones(2), forbid=BUILTIN_RMS_NORM)
    expect_close(got, np.full(2, 1 / np.sqrt(2)),
                 "rms_norm([0.001, 0.001]) with gamma=1 and the default eps (the mean square 1e-6 plus eps=1e-6 is "
                 "2e-6: each entry becomes 0.001 / sqrt(2e-6) = 1 / sqrt(2); keep the signature's default eps=1e-6)")


# ---- B3 --------------------------------------------------------------------------------------

def _backward_inputs(shape, seed, near_constant=False):
    """(grad_out, x, gamma) for one backward check."""
    x, gamma, _ = _inputs(shape, seed=seed)
    if near_constant:
        x = _near_constant(shape, seed=seed)
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed + 1)), x, gamma


def _backward(student, inputs, **kwargs):
    got = student.call("layer_norm_backward", *inputs, **kwargs)
    expect(isinstance(got, list) and len(got) == 3,
           "layer_norm_backward must return a tuple (grad_x, grad_gamma, grad_beta)")
    return got


@check("B3", points=2, hidden=False,
       says="layer_norm_backward returns three gradients of the right shapes; grad_beta sums grad_out; "
            "each row of grad_x sums to 0")
def test_B3_shapes_and_sums(student):
    inputs = _backward_inputs((2, 3, 4), seed=7)
    gx, gg, gb = _backward(student, inputs)
    grad_out = inputs[0]
    expect(all(isinstance(t, np.ndarray) for t in (gx, gg, gb)), "all three gradients must be tensors")
    expect(gx.shape == (2, 3, 4), f"grad_x must have x's shape (2, 3, 4), got {gx.shape}")
    expect(gg.shape == (4,) and gb.shape == (4,), "grad_gamma and grad_beta must have gamma's shape (4,)")
    expect_close(gb, grad_out.sum(dim=(0, 1)), "grad_beta (it is grad_out summed over every leading dim)",
                 GRAD_ATOL, GRAD_RTOL)
    expect(np.allclose(gx.sum(-1), 0, atol=1e-4), "each row of grad_x should sum to 0: subtract the mean term")


@check("B3", points=2, hidden=False,
       says="layer_norm_backward on x = [[-1, 0, 1]], gamma = [2, 1, 1], grad_out = [[1, 0, 0]], eps=0: grad_x is "
            "[[1, -2, 1]] / sqrt(6), grad_gamma [-sqrt(1.5), 0, 0], grad_beta [1, 0, 0]")
def test_B3_worked_example(student):
    grad_out, x, gamma = torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([[-1.0, 0.0, 1.0]]), torch.tensor([2.0, 1, 1])
    gx, gg, gb = _backward(student, (grad_out, x, gamma), eps=0.0)
    # sigma = sqrt(2/3), x_hat = [-1, 0, 1] / sigma, g = grad_out * gamma = [2, 0, 0]:
    # grad_x = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma = [1, -2, 1] / sqrt(6)
    expect_close(gb, np.array([1.0, 0.0, 0.0]), "grad_beta of the worked example (grad_out summed over rows)",
                 GRAD_ATOL, GRAD_RTOL)
    expect_close(gg, np.array([-np.sqrt(1.5), 0.0, 0.0]),
                 "grad_gamma of the worked example (grad_out * x_hat summed over rows, x_hat = [-1, 0, 1] / sqrt(2/3))",
                 GRAD_ATOL, GRAD_RTOL)
    expect_close(gx, np.array([[1.0, -2.0, 1.0]]) / np.sqrt(6),
                 "grad_x of the worked example: with g = grad_out * gamma = [2, 0, 0], grad_x = (g - mean(g) - x_hat * "
                 "mean(g * x_hat)) / sigma, sigma = sqrt(2/3)", GRAD_ATOL, GRAD_RTOL)
