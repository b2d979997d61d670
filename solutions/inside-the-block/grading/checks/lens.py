"""Hidden checks for `lens`: the logit lens against the reference on models and prompts the student
never sees (B1), reading its rows (B2), and the lens with one part knocked out, with the two
answers about the trained model (B7)."""
import torch

from autograder.student_side.checks import as_count, as_number, check, expect, expect_close
from autograder.student_side.numbers import shown

from ...student_side.checks.lens import CONFIG, LOGITS_ATOL, LOGITS_RTOL, _lens, _state, _tokens, as_block, as_guesses
from ..reference import lens as ref

# Other shapes of TinyLM: deeper and wider with another vocabulary, and a single block.
WIDE = dict(vocab_size=24, d_model=24, n_layers=6, n_heads=3, max_len=12)
SINGLE = dict(vocab_size=10, d_model=8, n_layers=1, n_heads=2, max_len=8)


def _expect_lens(student, seed: int, T: int, config: dict, label: str) -> None:
    state = _state(seed, config)
    tokens = _tokens(seed + 1, T, config["vocab_size"])
    got = _lens(student, state, tokens, config, label, shown=False)
    want = ref.logit_lens(state, tokens, config)
    expect_close(got, want, label, LOGITS_ATOL, LOGITS_RTOL)


@check("B1", points=5, hidden=True, says="LensLM matches the reference lens on three random models of the default size")
def test_B1_random_models(student):
    for i, (seed, T) in enumerate([(501, 7), (502, 11), (503, 4)]):
        _expect_lens(student, seed, T, CONFIG, f"LensLM on hidden model {i + 1} of 3")


@check("B1", points=3, hidden=True,
       says="LensLM matches the reference on a deeper, wider model with another vocabulary, and on a single block")
def test_B1_other_sizes(student):
    _expect_lens(student, 511, 9, WIDE, "LensLM(**config) on a deeper and wider hidden model")
    _expect_lens(student, 512, 5, SINGLE, "LensLM(**config) on a hidden model with one block")


@check("B1", points=2, hidden=True, says="LensLM on a one-token prompt and on a prompt as long as max_len")
def test_B1_edge_prompts(student):
    _expect_lens(student, 521, 1, CONFIG, "LensLM on a hidden prompt of one token")
    _expect_lens(student, 522, CONFIG["max_len"], CONFIG, "LensLM on a hidden prompt of max_len tokens")


# ---- B2 ----------------------------------------------------------------------------------------

def _logits(seed: int, n: int, V: int) -> torch.Tensor:
    return 3 * torch.randn(n, V, generator=torch.Generator().manual_seed(seed))


@check("B2", points=2, hidden=True, says="lens_guesses on random lens outputs of several sizes")
def test_B2_guesses(student):
    for i, (seed, n, V) in enumerate([(601, 6, 16), (602, 1, 10), (603, 12, 50)]):
        logits = _logits(seed, n, V)
        got = as_guesses(student.call("lens_guesses", logits), n, "lens_guesses(lens_logits)")
        expect(got == ref.lens_guesses(logits), f"lens_guesses on hidden lens output {i + 1} of 3: take the arg max "
                                                "of each row (over the vocabulary)")


@check("B2", points=2, hidden=True, says="token_probability on random lens outputs, for several tokens")
def test_B2_probability(student):
    for i, (seed, n, V, token) in enumerate([(611, 6, 16, 3), (612, 4, 30, 29), (613, 1, 5, 0)]):
        logits = _logits(seed, n, V)
        expect_close(student.call("token_probability", logits, token), ref.token_probability(logits, token),
                     f"token_probability on hidden lens output {i + 1} of 3")


@check("B2", points=2, hidden=True,
       says="settled_at on guess lists that settle early, late, never before the end, or at once")
def test_B2_settled(student):
    cases = [[1, 1, 1, 1], [2, 1, 1, 1], [1, 1, 1, 2], [5, 3, 5, 3, 5], [0, 0, 9, 0, 0], [6, 6], [8, 3, 3, 3, 3, 3]]
    for i, guesses in enumerate(cases):
        got = as_count(student.call("settled_at", guesses), "settled_at(guesses)")
        expect(got == ref.settled_at(guesses), f"settled_at on hidden guess list {i + 1} of {len(cases)}: the first "
                                               "block (counted from 1) from which no later guess differs from the last")


# ---- B7 ----------------------------------------------------------------------------------------

@check("B7", points=2, hidden=True,
       says="KnockoutLensLM matches the reference on random models, for every part and for first, middle and last "
            "blocks, and on a deeper model and a single block")
def test_B7_random_models(student):
    cases = [(531, CONFIG, 1, "block"), (531, CONFIG, 3, "mlp"), (532, CONFIG, 2, "attention"),
             (532, CONFIG, 4, "attention"), (533, WIDE, 6, "mlp"), (534, SINGLE, 1, "block")]
    for i, (seed, config, block, part) in enumerate(cases):
        state, tokens = _state(seed, config), _tokens(seed + 1, 7, config["vocab_size"])
        label = f"KnockoutLensLM on hidden case {i + 1} of {len(cases)} (part={part!r})"
        got = _lens(student, state, tokens, config, label, shown=False, knockout=(block, part))
        expect_close(got, ref.knockout_lens(state, tokens, block, part, config), label, LOGITS_ATOL, LOGITS_RTOL)


@check("B7", points=1, hidden=True,
       says="b7_drop: how far the trained model's probability of the first token falls at block 4 on the prompt, "
            "with block 2's attention knocked out")
def test_B7_drop(student):
    got = as_number(student.value("b7_drop"), "b7_drop")
    expect(ref.WINDOWS["b7_drop"].holds(got),
           f"b7_drop: {shown(got)} is not it; it is the probability with every block in place minus the probability "
           "with block 2's attention knocked out, both read from the last row, as a number between 0 and 1")


@check("B7", points=1, hidden=True,
       says="b7_settled: the block at which the lens settles on the prompt with block 2's attention knocked out")
def test_B7_settled(student):
    got = as_block(student.value("b7_settled"), "b7_settled")
    expect(got == ref.SETTLED, "b7_settled: that is not where the knocked-out model's guesses settle; apply "
                               "settled_at to the guesses of KnockoutLensLM's rows on that prompt")
