"""B4, B5: n features stored as directions in 2 numbers, read back with ReLU(W^T W x + b)."""
from __future__ import annotations

import math

import torch

TOLERANCE = 1e-6    # a readout above this lights up


def feature_directions(n: int) -> torch.Tensor:
    """(2, n): column k is the unit vector at angle 2 pi k / n."""
    angles = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n
    return torch.stack([angles.cos(), angles.sin()]).float()


def readout(x: torch.Tensor, W: torch.Tensor, b) -> torch.Tensor:
    """relu(W^T W x + b) on the last dim: x (..., n), W (m, n), b a number or (n,)."""
    h = x @ W.T                                                      # (..., m): the stored vector
    return torch.relu(h @ W + b)                                     # (..., n)


def interferes(n: int, active, b: float) -> bool:
    """With one unit of each feature in ``active`` switched on, does the readout of
    feature_directions(n) light a feature that is off, or leave an active one dark?"""
    x = torch.zeros(n)
    x[list(active)] = 1.0
    out = readout(x, feature_directions(n), b)
    on = torch.zeros(n, dtype=torch.bool)
    on[list(active)] = True
    return bool((out[~on] > TOLERANCE).any() or (out[on] <= TOLERANCE).any())


BIAS = -0.4
# B5: (n, active features) for each case, all with bias BIAS.
CASES = {
    "pentagon_one": (5, [0]),
    "pentagon_neighbours": (5, [0, 1]),
    "pentagon_non_neighbours": (5, [0, 2]),
    "square_opposite": (4, [0, 2]),
    "hexagon_one": (6, [0]),
    "triangle_two": (3, [0, 1]),
}
ANSWERS = {name: interferes(n, active, BIAS) for name, (n, active) in CASES.items()}
