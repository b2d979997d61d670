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

import functools
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


class NeedsReview(CheckFailed):
    """A free-text answer the grader can neither accept nor reject: a TA decides. The check
    scores 0 until then; ``answer`` is the student's text, quoted in results, CSV and feedback."""

    def __init__(self, message: str, answer: str):
        super().__init__(message)
        self.answer = quoted(answer)


# Words that never change what a short answer names.
FILLER = frozenset({"a", "an", "the"})
# Words that turn two named options into one hedged answer.
HEDGES = frozenset({"or", "either", "maybe", "perhaps", "possibly", "unsure"})
# Words after which a named option may be denied rather than given.
NEGATIONS = frozenset({"not", "no", "never", "unlike", "instead", "rather", "isn", "isnt", "nor", "neither"})


def words(text) -> list[str]:
    """Lower-case words of ``text``: punctuation, hyphens and articles dropped."""
    return [w for w in re.sub(r"[^a-z0-9]+", " ", str(text).lower()).split() if w not in FILLER]


def normalize(text) -> str:
    """'The Post-LN.' -> 'post ln': lower case, punctuation, hyphens and articles gone."""
    return " ".join(words(text))


def _spans(text_words, phrases) -> list[tuple[int, int]]:
    """Where phrases occur as whole words; 'feedforward' and 'feed forward' (and a plural s) alike."""
    joined = _glued(frozenset(phrases))
    spans = []
    for i in range(len(text_words)):
        glued = ""
        for j in range(i, min(len(text_words), i + 12)):
            glued += text_words[j]
            if glued in joined or (glued.endswith("s") and glued[:-1] in joined):
                spans.append((i, j + 1))
    return spans


@functools.lru_cache(maxsize=None)
def _glued(phrases: frozenset) -> frozenset:
    """Each phrase's words run together ('Feed-forward' -> 'feedforward'), once per set of phrases."""
    return frozenset("".join(words(p)) for p in phrases) - {""}


def _outside(spans, others) -> list:
    """spans not lying inside a longer span of another option ('masked multi head attention'
    contains 'multi head attention')."""
    return [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in others)]


def names(text, phrases) -> bool:
    """Whether ``text`` names one of ``phrases`` (whole words, case, punctuation, articles ignored)."""
    return bool(_spans(words(text), phrases))


def placed(text, options: dict) -> dict:
    """option name -> "named" or "denied" for each option (name -> phrases) that ``text`` names.

    A phrase inside a longer phrase of another option does not count ('sea lion' names no plain
    'lion'); one right after "not", "no", "unlike"...
    is denied ("a cat, not a dog")."""
    w = words(text)
    found = {k: _spans(w, v) for k, v in options.items()}
    every = [s for spans in found.values() for s in spans]
    out = {}
    for k, spans in found.items():
        kept = _outside(spans, every)
        if kept:
            denied = all(NEGATIONS & set(w[max(0, s[0] - 2):s[0]]) for s in kept)
            out[k] = "denied" if denied else "named"
    return out


def quoted(value) -> str:
    text = " ".join(str(value).split())
    return repr(text if len(text) <= 200 else text[:200] + "...")


def expect_answer(value, accepted, wrong, what: str) -> None:
    """A free-text answer names an accepted option and no wrong one.

    Accepted: the answer in any natural form (articles, capitals, punctuation, a sentence, an
    explanation after it, a wrong option it denies). Rejected: a wrong option, or a hedge
    between options ("A or B"). Anything else (an option the grader does not know, a right and a
    wrong option side by side, a denied right one, the right one beside "or" and an option the
    grader does not know) raises ``NeedsReview``: a TA reads it.
    """
    expect(isinstance(value, str) and value.strip(), f"{what}: answer with a short string")
    hits = placed(value, {"right": accepted, "wrong": wrong})
    hedged = bool(set(words(value)) & HEDGES) or "/" in value
    right, wrong_ = hits.get("right"), hits.get("wrong")
    if right and wrong_ and hedged:
        raise CheckFailed(f"{what}: your answer hedges between options: give one")
    if right == "named" and wrong_ in (None, "denied") and not hedged:
        return
    if wrong_ == "named" and right is None:
        raise CheckFailed(f"{what}: your answer names an option that is not right")
    why = ("the grader does not know this answer" if not hits else
           "it names a right and a wrong option" if right == wrong_ == "named" else "it denies an option")
    raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} ({why}); "
                      "its points wait for that review", value)


# ---- C1 and C6: answers made of several strings -------------------------------------------

def expect_sentence_pair(value, pair, what: str) -> None:
    """Two strings that are the lesson's pair of sentences (same words, other order)."""
    expect(isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(s, str) for s in value),
           f"{what}: give a list (or tuple) of exactly two strings")
    given = [tuple(words(s)) for s in value]
    if {" ".join(g) for g in given} == {normalize(s) for s in pair}:
        return
    expect(all(given), f"{what}: one of the two strings is empty")
    expect(sorted(given[0]) == sorted(given[1]),
           f"{what}: the two sentences should use exactly the same words, in another order")
    expect(given[0] != given[1], f"{what}: the two sentences are the same; swap who does what")
    raise NeedsReview(f"{what}: a TA will read your sentences {quoted(value[0])} and {quoted(value[1])} "
                      "(same words, other order, but not the lesson's example); their points wait for that review",
                      " / ".join(value))


def expect_parts(value, parts: dict, wrong, generic, what: str, noun="sublayer") -> dict:
    """Each string of ``value`` names one distinct part of ``parts`` (name -> phrases), together
    naming them all, in any order. A string that is only a ``generic`` label ("Multi-Head
    Attention") is the part the other strings leave over. Returns string -> part name."""
    n = len(parts)
    expect(isinstance(value, (list, tuple)) and len(value) == n and all(isinstance(s, str) for s in value),
           f"{what}: give a list of exactly {n} strings, one per {noun}")
    found, unknown, open_ = {}, [], []
    for s in value:
        hits = [k for k, v in placed(s, {**parts, "": wrong}).items() if v == "named"]
        expect("" not in hits or len(hits) > 1, f"{what}: {quoted(s)} is not one of the {noun}s")
        hits = [k for k in hits if k]
        expect(len(hits) <= 1, f"{what}: {quoted(s)} names more than one {noun}: give one per string")
        if hits:
            expect(hits[0] not in found.values(), f"{what}: two strings name the {hits[0]}; one {noun} is missing")
            found[s] = hits[0]
        elif normalize(s) in {normalize(g) for g in generic}:
            open_.append(s)
        else:
            unknown.append(s)
    left = [k for k in parts if k not in found.values()]
    if len(open_) == 1 and not unknown and len(left) == 1:
        found[open_[0]] = left[0]          # by elimination: the one the other strings leave over
        return found
    expect(len(open_) <= 1, f"{what}: {len(open_)} strings name attention without saying which one")
    if not unknown and not open_:
        return found
    raise NeedsReview(f"{what}: a TA will read {quoted((unknown + open_)[0])} (the grader could not place it); "
                      "its points wait for that review", " / ".join(value))
