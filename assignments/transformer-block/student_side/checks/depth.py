"""Checks for `depth`: the residual's older cousin (C2), stacking sublayers with and without
residuals, and the residual Jacobian I + df/dx (B9)."""
import torch

from ..student import function_arg
from . import as_text, check, expect_close

# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "q2_residual_cousin": lambda v: as_text(v, "q2_residual_cousin"),
}


@check("B9", points=1, hidden=False,
       says="stack_forward on two tanh(x) sublayers from x = [1, -2]: residual and plain; and, plain, a sublayer that "
            "ignores its input (tanh([1, 0])) followed by tanh(x)")
def test_B9_stack_example(student):
    identity = [function_arg("tanh_layer", w=torch.eye(2), b=torch.zeros(2))] * 2
    x = torch.tensor([1.0, -2.0])
    # residual: x + tanh(x) = [1.761594, -2.964028], then again; plain: tanh(tanh(x))
    for residual, want in [(True, [2.7042749, -3.9587144]), (False, [0.6420150, -0.7460680])]:
        got = student.call("stack_forward", identity, x, residual=residual)
        expect_close(got, torch.tensor(want), f"stack_forward(two tanh sublayers, [1, -2], residual={residual})",
                     atol=1e-5, rtol=1e-5)
    # The first sublayer ignores x and returns tanh([1, 0]) = [0.761594, 0]; tanh of that is [0.642015, 0].
    constant = function_arg("tanh_layer", w=torch.zeros(2, 2), b=torch.tensor([1.0, 0.0]))
    got = student.call("stack_forward", [constant, identity[0]], x, residual=False)
    expect_close(got, torch.tensor([0.6420150, 0.0]),
                 "stack_forward([tanh([1, 0]) whatever x, tanh(x)], [1, -2], residual=False): the first sublayer in "
                 "the list is applied first", atol=1e-5, rtol=1e-5)


@check("B9", points=1, hidden=False,
       says="residual_jacobian of f(x) = tanh(x W) with W = [[0, 2], [0, 0]] at x = 0 is [[1, 0], [2, 1]]")
def test_B9_jacobian_example(student):
    f = function_arg("tanh_layer", w=torch.tensor([[0.0, 2.0], [0.0, 0.0]]), b=torch.zeros(2))
    got = student.call("residual_jacobian", f, torch.zeros(2))
    # At x = 0, tanh' = 1: f_j(x) = sum_i x_i W_ij, so df_j/dx_i = W_ij, and the Jacobian (rows: outputs) is W^T.
    expect_close(got, torch.tensor([[1.0, 0.0], [2.0, 1.0]]),
                 "residual_jacobian(tanh(x W), 0) with W = [[0, 2], [0, 0]]: I + df/dx, where row j holds the "
                 "derivatives of output j (here df/dx = W^T = [[0, 0], [2, 0]])", atol=1e-5, rtol=1e-5)
