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
# Words that turn an answer against what it names, or doubt it, wherever they stand: "anything but
# the MLP", "post-norm is wrong", "everything except", "other than", "the opposite of", "not really".
# An answer holding one passes only where each is a denial of a wrong option ("MLP, not attention").
DOUBTS = NEGATIONS | frozenset({"but", "except", "excluding", "besides", "other", "opposite", "wrong", "incorrect",
                                "false", "wait", "guess", "sure", "vs", "versus", "apart"})
# "no," or "no wait": the answer takes back what came before it.
_RETRACTION = re.compile(r"\bno\b\s*(?:[,.;:!)\-]|wait\b)", re.IGNORECASE)
# Words that name no option of their own: an item made only of them adds nothing ("the MLP (FFN) sublayer").
GENERIC = frozenset({"sublayer", "sublayers", "layer", "layers", "block", "blocks", "network", "networks", "part",
                     "parts", "module", "modules", "one", "ones", "weights", "parameters", "params", "it", "its",
                     "this", "that", "here", "yes", "answer", "placement", "version", "variant", "cell", "unit"})
# Where an answer's explanation starts ("LSTM: its cell state...", "cross-attention, since ...").
_EXPLAINED = re.compile(r"[:,;]|\s[-\u2013\u2014]\s|\b(?:because|since|as|so|which|where|while|when|due|given)\b",
                        re.IGNORECASE)
# Words that, even in the explanation, say the answer is wrong or unsure ("post-norm, it's wrong").
TAKEN_BACK = frozenset({"wrong", "incorrect", "false", "wait", "guess", "sure", "unsure"})
# Where one item of a list ends: a second option is written after one of these ("LSTM, GRU").
_ITEMS = re.compile(r"[,;:?!()\[\]/]|\b(?:and|vs|versus|then|plus)\b", re.IGNORECASE)


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
    grader does not know, the right one doubted, taken back or listed beside something else:
    ``_doubted``) raises ``NeedsReview``: a TA reads it. ``formulas`` are (pattern, phrase)
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
    doubt = _doubted(text, accepted, wrong) if right == "named" else None
    if right == "named" and wrong_ in (None, "denied") and not hedged and not doubt:
        return
    if wrong_ == "named" and right is None:
        raise CheckFailed(f"{what}: your answer names an option that is not right")
    why = ("it hedges between options" if hedged else
           "the grader does not know this answer" if not hits else
           "it names a right and a wrong option" if right == wrong_ == "named" else doubt or "it denies an option")
    raise NeedsReview(f"{what}: a TA will read your answer {quoted(answer)} ({why}); "
                      "its points wait for that review", answer)


def _doubted(text: str, accepted: Iterable[str], wrong: Iterable[str]) -> str | None:
    """Why an answer that names the right option may not mean it, as a careful TA reads it, or
    None: a question mark; a retraction ("no, ..."); in the answer itself (before the explanation
    that follows it: "pre-norm: the stream is never rescaled") a word that turns against or doubts
    what it names (``DOUBTS``) other than one denying a wrong option or one inside an option's own
    name ("norm_first=False"); in the explanation, a word that calls the answer wrong or unsure
    (``TAKEN_BACK``); in a short answer, an item beside the right one that names no option the
    grader knows ("GRU, LSTM": a second option)."""
    if "?" in text:
        return "it asks rather than answers"
    if _RETRACTION.search(text):
        return "it takes an answer back"
    cut = next((m.start() for m in _EXPLAINED.finditer(text) if names(text[:m.start()], accepted)), len(text))
    for part, doubts in ((text[:cut], DOUBTS), (text[cut:], TAKEN_BACK)):
        w = words(part)
        spans = _spans(w, [*accepted, *wrong])
        inside = {i for a, b in spans for i in range(a, b)}
        denials = {i for a, _ in _spans(w, wrong) for i in range(max(0, a - 2), a) if w[i] in NEGATIONS}
        if any(word in doubts and i not in denials | inside for i, word in enumerate(w)):
            return "it may say the option is not the answer"
    if len(words(text)) <= 6:
        known = [*accepted, *wrong]
        for item in _ITEMS.split(text):
            item_words = words(item)
            if item_words and not set(item_words) <= GENERIC and not names(item, known) and \
                    not any(c.isdigit() for c in item):
                return "it names something else beside the answer"
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
