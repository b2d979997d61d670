"""Checks the hidden reference implementations against PyTorch and the lesson's numbers."""
import itertools
import math
import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import week4

pytestmark = pytest.mark.unit   # in this process: `make test-unit` (its sandboxed tests are marked)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

blocks = week4.reference("blocks")
depth = week4.reference("depth")
mlp = week4.reference("mlp")
norms = week4.reference("norms")
params = week4.reference("params")
positions = week4.reference("positions")

ATOL, RTOL = 1e-5, 1e-4
GRAD_ATOL, GRAD_RTOL = 1e-4, 1e-3


def normalize(text: str) -> str:
    """The answer normal form: lowercase, every run of non-alphanumerics as one space."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


# ---------------------------------------------------------------- norms (B1-B3, C5)

NORM_SHAPES = [(7,), (3, 5), (2, 3, 16), (2, 2, 3, 9)]


@pytest.mark.parametrize("shape", NORM_SHAPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_layer_norm_matches_torch(shape, seed):
    g = torch.Generator().manual_seed(seed)
    d = shape[-1]
    x = torch.randn(shape, generator=g) * 3 + 1
    gamma, beta = torch.randn(d, generator=g), torch.randn(d, generator=g)
    for eps in (1e-5, 1e-3):
        want = F.layer_norm(x, (d,), gamma, beta, eps)
        got = norms.layer_norm(x, gamma, beta, eps)
        assert got.dtype == torch.float32 and got.shape == x.shape
        torch.testing.assert_close(got, want, atol=ATOL, rtol=RTOL)


def test_layer_norm_near_constant_rows():
    # Spread well below sqrt(eps), offset small: eps dominates the variance. (With a large
    # offset, mean >> spread, float32 cancellation alone moves F.layer_norm by ~1e-4 from the
    # float64 answer, so no float32 code can be held to atol 1e-5 there.)
    g = torch.Generator().manual_seed(3)
    x = 0.25 + 1e-4 * torch.randn(4, 6, 32, generator=g)
    x[0, 0] = 2.0                                    # an exactly constant row
    gamma, beta = torch.randn(32, generator=g), torch.randn(32, generator=g)
    want = F.layer_norm(x, (32,), gamma, beta, 1e-5)
    torch.testing.assert_close(norms.layer_norm(x, gamma, beta), want, atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(norms.layer_norm(x, gamma, beta)[0, 0], beta)


@pytest.mark.parametrize("shape", NORM_SHAPES)
def test_rms_norm_matches_torch(shape):
    g = torch.Generator().manual_seed(11)
    d = shape[-1]
    x = torch.randn(shape, generator=g) * 2 - 0.5
    gamma = torch.randn(d, generator=g)
    for eps in (1e-6, 1e-2):
        want = F.rms_norm(x, (d,), gamma, eps)
        torch.testing.assert_close(norms.rms_norm(x, gamma, eps), want, atol=ATOL, rtol=RTOL)


def test_rms_norm_ignores_scale_but_not_shift():
    x = torch.tensor([[1.0, -2.0, 3.0, 0.5]])
    gamma = torch.ones(4)
    torch.testing.assert_close(norms.rms_norm(10 * x, gamma, 0.0), norms.rms_norm(x, gamma, 0.0))
    assert not torch.allclose(norms.rms_norm(x + 1, gamma, 0.0), norms.rms_norm(x, gamma, 0.0))


@pytest.mark.parametrize("shape", [(5, 8), (2, 4, 12), (2, 3, 2, 6)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_layer_norm_backward_matches_autograd(shape, seed):
    g = torch.Generator().manual_seed(seed)
    d = shape[-1]
    x = (torch.randn(shape, generator=g) * 2 + 0.3).requires_grad_()
    gamma = torch.randn(d, generator=g).requires_grad_()
    beta = torch.randn(d, generator=g).requires_grad_()
    grad_out = torch.randn(shape, generator=g)
    F.layer_norm(x, (d,), gamma, beta, 1e-5).backward(grad_out)
    gx, gg, gb = norms.layer_norm_backward(grad_out, x.detach(), gamma.detach(), 1e-5)
    assert gx.shape == x.shape and gg.shape == (d,) and gb.shape == (d,)
    torch.testing.assert_close(gx, x.grad, atol=GRAD_ATOL, rtol=GRAD_RTOL)
    torch.testing.assert_close(gg, gamma.grad, atol=GRAD_ATOL, rtol=GRAD_RTOL)
    torch.testing.assert_close(gb, beta.grad, atol=GRAD_ATOL, rtol=GRAD_RTOL)


def test_layer_norm_backward_removes_mean_and_scale_directions():
    g = torch.Generator().manual_seed(5)
    x, grad_out = torch.randn(4, 10, generator=g), torch.randn(4, 10, generator=g)
    gx, _, _ = norms.layer_norm_backward(grad_out, x, torch.ones(10), eps=0.0)
    xhat = (x - x.mean(-1, keepdim=True)) / x.std(-1, unbiased=False, keepdim=True)
    torch.testing.assert_close(gx.sum(-1), torch.zeros(4), atol=1e-5, rtol=0)
    torch.testing.assert_close((gx * xhat).sum(-1), torch.zeros(4), atol=1e-5, rtol=0)


def test_layer_norm_of_u():
    u = torch.tensor([3.0, 1.0])
    got = norms.layer_norm(u, torch.ones(2), torch.zeros(2), eps=0.0)
    assert got.tolist() == [1.0, -1.0] == list(norms.LAYER_NORM_U)


# ---------------------------------------------------------------- positions (C1)

def _pe_numpy(n, d):
    pe = np.zeros((n, d))
    for p in range(n):
        for i in range(d // 2):
            angle = p / 10000 ** (2 * i / d)
            pe[p, 2 * i], pe[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return pe


@pytest.mark.parametrize("n,d", [(1, 2), (10, 8), (50, 16), (7, 64), (128, 6)])
def test_sinusoidal_positions_formula(n, d):
    pe = positions.sinusoidal_positions(n, d)
    assert pe.shape == (n, d) and pe.dtype == torch.float32
    np.testing.assert_allclose(pe.numpy(), _pe_numpy(n, d), atol=1e-6, rtol=0)
    assert pe[0].tolist() == [0.0, 1.0] * (d // 2)


def test_sinusoidal_positions_d8_row():
    row = positions.sinusoidal_positions(4, 8)[3]
    want = []
    for freq in (1.0, 0.1, 0.01, 0.001):                      # 10000^(-2i/8), i = 0..3
        want += [math.sin(3 * freq), math.cos(3 * freq)]
    np.testing.assert_allclose(row.numpy(), want, atol=1e-6, rtol=0)


@pytest.mark.parametrize("d", [1, 3, 7, 65])
def test_sinusoidal_positions_odd_d_raises(d):
    with pytest.raises(ValueError, match="even"):
        positions.sinusoidal_positions(4, d)


def test_sentences():
    assert {normalize(s) for s in positions.SENTENCES} == {"dog bites man", "man bites dog"}
    assert sorted(positions.SENTENCES[0].split()) == sorted(positions.SENTENCES[1].split())


def _probes(seed, T, d):
    g = torch.Generator().manual_seed(seed)
    Wq, Wk, Wv = (torch.randn(d, d, generator=g) for _ in range(3))
    W1, W2 = torch.randn(d, 4 * d, generator=g), torch.randn(4 * d, d, generator=g)
    P = positions.sinusoidal_positions(T, d)
    return {
        "attention": (lambda X: positions.self_attention(X, Wq, Wk, Wv), True),
        "attention+positions": (lambda X: positions.self_attention(X, Wq, Wk, Wv, positions=P), False),
        "causal": (lambda X: positions.self_attention(X, Wq, Wk, Wv, causal=True), False),
        "rowwise_mlp": (lambda X: positions.rowwise_mlp(X, W1, W2), True),
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_permutes_with_input_truth_table(seed, batch):
    T, d = 6, 8
    g = torch.Generator().manual_seed(100 + seed)
    X = torch.randn(*batch, T, d, generator=g) / math.sqrt(d)
    perm = torch.randperm(T, generator=g)
    if torch.equal(perm, torch.arange(T)):
        perm = torch.arange(T).flip(0)
    for name, (f, expected) in _probes(seed, T, d).items():
        assert positions.permutes_with_input(f, X, perm) is expected, name
        assert positions.permutes_with_input(f, X, perm.tolist()) is expected, name
        # the identity permutation commutes with everything
        assert positions.permutes_with_input(f, X, list(range(T))) is True, name


def test_self_attention_probe_matches_sdpa():
    g = torch.Generator().manual_seed(7)
    X = torch.randn(2, 5, 8, generator=g)
    Wq, Wk, Wv = (torch.randn(8, 4, generator=g) for _ in range(3))
    for causal in (False, True):
        want = F.scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv, is_causal=causal)
        got = positions.self_attention(X, Wq, Wk, Wv, causal=causal)
        torch.testing.assert_close(got, want, atol=ATOL, rtol=RTOL)


# ---------------------------------------------------------------- MLP (B4, B5, C3)

@pytest.mark.parametrize("d,d_ff", [(8, None), (6, 10), (16, 64)])
@pytest.mark.parametrize("activation,act", [("gelu", lambda z: 0.5 * z * (1 + torch.erf(z / math.sqrt(2)))),
                                            ("relu", lambda z: z.clamp_min(0))])
def test_mlp_matches_manual(d, d_ff, activation, act):
    torch.manual_seed(0)
    m = mlp.MLP(d, d_ff, activation)
    hidden = 4 * d if d_ff is None else d_ff
    assert set(m.state_dict()) == {"linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"}
    assert m.linear1.weight.shape == (hidden, d) and m.linear2.weight.shape == (d, hidden)
    x = torch.randn(2, 3, d)
    h = act(x @ m.linear1.weight.T + m.linear1.bias)
    want = h @ m.linear2.weight.T + m.linear2.bias
    torch.testing.assert_close(m(x), want, atol=ATOL, rtol=RTOL)


def test_mlp_gelu_is_exact_not_tanh():
    torch.manual_seed(1)
    m = mlp.MLP(4, 8)
    x = torch.randn(5, 4) * 3
    exact = m.linear2(F.gelu(m.linear1(x)))
    approx = m.linear2(F.gelu(m.linear1(x), approximate="tanh"))
    torch.testing.assert_close(m(x), exact, atol=1e-6, rtol=0)
    assert not torch.allclose(m(x), approx, atol=1e-6, rtol=0)


def test_mlp_rejects_unknown_activation_and_bias_switch():
    with pytest.raises(ValueError, match="gelu"):
        mlp.MLP(4, activation="tanh")
    assert sum(p.numel() for p in mlp.MLP(4, 8, bias=False).parameters()) == 2 * 4 * 8


def test_swiglu_matches_manual():
    torch.manual_seed(2)
    m = mlp.SwiGLU(12, 20)
    assert set(m.state_dict()) == {"w1.weight", "w2.weight", "w3.weight"}
    x = torch.randn(3, 5, 12)
    a, b = x @ m.w1.weight.T, x @ m.w3.weight.T
    want = (a * torch.sigmoid(a) * b) @ m.w2.weight.T
    torch.testing.assert_close(m(x), want, atol=ATOL, rtol=RTOL)


def test_swiglu_hidden_dim():
    assert mlp.swiglu_hidden_dim(4096) == 11008
    assert mlp.swiglu_hidden_dim(4096, multiple_of=1) == int(8 * 4096 / 3)
    assert mlp.swiglu_hidden_dim(96, multiple_of=256) == 256
    assert mlp.swiglu_hidden_dim(768, multiple_of=64) == 2048
    for d in range(1, 300):
        h = mlp.swiglu_hidden_dim(d, 32)
        assert h % 32 == 0 and 0 <= h - int(8 * d / 3) < 32


def test_most_weights_answer_sets():
    assert "mlp" in params.MOST_WEIGHTS and "attention" in params.MOST_WEIGHTS_WRONG
    for spelling in ("MLP", "Feed-Forward", "FFN", "multi-layer perceptron", "Feedforward network"):
        assert normalize(spelling) in params.MOST_WEIGHTS, spelling
    for spelling in ("Attention", "W_Q, W_K, W_V, W_O", "multi-head attention", "self-attention"):
        assert normalize(spelling) in params.MOST_WEIGHTS_WRONG, spelling
    _assert_normalized_and_disjoint(params.MOST_WEIGHTS, params.MOST_WEIGHTS_WRONG)


def _assert_normalized_and_disjoint(*answer_sets):
    seen = set()
    for s in answer_sets:
        for answer in s:
            assert answer == normalize(answer), answer
        assert not (seen & set(s)), seen & set(s)
        seen |= set(s)


# ---------------------------------------------------------------- blocks (B6, B7, C6, C7)

def test_causal_mask():
    m = blocks.causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert m.tolist() == [[j > i for j in range(4)] for i in range(4)]


BLOCK_CASES = [(2, 5, 8, 2, None), (1, 1, 4, 1, None), (3, 7, 12, 3, 20), (2, 6, 16, 4, 24), (4, 3, 6, 2, 9)]


@pytest.mark.parametrize("B,T,d,h,d_ff", BLOCK_CASES)
@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("mode", ["eval", "train", "eval_no_grad"])
def test_blocks_match_transformer_encoder_layer(B, T, d, h, d_ff, norm_first, mode):
    torch.manual_seed(B * 100 + T * 10 + d)
    layer = blocks.torch_block(d, h, d_ff, norm_first=norm_first)
    cls = blocks.PreNormBlock if norm_first else blocks.PostNormBlock
    ours = cls(d, h, d_ff)
    assert set(ours.state_dict()) <= set(layer.state_dict())
    ours.load_state_dict(layer.state_dict())
    for p in layer.parameters():                     # make biases and gains non-trivial
        with torch.no_grad():
            p.add_(0.1 * torch.randn_like(p))
    ours.load_state_dict(layer.state_dict())
    for m in (layer, ours):
        m.train(mode == "train")
    x = torch.randn(B, T, d)
    with torch.set_grad_enabled(mode != "eval_no_grad"):
        for causal in (True, False):
            want = blocks.torch_block_forward(layer, x, causal)
            got = ours(x, causal=causal)
            assert got.shape == (B, T, d)
            torch.testing.assert_close(got, want, atol=ATOL, rtol=RTOL)


def test_block_causal_flag_matters_and_hides_the_future():
    torch.manual_seed(0)
    block = blocks.PreNormBlock(8, 2).eval()
    x = torch.randn(1, 5, 8)
    assert not torch.allclose(block(x, causal=True), block(x, causal=False), atol=1e-4)
    y = x.clone()
    y[:, -1] += 1.0                                  # change only the last token
    torch.testing.assert_close(block(x)[:, :-1], block(y)[:, :-1], atol=ATOL, rtol=RTOL)


def test_pre_and_post_norm_differ():
    torch.manual_seed(4)
    pre, post = blocks.PreNormBlock(8, 2), blocks.PostNormBlock(8, 2)
    post.load_state_dict(pre.state_dict())
    x = torch.randn(2, 4, 8) * 3
    assert not torch.allclose(pre(x), post(x), atol=1e-3)
    # post-norm ends with a LayerNorm whose gain is 1 and shift 0: rows have mean 0, variance 1
    out = post(x)
    torch.testing.assert_close(out.mean(-1), torch.zeros(2, 4), atol=1e-5, rtol=0)


def test_decoder_and_norm_answer_sets():
    subs = blocks.DECODER_SUBLAYERS
    assert set(subs) == {"masked self attention", "cross attention", "feed forward"}
    for key, spellings in subs.items():
        assert key in spellings
    examples = {
        "masked self attention": ["Masked multi-head attention", "causal self-attention"],
        "cross attention": ["Cross-Attention", "encoder-decoder attention"],
        "feed forward": ["FFN", "MLP", "position-wise feed-forward"],
    }
    for key, spellings in examples.items():
        for s in spellings:
            assert normalize(s) in subs[key], s
    assert blocks.GPT_DROPS == subs["cross attention"]
    for s in ("Post-LN", "post norm", "PostNorm", "post-LayerNorm", "Post layer norm"):
        assert normalize(s) in blocks.PAPER_2017, s
    for s in ("Pre-LN", "pre norm", "PreNorm", "pre-LayerNorm", "Pre layer norm"):
        assert normalize(s) in blocks.MODERN_DEFAULT, s
    _assert_normalized_and_disjoint(*subs.values())
    _assert_normalized_and_disjoint(blocks.PAPER_2017, blocks.MODERN_DEFAULT)


# ---------------------------------------------------------------- parameters (C4, B8)

def test_c4_numbers():
    assert params.attention_weights(8) == 256 and params.mlp_weights(8) == 512
    assert params.attention_weights(4) == 64 and params.mlp_weights(4) == 128
    assert params.mlp_weights(8) / params.attention_weights(8) == params.RATIO == 2.0
    assert params.mlp_weights(8, 10) == 160


def test_gpt2_small_and_llama2_7b():
    gpt2 = params.count_parameters(params.GPT2_SMALL)
    assert gpt2 == dict(embeddings=39_383_808, attention=28_348_416, mlp=56_669_184,
                        norms=38_400, total=124_439_808)
    assert all(type(v) is int for v in gpt2.values())
    assert params.count_parameters(params.LLAMA2_7B)["total"] == 6_738_415_616
    assert params.LLAMA2_7B["d_ff"] == mlp.swiglu_hidden_dim(params.LLAMA2_7B["d_model"])


def _part(name: str) -> str:
    if name.startswith(("tok_emb", "pos_emb", "lm_head")):
        return "embeddings"
    if ".attn." in name:
        return "attention"
    if ".mlp." in name:
        return "mlp"
    if "norm" in name:
        return "norms"
    raise AssertionError(f"unclassified parameter {name}")


FLAGS = list(itertools.product(["layernorm", "rmsnorm"], ["gelu", "swiglu"], [True, False],
                               [True, False], [True, False]))


@pytest.mark.parametrize("i,flags", list(enumerate(FLAGS)))
def test_count_parameters_matches_built_model(i, flags):
    norm, act, bias, tie, learned_pos = flags
    rng = random.Random(i)
    cfg = params.random_config(rng, norm=norm, mlp=act, bias=bias, tie_embeddings=tie)
    cfg["max_positions"] = rng.randint(1, 64) if learned_pos else 0
    counts = params.count_parameters(cfg)
    model = params.build_model(cfg)
    assert counts["total"] == sum(p.numel() for p in model.parameters())
    by_part = dict.fromkeys(["embeddings", "attention", "mlp", "norms"], 0)
    for name, p in model.named_parameters():
        by_part[_part(name)] += p.numel()
    assert by_part == {k: counts[k] for k in by_part}
    assert counts["total"] == sum(by_part.values())
    assert (model.lm_head.weight is model.tok_emb.weight) == tie


def test_random_configs_and_forward():
    rng = random.Random(123)
    seen = set()
    for _ in range(30):
        cfg = params.random_config(rng)
        assert cfg["d_model"] <= 64 and cfg["vocab_size"] <= 500
        seen.add((cfg["norm"], cfg["mlp"], cfg["bias"], cfg["tie_embeddings"]))
        assert params.count_parameters(cfg)["total"] == sum(
            p.numel() for p in params.build_model(cfg).parameters())
    assert len(seen) >= 8
    cfg = params.random_config(random.Random(0), d_model=16, max_positions=8)
    model = params.build_model(cfg, n_heads=4)
    logits = model(torch.randint(0, cfg["vocab_size"], (2, 8)))
    assert logits.shape == (2, 8, cfg["vocab_size"]) and torch.isfinite(logits).all()


def test_count_parameters_rejects_bad_config():
    with pytest.raises(KeyError, match="d_ff"):
        params.count_parameters({k: v for k, v in params.GPT2_SMALL.items() if k != "d_ff"})
    with pytest.raises(ValueError, match="norm"):
        params.count_parameters(dict(params.GPT2_SMALL, norm="batchnorm"))


# ---------------------------------------------------------------- depth (B9, C2)

def test_stack_forward_semantics():
    fs = [lambda x: 2 * x, lambda x: x + 1, torch.sin]
    x = torch.tensor([0.5, -1.0])
    plain = torch.sin(2 * x + 1)
    h = x
    for f in fs:
        h = h + f(h)
    torch.testing.assert_close(depth.stack_forward(fs, x, residual=False), plain)
    torch.testing.assert_close(depth.stack_forward(fs, x), h)
    torch.testing.assert_close(depth.stack_forward([], x), x)
    zero = [lambda v: torch.zeros_like(v)] * 5
    torch.testing.assert_close(depth.stack_forward(zero, x), x)   # the highway passes x through


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_residual_jacobian(seed):
    torch.manual_seed(seed)
    d = 6
    layer = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
    x = torch.randn(d)
    J = depth.residual_jacobian(layer, x)
    Jf = torch.autograd.functional.jacobian(layer, x)
    assert J.shape == (d, d)
    torch.testing.assert_close(J, torch.eye(d) + Jf, atol=GRAD_ATOL, rtol=GRAD_RTOL)
    with pytest.raises(ValueError):
        depth.residual_jacobian(layer, torch.randn(2, d))


def test_grad_norms_residual_vs_plain():
    res = depth.grad_norms_per_layer(depth=32, d=64, residual=True, seed=0)
    plain = depth.grad_norms_per_layer(depth=32, d=64, residual=False, seed=0)
    assert len(res) == len(plain) == 32 and all(isinstance(v, float) for v in res + plain)
    assert res == depth.grad_norms_per_layer(depth=32, d=64, residual=True, seed=0)
    assert all(0.5 < v < 50 for v in res)
    assert plain[0] < 1e-4 and plain[0] * 100 < res[0]
    assert plain[0] < plain[15] < plain[31]          # shrinks on the way down


def test_residual_cousin_sets():
    for s in ("LSTM", "long short-term memory", "the LSTM cell state", "cell state"):
        assert normalize(s) in depth.RESIDUAL_COUSIN, s
    for s in ("RNN", "vanilla RNN", "Elman RNN"):
        assert normalize(s) in depth.RESIDUAL_COUSIN_WRONG, s
    assert "gru" not in depth.RESIDUAL_COUSIN | depth.RESIDUAL_COUSIN_WRONG
    _assert_normalized_and_disjoint(depth.RESIDUAL_COUSIN, depth.RESIDUAL_COUSIN_WRONG)
