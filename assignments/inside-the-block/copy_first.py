"""The copy-first task of the build notebook, and the TinyLM trained on it.

The task: at every position of a random sequence, predict the sequence's **first** token. Only
attention can solve it (the answer sits at position 0, whatever the position asking), so a model
trained on it gives the logit lens something to watch take shape through the blocks.

The course trained the notebook's ``TinyLM`` on it once, with ``trained_model`` below on one
thread, and ships the weights next to this file as ``trained/copy_first.pt``; the notebook loads
them with ``load_trained`` instead of training on every run. ``trained_model`` is also what the
notebook's optional retrain cell runs: a few CPU-seconds, more on a busy machine.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import torch
import torch.nn.functional as F

# The shipped weights: a state_dict of the default TinyLM(), trained by ``trained_model``.
WEIGHTS = Path(__file__).resolve().parent / "trained" / "copy_first.pt"
SEED = 0          # torch.manual_seed(SEED) right before TinyLM(): the weights training starts from


@contextlib.contextmanager
def one_thread():
    """Run the block on one of torch's threads, then restore the count: a model this small trains
    no faster on more threads, and on a busy machine (a shared JupyterHub) they wait on each other
    and make it several times slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train_copy_first(model, steps=150, T=8, batch=32, lr=1e-2, seed=0):
    """Train ``model`` (a TinyLM, one sequence per call) in place to predict, at every position, the
    first token of its sequence: ``steps`` Adam steps on batches of ``batch`` random sequences of
    ``T`` tokens drawn from a generator seeded with ``seed``. Returns the last batch's loss."""
    from torch.func import functional_call, vmap  # only training needs them (slow to import)

    g = torch.Generator().manual_seed(seed)
    V = model.unembed.out_features
    params = dict(model.named_parameters())
    run = vmap(lambda p, seq: functional_call(model, p, (seq,)), in_dims=(None, 0))   # a batch of sequences
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    with one_thread():
        for _ in range(steps):
            seqs = torch.randint(V, (batch, T), generator=g)
            logits = run(params, seqs)                             # (batch, T, V)
            loss = F.cross_entropy(logits.reshape(-1, V), seqs[:, :1].expand(batch, T).reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


def trained_model(model_class, seed=SEED):
    """A new ``model_class()`` made right after ``torch.manual_seed(seed)`` and trained by
    ``train_copy_first``: ``(model, last loss)``. The global random state is left as it was.
    This is how the shipped weights were made (the course pins torch's CPU kernels when it does,
    so they come out the same bit for bit on any machine; here they may differ in the last bits)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_class()
    loss = train_copy_first(model)
    return model, loss


def load_trained(model, path=WEIGHTS):
    """Load the shipped weights (a state_dict, read with ``weights_only=True``: tensors only, no
    code) into ``model``, a default-sized ``TinyLM()``, and return it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no trained weights at {path}: they come with the released notebook "
                                "(`course release` writes them); or train the model here with "
                                "copy_first.trained_model(TinyLM)")
    model.load_state_dict(torch.load(path, weights_only=True))
    return model
