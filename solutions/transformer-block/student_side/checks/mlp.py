"""Checks for `mlp`: the position-wise MLP (B4) and SwiGLU with its hidden width (B5).
C8 (why the nonlinearity is needed) is graded by hand."""

import numpy as np
import torch

from . import as_count, check, expect, expect_close, expect_parameters


@check("B4", points=1, hidden=False,
       says="MLP builds linear1 (d -> d_ff) and linear2 (d_ff -> d), with d_ff = 4d by default; on a hand-made "
            "example with identity weights it applies exact GELU or ReLU")
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
