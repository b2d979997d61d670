"""The one reader of numeric answers (``autograder/student_side/numbers.py``): every form its
table lists reads back to the number written, nothing is ever read as a prefix of a number, and
each approximate answer's window holds the right answers and none of the traps."""
from __future__ import annotations

import importlib
import importlib.util
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.course import problem_sets
from autograder.grader_side import problem_set
from autograder.grader_side.assignment import REPO
from autograder.student_side import numbers
from autograder.student_side.checks import NeedsReview, as_number
from autograder.student_side.notebook import ready
from autograder.student_side.student import CheckFailed

pytestmark = pytest.mark.unit

SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def written(n: int) -> list[str]:
    """``n`` written every way the table lists for a whole number."""
    forms = [str(n), f"{n:,}", f"{n:_}", f"{n:,}".replace(",", " "), f"{n:,}".replace(",", "\u2009"),
             f"{n:,}".replace(",", "\u202f"), f"{n:,}".replace(",", "\u00a0"), f"about {n:,}", f"~{n}", f"≈ {n:,}",
             f"roughly {n}", f"{n:,}.", f"{n:,}, counted by the rule", f"{n:,} weights", f"{n}x", f"{n} times"]
    if n < 0:
        forms += [f"\u2212{-n:,}"]
    return forms


@given(st.integers(min_value=-10**15, max_value=10**15))
def test_any_whole_number_written_any_listed_way_reads_back_to_itself(n):
    for text in written(n):
        assert numbers.read(text).value == n, text


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(["thousand", "million", "billion", "trillion"]),
       st.integers(min_value=0, max_value=3))
def test_scale_words_and_letters_read_exactly(mantissa, word, decimals):
    figure = mantissa / 10 ** decimals
    want = float(f"{figure!r}e{numbers._SCALE_WORDS[word]}")
    assert numbers.read(f"{figure!r} {word}").value == want
    assert numbers.read(f"{figure!r} {word.capitalize()}").value == want
    assert numbers.read(f"{figure!r} {word}s").value == want
    letter = {"thousand": "k", "million": "M", "billion": "B", "trillion": "T"}[word]
    assert numbers.read(f"{figure!r}{letter}").value == want


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_any_float_in_scientific_and_typeset_forms_reads_back_to_itself(x):
    mantissa, exponent = f"{x:.17e}".split("e")
    power = int(exponent)
    forms = [repr(x), f"{x:.17e}", f"{x:.17E}", f"{mantissa} x 10^{power}", f"{mantissa}·10^{power}",
             f"{mantissa} × 10{str(power).translate(SUPERSCRIPT)}", f"{mantissa}*10**{power}",
             f"{mantissa} X 10^{power}", f"about {x!r}"]
    for text in forms:
        assert numbers.read(text).value == x, text


@given(st.integers(min_value=1, max_value=10**9), st.integers(min_value=1, max_value=10**9))
def test_fractions_and_ratios(a, b):
    assert numbers.read(f"{a}/{b}").value == a / b
    assert numbers.read(f"{a} : {b}").value == a / b


@pytest.mark.parametrize("text", [
    "201,326,592", "6,704,594,944", "2.01 x 10^8", "6.7 × 10⁹", "6.7 billion", "13.5k", "201_326_592",
    "201 326 592", "10^9", "2.01·10^8"])
def test_no_prefix_is_ever_taken(text):
    value = numbers.read(text).value
    assert value is not None and value > 1000, text


@pytest.mark.parametrize("text, problem", [
    ("13.48 or 14", "more than one answer"), ("13 to 14", "more than one answer"), ("14-15", "more than one number"),
    ("13.48 14", "more than one number"), ("1,5", "more than one number"), ("1, 5", "more than one number"),
    ("2.01 times ten to the eighth", "in words"), ("six", "does not start with a number"),
    ("2 thousand and 48", "goes on"),
    ("2 x 3", "goes on"), ("14 (or 13.5)", "more than one answer"), ("201M (201,326,592)", "more than one number"),
    ("1e999", "not a finite number"), ("1e99999999", "not a finite number"), ("LSTM/GRU 4", "does not start"),
    ("4, LSTM/GRU", "more than one answer"), ("6.7 bil", "more than one way"), ("201 mln", "more than one way"),
    ("2 lakh", "more than one way"), ("7e9 * 2 / 1e9 = 14", "not a form"), ("201.3 Mio", "does not read the unit"),
    ("6.7 Gparams", "does not read the unit"), ("6.7 Mrd", "does not read the unit"), ("14 vs 28", "more than one")])
def test_what_is_not_one_number_is_not_read_and_says_why(text, problem):
    reading = numbers.read(text)
    assert reading.value is None and problem in reading.problem, (text, reading)


@pytest.mark.parametrize("text, value", [
    ("2, since the MLP has 8 d^2 weights and attention 4 d^2", 2), ("6.70e9, close to the exact 6.74e9", 6.70e9),
    ("6,704,594,944 (about 6.7 billion)", 6704594944), ("4 times as many", 4), ("2 , since", 2), ("14 at fp16", 14),
    ("6.7 billions", 6.7e9), ("= 14", 14), ("2e+08", 2e8), ("0.2 billion", 2e8), ("6.7 Bn", 6.7e9)])
def test_an_explanation_after_the_number_is_allowed(text, value):
    assert numbers.read(text).value == value


def test_units_are_read_never_converted():
    for text in ("14 GB", "14GB", "about 14 gigabytes", "14 gb"):
        assert numbers.read(text, numbers.GB) == numbers.Reading(14.0, "", text.split()[-1].removeprefix("14")), text
    assert as_number("14 GB", "c4", numbers.GB) == 14.0
    with pytest.raises(CheckFailed, match=r"asks for GB \(10\^9 bytes\), and your answer is in GiB") as failed:
        as_number("13.04 GiB", "c4", numbers.GB)
    assert not isinstance(failed.value, NeedsReview)
    with pytest.raises(NeedsReview, match="in Gb"):
        as_number("14 Gb", "c4", numbers.GB)
    for text, written in (("14 GIB", "GiB"), ("35 Gbit", "Gbit"), ("14 b", "B"), ("14 MB", "MB")):
        assert numbers.read(text, numbers.GB).unit == written, text
        with pytest.raises(CheckFailed, match=f"your answer is in {written}"):
            as_number(text, "c4", numbers.GB)
    for text in ("14 Mo", "14 kGB", "14 MGB", "14 Gi", "14 k"):      # units and scales the reader does not know
        reading = numbers.read(text, numbers.GB)
        assert reading.value is None and "does not read the unit" in reading.problem, text
    assert numbers.read("6.7B").value == 6.7e9                  # a count: B is a billion
    assert numbers.read("14 B", numbers.GB).unit == "B"         # a size: B is bytes


def test_what_cannot_be_read_goes_to_a_ta_quoted():
    with pytest.raises(NeedsReview) as review:
        as_number("13.48 or 14", "c4_7b_gb", numbers.GB)
    assert review.value.answer == "'13.48 or 14'" and "more than one answer" in str(review.value)


def test_ready_echoes_what_the_grader_reads(capsys, monkeypatch):
    """The notebook's ready() reads week 5's answers with the set's own forms, and says what it read."""
    path = REPO / "solutions" / "inside-the-block" / "student_side" / "checks" / "costs.py"
    spec = importlib.util.spec_from_file_location("autograder.student_side.checks.week5_costs", path)
    costs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(costs)
    monkeypatch.setattr("autograder.student_side.notebook.checks.forms", lambda: costs.FORMS)
    ready("c3_layer_4096", "c4_7b_gb", ns={"c3_layer_4096": "201,326,592", "c4_7b_gb": "about 14 GB"})
    shown = capsys.readouterr().out
    assert "`c3_layer_4096` reads as 201,326,592" in shown and "`c4_7b_gb` reads as 14" in shown, shown
    with pytest.raises(CheckFailed, match="more than one answer"):
        ready("c4_7b_gb", ns={"c4_7b_gb": "13.48 or 14"})
    with pytest.raises(CheckFailed, match="reads as 201, fewer weights .* not in millions"):
        ready("c3_layer_4096", ns={"c3_layer_4096": "201"})


def test_shown():
    assert numbers.shown(201326592.0) == "201,326,592"
    assert numbers.shown(13.4768) == "13.4768"
    assert math.isfinite(float(numbers.shown(1e-7)))


def _windows() -> dict:
    """answer variable -> Window, from the reference of every concept of every set that has windows."""
    found = {}
    for name in problem_sets(REPO):
        ps = problem_set.load(REPO / "solutions" / name)
        for concept in ps.concepts:
            found.update(getattr(ps.reference(concept), "WINDOWS", {}))
    return found


WINDOWS = _windows()


def test_every_answer_variable_of_a_window_is_one_a_question_names():
    assert {"c3_layer_4096", "c5_crossover_4096", "b3_share", "b3_threshold", "b7_drop"} <= set(WINDOWS)


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_each_window_holds_every_right_answer_and_no_trap(name):
    window = WINDOWS[name]
    for right in (*window.right, *window.rounded):
        assert window.holds(right), (name, right)
    assert window.traps
    for trap, value in window.traps.items():
        assert not window.holds(value), (name, trap, value)
