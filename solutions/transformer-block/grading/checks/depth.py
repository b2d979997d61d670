"""Checks for `depth`: the residual's older cousin (C2), stacking sublayers with and without
residuals, and the residual Jacobian I + df/dx (B9)."""
import torch

from autograder.grader_side.free_text import expect_answer
from autograder.student_side import callables
from autograder.student_side.checks import GRAD_ATOL, GRAD_RTOL, check, expect_close
from autograder.student_side.student import function_arg
from ..reference import depth as ref


@check("C2", points=2, hidden=True, says="q2_residual_cousin names the earlier architecture with a gradient highway")
def test_C2_answer(student):
    expect_answer(student.value("q2_residual_cousin"), ref.RESIDUAL_COUSIN, ref.RESIDUAL_COUSIN_WRONG,
                  "q2_residual_cousin")


def _tanh_layers(n, d, seed, scale=1.0):
    """n tanh sublayers as (spec for the student, function for the grader)."""
    g = torch.Generator().manual_seed(seed)
    layers = []
    for _ in range(n):
        w, b = scale * torch.randn(d, d, generator=g) / d ** 0.5, 0.1 * torch.randn(d, generator=g)
        layers.append((function_arg("tanh_layer", w=w, b=b), callables.build({"kind": "tanh_layer", "w": w, "b": b})))
    return layers


@check("B9", points=2, hidden=True, says="stack_forward through 6 random sublayers on batched inputs, both modes")
def test_B9_stack(student):
    layers = _tanh_layers(6, 5, seed=90)
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(91))
    for residual in (True, False):
        got = student.call("stack_forward", [spec for spec, _ in layers], x, residual=residual)
        expect_close(got, ref.stack_forward([f for _, f in layers], x, residual=residual),
                     f"stack_forward(6 sublayers, a batched x, residual={residual})")


@check("B9", points=2, hidden=True, says="residual_jacobian(f, x) equals I + df/dx for random sublayers")
def test_B9_jacobian(student):
    for seed, d in enumerate((4, 7)):
        ((spec, f),) = _tanh_layers(1, d, seed=95 + seed, scale=2.0)
        x = torch.randn(d, generator=torch.Generator().manual_seed(seed))
        expect_close(student.call("residual_jacobian", spec, x), ref.residual_jacobian(f, x),
                     f"residual_jacobian(f, x) for random sublayer {seed + 1} of 2", GRAD_ATOL, GRAD_RTOL)
