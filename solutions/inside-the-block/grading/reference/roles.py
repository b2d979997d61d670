"""C1: what kind of quantity each part of a block is.

learned: a weight that training changes (it is stored with the model);
config: a choice fixed before training starts (a hyperparameter, or a piece of the wiring);
state: computed afresh by the forward pass for every input (kept only while it is needed).
"""

ANSWERS = {
    "n_layers": "config",
    "norm_statistics": "state",
    "mlp_weights": "learned",
    "residual_adds": "config",
    "attention_pattern": "state",
    "norm_gains": "learned",
    "d_ff": "config",
    "mlp_hidden": "state",
    "attention_projections": "learned",
    "norm_eps": "config",
    "residual_stream": "state",
    "mlp_biases": "learned",
}
