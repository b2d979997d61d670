"""Misconceptions of `superposition`: features as directions in 2 numbers and their readout (B4),
and which cases interfere (B5)."""
from autograder.grader_side.misconceptions import changed, variant, wrong

# The correct B4 functions, written so that one line can be made wrong.
_B4 = '''
def feature_directions(n):
    angles = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n
    return torch.stack([angles.cos(), angles.sin()]).float()


def readout(x, W, b):
    h = x @ W.T
    return torch.relu(h @ W + b)
'''

_INTERFERES = '''
def interferes(n, active, b):
    x = torch.zeros(n)
    x[active] = 1.0
    out = readout(x, feature_directions(n), b)
    on = x > 0
    return bool((out[~on] > 1e-6).any() or (out[on] <= 1e-6).any())
'''

_RIGHT = {"pentagon_one": False, "pentagon_neighbours": False, "pentagon_non_neighbours": True,
          "square_opposite": True, "hexagon_one": True, "triangle_two": False}


def _answers(**changes) -> str:
    return "\nb5_interferes = " + repr({**_RIGHT, **changes}) + "\n"


ENTRIES = [
    # ---- B4 ------------------------------------------------------------------------------------
    wrong(
        "B4-sin-cos-swapped",
        "Puts the sines in row 0 and the cosines in row 1, so feature 0 points along the second axis.",
        "Column k is (cos(2 pi k / n), sin(2 pi k / n)): feature 0 is (1, 0).",
        "B4_code",
        changed(_B4, "torch.stack([angles.cos(), angles.sin()])", "torch.stack([angles.sin(), angles.cos()])"),
    ),
    wrong(
        "B4-linspace-endpoint",
        "Spreads the angles with linspace(0, 2 pi, n), which puts the last feature on top of the first.",
        "The angles are 2 pi k / n for k = 0, ..., n - 1: the step is 2 pi / n and 2 pi itself is not one of them.",
        "B4_code",
        changed(_B4, "angles = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n",
                "angles = torch.linspace(0, 2 * math.pi, n, dtype=torch.float64)"),
    ),
    wrong(
        "B4-half-circle",
        "Uses the angles pi k / n, which crowds the features into half the circle.",
        "A full turn is 2 pi: the n features share it evenly.",
        "B4_code",
        changed(_B4, "angles = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n",
                "angles = math.pi * torch.arange(n, dtype=torch.float64) / n"),
    ),
    wrong(
        "B4-bias-wrong-sign",
        "Subtracts the bias, relu(W^T W x - b), so a negative bias raises every readout instead of lowering it.",
        "The readout is relu(W^T W x + b) with b < 0: adding a negative number is what cuts small readouts off.",
        "B4_code",
        changed(_B4, "return torch.relu(h @ W + b)", "return torch.relu(h @ W - b)"),
    ),
    wrong(
        "B4-no-relu",
        "Leaves the ReLU out of the readout, so features that are off read negative values.",
        "relu(.) is what turns the bias into a threshold.",
        "B4_code",
        changed(_B4, "return torch.relu(h @ W + b)", "return h @ W + b"),
    ),
    wrong(
        "B4-bias-on-the-stored-vector",
        "Adds the bias to the stored vector h = W x instead of to the n readouts.",
        "The bias belongs to the readout of each feature: relu(W^T h + b), with one entry of b per feature.",
        "B4_code",
        changed(_B4, "return torch.relu(h @ W + b)", "return torch.relu((h + b) @ W)"),
    ),
    # ---- B5 ------------------------------------------------------------------------------------
    wrong(
        "B5-off-features-only",
        "Looks only for features that are off and light up, missing active features that cancel each other out.",
        "Two opposite features stored together give h = 0: nothing lights up, and that is interference too.",
        "B5_code",
        changed(_INTERFERES, "return bool((out[~on] > 1e-6).any() or (out[on] <= 1e-6).any())",
                "return bool((out[~on] > 1e-6).any())"),
    ),
    wrong(
        "B5-active-features-only",
        "Looks only at whether the active features survive, missing features that are off and light up.",
        "An off feature whose direction is close to an active one can read above the bias: that is interference.",
        "B5_code",
        changed(_INTERFERES, "return bool((out[~on] > 1e-6).any() or (out[on] <= 1e-6).any())",
                "return bool((out[on] <= 1e-6).any())"),
    ),
    wrong(
        "B5-neighbours-interfere",
        "Expects two neighbouring features of the pentagon to interfere; the features next to them still "
        "read below the bias.",
        "Add up the two contributions for each feature that is off: cos 72 + cos 144 is negative.",
        "B5_code",
        _answers(pentagon_neighbours=True),
    ),
    wrong(
        "B5-opposites-are-clean",
        "Calls two opposite features of the square clean: stored together they cancel and nothing reads back.",
        "w_0 + w_2 = 0 for opposite directions: every readout is relu(b) = 0, active features included.",
        "B5_code",
        _answers(square_opposite=False),
    ),
    wrong(
        "B5-bias-always-cleans",
        "Thinks a negative bias always gives a clean readout in two dimensions, whatever the angles.",
        "The bias only cancels contributions smaller than -b: compare cos(angle) with 0.4 for the closest pairs.",
        "B5_code",
        _answers(pentagon_non_neighbours=False, square_opposite=False, hexagon_one=False),
    ),
    wrong(
        "B5-more-features-than-dims-always-interfere",
        "Thinks that more features than dimensions always interfere; with one or two features on, the bias "
        "often keeps the readout clean.",
        "Superposition works when few features are on at once: run interferes on each case.",
        "B5_code",
        _answers(pentagon_one=True, pentagon_neighbours=True, triangle_two=True),
    ),
]

VARIANTS = [
    variant("B4-polar-and-einsum", "B4_code", '''
def feature_directions(n):
    z = torch.polar(torch.ones(n, dtype=torch.float64), 2 * torch.pi * torch.arange(n, dtype=torch.float64) / n)
    return torch.stack([z.real, z.imag]).to(torch.float32)


def readout(x, W, b):
    return torch.clamp(torch.einsum("...n,mn,mk->...k", x, W, W) + b, min=0)
'''),
    variant("B4-gram-matrix-loop", "B4_code", '''
def feature_directions(n):
    cols = [[math.cos(2 * math.pi * k / n), math.sin(2 * math.pi * k / n)] for k in range(n)]
    return torch.tensor(cols, dtype=torch.float32).T


def readout(x, W, b):
    gram = W.T @ W                                   # (n, n): cosines between the directions
    return F.relu(x @ gram.T + b)
'''),
    variant("B5-sets-and-computed-answers", "B5_code", '''
def interferes(n, active, b):
    reads = readout(torch.eye(n)[list(active)].sum(dim=0), feature_directions(n), b)
    lit = {j for j in range(n) if reads[j] > 1e-6}
    return lit != set(active)


b5_interferes = {name: interferes(n, active, -0.4) for name, (n, active) in {
    "pentagon_one": (5, [0]), "pentagon_neighbours": (5, [0, 1]), "pentagon_non_neighbours": (5, [0, 2]),
    "square_opposite": (4, [0, 2]), "hexagon_one": (6, [0]), "triangle_two": (3, [0, 1])}.items()}
'''),
    variant("B5-explicit-loops", "B5_code", '''
def interferes(n, active, b):
    x = torch.zeros(n)
    for i in active:
        x[i] = 1.0
    out = readout(x, feature_directions(n), b)
    for j in range(n):
        if (j in active) != bool(out[j] > 1e-6):
            return True
    return False


b5_interferes = dict(pentagon_one=False, pentagon_neighbours=False, pentagon_non_neighbours=True,
                     square_opposite=interferes(4, [0, 2], -0.4), hexagon_one=interferes(6, [0], -0.4),
                     triangle_two=interferes(3, [0, 1], -0.4))
'''),
]
