"""Checks for `roles`: which quantities of a block are learned, which are fixed before training,
and which the forward pass computes for each input (C1). Every item is graded by a hidden check;
this module says what form the answer must have."""
from . import expect

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


def categories(value) -> dict:
    """c1_categories as {quantity: category}: a dict with exactly the twelve keys of the TODO box."""
    expect(isinstance(value, dict), "c1_categories must be a dict {quantity name: category}")
    missing = [k for k in QUANTITIES if k not in value]
    expect(not missing, f"c1_categories is missing {', '.join(repr(k) for k in missing)}: give every quantity "
                        "of the TODO box, with its name spelled as given")
    extra = sorted(k for k in value if k not in QUANTITIES)
    expect(not extra, f"c1_categories has keys the TODO box does not list: {', '.join(repr(k) for k in extra)}")
    return {k: category(value[k], f"c1_categories[{k!r}]") for k in QUANTITIES}


# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "c1_categories": categories,
}
