"""Checks for `superposition`: n features as directions in 2 numbers, read back with a ReLU and a
negative bias (B4), and when that readout interferes (B5)."""
import numpy as np
import torch

from . import as_table, check, expect, expect_close

# The cases of B5, in the order of its TODO box.
CASES = ("pentagon_one", "pentagon_neighbours", "pentagon_non_neighbours", "square_opposite", "hexagon_one",
         "triangle_two")


def as_bool(value, what: str) -> bool:
    """True or False (a Python bool, or a 0-d bool tensor)."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype == bool:
        value = bool(value)
    expect(isinstance(value, bool), f"{what} must be True or False, got {type(value).__name__}")
    return value


FORM = "{case name: True or False}"


def case_answers(value) -> dict:
    """b5_interferes as {case: bool}: a dict with exactly the six keys of the TODO box."""
    return as_table(value, CASES, "b5_interferes", as_bool, FORM)


# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "b5_interferes": case_answers,
}


@check("B4", points=2, hidden=False,
       says="feature_directions(4) is [[1, 0, -1, 0], [0, 1, 0, -1]], and feature_directions(3) has unit columns")
def test_B4_directions_example(student):
    got = student.call("feature_directions", 4)
    expect(isinstance(got, np.ndarray) and got.shape == (2, 4),
           "feature_directions(4) should be a tensor of shape (2, 4): one column per feature")
    expect(not np.allclose(got, [[0, 1, 0, -1], [1, 0, -1, 0]], atol=1e-6),
           "feature_directions(4): the two rows are swapped; row 0 holds the cosines, row 1 the sines")
    expect_close(got, np.array([[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, -1.0]]),
                 "feature_directions(4) (column k is the unit vector at angle 2 pi k / 4)", atol=1e-6, rtol=0)
    three = student.call("feature_directions", 3)
    expect(isinstance(three, np.ndarray) and three.shape == (2, 3), "feature_directions(3) should have shape (2, 3)")
    expect_close(np.linalg.norm(three, axis=0), np.ones(3), "the lengths of feature_directions(3)'s columns",
                 atol=1e-6, rtol=0)


@check("B4", points=2, hidden=False,
       says="readout with the square's directions and b=-0.2: feature 0 alone reads [0.8, 0, 0, 0], features 0 "
            "and 1 together read [0.8, 0.8, 0, 0]")
def test_B4_readout_example(student):
    W = torch.tensor([[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, -1.0]])
    for x, want in [([1.0, 0, 0, 0], [0.8, 0, 0, 0]), ([1.0, 1, 0, 0], [0.8, 0.8, 0, 0])]:
        got = student.call("readout", torch.tensor(x), W, -0.2)
        expect(isinstance(got, np.ndarray) and got.shape == (4,),
               "readout(x, W, b) for x of shape (n,) should return n readouts, shape (n,)")
        flipped = np.maximum(np.array(x) @ W.numpy().T @ W.numpy() + 0.2, 0)    # relu(W^T W x - b)
        expect(not np.allclose(got, flipped, atol=1e-6),
               "readout adds +0.2 for b = -0.2: add b itself, relu(W^T W x + b), so a negative bias lowers every "
               "readout")
        expect_close(got, np.array(want), f"readout({x}, square directions, b=-0.2)", atol=1e-6, rtol=1e-5)


@check("B4", points=2, hidden=False,
       says="readout on a batch of two inputs, shape (2, 4), with the square's directions and b=-0.2: rows "
            "[1, 0, 0, 0] and [0, 1, 1, 0] read [0.8, 0, 0, 0] and [0, 0.8, 0.8, 0]")
def test_B4_readout_batch_example(student):
    W = torch.tensor([[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, -1.0]])
    x = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
    got = student.call("readout", x, W, -0.2)
    expect(isinstance(got, np.ndarray) and got.shape == (2, 4),
           "readout(x, W, b) for a batch x of shape (2, n) should return shape (2, n), one row of readouts per row "
           "of x: work on the last dim of x (x @ W.T, then @ W), not on its first")
    expect_close(got, np.array([[0.8, 0.0, 0.0, 0.0], [0.0, 0.8, 0.8, 0.0]]),
                 "readout of the rows [1, 0, 0, 0] and [0, 1, 1, 0] with the square's directions and b=-0.2 (each "
                 "row is read on its own: a feature reads its own value minus the one opposite it, plus b)",
                 atol=1e-6, rtol=1e-5)


@check("B5", points=2, hidden=False,
       says="interferes with b=-0.4: one feature of three is clean, two features of the square (0 and 1) are "
            "clean, one feature of eight interferes")
def test_B5_worked_example(student):
    for n, active, want in [(3, [0], False), (4, [0, 1], False), (8, [0], True)]:
        got = as_bool(student.call("interferes", n, active, -0.4), "interferes(n, active, b)")
        expect(got == want, f"interferes({n}, {active}, -0.4) should be {want}: read every feature back with "
                            "readout and look for an off feature above 1e-6 or an active one at or below it")


@check("B5", points=2, hidden=False,
       says="interferes(2, [0, 1], -0.4) is True: the two features of n = 2 point in opposite directions, so "
            "storing both gives h = 0 and neither reads back")
def test_B5_cancellation_example(student):
    got = as_bool(student.call("interferes", 2, [0, 1], -0.4), "interferes(n, active, b)")
    expect(got is True, "interferes(2, [0, 1], -0.4) should be True: the directions (1, 0) and (-1, 0) add up to "
                        "h = 0, so both active features read relu(0 - 0.4) = 0. An active feature that stays dark is "
                        "interference too, not only an off feature that lights up")
