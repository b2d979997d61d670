"""The `transformer-block` problem set (week 4) as the grader loads it: its contract in code.

Everything here is also in the student contract (``contract.md`` next to this file): the
notebooks, the questions with their names and points, the lesson concepts in order (the module
names of ``checks/``, ``misconceptions/`` and ``reference/`` here and of the visible checks in
``../student_side/checks/``), and what the questions that ask for an operation torch already has
forbid and may use. Nothing in this folder is released.
"""
from autograder.grader_side.contract import Question
from autograder.grader_side.routes import AUTOGRAD, DISPATCH, MODULE_BASICS, Rule, allowed

from ..student_side.checks.blocks import TRANSFORMER_LAYERS
from ..student_side.checks.norms import BUILTIN_LAYER_NORM, BUILTIN_RMS_NORM

NOTEBOOKS = ("concepts", "build")
CONCEPTS = ("positions", "norms", "mlp", "blocks", "params", "depth")

QUESTIONS = (
    Question("C1", "concepts", 8, "positions", ("q1_sentences", "permutes_with_input", "sinusoidal_positions")),
    Question("C2", "concepts", 2, "depth", ("q2_residual_cousin",)),
    Question("C3", "concepts", 2, "params", ("q3_most_weights",)),
    Question("C4", "concepts", 6, "params", ("attention_weights", "mlp_weights", "q4_ratio")),
    Question("C5", "concepts", 3, "norms", ("q5_layer_norm_u",)),
    Question("C6", "concepts", 5, "blocks", ("q6_decoder_sublayers", "q6_gpt_drops")),
    Question("C7", "concepts", 4, "blocks", ("q7_2017_paper", "q7_modern_default")),
    Question("C8", "concepts", 4, "mlp", (), manual=True),
    Question("B1", "build", 8, "norms", ("layer_norm",)),
    Question("B2", "build", 5, "norms", ("rms_norm",)),
    Question("B3", "build", 10, "norms", ("layer_norm_backward",)),
    Question("B4", "build", 6, "mlp", ("MLP",)),
    Question("B5", "build", 7, "mlp", ("SwiGLU", "swiglu_hidden_dim")),
    Question("B6", "build", 10, "blocks", ("PreNormBlock",)),
    Question("B7", "build", 8, "blocks", ("PostNormBlock",)),
    Question("B8", "build", 10, "params", ("count_parameters",)),
    Question("B9", "build", 6, "depth", ("stack_forward", "residual_jacobian")),
)

# How each concept, and a question that needs its own words, reads in reports and feedback.
TOPICS = {
    "positions": "Positions and permutations",
    "norms": "Layer norm and RMSNorm",
    "mlp": "The MLP sublayer",
    "blocks": "Pre-norm and post-norm blocks",
    "params": "Counting parameters",
    "depth": "Residual streams and depth",
    "C6": "Encoder, decoder and decoder-only blocks",
}

# Questions whose solution cell builds on another's (PostNormBlock subclasses PreNormBlock): the
# mutation report never puts their wrong answers in one submission.
BUILDS_ON = {"B7": "B6"}

# ---- forbidden routes --------------------------------------------------------------------------
# Each family holds the names (torch functions, torch.nn classes, aten ops) that reach it; a
# family includes what the checks' tripwires watch for, so the two never disagree.

LAYER_NORM = frozenset(BUILTIN_LAYER_NORM["layer_norm"]) | {"LayerNorm", "native_layer_norm_backward",
                                                             "layer_norm_backward"}
RMS_NORM = frozenset(BUILTIN_RMS_NORM["rms_norm"]) | {"RMSNorm", "_fused_rms_norm_backward"}
# Normalizations that reduce to layer norm or RMSNorm with the right shapes: one group, one
# instance, a batch norm over transposed rows, RMSNorm of centered rows, layer norm of [x, -x].
GENERAL_NORMS = frozenset({
    "group_norm", "native_group_norm", "GroupNorm", "instance_norm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "batch_norm",
    "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit_functional", "_batch_norm_impl_index", "batch_norm_elemt", "batch_norm_stats",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
    "SyncBatchNorm"})
TRANSFORMER = frozenset(TRANSFORMER_LAYERS["transformer"]) | {"_transformer_encoder_layer_fwd",
                                                              "_transformer_decoder_only_layer_fwd"}

# The layers a block is built from (torch.nn.X); the norms are off limits in B1-B3.
BLOCK_PARTS = MODULE_BASICS | {"Bilinear", "LayerNorm", "RMSNorm", "MultiheadAttention", "Embedding"}
NORM_BASICS = allowed(modules=MODULE_BASICS)
BLOCK_BASICS = allowed(functional={"layer_norm", "rms_norm", "multi_head_attention_forward"}, modules=BLOCK_PARTS,
                       exact={"torch.nn.Transformer.generate_square_subsequent_mask"})
WORDS = {"general-norm": "a more general torch normalization that reduces to it",
         "transformer-layer": "torch's transformer layers"}

RULES = (
    Rule("B1", ("layer_norm",), "layer norm written with basic tensor operations",
         {"builtin": LAYER_NORM, "general-norm": GENERAL_NORMS | RMS_NORM, "dispatch-off": DISPATCH},
         NORM_BASICS, words=WORDS),
    Rule("B2", ("rms_norm",), "RMSNorm written with basic tensor operations",
         {"builtin": RMS_NORM, "general-norm": GENERAL_NORMS | LAYER_NORM, "dispatch-off": DISPATCH},
         NORM_BASICS, words=WORDS),
    Rule("B3", ("layer_norm_backward",), "the closed-form gradients of layer norm, without autograd",
         {"builtin": frozenset({"native_layer_norm_backward"}), "autograd": AUTOGRAD, "dispatch-off": DISPATCH},
         NORM_BASICS, {"autograd": frozenset({"func"})}, words=WORDS),
    Rule("B6", ("PreNormBlock",), "the pre-norm block written from its parts, without torch's transformer layers",
         {"transformer-layer": TRANSFORMER, "dispatch-off": DISPATCH}, BLOCK_BASICS, words=WORDS),
    Rule("B7", ("PostNormBlock",), "the post-norm block written from its parts, without torch's transformer layers",
         {"transformer-layer": TRANSFORMER, "dispatch-off": DISPATCH}, BLOCK_BASICS, words=WORDS),
)
