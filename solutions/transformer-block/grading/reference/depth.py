"""B9, C2: residual stacks, their Jacobian, and gradient norms with and without the skip path."""
import torch
import torch.nn as nn


def stack_forward(sublayers, x, residual: bool = True):
    """Apply each f in order: x <- x + f(x) with residual, else x <- f(x)."""
    for f in sublayers:
        x = x + f(x) if residual else f(x)
    return x


def residual_jacobian(f, x: torch.Tensor) -> torch.Tensor:
    """J = d(x + f(x))/dx for a 1-D x of size d, shape (d, d); equals I + df/dx."""
    if x.dim() != 1:
        raise ValueError(f"residual_jacobian expects a 1-D x, got shape {tuple(x.shape)}; "
                         "pass a single token vector")
    return torch.autograd.functional.jacobian(lambda v: v + f(v), x)


class TanhLayer(nn.Module):
    """tanh(W x + b) with nn.Linear's default init: each one shrinks gradients a little."""

    def __init__(self, d: int):
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x):                                   # x: (B, d)
        return torch.tanh(self.linear(x))


def grad_norms_per_layer(depth: int = 32, d: int = 64, residual: bool = True, seed: int = 0,
                         batch: int = 32) -> list[float]:
    """Gradient norm at the input of every layer of a random tanh stack, layer 0 first.

    The loss sum(out) / sqrt(d) hands every example a unit-norm gradient at the top; examples do
    not interact, so each returned number (the batch mean of the per-example norm of dL/dx_l)
    shows only what the backward pass through layers l..depth-1 does to that unit signal. Weights and inputs come from a private
    RNG seeded with seed, so results are reproducible and the global RNG is untouched.
    """
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)   # the CPU generator only (see student_side.server._build)
        layers = [TanhLayer(d) for _ in range(depth)]
        x = torch.randn(batch, d)                           # (B, d)

    inputs = []

    def tap(layer):
        def f(h):
            h.retain_grad()
            inputs.append(h)
            return layer(h)
        return f

    x.requires_grad_(True)
    out = stack_forward([tap(layer) for layer in layers], x, residual=residual)
    loss = out.sum() / d ** 0.5
    loss.backward()
    return [float(h.grad.norm(dim=-1).mean()) for h in inputs]


# C2 answer sets in normalized form (lowercase, hyphens as spaces, no punctuation).
# GRU is gated too and arguably also a cousin, so it sits in neither set. Phrases that also
# describe an LSTM ("recurrent network", "attention" in an explanation) stay out of the wrong set.
RESIDUAL_COUSIN = frozenset({
    "lstm", "lstms", "the lstm", "an lstm", "lstm cell", "the lstm cell", "lstm cell state",
    "the lstm cell state", "cell state", "the cell state", "lstm network", "lstm networks",
    "long short term memory", "the long short term memory", "long short term memory network",
    "long short term memory cell", "lstm memory cell", "lstm highway",
})
RESIDUAL_COUSIN_WRONG = frozenset({
    "rnn", "rnns", "vanilla rnn", "simple rnn", "plain rnn", "elman rnn", "elman network",
    "cnn", "convolutional neural network", "dropout", "batch norm", "batchnorm",
    "batch normalization", "word2vec", "resnet", "resnets", "residual network", "transformer",
})
