"""B3: a two-layer MLP that stores (key, value) pairs.

Key i sits in row i of W1: hidden unit i fires when the input lines up with key i. With a bias of
-threshold it fires only above the threshold, so a small overlap with a key, or the overlap
between two nearly perpendicular keys, is cut off. Column i of W2 is what unit i writes back: the
value, scaled by 1 / (1 - threshold) so that the stored key itself (overlap 1) recalls it exactly.
"""
from __future__ import annotations

import torch

from . import Window


def store_pairs(keys: torch.Tensor, values: torch.Tensor, threshold: float = 0.5):
    """keys: (n, d) unit vectors, values: (n, d). Returns W1 (n, d), b1 (n,), W2 (d, n)."""
    W1 = keys.clone()
    b1 = torch.full((keys.shape[0],), -float(threshold), dtype=keys.dtype)
    W2 = values.T / (1 - threshold)
    return W1, b1, W2


def recall(W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """W2 relu(W1 x + b1) for x of shape (d,) or (..., d)."""
    return torch.relu(x @ W1.T + b1) @ W2.T


def orthonormal_keys(n: int, d: int, seed: int, dtype=torch.float32) -> torch.Tensor:
    """n orthonormal rows in R^d (n <= d) from a private generator."""
    gen = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, n, generator=gen, dtype=torch.float64))
    return q.T.contiguous().to(dtype)                                # (n, d)


def random_values(n: int, d: int, seed: int) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed))


def partial_probes(keys: torch.Tensor, overlaps, seed: int) -> torch.Tensor:
    """One probe per (key index, overlap): overlap * keys[i] plus a unit vector perpendicular to
    every key, scaled so the probe has norm 1. Needs n < d."""
    n, d = keys.shape
    gen = torch.Generator().manual_seed(seed)
    k64 = keys.double()
    probes = []
    for i, c in overlaps:
        u = torch.randn(d, generator=gen, dtype=torch.float64)
        u = u - k64.T @ (k64 @ u)                                    # perpendicular to every key
        u = u / u.norm()
        probes.append(c * k64[i] + (1 - c * c) ** 0.5 * u)
    return torch.stack(probes).float()                               # (m, d)


# ---- the reasoning: what a partial match recalls -------------------------------------------


def share_recalled(overlap: float, threshold: float) -> float:
    """How many times v_i comes back for a unit input x with k_i^T x = ``overlap`` (and every other
    overlap at most the threshold): relu(overlap - threshold) / (1 - threshold)."""
    return max(overlap - threshold, 0.0) / (1 - threshold)


def threshold_for_share(overlap: float, share: float) -> float:
    """The threshold at which an input with ``overlap`` recalls ``share`` of its value: solve
    (overlap - t) / (1 - t) = share for t."""
    return (overlap - share) / (1 - share)


SHARE = share_recalled(0.85, 0.4)                # b3_share: 0.75
THRESHOLD = threshold_for_share(0.9, 1 / 3)      # b3_threshold: 0.85

WINDOWS = {
    # 1%: both have exact answers; each trap leaves out one step of the reasoning.
    "b3_share": Window(right=(SHARE,), rtol=0.01, rounded=(0.75,), traps={
        "no rescale (overlap - threshold)": 0.85 - 0.4, "no bias (the overlap)": 0.85,
        "rescaled, no bias": 0.85 / 0.6, "divided by the threshold": (0.85 - 0.4) / 0.4, "all of it": 1.0}),
    "b3_threshold": Window(right=(THRESHOLD,), rtol=0.01, rounded=(0.85,), traps={
        "no rescale (overlap - share)": 0.9 - 1 / 3, "a third of the overlap": 0.3,
        "divided by the threshold": 0.9 / (1 + 1 / 3), "the overlap itself": 0.9}),
}
