"""The toolkit every problem set's checks are written with: the decorator, the registry, and the
helpers the checks share.

This package runs beside student code (in the student's kernel, or in the grader's sandbox child)
and is released to students verbatim with every set. In a release, the set's *visible* checks sit
next to this file, one module per lesson concept (``solutions/<set>/student_side/checks/``); the
hidden ones stay with the grader (``solutions/<set>/grading/checks/``). Both register through the
same ``@check`` decorator.

A check is a function ``test_<id>(student)`` decorated with ``@check(...)``, which records its
question, points, whether it is hidden, and one line saying what it checks. ``<id>`` starts with
the question id and is also the ``grade_id`` of the notebook cell that runs it under nbgrader, so
both graders award the same points for the same check.

A module may also declare ``FORMS``: answer variable -> a reader that raises ``CheckFailed`` unless
the answer has a form the grader can read (``ready()`` runs them in the notebook).

Failure messages are written for the student: they say what was called, on what kind of input,
and how far off it was, never the probe values or the expected numbers of a hidden check.
"""
from __future__ import annotations

import contextvars
import functools
import importlib
import pkgutil
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import numbers
from ..student import ON_INPUT, CheckFailed

# The default tolerances (values within atol + rtol * |expected|; gradients looser).
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


def check(question: str, points: float, hidden: bool, says: str):
    """Mark ``test_<question>_<name>(student)`` as a check worth ``points`` (``fn.check``)."""
    def register(fn):
        cid = fn.__name__.removeprefix("test_")
        if not cid.startswith(question + "_"):
            raise ValueError(f"{fn.__name__}: name it test_{question}_<what>, with the question id it checks")
        fn.check = Check(cid, question, points, hidden, says, _on_hidden_input(fn) if hidden else fn)
        return fn
    return register


def _on_hidden_input(fn: Callable) -> Callable:
    """A hidden check, run so that what the student's code raises on its input is told by kind
    only (``Student.hidden_input``): a message the student writes could show that input."""
    @functools.wraps(fn)
    def run(student):
        student.hidden_input = True
        hidden = _HIDDEN.set(True)      # and no number the student's output sets is shown (expect_close)
        try:
            return fn(student)
        finally:
            _HIDDEN.reset(hidden)
    return run


# Whether the check running in this thread is hidden: its messages show no number the student's
# output sets (code could set it from the hidden input: 1e6 * x[0] as "the largest difference").
_HIDDEN: contextvars.ContextVar[bool] = contextvars.ContextVar("hidden_input", default=False)


def _opaque() -> bool:
    """Whether a message may describe the value just read no further than its kind: on a hidden
    check, a reply to its input (code can set its shape, size or text from that input)."""
    return _HIDDEN.get() and ON_INPUT.get()


def checks_in(module) -> list[Check]:
    """The checks a module defines, in the order it defines them."""
    return [fn.check for fn in vars(module).values() if isinstance(getattr(fn, "check", None), Check)]


# Checks and answer forms a grader adds to the ones beside this file (the hidden ones, in-kernel).
_ADDED: dict[str, Check] = {}


def add(found: dict[str, Check]) -> None:
    _ADDED.update(found)


@functools.lru_cache(maxsize=None)
def _modules() -> tuple:
    """The check modules next to this file (the released set's visible checks)."""
    return tuple(importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__))


def registered() -> dict[str, Check]:
    """Every check here, by id: the visible ones next to this file and those a grader added."""
    return {**{c.id: c for m in _modules() for c in checks_in(m)}, **_ADDED}


def forms() -> dict[str, Callable]:
    """answer variable -> reader of its form, from every check module next to this file."""
    return {name: read for m in _modules() for name, read in getattr(m, "FORMS", {}).items()}


def written_out() -> dict[str, str]:
    """answer variable -> why it must be written as a value, not computed (``WRITTEN_OUT`` of the
    check modules): the grader runs the notebook without what it would be computed from."""
    return {name: why for m in _modules() for name, why in getattr(m, "WRITTEN_OUT", {}).items()}


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
    expect(got.ndim == want.ndim, f"{what}: the output " + (f"does not have the {want.ndim} dim(s) expected"
                                                          if _HIDDEN.get() else
                                                          f"has {got.ndim} dim(s) where {want.ndim} are expected"))
    expect(got.shape == want.shape, f"{what}: the output has the right number of dims, but not the right sizes")
    got = got.astype(np.float64)
    expect(bool(np.isfinite(got).all()), f"{what}: the output has NaN or inf values")
    err = np.abs(got - want)
    ok = err <= atol + rtol * np.abs(want)
    how_far = "" if _HIDDEN.get() else f" (largest difference {float(err.max()):.3g})"   # set from a hidden input
    expect(bool(ok.all()), f"{what}: {'every value is' if not ok.any() else 'some values are'} off{how_far}")


# ---- answers given as values: what form the grader can read ---------------------------------
#
# The readers below turn an answer, as it arrives from the notebook (``wire`` makes numpy scalars
# Python numbers and tensors numpy arrays), into the plain value a check compares. They judge the
# form only, never whether the answer is right, so ``ready()`` runs them in the notebook too.

def number_in_text(text: str):
    """The one number a short text states ("2", "201,326,592", "512/256", "6.7 billion"), else None
    (``numbers.read`` has the rules)."""
    return numbers.read(text).value


def as_number(value, what: str, unit: numbers.Unit | None = None) -> float:
    """A number as a float: a Python or numpy number, a 0-d tensor, or a number written as text
    ("2.0", "201,326,592", "6.7 billion", "about 14 GB", "2, because ...": ``numbers.read``).
    Text the grader cannot read as exactly one number goes to a TA, quoted; a unit of ``unit``'s
    kind that is not it loses the point, or goes to a TA, by ``unit.other_is_wrong``."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        expect(np.isfinite(value), f"{what}: give a finite number")
        return float(value)
    if isinstance(value, str):
        reading = numbers.read(value, unit)
        unreadable = reading.value is None or (unit is not None and reading.unit is not None
                                               and reading.unit not in unit.spellings)
        expect(not (unreadable and _opaque()), f"{what}: give a number; the text returned on this check's hidden "
                                               "input is not one the grader reads as a number in the unit asked")
        if reading.value is None:
            raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} (the grader cannot read it as "
                              f"one number: {reading.problem}); its points wait for that review", value)
        if unit is not None and reading.unit is not None and reading.unit not in unit.spellings:
            asked = f"the question asks for {unit.name} ({unit.meaning}), and your answer is in {reading.unit}"
            if reading.unit in unit.others and unit.other_is_wrong:
                raise CheckFailed(f"{what}: {asked}; give the number in {unit.name}")
            raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} ({asked}); its points wait for "
                              "that review", value)
        return reading.value
    if isinstance(value, np.ndarray):
        shape = "" if _opaque() else f" of shape {tuple(value.shape)}"
        raise CheckFailed(f"{what}: give one number, not a tensor{shape} (a 0-d tensor, a float or an int all work)")
    raise CheckFailed(f"{what}: give a number (a float, an int or a 0-d tensor), not {_kind(value)}")


def as_numbers(value, n: int, what: str) -> np.ndarray:
    """``n`` numbers as a float64 array: a list or tuple of numbers (in any form ``as_number``
    reads), a tensor of ``n`` values, or text such as "[1, -1]" or "1, -1"."""
    if isinstance(value, str):
        bare = value.strip().strip("[]()").strip()
        pieces = [p for p in re.split(r"[,;]|\s+(?=[-+\u2212]?[\d.])", bare) if p.strip()]
        found = [number_in_text(p) for p in pieces]
        if len(found) == n and None not in found:
            return np.array(found, dtype=np.float64)
        expect(not _opaque(), f"{what}: give exactly {n} numbers; the text returned on this check's hidden input "
                              "is not one the grader reads as such")
        raise NeedsReview(f"{what}: a TA will read your answer {quoted(value)} (the grader cannot read it as "
                          f"{n} numbers); its points wait for that review", value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        expect(value.size == n, f"{what}: give exactly {n} numbers, e.g. [a, b]"
                                + ("" if _opaque() else f"; this tensor holds {value.size}"))
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


def as_table(value, keys, what: str, read, form: str) -> dict:
    """A dict of named answers with exactly ``keys``, each read by ``read(answer, label)``;
    ``form`` shows the dict's shape in messages (``"{case name: True or False}"``)."""
    expect(isinstance(value, dict), f"{what} must be a dict {form}")
    missing = [k for k in keys if k not in value]
    expect(not missing, f"{what} is missing {', '.join(repr(k) for k in missing)}: give every item of the TODO "
                        "box, with its name spelled as given")
    extra = sorted(k for k in value if k not in keys)
    expect(not extra, f"{what} has keys the TODO box does not list" + ("" if _opaque() else
                                                                      f": {', '.join(repr(k) for k in extra)}"))
    return {k: read(value[k], f"{what}[{k!r}]") for k in keys}


def table_item(value, key: str, what: str, read, form: str):
    """One answer of such a dict, read on its own: a missing, misspelled or unreadable other item
    costs only its own point."""
    expect(isinstance(value, dict), f"{what} must be a dict {form}")
    expect(key in value, f"{what} has no {key!r}: give every item of the TODO box, with its name spelled as given")
    return read(value[key], f"{what}[{key!r}]")


def _kind(value) -> str:
    """What a value is, in a student's words: 'float', 'str', 'tensor of shape (2,)'."""
    if isinstance(value, np.ndarray):
        return "a tensor" if _opaque() else f"a tensor of shape {tuple(value.shape)} ({value.dtype.name})"
    return f"a {type(value).__name__}"


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
    expect(shown == want, f"{label} does not have the parameters asked{note}" if _HIDDEN.get() else
           f"{label} should have parameters {want}{note}, it has {shown}")


class NeedsReview(CheckFailed):
    """A free-text answer the grader can neither accept nor reject: a TA decides. The check
    scores 0 until then; ``answer`` is the student's text, quoted in results, CSV and feedback."""

    def __init__(self, message: str, answer: str):
        super().__init__(message)
        self.answer = quoted(answer)


# ---- words: what a short answer says, and whether it hedges ----------------------------------

# Words that never change what a short answer names.
FILLER = frozenset({"a", "an", "the"})
# Words that turn two named options into one hedged answer.
HEDGES = frozenset({"or", "either", "maybe", "perhaps", "possibly", "unsure"})


def words(text) -> list[str]:
    """Lower-case words of ``text``: punctuation, hyphens and articles dropped."""
    return [w for w in re.sub(r"[^a-z0-9]+", " ", str(text).lower()).split() if w not in FILLER]


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
