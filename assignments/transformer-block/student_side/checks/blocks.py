"""Checks for `blocks`: the decoder's sublayers (C6), norm placement (C7), and the pre-norm (B6)
and post-norm (B7) blocks against torch's own encoder layer with the same weights."""

import numpy as np
import torch

from . import check, expect

# (batch, tokens, d_model, heads, d_ff): d_ff is not always 4 * d_model.


def _causality(student, cls):
    """With causal=True, changing the last token changes no earlier output; without the mask it does."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 16, generator=g)
    x2 = x.clone()
    x2[:, -1] = torch.randn(2, 16, generator=g)
    outs = student.module(cls, (16, 4), state=None, forwards=[((x,), {"causal": True}), ((x2,), {"causal": True}),
                                                              ((x,), {"causal": False}), ((x2,), {"causal": False})],
                          forbid=("transformer",))
    expect(all(isinstance(o, np.ndarray) and o.shape == (2, 6, 16) for o in outs),
           f"{cls}.forward must return a tensor of the input's shape (2, 6, 16)")
    expect(np.allclose(outs[0][:, :-1], outs[1][:, :-1], atol=1e-5),
           f"{cls} with causal=True: changing the last token changed earlier outputs, so the mask lets "
           "positions see the future")
    expect(not np.allclose(outs[2][:, 0], outs[3][:, 0], atol=1e-5),
           f"{cls} with causal=False: position 0 should see (and depend on) the last token")


@check("B6", points=2, hidden=False, says="PreNormBlock keeps the shape, and its causal flag hides (only) the future")
def test_B6_causality(student):
    _causality(student, "PreNormBlock")


@check("B7", points=2, hidden=False, says="PostNormBlock keeps the shape, and its causal flag hides (only) the future")
def test_B7_causality(student):
    _causality(student, "PostNormBlock")
