"""B3: a two-layer MLP that stores (key, value) pairs.

Key i sits in row i of W1: hidden unit i fires when the input lines up with key i. With a bias of
-threshold it fires only above the threshold, so a small overlap with a key, or the overlap
between two nearly perpendicular keys, is cut off. Column i of W2 is what unit i writes back: the
value, scaled by 1 / (1 - threshold) so that the stored key itself (overlap 1) recalls it exactly.
"""
from __future__ import annotations

import torch


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
