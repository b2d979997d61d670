"""Checks for `memory`: an MLP that stores (key, value) pairs in its two layers and reads a value
back when its key comes in (B3)."""
import numpy as np
import torch

from . import as_number, check, expect, expect_close

# The form each answer variable must have to be graded (the TODO box says it).
FORMS = {name: (lambda v, name=name: as_number(v, name)) for name in ("b3_share", "b3_threshold")}

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


def _recalled(W1, b1, W2, x):
    """W2 relu(W1 x + b1), in numpy: what the pair store_pairs returned gives back for x (the
    store check judges store_pairs alone, whatever the student's recall does)."""
    return np.maximum(np.asarray(x, dtype=np.float64) @ W1.T + b1, 0) @ W2.T


@check("B3", points=2, hidden=False,
       says="store_pairs on three one-hot keys in R^4, at the default threshold and at 0.3: W1's rows are the "
            "keys, b1 is -threshold everywhere, and each key, fed through the pair, gives its value back exactly")
def test_B3_store_example(student):
    for threshold, kwargs in [(0.5, {}), (0.3, {"threshold": 0.3})]:
        label = f"store_pairs(keys, values{', threshold=0.3' if kwargs else ''})"
        W1, b1, W2 = _triple(student.call("store_pairs", KEYS, VALUES, **kwargs), 3, 4, label)
        expect_close(W1, KEYS, f"{label}: W1 (its rows should be the keys)")
        expect(not np.allclose(b1, threshold), f"{label}: b1 is +threshold; the bias must cut small matches off, "
                                               "so it is -threshold")
        expect_close(b1, -threshold * np.ones(3), f"{label}: b1 (every entry is -threshold)")
        got = _recalled(W1, b1, W2, KEYS)                                      # (3, d): one row per key
        ratio = (got * VALUES.numpy()).sum() / (VALUES.numpy() ** 2).sum()
        expect(np.allclose(got, VALUES, atol=1e-5) or not np.allclose(got, ratio * VALUES.numpy(), atol=1e-5),
               f"{label}: each key gives {ratio:.3g} times its value back, not the value itself. Work out what "
               "hidden unit i outputs when fed its own key, and scale column i of W2 so that the key recalls "
               "value i exactly")
        expect_close(got, VALUES, f"{label}: W2 relu(W1 key + b1) for each stored key (it should be that key's "
                                  "value, column i of W2 scaled for it)")


@check("B3", points=2, hidden=False,
       says="recall with given weights: key 1 gives W2 relu(W1 key + b1), the unused direction e_3 gives zeros, "
            "and a batch of the three keys gives three rows")
def test_B3_recall_example(student):
    W1, b1, W2 = KEYS, torch.full((3,), -0.25), 2 * VALUES.T       # any weights: recall only computes
    got = student.call("recall", W1, b1, W2, KEYS[1])
    expect(isinstance(got, np.ndarray) and got.shape == (4,),
           "recall(W1, b1, W2, x) for one x of shape (d,) should return one vector of shape (d,)")
    expect_close(got, 1.5 * VALUES[1], "recall(W1, b1, W2, key 1) with b1 = -0.25 and W2 = 2 * values.T should "
                                       "be W2 relu(W1 x + b1)")
    expect_close(student.call("recall", W1, b1, W2, torch.eye(4)[3]), np.zeros(4),
                 "recall(W1, b1, W2, e_3), a direction no key uses, should give zeros")
    expect_close(student.call("recall", W1, b1, W2, KEYS), 1.5 * VALUES,
                 "recall(W1, b1, W2, keys) on a batch of shape (3, d) should give one row per key")
