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
       says="stack_forward on two tanh(x) sublayers from x = [1, -2]: residual and plain")
def test_B9_stack_example(student):
    identity = [function_arg("tanh_layer", w=torch.eye(2), b=torch.zeros(2))] * 2
    x = torch.tensor([1.0, -2.0])
    # residual: x + tanh(x) = [1.761594, -2.964028], then again; plain: tanh(tanh(x))
    for residual, want in [(True, [2.7042749, -3.9587144]), (False, [0.6420150, -0.7460680])]:
        got = student.call("stack_forward", identity, x, residual=residual)
        expect_close(got, torch.tensor(want), f"stack_forward(two tanh sublayers, [1, -2], residual={residual})",
                     atol=1e-5, rtol=1e-5)
