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
]
