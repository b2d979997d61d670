"""B4, B5, C3: the position-wise MLP, its gated SwiGLU variant, and where the weights sit."""
import torch.nn as nn
import torch.nn.functional as F

_ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu}     # F.gelu defaults to the exact erf form


class MLP(nn.Module):
    """linear2(act(linear1(x))) applied to every token on its own.

    d_model -> d_ff (default 4 * d_model) -> d_model; act is exact GELU or ReLU.
    bias switches the biases of both Linear layers (on by default, as in the contract).
    """

    def __init__(self, d_model: int, d_ff: int | None = None, activation: str = "gelu",
                 bias: bool = True):
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"unknown activation {activation!r}; use one of {sorted(_ACTIVATIONS)}"
            )
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.activation = activation
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x):                                   # x: (..., d)
        h = _ACTIVATIONS[self.activation](self.linear1(x))  # (..., d_ff)
        return self.linear2(h)                              # (..., d)


class SwiGLU(nn.Module):
    """w2(silu(w1 x) * w3 x): w1 is the gate, w3 the up projection, w2 the down projection.

    Three matrices instead of two, so d_ff is usually about 2/3 of 4 * d_model (see
    swiglu_hidden_dim). Bias-free by default, as in Llama.
    """

    def __init__(self, d_model: int, d_ff: int, bias: bool = False):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=bias)      # gate
        self.w3 = nn.Linear(d_model, d_ff, bias=bias)      # up
        self.w2 = nn.Linear(d_ff, d_model, bias=bias)      # down

    def forward(self, x):                                   # x: (..., d)
        h = F.silu(self.w1(x)) * self.w3(x)                 # (..., d_ff)
        return self.w2(h)                                   # (..., d)


def swiglu_hidden_dim(d_model: int, multiple_of: int = 256) -> int:
    """int(2/3 * 4 * d_model), rounded up to the next multiple of multiple_of."""
    if multiple_of <= 0:
        raise ValueError(f"multiple_of must be a positive integer, got {multiple_of}")
    hidden = int(2 * 4 * d_model / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)
