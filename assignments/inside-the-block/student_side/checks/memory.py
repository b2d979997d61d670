"""Checks for `memory`: an MLP that stores (key, value) pairs in its two layers and reads a value
back when its key comes in (B3)."""
import numpy as np
import torch

from . import check, expect, expect_close

# The worked example: three one-hot keys in R^4 and their values.
KEYS = torch.eye(4)[:3]
VALUES = torch.tensor([[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [0.0, -1.0, 0.0, 1.0]])


def _triple(got, n: int, d: int, label: str, shown: bool = True):
    """store_pairs' reply as (W1, b1, W2), each a tensor of its contract shape. ``shown``: the
    messages may state the sizes (a visible check's own example)."""
    expect(isinstance(got, list) and len(got) == 3, f"{label} must return a tuple (W1, b1, W2)")
    W1, b1, W2 = got
    expect(all(isinstance(t, np.ndarray) for t in got), f"{label}: W1, b1 and W2 must be tensors")

    def sizes(*shape):
        return f" = {shape}" if shown else ""

    expect(W1.shape == (n, d), f"{label}: W1 should have one row per key, shape (n, d){sizes(n, d)}")
    expect(b1.shape == (n,), f"{label}: b1 should have one entry per hidden unit, shape (n,){sizes(n)}")
    if W2.shape == (n, d) and n != d:
        expect(False, f"{label}: W2 has shape (n, d): the values are its rows. W2 maps the n hidden units back to "
                      "width d, so it has shape (d, n), with one value in each column")
    expect(W2.shape == (d, n), f"{label}: W2 should have shape (d, n){sizes(d, n)}")
    return W1, b1, W2


def own_weights(got, label: str) -> list:
    """store_pairs' reply as three tensors to hand back to recall, whatever their shapes."""
    expect(isinstance(got, list) and len(got) == 3 and all(isinstance(t, np.ndarray) for t in got),
           f"{label} must return a tuple of three tensors (W1, b1, W2)")
    return [torch.from_numpy(np.array(t)) for t in got]


@check("B3", points=2, hidden=False,
       says="store_pairs on three one-hot keys in R^4: W1's rows are the keys, b1 is -0.5 everywhere, and W2's "
            "columns are the values divided by 1 - 0.5")
def test_B3_store_example(student):
    W1, b1, W2 = _triple(student.call("store_pairs", KEYS, VALUES), 3, 4, "store_pairs(keys, values)")
    expect_close(W1, KEYS, "store_pairs: W1 (its rows should be the keys)")
    expect(not np.allclose(b1, 0.5), "store_pairs: b1 is +threshold; the bias must cut small matches off, so it is "
                                     "-threshold")
    expect_close(b1, -0.5 * np.ones(3), "store_pairs: b1 (every entry is -threshold)")
    expect(not np.allclose(W2, VALUES.T), "store_pairs: W2's columns are the values themselves; divide them by "
                                          "1 - threshold, so that a stored key, which gives its unit 1 - threshold "
                                          "after the bias, recalls its value exactly")
    expect_close(W2, VALUES.T / 0.5, "store_pairs: W2 (column i should be value i / (1 - threshold))")


@check("B3", points=2, hidden=False,
       says="recall with the example's weights: key 1 gives value 1, the unused direction e_3 gives zeros, and a "
            "batch of the three keys gives the three values")
def test_B3_recall_example(student):
    W1, b1, W2 = KEYS, torch.full((3,), -0.5), VALUES.T / 0.5
    got = student.call("recall", W1, b1, W2, KEYS[1])
    expect(isinstance(got, np.ndarray) and got.shape == (4,),
           "recall(W1, b1, W2, x) for one x of shape (d,) should return one vector of shape (d,)")
    expect_close(got, VALUES[1], "recall(W1, b1, W2, key 1)")
    expect_close(student.call("recall", W1, b1, W2, torch.eye(4)[3]), np.zeros(4),
                 "recall(W1, b1, W2, e_3), a direction no key uses, should give zeros")
    expect_close(student.call("recall", W1, b1, W2, KEYS), VALUES,
                 "recall(W1, b1, W2, keys) on a batch of shape (3, d) should give the three values, one row each")
