"""C1: order, permutations and sinusoidal position codes.

Self-attention without positions treats its input rows as a set: reorder the tokens and the
outputs come back reordered in the same way. The probes below make that checkable, and
`sinusoidal_positions` builds the fixed code that breaks the symmetry.
"""
import math

import torch
from torch import Tensor

# The probe functions of the permutation question are not secret: the grader builds them next to
# student code too, so they live with the grader.
from autograder.student_side.callables import rowwise_mlp, self_attention  # noqa: F401

SENTENCES = ("dog bites man", "man bites dog")


def sinusoidal_positions(n: int, d: int) -> Tensor:
    """Fixed position table PE of shape (n, d), float32.

    p: position index 0..n-1, i: pair index 0..d/2-1, freq_i = 10000^(-2i/d).
    PE[p, 2i] = sin(p * freq_i) and PE[p, 2i+1] = cos(p * freq_i).
    """
    if d <= 0 or d % 2 != 0:
        raise ValueError(
            f"sinusoidal_positions needs a positive even d (sin/cos come in pairs), got d={d}; "
            "pick an even model width"
        )
    if n < 0:
        raise ValueError(f"n must be a non-negative number of positions, got n={n}")
    p = torch.arange(n, dtype=torch.float64).unsqueeze(1)               # (n, 1)
    two_i = torch.arange(0, d, 2, dtype=torch.float64)                  # (d/2,)
    freq = torch.exp(-math.log(10000.0) * two_i / d)                    # (d/2,)
    angle = p * freq                                                    # (n, d/2)
    pe = torch.empty(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(torch.float32)


def permutes_with_input(f, X: Tensor, perm, atol: float = 1e-5) -> bool:
    """True iff reordering the tokens of X reorders f's output the same way.

    X: (..., T, d) with tokens along dim -2; perm: a LongTensor or list of T indices.
    Compares f(X[perm]) with f(X)[perm] elementwise within atol (no relative slack).
    """
    perm = torch.as_tensor(perm, dtype=torch.long)
    with torch.no_grad():
        out_of_permuted = f(X[..., perm, :])
        permuted_out = f(X)[..., perm, :]
    if out_of_permuted.shape != permuted_out.shape:
        return False
    return bool(torch.allclose(out_of_permuted, permuted_out, rtol=0.0, atol=atol))
