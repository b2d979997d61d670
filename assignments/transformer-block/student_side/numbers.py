"""The one reader of numbers written as text.

Every set's checks read a numeric answer given as a string here, and ``ready()`` runs the same
reader in the notebook, so a student sees what the grader will read before submitting. The rules,
in the contract's form:

| the text | reads as |
|---|---|
| digits, a decimal point, a sign (``-`` or ``−``) | the number: ``4``, ``-1.5``, ``.5`` |
| thousands separators, one kind per number: ``,`` ``_`` or a plain, thin or no-break space | ``201,326,592``, ``201 326 592``, ``201_326_592`` -> 201326592 |
| scientific and typeset powers of ten | ``2.01e8``, ``2.01 x 10^8``, ``2.01 × 10⁸``, ``2.01·10^8``, ``2.01*10**8``, ``10^9`` |
| a fraction or a ratio | ``512/256``, ``2:1`` -> 2 |
| a scale word; a scale letter where the question names no unit | ``6.7 billion``, ``6.7 billions``, ``201 million``, ``13.5 thousand``; ``13.5k``, ``201M``, ``6.7B``, ``6.7bn`` |
| the question's unit, where it names one | ``14 GB``, ``14GB``, ``14 gigabytes`` -> 14; a unit of the same kind that is not it (``GiB``, ``MB``, ``bits``) is reported, never converted, and the question's rule says whether that is wrong or a TA's |
| a unit or scale the reader does not know | ``201.3 Mio``, ``14 kGB``, ``6.7 Gparams``, ``14 k`` where GB is asked: not read (a TA reads it); the question's kind of unit in other letter case (``14 GIB``) is that unit |
| a scale readers read differently | ``6.7 bil``, ``201 mln``, ``2 lakh``: not read (a TA reads it) |
| a hedge before the number, a multiplier after a factor | ``about 14``, ``~14``, ``≈ 14``, ``= 14``, ``roughly 14``; ``4x``, ``4 times`` |
| an explanation after it: a word, a bracket, or a comma, colon, semicolon or dash and a word | ``2, since 8 d^2 / 4 d^2`` -> 2, ``6.7e9 (two figures)`` -> 6.7e9, as long as it offers no alternative |

Anything else is not read (``Reading.value`` is None, ``Reading.problem`` says why), and the
checks send it to a TA with the text quoted: two numbers side by side or as options (``13.48 14``,
``13.48 or 14``, ``13 to 14``, ``14-15``), a number in words, a decimal comma (``1,5``). A prefix of a number is never taken:
``201,326,592`` is never 201, and ``2.01 times ten to the eighth`` is never 2.01.
"""
# ruff: noqa: E501  (the table of rules above keeps one rule per line)
from __future__ import annotations

import math
import re
from dataclasses import dataclass

# ---- units -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A unit a question asks for: how students write it, which units of the same kind are not it,
    and whether an answer in one of those loses the point (``other_is_wrong``) or goes to a TA."""
    name: str                         # as the question writes it, e.g. "GB"
    meaning: str                      # what it is, for messages: "10^9 bytes"
    spellings: frozenset[str]         # as written, compared exactly
    others: frozenset[str]            # units of the same kind that contradict it, compared exactly
    unclear: frozenset[str] = frozenset()   # spellings a TA reads (e.g. "Gb": gigabits, or a slip?)
    other_is_wrong: bool = True


GB = Unit("GB", "10^9 bytes",
          spellings=frozenset({"GB", "gb", "G", "GBs", "gigabyte", "gigabytes", "Gigabytes", "GByte", "GBytes"}),
          others=frozenset({"GiB", "gib", "MB", "mb", "MiB", "TB", "tb", "TiB", "KB", "kB", "kb", "KiB", "B", "byte",
                            "bytes", "bit", "bits", "megabytes", "terabytes", "kilobytes", "gibibytes", "gigabits",
                            "Gbit", "Gbits", "Mbit", "Tbit"}),
          unclear=frozenset({"Gb", "gB"}))

# ---- the grammar -------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SPACES = " \u00a0\u2009\u202f"
# Digits, with one kind of thousands separator throughout, or none.
_MANTISSA = (r"(?:\d{1,3}(?P<sep>[,_" + _SPACES + r"])\d{3}(?:(?P=sep)\d{3})*(?:\.\d+)?"
             r"|\d+(?:\.\d*)?|\.\d+)")
_POWER = r"10\s*(?:\^|\*\*)\s*[-+]?\d+"
_TIMES = r"[xX×*·⋅]"
_NUMBER = re.compile(
    r"(?P<sign>[-+])?\s*(?:"
    rf"(?P<power>{_POWER})"
    rf"|(?P<mantissa>{_MANTISSA})(?:[eE](?P<e>[-+]?\d+)|\s*{_TIMES}\s*(?P<typeset>{_POWER}))?)")
_HEDGE = re.compile(r"(?:about|approximately|approx\.?|roughly|around|circa|ca\.|nearly|almost|~|∼|≈|≃|=)\s*",
                    re.IGNORECASE)
_SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12,       # powers of ten
                "thousands": 3, "millions": 6, "billions": 9, "trillions": 12}
_SCALE_LETTERS = {"k": 3, "K": 3, "M": 6, "mn": 6, "B": 9, "bn": 9, "Bn": 9, "G": 9, "T": 12}
# Scales written in ways that mean different things to different readers: a TA reads them.
_UNCLEAR_SCALES = frozenset({"mil", "mill", "mils", "mln", "bil", "bill", "bln", "tn", "tril", "thou", "mm", "lakh",
                             "lakhs", "crore", "crores"})
_MULTIPLIER = re.compile(r"\s*(?:[x×]|times|-?fold)(?![\w^*])", re.IGNORECASE)
_WORD = re.compile(r"\s*([A-Za-z%]+)(?![\w^])")
# What an explanation may not contain: another number, in digits or in words, or an alternative.
_NUMBER_WORDS = frozenset((
    "zero two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion "
    "trillion half quarter third thirds fourth fifth sixth seventh eighth ninth tenth twice dozen").split())
_ALTERNATIVES = frozenset({"or", "either", "maybe", "perhaps", "possibly", "unsure", "to", "vs", "versus"})
_SHORT_WORDS = frozenset({"a", "an", "as", "at", "if", "in", "is", "it", "of", "on", "so", "we", "the", "for", "and",
                          "but", "not", "its", "per", "was", "are", "one", "all"})
_GOES_ON = frozenset({"and", "plus", "minus", "point", "over", "divided", "by", "times", "x", "e"})   # as a first word


@dataclass(frozen=True)
class Reading:
    """What a text states: its one number (``value``), or None and why not (``problem``), and the
    unit it was given in, when the question names one (``unit``, as written)."""
    value: float | None
    problem: str = ""
    unit: str | None = None


def read(text: str, unit: Unit | None = None) -> Reading:
    """The one number ``text`` states, by the rules of this module's table."""
    s = re.sub(r"10\s*([⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPT), str(text))
    s = s.replace("\u2212", "-").strip()
    for _ in range(2):
        hedge = _HEDGE.match(s)
        if hedge:
            s = s[hedge.end():]
    first = _ratio(s)
    if first is None:
        return Reading(None, "it does not start with a number in digits")
    value, end = first
    value, end, given, unread = _scale_and_unit(s, value, end, unit)
    if unread:
        return Reading(None, unread)
    problem = _explanation_problem(s[end:])
    if problem:
        return Reading(None, problem, given)
    if not math.isfinite(value):
        return Reading(None, "it is not a finite number", given)
    return Reading(value, "", given)


def _ratio(s: str) -> tuple[float, int] | None:
    """A number or a fraction of two numbers at the start of ``s``, and where it ends."""
    first = _number(s, 0)
    if first is None:
        return None
    value, end = first
    over = re.compile(r"\s*[/:]\s*").match(s, end)
    if over:
        below = _number(s, over.end())
        if below is not None and below[0] != 0:
            return value / below[0], below[1]
    return value, end


def _number(s: str, at: int) -> tuple[float, int] | None:
    found = _NUMBER.match(s, at)
    if not found or not (found["mantissa"] or found["power"]):
        return None
    digits = (found["mantissa"] or "1").replace(found["sep"] or ",", "")
    power = found["power"] or found["typeset"]
    exponent = found["e"] or (re.split(r"\^|\*\*", power)[1].replace(" ", "") if power else "0")
    value = float(f"{digits}e{exponent}")       # float() parses any length: a huge power is inf, never an error
    return (-value if found["sign"] == "-" else value), found.end()


def _scale_and_unit(s: str, value: float, end: int, unit: Unit | None) -> tuple[float, int, str | None, str]:
    """Take a scale word (or, without a unit, a scale letter), a multiplier and the question's
    unit (or one that contradicts it) after the number; the last item says why a word there is
    not read (a scale or a unit the grader does not know), or is ""."""
    word = _WORD.match(s, end)
    if word and math.isfinite(value) and (word[1].lower() in _SCALE_WORDS or (unit is None and word[1] in _SCALE_LETTERS)):
        power = _SCALE_WORDS.get(word[1].lower()) or _SCALE_LETTERS[word[1]]
        value = float(f"{value!r}e{power}")      # 201.326592 million is 201326592 exactly, not 201326591.99...
        end = word.end()
    elif word and word[1].lower() in _UNCLEAR_SCALES:
        return value, end, None, "its scale word can be read more than one way; write it out (million, billion)"
    times = _MULTIPLIER.match(s, end)
    if times and not re.match(r"\s*\d", s[times.end():]):
        end = times.end()
    word = _WORD.match(s, end)
    if not word:
        return value, end, None, ""
    w = word[1]
    if unit is not None and w in unit.spellings | unit.unclear:
        return value, word.end(), w, ""
    other = next((o for o in sorted(unit.others) if o.lower() == w.lower()), None) if unit is not None else None
    if other is not None:
        return value, word.end(), other, ""
    if _looks_like_a_unit(w):
        return value, end, None, f"the grader does not read the unit or scale {w!r} after it"
    return value, end, None, ""


def _looks_like_a_unit(word: str) -> bool:
    """A word right after a number that abbreviates a unit or a scale ("Mio", "kGB", "Gi", "b"),
    not one that starts an explanation ("at", "weights", "Because")."""
    if word.lower() in _SHORT_WORDS | _ALTERNATIVES | _GOES_ON | _NUMBER_WORDS:
        return False        # the explanation's own rules judge these
    scaled = word[:1] in _SCALE_LETTERS and word[1:].lower().rstrip("s") in {"param", "parameter", "weight", "token"}
    return len(word) <= 2 or any(c.isupper() for c in word[1:]) or (word[0].isupper() and len(word) <= 4) or \
        "bit" in word.lower() or scaled


def _explanation_problem(rest: str) -> str:
    """Why what follows the number keeps the text from stating one number ("" when it does not).

    An explanation starts with a word, with a bracket, or with a comma, colon, semicolon or dash
    and then a word: "2, since 8 d^2 / 4 d^2" is 2, while "1,5", "14-15" and "13.48 14" are not
    read. It may use numbers, not offer an alternative ("or", "maybe", "A/B"), and its first word
    may not go on with the number ("times ten", "to 15", "hundred")."""
    body = rest.strip()
    if not body.strip(".!"):
        return ""
    opened = re.match(r"\s*[,;:—–-]\s+|\s*[(\[]|\s+(?=[A-Za-z])", rest)
    if not opened:
        return "it states more than one number" if re.match(r"[,;:—–-]?\s*\d", body) else \
            "it is not a form the grader reads"
    words = re.findall(r"[a-z]+", rest[opened.end():].lower())
    if rest[opened.end():opened.end() + 1].isdigit():
        return "it states more than one number"
    if words and words[0] in _NUMBER_WORDS | _GOES_ON:
        return "a number in it is written in words" if words[0] in _NUMBER_WORDS else "it goes on after the number"
    if words and words[0] in _ALTERNATIVES:
        return "it offers more than one answer"
    if set(words) & (_ALTERNATIVES - {"to"}) or re.search(r"[^\W\d_]\s*/\s*[^\W\d_]", rest):
        return "it offers more than one answer"
    return ""


def shown(value: float) -> str:
    """A number as the notebook echoes it: whole numbers with thousands separators (201,326,592),
    others to six significant digits (13.4768)."""
    if float(value).is_integer() and abs(value) < 1e18:
        return f"{int(value):,}"
    return f"{value:,.6g}"
