"""B1, B2: the logit lens on a tiny decoder-only model.

``TinyBlock`` and ``TinyLM`` are the model the build notebook gives students, line for line in
behaviour: the same submodules, parameter names and construction order, so a state_dict made here
loads into the students' ``LensLM`` (a subclass of their ``TinyLM``) and both see the same model.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# The notebook's default model (TinyLM()), and the order its parameters are made in.
CONFIG = dict(vocab_size=16, d_model=16, n_layers=4, n_heads=2, max_len=16)


class TinyBlock(nn.Module):
    """Pre-norm block on one sequence h of shape (T, d): causal multi-head attention, then a GELU MLP."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        self.norm2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)

    def attention(self, h):                                          # h: (T, d)
        T, d = h.shape
        d_head = d // self.n_heads
        q, k, v = self.qkv(h).view(T, 3, self.n_heads, d_head).permute(1, 2, 0, 3)   # each (heads, T, d_head)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)         # (heads, T, T)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.proj((weights @ v).transpose(0, 1).reshape(T, d))  # (T, d)

    def forward(self, h):                                            # h: (T, d)
        h = h + self.attention(self.norm1(h))
        return h + self.fc2(F.gelu(self.fc1(self.norm2(h))))


class TinyLM(nn.Module):
    """Token and position tables, n_layers pre-norm blocks, a final LayerNorm, a bias-free unembedding."""

    def __init__(self, vocab_size=16, d_model=16, n_layers=4, n_heads=2, max_len=16):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(TinyBlock(d_model, n_heads) for _ in range(n_layers))
        self.norm_f = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)

    def embed(self, tokens):                                         # tokens: (T,) int64
        return self.tok_emb(tokens) + self.pos_emb(torch.arange(len(tokens)))   # (T, d)

    def forward(self, tokens):                                       # tokens: (T,) int64
        h = self.embed(tokens)
        for block in self.blocks:
            h = block(h)
        return self.unembed(self.norm_f(h))                          # (T, vocab_size)


def logit_lens(model: TinyLM, tokens: torch.Tensor) -> torch.Tensor:
    """(n_layers, vocab_size): the final norm and the unembedding applied to the stream at the last
    position after each block. Its last row is the model's own output logits there."""
    h = model.embed(tokens)
    rows = []
    for block in model.blocks:
        h = block(h)
        rows.append(model.unembed(model.norm_f(h[-1])))
    return torch.stack(rows)


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


# ---- the models the checks send ---------------------------------------------------------------

def model_from(state: dict, config: dict | None = None) -> TinyLM:
    """TinyLM(**config) holding ``state`` (the checks draw it with the visible checks' ``_state``)."""
    with torch.device("meta"):
        model = TinyLM(**{**CONFIG, **(config or {})})
    model.load_state_dict(state, assign=True)
    return model.eval()


# ---- a trained model, for the notes' figure ---------------------------------------------------

def train_copy_first(model: TinyLM, steps: int = 150, T: int = 8, batch: int = 32, lr: float = 1e-2,
                     seed: int = 0) -> float:
    """Train ``model`` in place, as the build notebook's demonstration does, to predict at every
    position the first token of its sequence (a task only attention solves); the last loss."""
    from torch.func import functional_call, vmap

    g = torch.Generator().manual_seed(seed)
    V = model.unembed.out_features
    params = dict(model.named_parameters())
    run = vmap(lambda p, seq: functional_call(model, p, (seq,)), in_dims=(None, 0))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        seqs = torch.randint(V, (batch, T), generator=g)
        logits = run(params, seqs)                                   # (batch, T, V)
        loss = F.cross_entropy(logits.reshape(-1, V), seqs[:, :1].expand(batch, T).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def trained_model(seed: int = 0) -> TinyLM:
    """The notebook's trained TinyLM: default size, torch's global seed set to ``seed`` to build it
    (the global random state is restored afterwards)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TinyLM(**CONFIG)
    train_copy_first(model)
    return model.eval()
