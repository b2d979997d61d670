"""Hidden checks for `superposition`: directions and readout against the reference (B4), and which
cases interfere (B5)."""
import torch

from autograder.student_side.checks import check, expect, expect_close, table_item

from ...student_side.checks.superposition import FORM, as_bool
from ..reference import superposition as ref


@check("B4", points=3, hidden=True, says="feature_directions for other numbers of features, one and two included")
def test_B4_directions(student):
    for n in (1, 2, 5, 7, 12):
        got = student.call("feature_directions", n)
        expect_close(got, ref.feature_directions(n), "feature_directions(n) for one of the hidden n",
                     atol=1e-6, rtol=1e-5)


@check("B4", points=4, hidden=True,
       says="readout matches relu(W^T W x + b) for random W with 2 or 3 rows, a number or a vector for b, one x "
            "or a batch")
def test_B4_readout_random(student):
    g = torch.Generator().manual_seed(801)
    for i, (m, n, x_shape, vector_b) in enumerate([(2, 5, (5,), False), (3, 6, (4, 6), False), (2, 7, (3, 7), True)]):
        W = torch.randn(m, n, generator=g)
        x = torch.rand(x_shape, generator=g)
        b = -0.5 * torch.rand(n, generator=g) if vector_b else -0.3
        expect_close(student.call("readout", x, W, b), ref.readout(x, W, b),
                     f"readout(x, W, b) on hidden case {i + 1} of 3", atol=1e-5, rtol=1e-4)


@check("B4", points=1, hidden=True, says="readout on inputs with two leading dims, with feature_directions' own W")
def test_B4_readout_batched(student):
    g = torch.Generator().manual_seed(811)
    W = ref.feature_directions(6)
    x = (torch.rand(2, 3, 6, generator=g) < 0.3).float()
    expect_close(student.call("readout", x, W, -0.45), ref.readout(x, W, -0.45),
                 "readout(x, W, b) for x of shape (2, 3, n)", atol=1e-5, rtol=1e-4)


# ---- B5 ----------------------------------------------------------------------------------------

@check("B5", points=4, hidden=True,
       says="interferes on other numbers of features, sets of active features and biases, cancellations included")
def test_B5_interferes(student):
    cases = [(5, [0], -0.35), (5, [1, 3], -0.35), (7, [0], -0.7), (7, [0], -0.5), (4, [1, 3], -0.1),
             (6, [0, 3], -0.2), (2, [0], -0.1), (1, [0], -0.5), (9, [0, 4], -0.9), (12, [2], -0.9),
             (3, [0, 1, 2], -0.1)]
    for i, (n, active, b) in enumerate(cases):
        got = as_bool(student.call("interferes", n, active, b), "interferes(n, active, b)")
        expect(got == ref.interferes(n, active, b), f"interferes(n, active, b) is wrong on hidden case {i + 1} of "
                                                    f"{len(cases)}: an off feature that lights up and an active "
                                                    "feature that stays dark are both interference")


def _expect_case(student, name: str) -> None:
    given = table_item(student.value("b5_interferes"), name, "b5_interferes", as_bool, FORM)
    expect(given == ref.ANSWERS[name], f"b5_interferes[{name!r}]: that is not what the readout does in this case; "
                                       "run interferes on it, or work out which features lie within reach of -b")


@check("B5", points=1, hidden=True, says="b5_interferes['pentagon_one']")
def test_B5_pentagon_one(student):
    _expect_case(student, "pentagon_one")


@check("B5", points=1, hidden=True, says="b5_interferes['pentagon_neighbours']")
def test_B5_pentagon_neighbours(student):
    _expect_case(student, "pentagon_neighbours")


@check("B5", points=1, hidden=True, says="b5_interferes['pentagon_non_neighbours']")
def test_B5_pentagon_non_neighbours(student):
    _expect_case(student, "pentagon_non_neighbours")


@check("B5", points=1, hidden=True, says="b5_interferes['square_opposite']")
def test_B5_square_opposite(student):
    _expect_case(student, "square_opposite")


@check("B5", points=1, hidden=True, says="b5_interferes['hexagon_one']")
def test_B5_hexagon_one(student):
    _expect_case(student, "hexagon_one")


@check("B5", points=1, hidden=True, says="b5_interferes['triangle_two']")
def test_B5_triangle_two(student):
    _expect_case(student, "triangle_two")
