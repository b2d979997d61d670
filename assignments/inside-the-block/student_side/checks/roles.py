"""Checks for `roles`: which quantities of a block are learned, which are fixed before training,
and which the forward pass computes for each input (C1). Every item is graded by a hidden check;
this module says what form the answer must have."""
from . import as_table, expect

# The quantities of C1, in the order of its TODO box.
QUANTITIES = ("n_layers", "norm_statistics", "mlp_weights", "residual_adds", "attention_pattern", "norm_gains",
              "d_ff", "mlp_hidden", "attention_projections", "norm_eps", "residual_stream", "mlp_biases")

CATEGORIES = ("learned", "config", "state")

# Spellings read as each category (after lower case, brackets and punctuation are dropped).
_SPELLINGS = {
    "learned": {"learned", "learnt"},
    "config": {"config", "configuration", "hyperparameter", "hyper parameter"},
    "state": {"state"},
}


def category(value, what: str) -> str:
    """The category an answer names: "learned", "config" or "state" (case, brackets and spaces
    ignored). Anything else cannot be graded."""
    expect(isinstance(value, str), f"{what}: answer with one of the strings 'learned', 'config', 'state'")
    text = " ".join("".join(c if "a" <= c <= "z" else " " for c in value.lower()).split())
    for name, spellings in _SPELLINGS.items():
        if text in spellings:
            return name
    expect(False, f"{what}: {value!r} is not one of 'learned', 'config', 'state'; use exactly one of the three words")


FORM = "{quantity name: category}"


def categories(value) -> dict:
    """c1_categories as {quantity: category}: a dict with exactly the twelve keys of the TODO box."""
    return as_table(value, QUANTITIES, "c1_categories", category, FORM)


# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "c1_categories": categories,
}
