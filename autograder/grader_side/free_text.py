"""Free-text answers: accepted in any natural form, wrong options rejected, anything else sent to
a TA with the answer quoted (``NeedsReview``, never a silent 0).

Only hidden checks use this matcher, so it stays with the grader and is not released.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from autograder.student_side.checks import NeedsReview, as_text, as_texts, expect, hedges, quoted, words
from autograder.student_side.student import CheckFailed

# Words after which a named option may be denied rather than given.
NEGATIONS = frozenset({"not", "no", "never", "unlike", "instead", "rather", "isn", "isnt", "nor", "neither"})


def normalize(text: object) -> str:
    """'The Post-LN.' -> 'post ln': lower case, punctuation, hyphens and articles gone."""
    return " ".join(words(text))


def _spans(text_words: list[str], phrases: Iterable[str]) -> list[tuple[int, int]]:
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
def _glued(phrases: frozenset[str]) -> frozenset[str]:
    """Each phrase's words run together ('Feed-forward' -> 'feedforward'), once per set of phrases."""
    return frozenset("".join(words(p)) for p in phrases) - {""}


def _outside(spans: list[tuple[int, int]], others: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """spans not lying inside a longer span of another option ('masked multi head attention'
    contains 'multi head attention')."""
    return [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in others)]


def names(text: object, phrases: Iterable[str]) -> bool:
    """Whether ``text`` names one of ``phrases`` (whole words, case, punctuation, articles ignored)."""
    return bool(_spans(words(text), phrases))


def placed(text: object, options: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """option name -> "named" or "denied" for each option (name -> phrases) that ``text`` names.

    A phrase inside a longer phrase of another option does not count ('sea lion' names no plain
    'lion'); one right after "not", "no", "unlike"...
    is denied ("a cat, not a dog")."""
    w = words(text)
    found = {k: _spans(w, v) for k, v in options.items()}
    every = [s for spans in found.values() for s in spans]
    out: dict[str, str] = {}
    for k, spans in found.items():
        kept = _outside(spans, every)
        if kept:
            denied = all(NEGATIONS & set(w[max(0, s[0] - 2):s[0]]) for s in kept)
            out[k] = "denied" if denied else "named"
    return out


def expect_answer(value: object, accepted: Iterable[str], wrong: Iterable[str], what: str,
                  formulas: Iterable[tuple[re.Pattern[str], str]] = ()) -> None:
    """A free-text answer names an accepted option and no wrong one.

    Accepted: the answer in any natural form (articles, capitals, punctuation, a sentence, an
    explanation after it, a wrong option it denies). Rejected: a wrong option, or a hedge
    between options ("A or B"). Anything else (an option the grader does not know, a right and a
    wrong option side by side, a denied right one, the right one beside "or" and an option the
    grader does not know) raises ``NeedsReview``: a TA reads it. ``formulas`` are (pattern, phrase)
    pairs: text a pattern matches (a formula) is read as that phrase.
    """
    answer = as_text(value, what)
    text = answer
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
    raise NeedsReview(f"{what}: a TA will read your answer {quoted(answer)} ({why}); "
                      "its points wait for that review", answer)


# ---- answers made of several strings ---------------------------------------------------------

def expect_sentence_pair(value: object, pair: Iterable[str], what: str) -> None:
    """Two strings that are the lesson's pair of sentences (same words, other order)."""
    texts = as_texts(value, 2, what, "sentence")
    given = [tuple(words(s)) for s in texts]
    if {" ".join(g) for g in given} == {normalize(s) for s in pair}:
        return
    expect(all(given), f"{what}: one of the two strings is empty")
    expect(sorted(given[0]) == sorted(given[1]),
           f"{what}: the two sentences should use exactly the same words, in another order")
    expect(given[0] != given[1], f"{what}: the two sentences are the same; swap who does what")
    raise NeedsReview(f"{what}: a TA will read your sentences {quoted(texts[0])} and {quoted(texts[1])} "
                      "(same words, other order, but not the lesson's example); their points wait for that review",
                      " / ".join(texts))


def expect_parts(value: object, parts: Mapping[str, Iterable[str]], wrong: Iterable[str], generic: Iterable[str],
                 what: str, noun: str = "sublayer") -> dict[str, str]:
    """Each string of ``value`` names one distinct part of ``parts`` (name -> phrases), together
    naming them all, in any order. A string that is only a ``generic`` label ("Multi-Head
    Attention") is the part the other strings leave over. Returns string -> part name."""
    texts = as_texts(value, len(parts), what, noun)
    found: dict[str, str] = {}
    unknown: list[str] = []
    open_: list[str] = []
    for s in texts:
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
                      "its points wait for that review", " / ".join(texts))
