"""The checks students can run: the decorator, the registry, and the helpers every check shares.

This package runs beside student code (in the student's kernel, or in the grader's sandbox child)
and is released to students verbatim, so it holds only the *visible* checks, one module per
lesson concept. The hidden checks live on the grader's side (``autograder/grader_side/checks``)
and register through the same ``@check`` decorator.

A check is a function ``test_<id>(student)`` decorated with ``@check(...)``, which records its
question, points, whether it is hidden, and one line saying what it checks. ``<id>`` starts with
the question id (``B1_random_affine``) and is also the ``grade_id`` of the notebook cell that runs
it under nbgrader, so both graders award the same points for the same check.

Failure messages are written for the student: they say what was called, on what kind of input,
and how far off it was, never the probe values or the expected numbers of a hidden check.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..student import CheckFailed

# The contract's tolerances (values within atol + rtol * |expected|; gradients looser).
ATOL, RTOL = 1e-5, 1e-4
GRAD_ATOL, GRAD_RTOL = 1e-4, 1e-3


@dataclass(frozen=True)
class Check:
    id: str
    question: str
    points: float
    hidden: bool
    says: str
    run: Callable


_REGISTRY: dict[str, Check] = {}


def check(question: str, points: float, hidden: bool, says: str):
    """Register ``test_<question>_<name>(student)`` as a check worth ``points``."""
    def register(fn):
        cid = fn.__name__.removeprefix("test_")
        if not cid.startswith(question + "_"):
            raise ValueError(f"{fn.__name__}: name it test_{question}_<what>, with the question id it checks")
        fn.check = _REGISTRY[cid] = Check(cid, question, points, hidden, says, fn)
        return fn
    return register


# The concept modules of the visible checks, in lesson order.
CONCEPTS = ("positions", "norms", "mlp", "blocks", "params", "depth")


def registered() -> dict[str, Check]:
    """Every check registered so far, by id (the visible ones are imported on first use)."""
    for concept in CONCEPTS:
        importlib.import_module(f"{__name__}.{concept}")
    return dict(_REGISTRY)


def get(check_id: str) -> Check:
    try:
        return registered()[check_id]
    except KeyError:
        raise KeyError(f"no check named {check_id!r} here; check the id in the cell") from None


# ---- helpers the checks share -------------------------------------------------------------

def seeded(module, seed: int):
    """``module`` with every parameter redrawn from its own generator (norm gains around 1).

    Checks run in parallel threads, so they never touch torch's global random state: the same
    check sends the same probes to every submission.
    """
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = 0.3 * torch.randn(p.shape, generator=g)
            p.copy_(1 + noise if name.startswith("norm") and name.endswith("weight") else noise)
    return module


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_close(got, want, what: str, atol: float = ATOL, rtol: float = RTOL) -> None:
    """``got`` (from the student) matches ``want`` in shape and within tolerance."""
    want = np.asarray(want.detach().numpy() if hasattr(want, "detach") else want, dtype=np.float64)
    expect(isinstance(got, np.ndarray), f"{what}: expected a tensor, got {type(got).__name__}")
    expect(got.ndim == want.ndim, f"{what}: the output has {got.ndim} dim(s) where {want.ndim} are expected")
    expect(got.shape == want.shape, f"{what}: the output has the right number of dims, but not the right sizes")
    got = got.astype(np.float64)
    expect(bool(np.isfinite(got).all()), f"{what}: the output has NaN or inf values")
    err = np.abs(got - want)
    ok = err <= atol + rtol * np.abs(want)
    expect(bool(ok.all()), f"{what}: {'every value is' if not ok.any() else 'some values are'} off "
                           f"(largest difference {float(err.max()):.3g})")


def normalize(text) -> str:
    """Lower case, punctuation and hyphens as spaces, single spaces: 'Post-LN.' -> 'post ln'."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", str(text).lower()).split())


def names(text, phrases) -> bool:
    """Whether the normalized ``text`` contains one of ``phrases`` as whole words."""
    padded = f" {normalize(text)} "
    return any(f" {normalize(p)} " in padded for p in phrases)


def expect_answer(value, accepted, wrong, what: str) -> None:
    """A free-text answer names an accepted option and no wrong one (a hedge earns nothing)."""
    expect(isinstance(value, str) and value.strip(), f"{what}: answer with a short string")
    expect(not names(value, wrong), f"{what}: your answer names an option that is not right")
    expect(names(value, accepted), f"{what}: that is not the answer we are looking for")
