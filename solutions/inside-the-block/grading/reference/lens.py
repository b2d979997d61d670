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
