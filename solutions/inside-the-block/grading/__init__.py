"""The `inside-the-block` problem set (week 5): its contract in code.

Everything here is also in the student contract (``contract.md`` next to this file): the
notebooks, the lesson concepts in order (the module names of ``checks/``, ``misconceptions/`` and
``reference/`` here and of the visible checks in ``../student_side/checks/``), and the questions
with their names and points. Nothing in this folder is released.
"""

from autograder.grader_side.contract import Question

NOTEBOOKS = ("concepts", "build")
CONCEPTS = ("roles", "costs", "lens", "memory", "superposition")

QUESTIONS = [
    Question("C1", "concepts", 12, "roles", ("c1_categories",)),
    Question("C2", "concepts", 5, "costs", ("attention_scores", "c2_double_T", "c2_double_N")),
    Question("C3", "concepts", 7, "costs",
             ("layer_weights", "model_weights", "c3_double_d", "c3_layer_4096", "c3_estimate_7b")),
    Question("C4", "concepts", 4, "costs", ("weights_memory_gb", "c4_7b_gb", "c4_70b_4bit_gb")),
    Question("C5", "concepts", 4, "costs", ("attention_work", "crossover_length", "c5_crossover_4096")),
    # LensLM is the student's; TinyLM is the notebook's given model, which B1's visible check also runs.
    Question("B1", "build", 14, "lens", ("LensLM", "TinyLM")),
    Question("B2", "build", 8, "lens", ("lens_guesses", "token_probability", "settled_at")),
    Question("B3", "build", 12, "memory", ("store_pairs", "recall", "b3_share", "b3_threshold")),
    Question("B4", "build", 14, "superposition", ("feature_directions", "readout")),
    Question("B5", "build", 14, "superposition", ("interferes", "b5_interferes")),
    Question("B6", "build", 4, "lens", (), manual=True),
    # KnockoutLensLM is the student's; TinyLM runs in its visible check with a part's output layer zeroed.
    Question("B7", "build", 6, "lens", ("KnockoutLensLM", "TinyLM", "b7_drop", "b7_settled")),
]

# No question forbids a route: nothing here asks for an operation torch already has.
RULES = ()

# How each concept reads in reports and feedback.
TOPICS = {
    "roles": "Learned, config and state",
    "costs": "What a stack of blocks costs",
    "lens": "The logit lens",
    "memory": "The MLP as a key-value memory",
    "superposition": "Superposition",
}

# Questions whose solution builds on another's (interferes reads features back with the student's
# own feature_directions and readout; crossover_length compares with the student's layer_weights):
# the mutation report never puts their wrong answers in one
# submission.
BUILDS_ON = {"B5": "B4", "C5": "C3"}
