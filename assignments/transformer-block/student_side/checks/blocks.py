"""Checks for `blocks`: the decoder's sublayers (C6), norm placement (C7), and the pre-norm (B6)
and post-norm (B7) blocks against torch's own encoder layer with the same weights."""

import numpy as np
import torch

from . import as_text, as_texts, check, expect, expect_close

# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "q6_decoder_sublayers": lambda v: as_texts(v, 3, "q6_decoder_sublayers", "sublayer"),
    "q6_gpt_drops": lambda v: as_text(v, "q6_gpt_drops"),
    "q7_2017_paper": lambda v: as_text(v, "q7_2017_paper"),
    "q7_modern_default": lambda v: as_text(v, "q7_modern_default"),
}

# What the tripwire of B6 and B7 watches for: torch's transformer layers (torch.nn class names).
TRANSFORMER_LAYERS = {"transformer": ("TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
                                      "TransformerDecoder", "Transformer")}


def _causality(student, cls):
    """With causal=True, changing the last token changes no earlier output; without the mask it does."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 16, generator=g)
    x2 = x.clone()
    x2[:, -1] = torch.randn(2, 16, generator=g)
    outs = student.module(cls, (16, 4), state=None, forwards=[((x,), {"causal": True}), ((x2,), {"causal": True}),
                                                              ((x,), {"causal": False}), ((x2,), {"causal": False}),
                                                              ((x2,), {})],
                          forbid=TRANSFORMER_LAYERS)
    expect(all(isinstance(o, np.ndarray) and o.shape == (2, 6, 16) for o in outs),
           f"{cls}.forward must return a tensor of the input's shape (2, 6, 16)")
    expect(np.allclose(outs[0][:, :-1], outs[1][:, :-1], atol=1e-5),
           f"{cls} with causal=True: changing the last token changed earlier outputs, so the mask lets "
           "positions see the future")
    expect(not np.allclose(outs[2][:, 0], outs[3][:, 0], atol=1e-5),
           f"{cls} with causal=False: position 0 should see (and depend on) the last token")
    expect(np.allclose(outs[4], outs[1], atol=1e-5),
           f"{cls}.forward(x) without the causal argument should be masked, as forward(x, causal=True): keep the "
           "given signature's default causal=True")


def _quiet_state(d, d_ff, seed):
    """A block's state_dict whose two sublayers add nothing: the output weights of attention
    (out_proj) and of the MLP (linear2) are zero; everything else is random, norms included."""
    g = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return 0.3 * torch.randn(shape, generator=g)

    return {"norm1.weight": 1 + rand(d), "norm1.bias": rand(d),
            "self_attn.in_proj_weight": rand(3 * d, d), "self_attn.in_proj_bias": rand(3 * d),
            "self_attn.out_proj.weight": torch.zeros(d, d), "self_attn.out_proj.bias": torch.zeros(d),
            "norm2.weight": 1 + rand(d), "norm2.bias": rand(d),
            "linear1.weight": rand(d_ff, d), "linear1.bias": rand(d_ff),
            "linear2.weight": torch.zeros(d, d_ff), "linear2.bias": torch.zeros(d)}


def _layer_norm(x, weight, bias, eps=1e-5):
    """nn.LayerNorm's forward, in numpy (float64)."""
    x = np.asarray(x, dtype=np.float64)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * np.asarray(weight) + np.asarray(bias)


def _quiet_block(student, cls):
    """(x, state, output) of ``cls`` whose attention and MLP both return zeros."""
    d, heads, d_ff = 8, 2, 16
    state = _quiet_state(d, d_ff, seed=5)
    x = 2 * torch.randn(2, 4, d, generator=torch.Generator().manual_seed(6)) + 1    # (B, T, d)
    (out,) = student.module(cls, (d, heads, d_ff), state=state, forwards=[((x,), {"causal": True})],
                            forbid=TRANSFORMER_LAYERS)
    expect(isinstance(out, np.ndarray) and out.shape == (2, 4, d),
           f"{cls}.forward must return a tensor of the input's shape (2, 4, {d})")
    return x, state, out


def _mlp_only(student, cls):
    """(x, state, output) of ``cls`` whose attention adds nothing and whose MLP does."""
    d, heads, d_ff = 8, 2, 16
    state = _quiet_state(d, d_ff, seed=7)
    g = torch.Generator().manual_seed(8)
    state["linear2.weight"] = 0.3 * torch.randn(d, d_ff, generator=g)
    state["linear2.bias"] = 0.3 * torch.randn(d, generator=g)
    x = 2 * torch.randn(2, 4, d, generator=g) + 1
    (out,) = student.module(cls, (d, heads, d_ff), state=state, forwards=[((x,), {"causal": True})],
                            forbid=TRANSFORMER_LAYERS)
    expect(isinstance(out, np.ndarray) and out.shape == (2, 4, d),
           f"{cls}.forward must return a tensor of the input's shape (2, 4, {d})")
    return np.asarray(x, dtype=np.float64), state, out


def _mlp(h, s):
    """linear2(gelu(linear1(h))) with the weights of ``s``, exact GELU, in float64."""
    w = {k: torch.as_tensor(np.asarray(v), dtype=torch.float64) for k, v in s.items()}
    z = torch.as_tensor(h) @ w["linear1.weight"].T + w["linear1.bias"]
    return (torch.nn.functional.gelu(z) @ w["linear2.weight"].T + w["linear2.bias"]).numpy()


@check("B6", points=1, hidden=False, says="PreNormBlock keeps the shape, and its causal flag hides (only) the future")
def test_B6_causality(student):
    _causality(student, "PreNormBlock")


@check("B6", points=1, hidden=False,
       says="PreNormBlock whose attention and MLP add nothing (zero output weights) returns x itself: the residual path")
def test_B6_residual(student):
    x, _, out = _quiet_block(student, "PreNormBlock")
    expect_close(out, x, "PreNormBlock whose two sublayers add zeros should return x unchanged (x + 0 + 0). A "
                         "residual sublayer adds to the stream, x = x + sublayer(norm(x)): it never replaces x, "
                         "and it adds to x itself, not to the normalized copy")


@check("B6", points=1, hidden=False,
       says="PreNormBlock whose attention adds nothing (zero out_proj) returns x + mlp(norm2(x))")
def test_B6_mlp_path(student):
    x, s, out = _mlp_only(student, "PreNormBlock")
    expect_close(out, x + _mlp(_layer_norm(x, s["norm2.weight"], s["norm2.bias"]), s),
                 "PreNormBlock whose attention adds zeros should return x + linear2(gelu(linear1(norm2(x)))): the MLP "
                 "reads the stream through its own norm, norm2, not norm1")


@check("B7", points=1, hidden=False, says="PostNormBlock keeps the shape, and its causal flag hides (only) the future")
def test_B7_causality(student):
    _causality(student, "PostNormBlock")


@check("B7", points=1, hidden=False,
       says="PostNormBlock whose attention and MLP add nothing (zero output weights) returns norm2(norm1(x)): "
            "the residual path")
def test_B7_residual(student):
    x, s, out = _quiet_block(student, "PostNormBlock")
    norm1 = lambda h: _layer_norm(h, s["norm1.weight"], s["norm1.bias"])
    norm2 = lambda h: _layer_norm(h, s["norm2.weight"], s["norm2.bias"])
    want = norm2(norm1(x))
    if not np.allclose(out, want, atol=1e-4):
        # What the usual placement mistakes return when both sublayers add zeros (a norm of zeros is its bias).
        x64 = np.asarray(x, dtype=np.float64)
        for wrong, mistake in [
            (x64, "it returns x itself, as a pre-norm block does (x + sublayer(norm(x))): post-norm moves the "
                  "norm after each residual addition, x = norm(x + sublayer(x)), so the stream itself is normalized"),
            (x64 + np.asarray(s["norm1.bias"]) + np.asarray(s["norm2.bias"]),
             "it adds each normalized sublayer output to x (x + norm(sublayer(x))): post-norm normalizes the sum, "
             "x = norm(x + sublayer(x))"),
            (norm1(norm2(x)), "it applies norm2 before norm1: norm1 follows the attention update, norm2 the MLP update"),
        ]:
            expect(not np.allclose(out, wrong, atol=1e-4),
                   f"PostNormBlock whose two sublayers add zeros should return norm2(norm1(x)), but {mistake}")
    expect_close(out, want, "PostNormBlock whose two sublayers add zeros should return norm2(norm1(x + 0) + 0). "
                            "Each sublayer's output is added to the stream before the norm, "
                            "x = norm(x + sublayer(x)): it never replaces x")


@check("B7", points=1, hidden=False,
       says="PostNormBlock whose attention adds nothing (zero out_proj) returns norm2(h + mlp(h)) with h = norm1(x)")
def test_B7_mlp_path(student):
    x, s, out = _mlp_only(student, "PostNormBlock")
    h = _layer_norm(x, s["norm1.weight"], s["norm1.bias"])
    expect_close(out, _layer_norm(h + _mlp(h, s), s["norm2.weight"], s["norm2.bias"]),
                 "PostNormBlock whose attention adds zeros should return norm2(h + linear2(gelu(linear1(h)))) with "
                 "h = norm1(x + 0): the MLP reads the stream after the first norm, not the block's input")
