"""Hidden checks for `costs`: attention scores (C2), weights per layer and per model (C3), memory (C4),
and where attention's work overtakes the weights' (C5)."""
import math

from autograder.student_side.checks import as_count, as_number, check, expect
from autograder.student_side.numbers import GB, shown

from ...student_side.checks.costs import expect_crossover
from ..reference import costs as ref


def _expect_exact(student, name: str, value, want: float, why: str) -> None:
    got = as_number(value, name)
    expect(math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{name}: that is not the factor; {why}")


def _expect_about(student, name: str, why: str, unit=None) -> None:
    """``name`` lies in its window (``reference.costs.WINDOWS``); an answer off by exactly a scale
    (in millions, in bytes) is told so, any other wrong one only ``why``."""
    got = as_number(student.value(name), name, unit)
    window = ref.WINDOWS[name]
    if window.holds(got):
        return
    scales = ref.SCALES if unit is None else ref.GB_SCALES
    scale = next((said for factor, said in scales.items() if window.holds(got * factor)), None)
    expect(False, f"{name}: {shown(got)} is the right number {scale}; give it as {'GB' if unit else 'a plain count'}"
           if scale else f"{name}: {shown(got)} is not it; {why}")


# ---- C2 ----------------------------------------------------------------------------------------

@check("C2", points=2, hidden=True,
       says="attention_scores for other batches, head counts, lengths and depths, as ints")
def test_C2_counts(student):
    for args in [(1, 12, 1024, 12), (3, 5, 7, 2), (1, 1, 1, 1), (8, 32, 4096, 32), (2, 1, 9, 5)]:
        got = as_count(student.call("attention_scores", *args), "attention_scores(batch, heads, T, n_layers)")
        expect(got == ref.attention_scores(*args),
               "attention_scores(batch, heads, T, n_layers) is wrong for one of the hidden cases: each block has "
               "its own heads, and each head scores a full T x T matrix for every sequence")


@check("C2", points=1, hidden=True, says="c2_double_T: how many times the scores grow when T doubles")
def test_C2_double_T(student):
    _expect_exact(student, "c2_double_T", student.value("c2_double_T"), ref.DOUBLE_T,
                  "write the count for 2T over the count for T and simplify")


@check("C2", points=1, hidden=True, says="c2_double_N: how many times the scores grow when the depth doubles")
def test_C2_double_N(student):
    _expect_exact(student, "c2_double_N", student.value("c2_double_N"), ref.DOUBLE_N,
                  "how many times is the bill paid in a stack of N blocks?")


# ---- C3 ----------------------------------------------------------------------------------------

@check("C3", points=2, hidden=True, says="layer_weights and model_weights for other widths, depths and vocabularies")
def test_C3_counts(student):
    for d in (768, 5, 4096):
        got = as_count(student.call("layer_weights", d), "layer_weights(d)")
        expect(got == ref.layer_weights(d), "layer_weights(d) is wrong for one of the hidden widths")
    for args in [(768, 12, 50257), (4096, 32, 32000), (3, 1, 7)]:
        got = as_count(student.call("model_weights", *args), "model_weights(d, n_layers, vocab_size)")
        expect(got == ref.model_weights(*args), "model_weights(d, n_layers, vocab_size) is wrong for one of the hidden "
                                                "cases: n_layers layers, plus a token table and an unembedding")


@check("C3", points=1, hidden=True, says="c3_double_d: how many times a layer's weights grow when d doubles")
def test_C3_double_d(student):
    _expect_exact(student, "c3_double_d", student.value("c3_double_d"), ref.DOUBLE_D,
                  "every matrix of a layer is d x d or d x 4d: what happens to each when d doubles?")


@check("C3", points=1, hidden=True, says="c3_layer_4096: about how many weights one layer of width 4096 holds")
def test_C3_layer_4096(student):
    _expect_about(student, "c3_layer_4096", "apply the per-layer rule at d = 4096")


@check("C3", points=1, hidden=True,
       says="c3_estimate_7b: the rule's estimate for d=4096, 32 layers and 32,000 tokens, tables included")
def test_C3_estimate_7b(student):
    _expect_about(student, "c3_estimate_7b", "the rule's estimate (not another model's count): 32 layers, "
                                             "plus the token table and the unembedding")


# ---- C4 ----------------------------------------------------------------------------------------

@check("C4", points=1, hidden=True, says="weights_memory_gb for other sizes and for 32, 8 and 4 bits per weight")
def test_C4_memory(student):
    for n, bits in [(124_439_808, 16), (6_738_415_616, 16), (70_000_000_000, 8), (13_000_000_000, 4), (3, 32)]:
        args, kwargs = ((n,), {}) if bits == 16 else ((n,), {"bits": bits})
        got = as_number(student.call("weights_memory_gb", *args, **kwargs), "weights_memory_gb(n_params, bits)")
        expect(math.isclose(got, ref.weights_memory_gb(n, bits), rel_tol=1e-6),
               f"weights_memory_gb(n_params{', bits' if kwargs else ''}) is wrong for one of the hidden cases"
               + ("" if kwargs else " at the default 16 bits"))


@check("C4", points=1, hidden=True, says="c4_7b_gb: the gigabytes 7 billion weights take at 16 bits")
def test_C4_7b(student):
    _expect_about(student, "c4_7b_gb", "bytes per weight times weights, in units of 10^9 bytes", GB)


@check("C4", points=1, hidden=True, says="c4_70b_4bit_gb: the gigabytes 70 billion weights take at 4 bits")
def test_C4_70b_4bit(student):
    _expect_about(student, "c4_70b_4bit_gb", "a 4-bit weight is half a byte", GB)


# ---- C5 ----------------------------------------------------------------------------------------

@check("C5", points=1, hidden=True, says="attention_work for other lengths and widths, as ints")
def test_C5_work(student):
    for T, d in [(1024, 768), (1, 1), (7, 3), (32768, 4096)]:
        got = as_count(student.call("attention_work", T, d), "attention_work(T, d)")
        expect(got == ref.attention_work(T, d), "attention_work(T, d) is wrong for one of the hidden cases: the query "
                                                "meets T keys of d numbers, and the output mixes T values of d numbers")


@check("C5", points=1, hidden=True,
       says="crossover_length for other widths: the first T at which your attention_work reaches your layer_weights")
def test_C5_crossover(student):
    for d in (768, 1, 5, 4096):
        expect_crossover(student, d, hidden=True)


@check("C5", points=1, hidden=True, says="c5_crossover_4096: the length at which attention's work reaches the weights'")
def test_C5_crossover_4096(student):
    _expect_about(student, "c5_crossover_4096", "count attention's multiply-adds per token (keys, then values) and "
                                                "compare them with one layer's weights at d = 4096")
