"""B1, B2: the logit lens on the build notebook's tiny decoder-only model.

The notebook gives students ``TinyLM`` as an ``nn.Module``. The reference here is written
independently of that code: a function of the model's state_dict (the keys of the contract), with
torch's own layer norm and attention kernels, so a check that agrees with it also vouches for the
given model.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import Window

# The notebook's default TinyLM().
CONFIG = {"vocab_size": 16, "d_model": 16, "n_layers": 4, "n_heads": 2, "max_len": 16}
EPS = 1e-5          # nn.LayerNorm's default


def _config(config: dict | None) -> dict:
    return {**CONFIG, **(config or {})}


def _norm(state: dict, name: str, x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:], state[f"{name}.weight"], state[f"{name}.bias"], EPS)


def _block(state: dict, i: int, h: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Block i of the stack on one stream h (T, d): pre-norm causal attention, then a GELU MLP."""
    p = f"blocks.{i}."
    T, d = h.shape
    q, k, v = (F.linear(_norm(state, p + "norm1", h), state[p + "qkv.weight"])
               .reshape(T, 3, n_heads, d // n_heads).permute(1, 2, 0, 3))             # each (heads, T, d_head)
    mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)                   # (heads, T, d_head)
    h = h + F.linear(mixed.permute(1, 0, 2).reshape(T, d), state[p + "proj.weight"])
    hidden = F.gelu(F.linear(_norm(state, p + "norm2", h), state[p + "fc1.weight"], state[p + "fc1.bias"]))
    return h + F.linear(hidden, state[p + "fc2.weight"], state[p + "fc2.bias"])


def streams(state: dict, tokens: torch.Tensor, config: dict | None = None) -> list[torch.Tensor]:
    """The residual stream (T, d) after each block, first block first."""
    config = _config(config)
    positions = torch.arange(tokens.shape[-1])
    h = state["tok_emb.weight"][tokens] + state["pos_emb.weight"][positions]
    out = []
    for i in range(config["n_layers"]):
        h = _block(state, i, h, config["n_heads"])
        out.append(h)
    return out


def head(state: dict, h: torch.Tensor) -> torch.Tensor:
    """The output head: the final norm, then the bias-free unembedding."""
    return F.linear(_norm(state, "norm_f", h), state["unembed.weight"])


def logits(state: dict, tokens: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """(T, vocab_size): what TinyLM(**config) with these weights outputs."""
    return head(state, streams(state, tokens, config)[-1])


def logit_lens(state: dict, tokens: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """(n_layers, vocab_size): the output head applied to the stream at the last position after each
    block. Its last row is the model's own output there."""
    return torch.stack([head(state, h[-1]) for h in streams(state, tokens, config)])


def lens_guesses(lens_logits: torch.Tensor) -> list[int]:
    """What each block would predict: the index of the largest logit of its row."""
    return [int(i) for i in lens_logits.argmax(dim=-1)]


def token_probability(lens_logits: torch.Tensor, token: int) -> torch.Tensor:
    """(n_layers,): the probability each row's softmax (over the vocabulary) gives ``token``."""
    return lens_logits.softmax(dim=-1)[:, token]


def settled_at(guesses) -> int:
    """The first block (counted from 1) from which every guess equals the last one."""
    guesses = list(guesses)
    block = len(guesses)
    while block > 1 and guesses[block - 2] == guesses[-1]:
        block -= 1
    return block


# ---- B7: knocking one part out -------------------------------------------------------------

# The layer each part's update ends in: attention's in the bias-free proj (W_O), the MLP's in fc2.
LAST_LAYERS = {"attention": ("proj",), "mlp": ("fc2",), "block": ("proj", "fc2")}


def knocked_out(state: dict, block: int, part: str) -> dict:
    """``state`` with the last layer(s) of ``part`` of block ``block`` (counted from 1) set to zero,
    weight and bias: that part's update is then exactly zero and the stream passes it unchanged, at
    every position."""
    silenced = tuple(f"blocks.{block - 1}.{layer}." for layer in LAST_LAYERS[part])
    return {key: torch.zeros_like(t) if key.startswith(silenced) else t for key, t in state.items()}


def knockout_lens(state: dict, tokens: torch.Tensor, block: int, part: str, config: dict | None = None):
    """(n_layers, vocab_size): the logit lens with ``part`` of block ``block`` knocked out."""
    return logit_lens(knocked_out(state, block, part), tokens, config)


# The question B7's answers are about: the shipped trained model (trained/copy_first.pt) on this
# prompt, with block 2's attention knocked out. tests/test_trained_model.py recomputes both numbers
# from the shipped weights.
KNOCKOUT_PROMPT = (15, 11, 1, 6, 15, 7, 13)
KNOCKOUT = (2, "attention")
DROP = 0.5277        # P(first token) at block 4: 0.9946 intact, 0.4669 without block 2's attention
SETTLED = 3          # the lens settles at block 3 without it (at block 2 intact)

WINDOWS = {
    # 6% either side of the drop: two figures (0.53) and one (0.5) are right, and a retrained model's
    # last bits do not matter; the probability left (0.47), the drop with the whole block 2 gone
    # (0.29), or with the attention of the block counted from 0 (block 3: 0.003) are not.
    "b7_drop": Window(right=(DROP,), rtol=0.06, rounded=(0.53, 0.5, 0.528), traps={
        "the probability left": 0.4669, "whole block 2 knocked out": 0.2940,
        "block 3's attention (counted from 0)": 0.0026, "in percent": 52.77, "the probability intact": 0.9946}),
}


# ---- a trained model, for the notes' figure ----------------------------------------------------

def initial_state(seed: int, config: dict | None = None) -> dict:
    """The weights the notebook's TinyLM(**config) starts with after torch.manual_seed(seed): torch's
    default initializations, drawn in the order the model makes its layers. The global random state
    is restored afterwards."""
    c = _config(config)
    V, d, L = c["vocab_size"], c["d_model"], c["max_len"]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layers = [("tok_emb", nn.Embedding(V, d)), ("pos_emb", nn.Embedding(L, d))]
        for i in range(c["n_layers"]):
            made = (("norm1", nn.LayerNorm(d)), ("qkv", nn.Linear(d, 3 * d, bias=False)),
                    ("proj", nn.Linear(d, d, bias=False)), ("norm2", nn.LayerNorm(d)),
                    ("fc1", nn.Linear(d, 4 * d)), ("fc2", nn.Linear(4 * d, d)))
            layers += [(f"blocks.{i}.{name}", layer) for name, layer in made]
        layers += [("norm_f", nn.LayerNorm(d)), ("unembed", nn.Linear(d, V, bias=False))]
    return {f"{name}.{key}": t.detach().clone() for name, layer in layers for key, t in layer.state_dict().items()}


def train_copy_first(state: dict, steps: int = 150, T: int = 8, batch: int = 32, lr: float = 1e-2,
                     seed: int = 0, config: dict | None = None) -> float:
    """Train ``state`` in place, as the build notebook's demonstration trains its TinyLM, to predict at
    every position the first token of the sequence (a task only attention solves); the last loss."""
    from torch.func import vmap

    V = _config(config)["vocab_size"]
    gen = torch.Generator().manual_seed(seed)
    for t in state.values():
        t.requires_grad_(True)
    run = vmap(lambda seq: logits(state, seq, config))
    opt = torch.optim.Adam(state.values(), lr=lr)
    for _ in range(steps):
        seqs = torch.randint(V, (batch, T), generator=gen)
        loss = F.cross_entropy(run(seqs).reshape(-1, V), seqs[:, :1].expand(batch, T).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    for t in state.values():
        t.requires_grad_(False)
    return loss.item()


def trained_state(seed: int = 0) -> dict:
    """The notebook's trained TinyLM, as a state_dict: default size, built after torch.manual_seed(seed)."""
    state = initial_state(seed)
    train_copy_first(state)
    return state
