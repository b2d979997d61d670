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


# ---- answers given as values: what form the grader can read ---------------------------------
#
# The readers below turn an answer, as it arrives from the notebook (``wire`` makes numpy scalars
# Python numbers and tensors numpy arrays), into the plain value a check compares. They judge the
# form only, never whether the answer is right, so ``ready()`` runs them in the notebook too.

# A number as text: "2", "-1.5", "1e-3", or a fraction or ratio of two such ("512/256", "2:1").
_DECIMAL = r"[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_TEXT = re.compile(rf"\s*({_DECIMAL})\s*(?:([/:])\s*({_DECIMAL}))?\s*")
# A number at the start of a sentence that explains it ("2, because ..."), up to a separator.
_LEADING_NUMBER = re.compile(rf"\s*((?:{_DECIMAL})(?:\s*[/:]\s*{_DECIMAL})?)(?=\s|[,;:()\u2014-]|$)")


def _decimal(text: str) -> float:
    return float(text.replace("\u2212", "-"))


def number_in_text(text: str):
    """The number a short text states ("2", "2.0", "512/256", "2:1"), else None."""
    found = _NUMBER_TEXT.fullmatch(text)
    if not found:
        return None
    value = _decimal(found.group(1))
    if found.group(2):
        below = _decimal(found.group(3))
        if below == 0:
            return None
        value /= below
    return value if np.isfinite(value) else None


def as_number(value, what: str) -> float:
    """A number as a float: a Python or numpy number, a 0-d tensor, or a number written as text
    ("2.0", "512/256", "2, because ..."). Text the grader cannot read as one number goes to a TA."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        expect(np.isfinite(value), f"{what}: give a finite number")
        return float(value)
    if isinstance(value, str):
        found = number_in_text(value)
        leading = _LEADING_NUMBER.match(value)
        if found is None and leading and not hedges(value[leading.end():]):
            found = number_in_text(leading.group(1))
        if found is not None:
            return found
        raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} (the grader cannot read it as "
                          "one number); its points wait for that review", value)
    if isinstance(value, np.ndarray):
        expect(False, f"{what}: give one number, not a tensor of shape {tuple(value.shape)} "
                      "(a 0-d tensor, a float or an int all work)")
    expect(False, f"{what}: give a number (a float, an int or a 0-d tensor), not {_kind(value)}")


def as_numbers(value, n: int, what: str) -> np.ndarray:
    """``n`` numbers as a float64 array: a list or tuple of numbers (in any form ``as_number``
    reads), a tensor of ``n`` values, or text such as "[1, -1]" or "1, -1"."""
    if isinstance(value, str):
        pieces = [p for p in re.split(r"[,;]|\s+(?=[-+\u2212]?[\d.])", value.strip().strip("[]()").strip()) if p.strip()]
        found = [number_in_text(p) for p in pieces]
        if len(found) == n and None not in found:
            return np.array(found, dtype=np.float64)
        raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} (the grader cannot read it as "
                          f"{n} numbers); its points wait for that review", value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        expect(value.size == n, f"{what}: give exactly {n} numbers, e.g. [a, b]; this tensor holds {value.size}")
        return value.astype(np.float64).reshape(-1)
    expect(isinstance(value, list) and len(value) == n, f"{what}: give exactly {n} numbers, e.g. [a, b]")
    numbers = []
    for item in value:
        expect(not isinstance(item, str), f"{what}: give the {n} numbers as numbers, not as text in a list")
        numbers.append(as_number(item, what))
    return np.array(numbers, dtype=np.float64)


def as_count(value, what: str) -> int:
    """A whole count as an int: a Python or numpy int, or a 0-d integer tensor (not a float, even a
    whole one: the question asks for an int)."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        value = value.item()
    expect(isinstance(value, int) and not isinstance(value, bool),
           f"{what} must be an int, got {_kind(value)}: count with integers (// instead of /, int(...) "
           "around a float)")
    return value


def as_text(value, what: str) -> str:
    """A free-text answer: a non-empty string."""
    expect(isinstance(value, str) and bool(value.strip()), f"{what}: answer with a short string")
    return value


def as_texts(value, n: int, what: str, noun: str = "string") -> list[str]:
    """``n`` strings, in a list or a tuple."""
    expect(isinstance(value, list) and len(value) == n and all(isinstance(s, str) for s in value),
           f"{what}: give a list (or tuple) of exactly {n} strings, one per {noun}")
    return value


def _kind(value) -> str:
    """What a value is, in a student's words: 'float', 'str', 'tensor of shape (2,)'."""
    if isinstance(value, np.ndarray):
        return f"a tensor of shape {tuple(value.shape)} ({value.dtype.name})"
    return f"a {type(value).__name__}"


# The form each answer variable of the contract must have to be graded (the TODO boxes say it).
FORMS = {
    "q1_sentences": lambda v: as_texts(v, 2, "q1_sentences", "sentence"),
    "q2_residual_cousin": lambda v: as_text(v, "q2_residual_cousin"),
    "q3_most_weights": lambda v: as_text(v, "q3_most_weights"),
    "q4_ratio": lambda v: as_number(v, "q4_ratio"),
    "q5_layer_norm_u": lambda v: as_numbers(v, 2, "q5_layer_norm_u"),
    "q6_decoder_sublayers": lambda v: as_texts(v, 3, "q6_decoder_sublayers", "sublayer"),
    "q6_gpt_drops": lambda v: as_text(v, "q6_gpt_drops"),
    "q7_2017_paper": lambda v: as_text(v, "q7_2017_paper"),
    "q7_modern_default": lambda v: as_text(v, "q7_modern_default"),
}


def expect_parameters(groups, want: dict, label: str, note: str = "") -> None:
    """A module's parameters (a ``Student.params`` reply) are exactly ``want`` (name -> shape).

    Each distinct parameter must carry one of the asked names, with the asked shape; other names of
    the same tensor (the submodule also kept in an ``nn.Sequential``) do not count as more parameters.
    """
    expect(isinstance(groups, list) and all(isinstance(g, list) and len(g) == 2 and isinstance(g[0], list)
                                            and g[0] for g in groups),
           f"{label}: the grader could not read this module's parameters")
    shown = {}
    for names, shape in groups:
        asked = [n for n in names if n in want]
        shown[str(asked[0] if asked else names[0])] = shape
    expect(shown == want, f"{label} should have parameters {want}{note}, it has {shown}")


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


# A "/" with a letter on either side offers two options ("LSTM/GRU"); between numbers ("3/1",
# "1/-1") it is a fraction or a pair, not a hedge.
_SLASH_BETWEEN_WORDS = re.compile(r"[^\W\d_]\s*/|/\s*[^\W\d_]")


def hedges(text) -> bool:
    """Whether ``text`` offers more than one option: a hedging word ("or", "maybe"...) or a "/"
    between words."""
    return bool(set(words(text)) & HEDGES) or bool(_SLASH_BETWEEN_WORDS.search(str(text)))


def quoted(value) -> str:
    text = " ".join(str(value).split())
    return repr(text if len(text) <= 200 else text[:200] + "...")


def expect_answer(value, accepted, wrong, what: str, formulas=()) -> None:
    """A free-text answer names an accepted option and no wrong one.

    Accepted: the answer in any natural form (articles, capitals, punctuation, a sentence, an
    explanation after it, a wrong option it denies). Rejected: a wrong option, or a hedge
    between options ("A or B"). Anything else (an option the grader does not know, a right and a
    wrong option side by side, a denied right one, the right one beside "or" and an option the
    grader does not know) raises ``NeedsReview``: a TA reads it. ``formulas`` are (pattern, phrase)
    pairs: text a pattern matches (a formula) is read as that phrase.
    """
    value = as_text(value, what)
    text = value
    for pattern, phrase in formulas:
        text = pattern.sub(f" {phrase} ", text)
    hits = placed(text, {"right": accepted, "wrong": wrong})
    hedged = hedges(text)
    right, wrong_ = hits.get("right"), hits.get("wrong")
    if right and wrong_ and hedged:
        raise CheckFailed(f"{what}: your answer hedges between options: give one")
    if right == "named" and wrong_ in (None, "denied") and not hedged:
        return
    if wrong_ == "named" and right is None:
        raise CheckFailed(f"{what}: your answer names an option that is not right")
    why = ("it hedges between options" if hedged else
           "the grader does not know this answer" if not hits else
           "it names a right and a wrong option" if right == wrong_ == "named" else "it denies an option")
    raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} ({why}); "
                      "its points wait for that review", value)


# ---- C1 and C6: answers made of several strings -------------------------------------------

def expect_sentence_pair(value, pair, what: str) -> None:
    """Two strings that are the lesson's pair of sentences (same words, other order)."""
    as_texts(value, 2, what, "sentence")
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
    as_texts(value, len(parts), what, noun)
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
