"""Hidden checks for `memory` (B3): store_pairs and recall against the reference on random keys,
values and thresholds, the round trip, probes that only partly match a key, and the two answers
that ask for the reasoning (what a partial match recalls, and the threshold for a given share)."""
import numpy as np
import torch

from autograder.student_side.checks import as_number, check, expect, expect_close
from autograder.student_side.numbers import shown

from ...student_side.checks.memory import _triple, own_weights
from ..reference import memory as ref


def _pairs(seed: int, n: int = 6, d: int = 16):
    return ref.orthonormal_keys(n, d, seed), ref.random_values(n, d, seed + 1)


@check("B3", points=2, hidden=True,
       says="store_pairs matches the reference on random keys and values, for three thresholds")
def test_B3_store_random(student):
    for i, (seed, threshold) in enumerate([(701, 0.5), (702, 0.3), (703, 0.7)]):
        keys, values = _pairs(seed)
        label = f"store_pairs(keys, values, threshold) on hidden pairs {i + 1} of 3"
        got = _triple(student.call("store_pairs", keys, values, threshold=threshold), 6, 16, label, shown=False)
        for name, mine, want in zip(("W1", "b1", "W2"), got, ref.store_pairs(keys, values, threshold), strict=True):
            expect_close(mine, want, f"{label}: {name}")


@check("B3", points=2, hidden=True, says="recall matches W2 relu(W1 x + b1) on random weights, for one x and a batch")
def test_B3_recall_random(student):
    g = torch.Generator().manual_seed(711)
    W1, b1, W2 = torch.randn(5, 7, generator=g), torch.randn(5, generator=g), torch.randn(7, 5, generator=g)
    for label, x in [("one x of shape (d,)", torch.randn(7, generator=g)),
                     ("a batch of shape (m, d)", torch.randn(4, 7, generator=g))]:
        expect_close(student.call("recall", W1, b1, W2, x), ref.recall(W1, b1, W2, x),
                     f"recall(W1, b1, W2, x) with hidden random weights, on {label}")


@check("B3", points=1, hidden=True,
       says="store_pairs then recall: every stored key, alone and as a batch, gives its value")
def test_B3_round_trip(student):
    for i, (seed, n, d) in enumerate([(721, 6, 16), (722, 10, 10)]):
        keys, values = _pairs(seed, n, d)
        weights = own_weights(student.call("store_pairs", keys, values), "store_pairs(keys, values)")
        expect_close(student.call("recall", *weights, keys), values,
                     f"recall on all the keys store_pairs stored (hidden pairs {i + 1} of 2)")
        expect_close(student.call("recall", *weights, keys[n // 2]), values[n // 2],
                     f"recall on one stored key (hidden pairs {i + 1} of 2)")


@check("B3", points=1, hidden=True,
       says="store_pairs then recall: the stored keys give their values, and inputs that only partly match a key "
            "(overlap below the threshold) give nothing back")
def test_B3_partial_match(student):
    keys, values = _pairs(731)
    probes = ref.partial_probes(keys, [(0, 0.2), (2, 0.35), (4, 0.45), (5, -0.4)], seed=732)
    weights = own_weights(student.call("store_pairs", keys, values), "store_pairs(keys, values)")
    # A memory that gives nothing back passes any "nothing comes back" test: the same weights must
    # first give the stored values on the stored keys.
    expect_close(student.call("recall", *weights, keys), values,
                 "recall on the stored keys, with the weights this check then probes: each key should give its "
                 "value before partial matches can be judged")
    got = student.call("recall", *weights, probes)
    expect(isinstance(got, np.ndarray) and got.shape == tuple(probes.shape),
           "recall on a batch of probes should return one vector per probe")
    expect_close(got, np.zeros(tuple(probes.shape)),
                 "recall on inputs whose overlap with every key is below the threshold should give zeros: the bias "
                 "must cut a partial match off before W2 writes anything")


def _expect_answer(student, name: str, why: str) -> None:
    got = as_number(student.value(name), name)
    expect(ref.WINDOWS[name].holds(got), f"{name}: {shown(got)} is not it; {why}")


@check("B3", points=1, hidden=True,
       says="b3_share: how many times its value an input recalls whose overlap with its key is 0.85, at threshold 0.4")
def test_B3_share(student):
    _expect_answer(student, "b3_share", "follow the input through the unit: its overlap, then the bias, then the "
                                        "ReLU, then the scale store_pairs gave column i of W2")


@check("B3", points=1, hidden=True,
       says="b3_threshold: the threshold at which an input whose overlap with its key is 0.9 recalls a third of "
            "its value")
def test_B3_threshold(student):
    _expect_answer(student, "b3_threshold", "write the share recalled as a function of the threshold, with the "
                                            "scale that depends on it too, and solve for a share of one third")
