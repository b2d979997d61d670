"""The `inside-the-block` problem set (week 5): its contract in code.

Everything here is also in the student contract (``contract.md`` next to this file): the
notebooks, the lesson concepts in order (the module names of ``checks/``, ``misconceptions/`` and
``reference/`` here and of the visible checks in ``../student_side/checks/``), and the questions
with their names and points. Nothing in this folder is released.

Plain data for now: each question is a dict with the fields of ``Question(id, notebook, points,
concept, names, manual=False)``.
"""

NOTEBOOKS = ("concepts", "build")
CONCEPTS = ("roles", "costs", "lens", "memory", "superposition")

QUESTIONS = [
    dict(id="C1", notebook="concepts", points=12, concept="roles", names=("c1_categories",), manual=False),
    dict(id="C2", notebook="concepts", points=7, concept="costs",
         names=("attention_scores", "c2_double_T", "c2_double_N"), manual=False),
    dict(id="C3", notebook="concepts", points=8, concept="costs",
         names=("layer_weights", "model_weights", "c3_double_d", "c3_layer_4096", "c3_estimate_7b"), manual=False),
    dict(id="C4", notebook="concepts", points=5, concept="costs",
         names=("weights_memory_gb", "c4_7b_gb", "c4_70b_4bit_gb"), manual=False),
    # LensLM is the student's; TinyLM is the notebook's given model, which B1's visible check also runs.
    dict(id="B1", notebook="build", points=14, concept="lens", names=("LensLM", "TinyLM"), manual=False),
    dict(id="B2", notebook="build", points=8, concept="lens",
         names=("lens_guesses", "token_probability", "settled_at"), manual=False),
    dict(id="B3", notebook="build", points=18, concept="memory", names=("store_pairs", "recall"), manual=False),
    dict(id="B4", notebook="build", points=14, concept="superposition", names=("feature_directions", "readout"),
         manual=False),
    dict(id="B5", notebook="build", points=14, concept="superposition", names=("interferes", "b5_interferes"),
         manual=False),
    dict(id="B6", notebook="build", points=4, concept="lens", names=(), manual=True),
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
# own feature_directions and readout): the mutation report never puts their wrong answers in one
# submission.
BUILDS_ON = {"B5": "B4"}
