# Copied from the course's grader by `course release`; edit the original, not this copy.
"""The checks: one module per lesson concept, each check a plain pytest test.

A check is a function ``test_<id>(student)`` decorated with ``@check(...)``, which records its
question, points, whether it is hidden, and one line saying what it checks. ``<id>`` starts with
the question id (``B1_random_affine``) and is also the ``grade_id`` of the notebook cell that runs
it under nbgrader, so both graders award the same points for the same check.

Failure messages are written for the student: they say what was called, on what kind of input,
and how far off it was, never the probe values or the expected numbers of a hidden check.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import Callable

import numpy as np

# The order of concepts is the order of the lesson, and of the checks in results and feedback.
CONCEPTS = ("positions", "norms", "mlp", "blocks", "params", "depth")


@dataclass(frozen=True)
class Question:
    id: str
    notebook: str
    points: float
    concept: str
    names: tuple[str, ...]      # what the student defines (the contract's names)
    manual: bool = False


QUESTIONS = {q.id: q for q in (
    Question("C1", "concepts", 8, "positions", ("q1_sentences", "permutes_with_input", "sinusoidal_positions")),
    Question("C2", "concepts", 2, "depth", ("q2_residual_cousin",)),
    Question("C3", "concepts", 2, "params", ("q3_most_weights",)),
    Question("C4", "concepts", 6, "params", ("attention_weights", "mlp_weights", "q4_ratio")),
    Question("C5", "concepts", 3, "norms", ("q5_layer_norm_u",)),
    Question("C6", "concepts", 5, "blocks", ("q6_decoder_sublayers", "q6_gpt_drops")),
    Question("C7", "concepts", 4, "blocks", ("q7_2017_paper", "q7_modern_default")),
    Question("C8", "concepts", 4, "mlp", (), manual=True),
    Question("B1", "build", 8, "norms", ("layer_norm",)),
    Question("B2", "build", 5, "norms", ("rms_norm",)),
    Question("B3", "build", 10, "norms", ("layer_norm_backward",)),
    Question("B4", "build", 6, "mlp", ("MLP",)),
    Question("B5", "build", 7, "mlp", ("SwiGLU", "swiglu_hidden_dim")),
    Question("B6", "build", 10, "blocks", ("PreNormBlock",)),
    Question("B7", "build", 8, "blocks", ("PostNormBlock",)),
    Question("B8", "build", 10, "params", ("count_parameters",)),
    Question("B9", "build", 6, "depth", ("stack_forward", "residual_jacobian")),
)}

# Tolerances of the student contract.
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

    @property
    def notebook(self) -> str:
        return QUESTIONS[self.question].notebook

    @property
    def uses(self) -> tuple[str, ...]:
        """The student's names this check calls: those its code spells out, else the question's."""
        names = QUESTIONS[self.question].names
        spelled = {node.value for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(self.run))))
                   if isinstance(node, ast.Constant) and node.value in names}
        return tuple(n for n in names if n in spelled) or names


_REGISTRY: dict[str, Check] = {}


def check(question: str, points: float, hidden: bool, says: str):
    """Register ``test_<question>_<name>(student)`` as a check worth ``points``."""
    def register(fn):
        cid = fn.__name__.removeprefix("test_")
        if question not in QUESTIONS or not cid.startswith(question + "_"):
            raise ValueError(f"{fn.__name__}: name it test_{question}_<what>, with a question id of the contract")
        fn.check = _REGISTRY[cid] = Check(cid, question, points, hidden, says, fn)
        return fn
    return register


def all_checks() -> list[Check]:
    """Every check, in lesson order (concept modules are imported on first use)."""
    for concept in CONCEPTS:
        importlib.import_module(f"{__name__}.{concept}")
    order = {q: i for i, q in enumerate(QUESTIONS)}
    return sorted(_REGISTRY.values(), key=lambda c: order[c.question])


def get(check_id: str) -> Check:
    all_checks()
    try:
        return _REGISTRY[check_id]
    except KeyError:
        raise KeyError(f"no check named {check_id!r}; see `course checks` for the list") from None


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
    from visible_checks.student import CheckFailed
    if not condition:
        raise CheckFailed(message)


def expect_close(got, want, what: str, atol: float = ATOL, rtol: float = RTOL) -> None:
    """``got`` (from the student) matches ``want`` in shape and within tolerance."""
    want = np.asarray(want.detach().numpy() if hasattr(want, "detach") else want, dtype=np.float64)
    expect(isinstance(got, np.ndarray), f"{what}: expected a tensor, got {type(got).__name__}")
    expect(got.shape == want.shape, f"{what}: expected shape {tuple(want.shape)}, got {tuple(got.shape)}")
    got = got.astype(np.float64)
    expect(bool(np.isfinite(got).all()), f"{what}: the output has NaN or inf values")
    err = np.abs(got - want)
    ok = err <= atol + rtol * np.abs(want)
    expect(bool(ok.all()), f"{what}: {int((~ok).sum())} of {ok.size} values are off "
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
