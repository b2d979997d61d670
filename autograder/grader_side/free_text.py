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
# Words the answer itself may hold beside its option ("It is the MLP sublayer"): anything else there
# ("the MLP holds fewer", "post-norm came later", "anything but the MLP", "LSTM and GRU") may say
# something else of the option than that it is the answer, so a TA reads it.
PLAIN = frozenset({"it", "is", "s", "its", "this", "that", "answer", "one", "ones", "called", "named", "yes",
                   "sublayer", "sublayers", "layer", "layers", "block", "blocks", "network", "networks", "part",
                   "parts", "module", "modules", "weights", "parameters", "params", "placement", "version",
                   "variant", "cell", "unit", "and", "position", "wise", "positionwise", "paper", "used", "uses",
                   "use", "original", "transformer"})
# In the explanation after the answer, words that call the answer wrong or unsure ("LSTM. Nope.").
TAKEN_BACK = frozenset({"wrong", "incorrect", "false", "wait", "guess", "sure", "unsure", "nope", "nah", "jk",
                        "kidding", "doubt", "dunno", "joke"})
# "no," or "no wait": the answer takes back what came before it.
_RETRACTION = re.compile(r"\bno\b\s*(?:[,.;:!)\-]|wait\b)", re.IGNORECASE)
# Where the answer's explanation starts ("LSTM: its cell state...", "cross-attention, since ...",
# "pre-norm (GPT-2, Llama)").
_EXPLAINED = re.compile(r"[:,;(]|\.(?:\s|$)|\s[-\u2013\u2014]\s|"
                        r"\b(?:because|since|as|so|which|where|while|when|due|given)\b", re.IGNORECASE)
# Marks that strike out or deny what they stand by (a crossed-out ~~LSTM~~, "LSTM \u2260 answer", "\u274c LSTM").
_ODD = re.compile(r"[~\u00ac\u2260\u2715-\u2718\u274c\u274e]|!=")


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
    """A free-text answer names an accepted option and no wrong one, as a careful TA reads it.

    The answer is what comes before its explanation (``_EXPLAINED``: "LSTM: its cell state ...").
    Accepted: the answer is the right option in any natural form (articles, capitals, a wrong option
    it denies: "the MLP, not attention"), and its explanation neither calls it wrong, asks, nor names
    a wrong option. Rejected: the answer is only a wrong option, or hedges between a right and a wrong
    one ("A or B"). Anything else (an option the grader does not know, more words in the answer than
    its option, a question mark, an answer taken back, a wrong option in the explanation) raises
    ``NeedsReview``: a TA reads it. ``formulas`` are (pattern, phrase) pairs: text a pattern
    matches (a formula) is read as that phrase.
    """
    answer = as_text(value, what)
    text = answer
    for pattern, phrase in formulas:
        text = pattern.sub(f" {phrase} ", text)
    options = {"right": accepted, "wrong": wrong}
    known = [*accepted, *wrong]
    cut = next((m.start() for m in _EXPLAINED.finditer(text) if names(text[:m.start()], known)), len(text))
    head, tail = text[:cut], text[cut:]
    said, explained = placed(head, options), placed(tail, options)
    right, wrong_ = said.get("right"), said.get("wrong")
    if right and wrong_ and hedges(head):
        raise CheckFailed(f"{what}: your answer hedges between options: give one")
    plain = _plain(head, known) and not hedges(head)
    if right == "named" and wrong_ in (None, "denied") and plain:
        doubt = _doubted(text, tail, explained)
        if not doubt:
            return
    else:
        doubt = None
    if wrong_ == "named" and right is None and plain and "right" not in explained:
        raise CheckFailed(f"{what}: your answer names an option that is not right")
    hits = {**explained, **said}
    why = ("it hedges between options" if hedges(text) else
           "the grader does not know this answer" if not hits else
           "it names a right and a wrong option" if right == wrong_ == "named" else
           doubt or ("it says more than the option" if right == "named" and not plain else "it denies an option"))
    raise NeedsReview(f"{what}: a TA will read your answer {quoted(answer)} ({why}); "
                      "its points wait for that review", answer)


def _plain(head: str, known: Iterable[str]) -> bool:
    """Whether the answer itself holds nothing but options (a wrong one with the negation that
    denies it) and ``PLAIN`` words, in the characters answers are written with."""
    if _ODD.search(head):
        return False
    w = words(head)
    spans = _spans(w, known)
    covered = {i for a, b in spans for i in range(a, b)}
    covered |= {i for a, _ in spans for i in range(max(0, a - 2), a) if w[i] in NEGATIONS}
    return all(i in covered or word in PLAIN or len(word) == 1 or word.isdigit() for i, word in enumerate(w))


def _doubted(text: str, tail: str, explained: dict[str, str]) -> str | None:
    """Why an answer that is the right option may still not mean it, or None: a question mark, a
    retraction ("no, ..."), a mark that strikes it out, or an explanation that calls it wrong or
    unsure (``TAKEN_BACK``), hedges, names a wrong option, or is a few words that deny ("(not
    really)") or name something the grader does not know ("LSTM; GRU")."""
    if "?" in text:
        return "it asks rather than answers"
    if _RETRACTION.search(text):
        return "it takes an answer back"
    w = words(tail)
    if set(w) & TAKEN_BACK or _ODD.search(tail) or (len(w) <= 3 and set(w) & NEGATIONS and "wrong" not in explained):
        return "it may say the option is not the answer"
    if w and len(w) <= 3 and not explained and not set(w) <= PLAIN and not any(c.isdigit() for c in tail):
        return "it names something else beside the answer"
    if hedges(tail):
        return "its explanation hedges"
    if explained.get("wrong") == "named":
        return "its explanation names a wrong option"
    return None


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
