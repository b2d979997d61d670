"""C4, B8: where the parameters of a decoder-only model sit, counted and built for real."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from .mlp import MLP, SwiGLU

RATIO = 2.0   # C4: MLP weights / attention weights = 8 d^2 / 4 d^2

GPT2_SMALL = dict(vocab_size=50257, max_positions=1024, d_model=768, n_layers=12, d_ff=3072,
                  norm="layernorm", mlp="gelu", bias=True, tie_embeddings=True)
LLAMA2_7B = dict(vocab_size=32000, max_positions=0, d_model=4096, n_layers=32, d_ff=11008,
                 norm="rmsnorm", mlp="swiglu", bias=False, tie_embeddings=False)

_KEYS = ("vocab_size", "max_positions", "d_model", "n_layers", "d_ff", "norm", "mlp", "bias",
         "tie_embeddings")


def attention_weights(d: int) -> int:
    """W_Q, W_K, W_V, W_O: four d x d matrices, biases ignored."""
    return 4 * d * d


def mlp_weights(d: int, d_ff: int | None = None) -> int:
    """W_1 (d x d_ff) and W_2 (d_ff x d), biases ignored; d_ff defaults to 4d."""
    d_ff = 4 * d if d_ff is None else d_ff
    return 2 * d * d_ff


def _check(config: dict) -> None:
    missing = [k for k in _KEYS if k not in config]
    if missing:
        raise KeyError(f"config is missing {missing}; it needs all of {list(_KEYS)}")
    if config["norm"] not in ("layernorm", "rmsnorm"):
        raise ValueError(f"norm must be 'layernorm' or 'rmsnorm', got {config['norm']!r}")
    if config["mlp"] not in ("gelu", "swiglu"):
        raise ValueError(f"mlp must be 'gelu' or 'swiglu', got {config['mlp']!r}")


def count_parameters(config: dict) -> dict:
    """Exact parameter counts by part: embeddings, attention, mlp, norms, total.

    V, P, d, N, f: vocab_size, max_positions, d_model, n_layers, d_ff; b = 1 with biases.
    embeddings = V d + P d (+ V d for an untied, bias-free unembedding)
    attention  = N (4 d^2 + b 4d)
    mlp        = N (2 d f + b (f + d))      gelu
               = N (3 d f + b (2f + d))     swiglu
    norms      = (2N + 1) d (1 + b)         layernorm (beta only with biases)
               = (2N + 1) d                 rmsnorm
    """
    _check(config)
    V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]
    N, f, b = config["n_layers"], config["d_ff"], int(bool(config["bias"]))
    embeddings = V * d + P * d + (0 if config["tie_embeddings"] else V * d)
    attention = N * (4 * d * d + b * 4 * d)
    if config["mlp"] == "gelu":
        mlp = N * (2 * d * f + b * (f + d))
    else:
        mlp = N * (3 * d * f + b * (2 * f + d))
    per_norm = d * (1 + b) if config["norm"] == "layernorm" else d
    norms = (2 * N + 1) * per_norm
    total = embeddings + attention + mlp + norms
    return dict(embeddings=embeddings, attention=attention, mlp=mlp, norms=norms, total=total)


def _norm(config: dict) -> nn.Module:
    d = config["d_model"]
    if config["norm"] == "layernorm":
        return nn.LayerNorm(d, bias=bool(config["bias"]))
    return nn.RMSNorm(d, eps=1e-6)


class Attention(nn.Module):
    """Causal multi-head attention with separate q, k, v, o projections (4 d^2 weights)."""

    def __init__(self, d_model: int, n_heads: int, bias: bool):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.k = nn.Linear(d_model, d_model, bias=bias)
        self.v = nn.Linear(d_model, d_model, bias=bias)
        self.o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x):                                           # x: (B, T, d)
        B, T, d = x.shape
        h = self.n_heads
        q, k, v = (p(x).view(B, T, h, d // h).transpose(1, 2) for p in (self.q, self.k, self.v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, d/h)
        return self.o(y.transpose(1, 2).reshape(B, T, d))           # (B, T, d)


class Block(nn.Module):
    """Pre-norm decoder block: x + attn(norm1(x)), then + mlp(norm2(.))."""

    def __init__(self, config: dict, n_heads: int):
        super().__init__()
        d, bias = config["d_model"], bool(config["bias"])
        self.norm1 = _norm(config)
        self.attn = Attention(d, n_heads, bias)
        self.norm2 = _norm(config)
        if config["mlp"] == "gelu":
            self.mlp = MLP(d, config["d_ff"], "gelu", bias=bias)
        else:
            self.mlp = SwiGLU(d, config["d_ff"], bias=bias)

    def forward(self, x):                                           # x: (B, T, d)
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class DecoderOnly(nn.Module):
    """Token (+ learned position) embeddings, N blocks, final norm, bias-free lm_head.

    With tie_embeddings the lm_head weight is the token table itself, so it is counted once.
    """

    def __init__(self, config: dict, n_heads: int = 1):
        super().__init__()
        _check(config)
        V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]
        self.tok_emb = nn.Embedding(V, d)
        self.pos_emb = nn.Embedding(P, d) if P > 0 else None
        self.blocks = nn.ModuleList(Block(config, n_heads) for _ in range(config["n_layers"]))
        self.norm_f = _norm(config)
        self.lm_head = nn.Linear(d, V, bias=False)
        if config["tie_embeddings"]:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):                                         # idx: (B, T) token ids
        T = idx.shape[1]
        x = self.tok_emb(idx)                                       # (B, T, d)
        if self.pos_emb is not None:
            if T > self.pos_emb.num_embeddings:
                raise ValueError(f"sequence of {T} tokens is longer than max_positions="
                                 f"{self.pos_emb.num_embeddings}; shorten it")
            x = x + self.pos_emb(torch.arange(T, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm_f(x))                         # (B, T, V) logits


def build_model(config: dict, n_heads: int = 1) -> nn.Module:
    """A real decoder-only model whose parameters are exactly those count_parameters counts."""
    return DecoderOnly(config, n_heads)


def random_config(rng: random.Random, **fixed) -> dict:
    """A small random config (d_model <= 64, vocab <= 500); keyword arguments pin chosen keys."""
    d = rng.randint(1, 64)
    config = dict(
        vocab_size=rng.randint(2, 500),
        max_positions=rng.choice([0, rng.randint(1, 128)]),
        d_model=d,
        n_layers=rng.randint(1, 4),
        d_ff=rng.randint(1, 4 * d + 8),
        norm=rng.choice(["layernorm", "rmsnorm"]),
        mlp=rng.choice(["gelu", "swiglu"]),
        bias=rng.choice([True, False]),
        tie_embeddings=rng.choice([True, False]),
    )
    unknown = set(fixed) - set(config)
    if unknown:
        raise KeyError(f"unknown config keys {sorted(unknown)}; use some of {list(_KEYS)}")
    config.update(fixed)
    return config


# C3, normalized form: lowercase, hyphens as spaces, punctuation dropped, single spaces.
MOST_WEIGHTS = frozenset({
    "mlp", "the mlp", "mlps", "the mlps", "mlp layer", "mlp layers", "the mlp layer",
    "feed forward", "feedforward", "the feed forward", "feed forward network",
    "feed forward layer", "feedforward network", "ffn", "the ffn", "ff",
    "position wise feed forward", "position wise feed forward network", "positionwise feed forward",
    "multilayer perceptron", "multi layer perceptron", "the multilayer perceptron",
    "w1 w2", "the mlp w1 w2",
})

MOST_WEIGHTS_WRONG = frozenset({
    "attention", "the attention", "self attention", "multi head attention", "multihead attention",
    "mha", "attention layer", "attention weights", "attention matrices", "attention projections",
    "wq wk wv wo", "wq wk wv and wo", "w q w k w v w o", "q k v o", "qkvo", "qkv",
    "query key value output", "queries keys values", "layer norm", "layer norms", "layernorm", "norms",
    "normalization", "embeddings", "embedding", "biases",
})
