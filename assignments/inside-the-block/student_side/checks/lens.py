"""Checks for `lens`: the logit lens on the notebook's tiny model (B1) and reading it: the guess
after each block, the probability of one token, and the block where the guess settles (B2); the
lens with one part of one block knocked out (B7)."""
import math

import numpy as np
import torch

from . import as_count, as_number, check, expect, expect_close

# The notebook's default TinyLM(), and the tolerance for logits (float32, several blocks deep).
CONFIG = dict(vocab_size=16, d_model=16, n_layers=4, n_heads=2, max_len=16)
LOGITS_ATOL, LOGITS_RTOL = 1e-4, 1e-4

# The form each answer variable must have to be graded (the TODO box says it).
FORMS = {"b7_drop": lambda v: as_number(v, "b7_drop"), "b7_settled": lambda v: as_block(v, "b7_settled")}
# Answers read off the trained model, which only a cell the grader does not run loads: written as values.
WRITTEN_OUT = dict.fromkeys(("b7_drop", "b7_settled"), "The grader runs your notebook without the trained model "
                                                       "(only the cell that loads it has it), so code here would "
                                                       "fail there.")


def _shapes(config: dict) -> dict:
    """TinyLM(**config)'s state_dict keys and shapes, in the order the model registers them."""
    V, d, L = config["vocab_size"], config["d_model"], config["max_len"]
    shapes = {"tok_emb.weight": (V, d), "pos_emb.weight": (L, d)}
    for i in range(config["n_layers"]):
        shapes.update({f"blocks.{i}.{name}": shape for name, shape in [
            ("norm1.weight", (d,)), ("norm1.bias", (d,)), ("qkv.weight", (3 * d, d)), ("proj.weight", (d, d)),
            ("norm2.weight", (d,)), ("norm2.bias", (d,)), ("fc1.weight", (4 * d, d)), ("fc1.bias", (4 * d,)),
            ("fc2.weight", (d, 4 * d)), ("fc2.bias", (d,))]})
    shapes.update({"norm_f.weight": (d,), "norm_f.bias": (d,), "unembed.weight": (V, d)})
    return shapes


def _state(seed: int, config: dict = CONFIG, quiet: bool = False, spread: float = 0.3) -> dict:
    """Weights for TinyLM(**config) from a private generator: tables ~ N(0, 1), matrices ~
    N(0, 1/fan_in), biases and norm shifts ~ N(0, spread^2), norm gains ~ 1 + N(0, spread^2).
    With ``quiet`` every block's two output layers (proj, fc2) are zero, so each block returns
    its input unchanged."""
    g = torch.Generator().manual_seed(seed)
    state = {}
    for name, shape in _shapes(config).items():
        noise = torch.randn(shape, generator=g)
        if "norm" in name and name.endswith("weight"):
            state[name] = 1 + spread * noise
        elif "norm" in name or name.endswith("bias"):
            state[name] = spread * noise
        elif "emb" in name:
            state[name] = noise
        else:
            state[name] = noise / math.sqrt(shape[1])
        if quiet and (name.endswith("proj.weight") or ".fc2." in name):
            state[name] = torch.zeros(shape)
    return state


def _tokens(seed: int, T: int, vocab_size: int = 16) -> torch.Tensor:
    return torch.randint(vocab_size, (T,), generator=torch.Generator().manual_seed(seed))


def as_block(value, name: str) -> int:
    """A block number, counted from 1: an int, or a number or short string that is a whole one ("3")."""
    got = as_number(value, name)
    expect(got == int(got) and got >= 1, f"{name} is a block number, counted from 1 (such as 2): "
                                         f"{got:g} is not one")
    return int(got)


def _lens(student, state, tokens, config=CONFIG, label="LensLM", shown=True, knockout=None):
    """LensLM(**config) with ``state`` loaded, on ``tokens``: its (n_layers, vocab_size) output; with
    ``knockout`` = (block, part), KnockoutLensLM's output with that part knocked out.
    ``shown``: the messages may state the sizes (a visible check's own example)."""
    name, forward = ("LensLM", (tokens,)) if knockout is None else ("KnockoutLensLM", (tokens, *knockout))
    (got,) = student.module(name, (), config, state=state, forwards=[(forward, {})])
    n, V = config["n_layers"], config["vocab_size"]
    expect(isinstance(got, np.ndarray), f"{label}: forward must return a tensor, got {type(got).__name__}")
    if got.ndim == 2 and got.shape[1] == V and got.shape[0] in (n - 1, n + 1):
        expect(False, f"{label}: forward returns one row {'too many' if got.shape[0] > n else 'too few'}: one row "
                      "per block, read after the block has run (the embedding before the first block is not a row)")
    sizes = f" = ({n}, {V}); got shape {tuple(got.shape)}" if shown else ""
    expect(got.shape == (n, V), f"{label}: forward should return one row of vocab_size logits per block, "
                                f"shape (n_layers, vocab_size){sizes}")
    return got


def _layer_norm(x, weight, bias, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * np.asarray(weight) + np.asarray(bias)


@check("B1", points=2, hidden=False,
       says="LensLM on the default-sized model returns one row of 16 logits per block, and its last row "
            "is the model's own output at the last position")
def test_B1_last_row(student):
    state, tokens = _state(41), _tokens(42, 5)
    got = _lens(student, state, tokens)
    (final,) = student.module("TinyLM", (), CONFIG, state=state, forwards=[((tokens,), {})])
    expect(not np.allclose(got[-1], final[0], atol=1e-4),
           "LensLM: the last row is the model's output at the first position; read the last position, h[-1]")
    expect_close(got[-1], final[-1], "LensLM: the last row (after the last block) should be TinyLM's own logits at "
                                     "the last position: run every block in turn, then norm_f, then unembed",
                 LOGITS_ATOL, LOGITS_RTOL)


@check("B1", points=2, hidden=False,
       says="LensLM on a model whose blocks add nothing: every row is unembed(norm_f(embedding of the last token))")
def test_B1_quiet_blocks(student):
    state, tokens = _state(43, quiet=True), _tokens(44, 6)
    got = _lens(student, state, tokens)
    s = {k: v.double().numpy() for k, v in state.items()}
    last = int(tokens[-1])
    stream = s["tok_emb.weight"][last] + s["pos_emb.weight"][len(tokens) - 1]      # the stream never changes
    want = _layer_norm(stream, s["norm_f.weight"], s["norm_f.bias"]) @ s["unembed.weight"].T
    mistakes = [
        (stream @ s["unembed.weight"].T, "it applies unembed without norm_f first; the final norm is part of the "
                                         "output head, and the lens applies both, in that order"),
        (_layer_norm(s["tok_emb.weight"][last], s["norm_f.weight"], s["norm_f.bias"]) @ s["unembed.weight"].T,
         "it leaves out the position vectors; start from model.embed(tokens), which adds them"),
    ]
    for wrong, why in mistakes:
        expect(not np.allclose(got, np.broadcast_to(wrong, got.shape), atol=1e-4),
               f"LensLM with blocks that add nothing: {why}")
    expect_close(got, np.broadcast_to(want, got.shape),
                 "LensLM with blocks that add nothing: every row should be unembed(norm_f(h[-1])) for the embedded "
                 "tokens h, since no block changes the stream", LOGITS_ATOL, LOGITS_RTOL)


# ---- B2 ----------------------------------------------------------------------------------------

EXAMPLE = [[0.5, 2.0, -1.0, 0.0], [3.0, 0.0, 0.5, 1.0], [0.0, 1.0, 4.0, -2.0]]


def as_guesses(value, n: int, what: str) -> list:
    """n next-token ids: a list of ints, or a 1-D integer tensor."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        value = [int(v) for v in value]
    if isinstance(value, list):        # 0-d integer tensors in a list count as ints
        value = [int(v) if isinstance(v, np.ndarray) and v.shape == () and v.dtype.kind in "iu" else v for v in value]
    expect(isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
           f"{what} must return a list of ints (token ids), one per block, got {type(value).__name__}")
    expect(len(value) == n, f"{what}: expected one guess per row of lens_logits")
    return value


@check("B2", points=2, hidden=False,
       says="on a 3 x 4 example: lens_guesses gives [1, 0, 2], token_probability matches a row-wise softmax, "
            "and settled_at gives 2 for [3, 5, 5, 5], 4 for [7, 7, 2, 7] and 1 for [4]")
def test_B2_worked_example(student):
    logits = torch.tensor(EXAMPLE)
    got = as_guesses(student.call("lens_guesses", logits), 3, "lens_guesses(lens_logits)")
    expect(got == [1, 0, 2], f"lens_guesses on the example should be [1, 0, 2] (the largest logit of each row), "
                             f"got {got}")
    e = np.exp(np.array(EXAMPLE))
    want = e[:, 2] / e.sum(axis=1)
    expect_close(student.call("token_probability", logits, 2), want,
                 "token_probability(example, 2): softmax over each row's vocabulary, then the entry of token 2")
    for guesses, want in [([3, 5, 5, 5], 2), ([7, 7, 2, 7], 4), ([4], 1)]:
        got = as_count(student.call("settled_at", guesses), f"settled_at({guesses})")
        expect(got == want, f"settled_at({guesses}) should be {want}, got {got}: the first block, counted from 1, "
                            "from which every later guess equals the last one")


# ---- B7 ----------------------------------------------------------------------------------------

# The output layers of each part a knockout silences: attention's update ends in the bias-free proj,
# the MLP's in fc2, so with them at zero the part adds exactly nothing to the stream.
SILENCED = {"attention": ("proj.weight",), "mlp": ("fc2.weight", "fc2.bias"),
            "block": ("proj.weight", "fc2.weight", "fc2.bias")}


def _silenced(state: dict, block: int, part: str) -> dict:
    names = {f"blocks.{block - 1}.{name}" for name in SILENCED[part]}
    return {k: torch.zeros_like(v) if k in names else v for k, v in state.items()}


@check("B7", points=2, hidden=False,
       says="KnockoutLensLM on the default-sized model: with block 4 knocked out, row 3 is the intact model's and "
            "row 4 repeats it; with block 2's MLP or block 1's attention knocked out, the last row is TinyLM's own "
            "output with that part's output layer set to zero")
def test_B7_example(student):
    state, tokens = _state(45), _tokens(46, 6)
    label = "KnockoutLensLM(tokens, block=4, part='block')"
    got = _lens(student, state, tokens, label=label, knockout=(4, "block"))
    first_three = {k: v for k, v in state.items() if not k.startswith("blocks.3.")}
    (three,) = student.module("TinyLM", (), {**CONFIG, "n_layers": 3}, state=first_three, forwards=[((tokens,), {})])
    expect_close(got[2], three[-1], f"{label}: row 3 (after block 3, before the knocked-out block) should be the "
                                    "intact model's, the output of its first three blocks", LOGITS_ATOL, LOGITS_RTOL)
    expect_close(got[3], got[2], f"{label}: row 4 should repeat row 3: a block knocked out adds nothing, and the "
                                 "stream passes it unchanged (it is not zeroed)", LOGITS_ATOL, LOGITS_RTOL)
    for block, part in [(2, "mlp"), (1, "attention")]:
        label = f"KnockoutLensLM(tokens, block={block}, part={part!r})"
        got = _lens(student, state, tokens, label=label, knockout=(block, part))
        (final,) = student.module("TinyLM", (), CONFIG, state=_silenced(state, block, part), forwards=[((tokens,), {})])
        expect_close(got[-1], final[-1], f"{label}: the last row should be the model's output with block {block}'s "
                                         f"{part} adding nothing to the stream, at every position (blocks count "
                                         "from 1)", LOGITS_ATOL, LOGITS_RTOL)
