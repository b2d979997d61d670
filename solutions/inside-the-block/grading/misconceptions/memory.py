"""Misconceptions of `memory` (B3): an MLP that stores (key, value) pairs and recalls them."""
from autograder.grader_side.misconceptions import changed, variant, wrong

# The correct pair of functions, written so that one line can be made wrong.
_MEMORY = '''
def store_pairs(keys, values, threshold=0.5):
    W1 = keys.clone()
    b1 = torch.full((keys.shape[0],), -threshold)
    W2 = values.T / (1 - threshold)
    return W1, b1, W2


def recall(W1, b1, W2, x):
    hidden = torch.relu(x @ W1.T + b1)
    return hidden @ W2.T
'''

# The correct answers, written so that one can be made wrong.
_ANSWERS = '''
b3_share = (0.85 - 0.4) / (1 - 0.4)
b3_threshold = (0.9 - 1 / 3) / (1 - 1 / 3)
'''

ENTRIES = [
    wrong(
        "B3-values-in-rows",
        "Stores the values in the rows of W2 (shape (n, d)) and reads them back with hidden @ W2: a memory "
        "that works, but W2 is not the MLP's (d, n) down-projection.",
        "W2 maps n hidden units back to width d, so it has shape (d, n): value i is column i, W2[:, i].",
        "B3_code",
        changed(changed(_MEMORY, "W2 = values.T / (1 - threshold)", "W2 = values / (1 - threshold)"),
                "return hidden @ W2.T", "return hidden @ W2"),
    ),
    wrong(
        "B3-keys-in-columns",
        "Puts the keys in the columns of W1 (shape (d, n)) and computes x @ W1.",
        "W1 maps the input of width d to n hidden units, shape (n, d): key i is row i.",
        "B3_code",
        changed(changed(_MEMORY, "W1 = keys.clone()", "W1 = keys.T.clone()"),
                "hidden = torch.relu(x @ W1.T + b1)", "hidden = torch.relu(x @ W1 + b1)"),
    ),
    wrong(
        "B3-positive-bias",
        "Gives the hidden units the bias +threshold, which lets every input through instead of cutting weak "
        "matches off.",
        "The bias must lower each unit's input so that only overlaps above the threshold survive the ReLU.",
        "B3_code",
        changed(_MEMORY, "b1 = torch.full((keys.shape[0],), -threshold)",
                "b1 = torch.full((keys.shape[0],), threshold)"),
    ),
    wrong(
        "B3-no-bias",
        "Leaves b1 at zero, so every positive overlap with a key writes part of its value.",
        "Without a negative bias an input that half-matches a key recalls half its value: the threshold is -b1.",
        "B3_code",
        changed(_MEMORY, "b1 = torch.full((keys.shape[0],), -threshold)", "b1 = torch.zeros(keys.shape[0])"),
    ),
    wrong(
        "B3-no-rescale",
        "Puts the values in W2 as they are, so a stored key recalls only (1 - threshold) times its value.",
        "Fed its own key, a unit reaches 1 - threshold after the bias: divide the values by that.",
        "B3_code",
        changed(_MEMORY, "W2 = values.T / (1 - threshold)", "W2 = values.T"),
    ),
    wrong(
        "B3-divides-by-threshold",
        "Scales the values by 1 / threshold instead of 1 / (1 - threshold): right only when the threshold is 0.5.",
        "Work out what unit i outputs for its own key: 1 - threshold.",
        "B3_code",
        changed(_MEMORY, "W2 = values.T / (1 - threshold)", "W2 = values.T / threshold"),
    ),
    wrong(
        "B3-no-relu",
        "Recalls with W2 (W1 x + b1), without the ReLU, so units below the threshold write negative amounts.",
        "The ReLU is what turns the bias into a threshold: a unit below it must output 0.",
        "B3_code",
        changed(_MEMORY, "hidden = torch.relu(x @ W1.T + b1)", "hidden = x @ W1.T + b1"),
    ),
    wrong(
        "B3-threshold-ignored",
        "Always uses a threshold of 0.5, whatever threshold it is given.",
        "Use the threshold argument for both the bias and the scale.",
        "B3_code",
        changed(changed(_MEMORY, "b1 = torch.full((keys.shape[0],), -threshold)",
                        "b1 = torch.full((keys.shape[0],), -0.5)"),
                "W2 = values.T / (1 - threshold)", "W2 = values.T / 0.5"),
    ),
    wrong(
        "B3-share-without-rescale",
        "Takes the share recalled to be what the unit outputs, overlap minus threshold (0.45), forgetting "
        "that W2's column was scaled up.",
        "The unit outputs 0.85 - 0.4, and column i of W2 holds v_i scaled so that the key's own output gives "
        "v_i: divide by what the key alone gives the unit.",
        "B3_answers",
        changed(_ANSWERS, "b3_share = (0.85 - 0.4) / (1 - 0.4)", "b3_share = 0.85 - 0.4"),
    ),
    wrong(
        "B3-share-all-or-nothing",
        "Takes a unit past its threshold to recall the whole value, as if the memory either fires or not.",
        "The ReLU passes how far the overlap is past the threshold, so the share grows with the overlap.",
        "B3_answers",
        changed(_ANSWERS, "b3_share = (0.85 - 0.4) / (1 - 0.4)", "b3_share = 1.0"),
    ),
    wrong(
        "B3-threshold-without-rescale",
        "Solves overlap minus threshold equals a third (0.567), forgetting that the scale of W2 changes with "
        "the threshold too.",
        "The share is (overlap - threshold) divided by what the key alone gives the unit, and both depend on "
        "the threshold: solve that for it.",
        "B3_answers",
        changed(_ANSWERS, "b3_threshold = (0.9 - 1 / 3) / (1 - 1 / 3)", "b3_threshold = 0.9 - 1 / 3"),
    ),
]

VARIANTS = [
    variant("B3-einsum-and-stack", "B3_code", '''
def store_pairs(keys, values, threshold=0.5):
    n = keys.shape[0]
    W1 = torch.stack([k for k in keys])                             # one key per row
    b1 = -threshold * torch.ones(n)
    W2 = torch.stack([v / (1 - threshold) for v in values], dim=1)  # one value per column
    return (W1, b1, W2)


def recall(W1, b1, W2, x):
    hidden = torch.einsum("nd,...d->...n", W1, x) + b1
    return torch.einsum("dn,...n->...d", W2, hidden.clamp(min=0))
'''),
    variant("B3-linear-and-normalized-keys", "B3_code", '''
def store_pairs(keys, values, threshold=0.5):
    W1 = keys / keys.norm(dim=1, keepdim=True)                      # unit rows already: no change
    b1 = torch.full((len(keys),), -float(threshold))
    W2 = (values / (1.0 - threshold)).T.contiguous()
    return W1, b1, W2


def recall(W1, b1, W2, x):
    return F.linear(F.relu(F.linear(x, W1, b1)), W2)
'''),
    variant("B3-answers-as-numbers-and-text", "B3_answers", '''
b3_share = 0.75
b3_threshold = "about 0.85"
'''),
]
