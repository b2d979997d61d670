"""Misconceptions of `roles` (C1): which quantities of a block are learned, fixed before training
(config), or computed for each input (state)."""
from autograder.grader_side.misconceptions import variant, wrong

from ..reference import roles as ref

# The right answer, in the TODO box's order (the reference's); each entry below changes some of its items.
_RIGHT = ref.ANSWERS


def _answer(**changes) -> str:
    """c1_categories as a student writes it: the right answer with ``changes`` made."""
    unknown = set(changes) - set(_RIGHT)
    if unknown:
        raise ValueError(f"no quantity {sorted(unknown)} in C1")
    lines = "".join(f'    "{k}": "{changes.get(k, v)}",\n' for k, v in _RIGHT.items())
    return "\nc1_categories = {\n" + lines + "}\n"


ENTRIES = [
    wrong(
        "C1-residual-adds-learned",
        "Counts the residual additions as learned, as if x + F(x) had weights of its own.",
        "The addition is wiring: it has no parameter for training to change, and it is decided when the "
        "architecture is.",
        "C1_code",
        _answer(residual_adds="learned"),
    ),
    wrong(
        "C1-attention-pattern-learned",
        "Takes the attention matrix for a learned weight (\"attention weights\"); it is computed from each prompt.",
        "Feed the model another prompt: does A change? The learned part is W_Q and W_K, which A is computed from.",
        "C1_code",
        _answer(attention_pattern="learned"),
    ),
    wrong(
        "C1-norm-statistics-learned",
        "Counts a LayerNorm's mean and standard deviation as learned parameters, like its gain and shift.",
        "mu and sigma are taken of the token in front of the norm, every time: they are different for every "
        "input. Only gamma and beta are trained.",
        "C1_code",
        _answer(norm_statistics="learned"),
    ),
    wrong(
        "C1-norm-eps-learned",
        "Counts the epsilon under the norm's square root as learned.",
        "Epsilon is a small constant written into the model's definition (1e-5 or 1e-6); no gradient step changes it.",
        "C1_code",
        _answer(norm_eps="learned"),
    ),
    wrong(
        "C1-hidden-units-learned",
        "Counts the MLP's hidden activations as learned: mixes up the hidden units' values with the weights "
        "that compute them.",
        "phi(W1 x + b1) depends on x: it is recomputed for every token (and kept for the backward pass). W1 and "
        "b1 are what training sets.",
        "C1_code",
        _answer(mlp_hidden="learned"),
    ),
    wrong(
        "C1-norm-gains-config",
        "Takes a LayerNorm's gain and shift for fixed settings (1 and 0); they start there but are trained.",
        "gamma and beta are parameters of the norm: gradient descent moves them like any weight.",
        "C1_code",
        _answer(norm_gains="config"),
    ),
    wrong(
        "C1-projections-state",
        "Puts W_Q, W_K, W_V and W_O under state, mixing them up with the queries, keys and values they compute.",
        "Q = X W_Q changes with the prompt; W_Q itself is the same for every prompt and is trained.",
        "C1_code",
        _answer(attention_projections="state"),
    ),
    wrong(
        "C1-biases-config",
        "Takes the MLP's biases for fixed offsets, where they are trained along with W1 and W2.",
        "A bias is a parameter of nn.Linear: it gets a gradient and is saved with the model.",
        "C1_code",
        _answer(mlp_biases="config"),
    ),
    wrong(
        "C1-trained-weights-are-config",
        "Calls every weight config once training is over, since it no longer changes at inference.",
        "The categories say where a number comes from: training sets the weights (learned); config is chosen "
        "before training and never trained.",
        "C1_code",
        _answer(mlp_weights="config", norm_gains="config", attention_projections="config", mlp_biases="config"),
    ),
    wrong(
        "C1-config-and-state-swapped",
        "Swaps config and state: calls the per-input values config and the fixed choices state.",
        "State is what the forward pass computes from one input; config is what you decide before training.",
        "C1_code",
        _answer(n_layers="state", residual_adds="state", d_ff="state", norm_eps="state", norm_statistics="config",
                attention_pattern="config", mlp_hidden="config", residual_stream="config"),
    ),
]

VARIANTS = [
    variant("C1-says-capitals-and-brackets", "C1_code", '''
c1_categories = {
    "n_layers": "CONFIG",
    "norm_statistics": "[STATE]",
    "mlp_weights": "[LEARNED]",
    "residual_adds": "Config",
    "attention_pattern": "State",
    "norm_gains": "Learned",
    "d_ff": "config ",
    "mlp_hidden": " state",
    "attention_projections": "LEARNED",
    "norm_eps": "[config]",
    "residual_stream": "STATE",
    "mlp_biases": "learned",
}
'''),
    variant("C1-says-other-spellings", "C1_code", '''
c1_categories = {
    "n_layers": "hyperparameter",
    "norm_statistics": "state",
    "mlp_weights": "learnt",
    "residual_adds": "configuration",
    "attention_pattern": "state",
    "norm_gains": "learnt",
    "d_ff": "hyper-parameter",
    "mlp_hidden": "state",
    "attention_projections": "learned",
    "norm_eps": "configuration",
    "residual_stream": "state",
    "mlp_biases": "learned",
}
'''),
    variant("C1-built-from-groups", "C1_code", '''
learned = ["mlp_weights", "mlp_biases", "norm_gains", "attention_projections"]
config = ["n_layers", "d_ff", "norm_eps", "residual_adds"]
state = ["norm_statistics", "mlp_hidden", "attention_pattern", "residual_stream"]
c1_categories = {**dict.fromkeys(learned, "learned"), **dict.fromkeys(config, "config"),
                 **dict.fromkeys(state, "state")}
'''),
]
