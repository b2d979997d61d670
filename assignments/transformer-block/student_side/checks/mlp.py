"""Checks for `mlp`: the position-wise MLP (B4) and SwiGLU with its hidden width (B5).
C8 (why the nonlinearity is needed) is graded by hand."""

import numpy as np
import torch

from . import as_count, check, expect, expect_close, expect_parameters


@check("B4", points=1, hidden=False,
       says="MLP builds linear1 (d -> d_ff) and linear2 (d_ff -> d), with d_ff = 4d by default; on a hand-made "
            "example with identity weights it applies exact GELU or ReLU, and with linear2 = -I (ReLU) it gives "
            "-relu(x)")
def test_B4_structure_example(student):
    want = {"linear1.weight": [32, 8], "linear1.bias": [32], "linear2.weight": [8, 32], "linear2.bias": [8]}
    expect_parameters(student.params("MLP", 8), want, "MLP(8)")
    eye = {"linear1.weight": torch.eye(2), "linear1.bias": torch.zeros(2),
           "linear2.weight": torch.eye(2), "linear2.bias": torch.zeros(2)}
    x = torch.tensor([[-1.0, 2.0]])
    for activation, want in [("gelu", [[-0.15865525, 1.9544997]]), ("relu", [[0.0, 2.0]])]:
        (got,) = student.module("MLP", (2, 2, activation), state=eye, forwards=[((x,), {})])
        if activation == "gelu":
            expect(not (isinstance(got, np.ndarray) and np.allclose(got, TANH_GELU, atol=1e-6, rtol=0)),
                   "MLP(2, 2, 'gelu') applies the tanh approximation of GELU (approximate='tanh'), which is off "
                   "by up to 5e-4: use the exact erf form, F.gelu(z) or nn.GELU() with no arguments")
        expect_close(got, np.array(want), f"MLP(2, 2, {activation!r}) with identity weights on [-1, 2]")
    negated = {**eye, "linear2.weight": -torch.eye(2)}
    (got,) = student.module("MLP", (2, 2, "relu"), state=negated, forwards=[((x,), {})])
    expect_close(got, np.array([[0.0, -2.0]]),
                 "MLP(2, 2, 'relu') with linear1 = I and linear2 = -I on [-1, 2] should give -relu([-1, 2]) = [0, -2]: "
                 "the activation acts between linear1 and linear2, on the hidden layer, never on the output")


# GELU's tanh approximation at -1 and 2: 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
TANH_GELU = [[-0.15880801, 1.9545977]]


@check("B5", points=1, hidden=False, says="SwiGLU(8, 16) has bias-free w1, w3 (8 -> 16) and w2 (16 -> 8)")
def test_B5_structure(student):
    want = {"w1.weight": [16, 8], "w2.weight": [8, 16], "w3.weight": [16, 8]}
    expect_parameters(student.params("SwiGLU", 8, 16), want, "SwiGLU(8, 16)", " (no biases)")


@check("B5", points=1, hidden=False, says="swiglu_hidden_dim(4096) is Llama's 11008 and swiglu_hidden_dim(512) is 1536")
def test_B5_hidden_dim_example(student):
    for d, want in [(4096, 11008), (512, 1536)]:
        got = as_count(student.call("swiglu_hidden_dim", d), f"swiglu_hidden_dim({d})")
        expect(got == want, f"swiglu_hidden_dim({d}) should be {want}, got {got!r}")


@check("B5", points=1, hidden=False,
       says="SwiGLU(2, 1) with w1 = [[1, 0]], w3 = [[0, 1]], w2 = [[1], [-1]] on x = [2, 3] gives [h, -h] with "
            "h = silu(2) * 3 = 5.284782")
def test_B5_forward_example(student):
    state = {"w1.weight": torch.tensor([[1.0, 0.0]]), "w3.weight": torch.tensor([[0.0, 1.0]]),
             "w2.weight": torch.tensor([[1.0], [-1.0]])}
    (got,) = student.module("SwiGLU", (2, 1), state=state, forwards=[((torch.tensor([[2.0, 3.0]]),), {})])
    h = 2 / (1 + np.exp(-2.0)) * 3      # silu(w1 x) * (w3 x), with silu(z) = z * sigmoid(z)
    expect_close(got, np.array([[h, -h]]),
                 "SwiGLU(2, 1) on [2, 3] with w1 picking the 2 and w3 the 3: the gate is silu(2) = 2 * sigmoid(2), "
                 "the up branch 3 with no activation, and w2 maps their product h to [h, -h]")
