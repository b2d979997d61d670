"""Small functions the grader hands to student code as arguments.

C1 asks whether a function commutes with permuting its input rows, and B9 runs stacks of
sublayers; both need functions to work on. They are built from a plain-data spec so they can be
re-created next to a submission, where only torch is available.

Specs (all weights are tensors the grader chooses):
- ``{"kind": "attention", "wq", "wk", "wv", "causal": bool, "positions": tensor | None}``
- ``{"kind": "rowwise_mlp", "w1", "w2"}``
- ``{"kind": "tanh_layer", "w", "b"}``
- ``{"kind": "roll_rows"}``: moves every row one place down (changes order, keeps values)
"""
from __future__ import annotations

import math

import torch


def self_attention(x, wq, wk, wv, causal=False, positions=None):
    """One head: softmax(Q K^T / sqrt(d_k) + M) V with Q, K, V = h Wq, h Wk, h Wv and h = x (+ positions)."""
    h = x if positions is None else x + positions          # (..., T, d)
    q, k, v = h @ wq, h @ wk, h @ wv                        # (..., T, d_k)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T, T)
    if causal:
        T = x.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return scores.softmax(dim=-1) @ v                       # (..., T, d_k)


def rowwise_mlp(x, w1, w2):
    """relu(x W1) W2, applied to each row on its own."""
    return torch.relu(x @ w1) @ w2


def tanh_layer(x, w, b):
    """tanh(x W + b): a sublayer whose Jacobian shrinks when stacked without residuals."""
    return torch.tanh(x @ w + b)


def build(spec: dict):
    """A plain function x -> y from a spec (see the module docstring)."""
    kind = spec["kind"]
    if kind == "attention":
        wq, wk, wv, causal, pos = spec["wq"], spec["wk"], spec["wv"], bool(spec["causal"]), spec.get("positions")
        return lambda x: self_attention(x, wq, wk, wv, causal, pos)
    if kind == "rowwise_mlp":
        w1, w2 = spec["w1"], spec["w2"]
        return lambda x: rowwise_mlp(x, w1, w2)
    if kind == "roll_rows":
        return lambda x: x.roll(1, dims=-2)
    if kind == "tanh_layer":
        w, b = spec["w"], spec["b"]
        return lambda x: tanh_layer(x, w, b)
    raise ValueError(f"unknown function kind {kind!r}")
