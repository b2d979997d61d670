"""Misconceptions of `costs`: attention scores in a stack (C2), weights per layer and per model
(C3), the memory the weights take (C4), and where attention's work overtakes the weights' (C5)."""
from autograder.grader_side.misconceptions import changed, variant, wrong

# The correct C3 functions, written so that one line can be made wrong.
_LAYER = '''
def layer_weights(d):
    attention = 4 * d * d
    mlp = 2 * d * (4 * d)
    return attention + mlp


def model_weights(d, n_layers, vocab_size):
    return n_layers * layer_weights(d) + 2 * vocab_size * d
'''

_MEMORY = '''
def weights_memory_gb(n_params, bits=16):
    return n_params * bits / 8 / 1e9


c4_7b_gb = weights_memory_gb(7e9)
c4_70b_4bit_gb = weights_memory_gb(70e9, bits=4)
'''

# The correct C5 functions (layer_weights comes from C3, as in the notebook).
_WORK = _LAYER + '''

def attention_work(T, d):
    return 2 * T * d


def crossover_length(d):
    T = 1
    while attention_work(T, d) < layer_weights(d):
        T += 1
    return T


c5_crossover_4096 = 6 * 4096
'''

ENTRIES = [
    # ---- C2 ------------------------------------------------------------------------------------
    wrong(
        "C2-one-attention-layer",
        "Counts attention's scores once for the whole model, as if only one layer attended: forgets the "
        "factor n_layers.",
        "Every block has its own attention sublayer, and each one computes its own score matrices.",
        "C2_code",
        '''
def attention_scores(batch, heads, T, n_layers):
    return batch * heads * T * T


c2_double_N = 1
''',
    ),
    wrong(
        "C2-linear-in-T",
        "Counts T scores per head instead of T x T: one per token, not one per pair of tokens.",
        "A score compares one query with one key, and each of the T queries meets each of the T keys.",
        "C2_code",
        '''
def attention_scores(batch, heads, T, n_layers):
    return batch * heads * T * n_layers


c2_double_T = 2
''',
    ),
    wrong(
        "C2-one-head",
        "Forgets the heads: counts one score matrix per block, where each head computes its own.",
        "Multi-head attention runs h heads side by side, each with its own T x T matrix.",
        "C2_code",
        '''
def attention_scores(batch, heads, T, n_layers):
    return batch * T * T * n_layers
''',
    ),
    wrong(
        "C2-unmasked-only",
        "Counts only the scores a causal mask keeps, T (T + 1) / 2, where the whole matrix is computed.",
        "The TODO box asks for every entry, masked or not: the implementation computes the full T x T matrix.",
        "C2_code",
        '''
def attention_scores(batch, heads, T, n_layers):
    return batch * heads * (T * (T + 1) // 2) * n_layers
''',
    ),
    wrong(
        "C2-double-T-doubles",
        "Says doubling T doubles the scores: reads the cost as linear in the length.",
        "Write the count for 2T and divide by the count for T.",
        "C2_code",
        '''
c2_double_T = 2
''',
    ),
    wrong(
        "C2-float-count",
        "Computes the count with float arithmetic (T ** 2.0), so it returns a float instead of an int.",
        "A count of scores is an int: keep to integer arithmetic.",
        "C2_code",
        '''
def attention_scores(batch, heads, T, n_layers):
    return batch * heads * T ** 2.0 * n_layers
''',
    ),
    # ---- C3 ------------------------------------------------------------------------------------
    wrong(
        "C3-attention-only",
        "Counts 4 d^2 per layer: attention's projections only, without the MLP.",
        "The MLP is part of every layer, and it holds more weights than attention.",
        "C3_code",
        changed(_LAYER, "return attention + mlp", "return attention"),
    ),
    wrong(
        "C3-mlp-width-d",
        "Counts the MLP's matrices as d x d, ignoring that the hidden width is 4d.",
        "W1 is d_ff x d and W2 is d x d_ff, with d_ff = 4d.",
        "C3_code",
        changed(_LAYER, "mlp = 2 * d * (4 * d)", "mlp = 2 * d * d"),
    ),
    wrong(
        "C3-double-d-doubles",
        "Says doubling the width doubles a layer; every matrix of the layer grows in both directions.",
        "A d x d matrix becomes 2d x 2d: how many times more entries is that?",
        "C3_code",
        '''
c3_double_d = 2
''',
    ),
    wrong(
        "C3-no-tables",
        "Leaves the token table and the unembedding out of the model's count (and so out of the 7B estimate).",
        "Two V x d tables come on top of the layers: 2 * 32,000 * 4096 is about a quarter of a billion.",
        "C3_code",
        changed(_LAYER, "return n_layers * layer_weights(d) + 2 * vocab_size * d",
                "return n_layers * layer_weights(d)")
        + "\n\nc3_estimate_7b = model_weights(4096, 32, 32000)\n",
    ),
    wrong(
        "C3-in-millions-and-billions",
        "Gives the two approximations in millions and billions (201, 6.7) where plain counts are asked for.",
        "The TODO box asks for the number of weights itself: 2.0e8 rather than 201 (million).",
        "C3_code",
        '''
c3_layer_4096 = 201
c3_estimate_7b = 6.7
''',
    ),
    wrong(
        "C3-exact-count-copied",
        "Gives week 4's exact count of Llama 2 7B where the rule's own estimate is asked for.",
        "The estimate is what model_weights gives for d = 4096, 32 layers and 32,000 tokens; Llama 2's gated MLP "
        "and norms make its exact count differ.",
        "C3_code",
        _LAYER + "\n\nc3_estimate_7b = \"6,738,415,616\"\n",
    ),
    wrong(
        "C3-one-table",
        "Counts one V x d table, as if the unembedding were tied to the token table, where the question's model "
        "has two.",
        "The estimate counts the token embedding and an untied unembedding: two V x d tables.",
        "C3_code",
        _LAYER + "\n\nc3_estimate_7b = 32 * layer_weights(4096) + 32000 * 4096\n",
    ),
    wrong(
        "C3-float-counts",
        "Counts with floats (d ** 2.0), so layer_weights returns a float instead of an int.",
        "A count of weights is an int: keep to integer arithmetic.",
        "C3_code",
        changed(_LAYER, "attention = 4 * d * d", "attention = 4 * d ** 2.0"),
    ),
    # ---- C4 ------------------------------------------------------------------------------------
    wrong(
        "C4-four-bytes-always",
        "Always takes 4 bytes per weight (float32), whatever the number of bits.",
        "bits says how many bits each weight takes: 16 bits are 2 bytes, 4 bits half a byte.",
        "C4_code",
        changed(_MEMORY, "return n_params * bits / 8 / 1e9", "return n_params * 4 / 1e9"),
    ),
    wrong(
        "C4-bits-as-bytes",
        "Multiplies by the number of bits without dividing by 8, so it counts bits, not bytes.",
        "A byte is 8 bits: a 16-bit weight takes 2 bytes.",
        "C4_code",
        changed(_MEMORY, "return n_params * bits / 8 / 1e9", "return n_params * bits / 1e9"),
    ),
    wrong(
        "C4-gibibytes",
        "Divides by 2^30 (GiB), where the question's GB is 10^9 bytes: about 7% too little.",
        "Read the unit in the TODO box: a GB here is 10^9 bytes.",
        "C4_code",
        changed(_MEMORY, "return n_params * bits / 8 / 1e9", "return n_params * bits / 8 / 2 ** 30"),
    ),
    wrong(
        "C4-gibibyte-number",
        "Gives the 7B model's size in GiB (2^30 bytes), about 13.04, where GB (10^9 bytes) are asked for.",
        "Read the unit in the TODO box: a GB here is 10^9 bytes, and a GiB is about 7% more.",
        "C4_code",
        _MEMORY.replace("c4_7b_gb = weights_memory_gb(7e9)", "c4_7b_gb = 7e9 * 2 / 2 ** 30"),
    ),
    wrong(
        "C4-gibibyte-unit",
        "Writes the 7B model's size with GiB as its unit where the question asks for GB.",
        "Give the number in GB (10^9 bytes), the unit the TODO box names.",
        "C4_code",
        _MEMORY.replace("c4_7b_gb = weights_memory_gb(7e9)", "c4_7b_gb = \"13.04 GiB\""),
    ),
    wrong(
        "C4-quantized-at-16-bits",
        "Gives the 70B model's size at the default 16 bits instead of at 4 bits.",
        "Pass bits=4: quantization to 4 bits stores each weight in half a byte.",
        "C4_code",
        changed(_MEMORY, "c4_70b_4bit_gb = weights_memory_gb(70e9, bits=4)",
                "c4_70b_4bit_gb = weights_memory_gb(70e9)"),
    ),
    # ---- C5 ------------------------------------------------------------------------------------
    wrong(
        "C5-scores-without-values",
        "Counts the query against the keys but not the weighted sum of the values, so attention's work per "
        "token is T d and the crossover twice as late.",
        "After the scores, the output mixes T value vectors of d numbers each: that is as much work again.",
        "C5_code",
        changed(_WORK, "return 2 * T * d", "return T * d").replace("c5_crossover_4096 = 6 * 4096",
                                                                  "c5_crossover_4096 = 12 * 4096"),
    ),
    wrong(
        "C5-attention-weights-only",
        "Compares attention's work with attention's own weights (4 d^2) instead of the whole layer's.",
        "A token passes through every weight of the layer, the MLP's included: compare with layer_weights(d).",
        "C5_code",
        changed(_WORK, "while attention_work(T, d) < layer_weights(d):", "while attention_work(T, d) < 4 * d * d:")
        .replace("c5_crossover_4096 = 6 * 4096", "c5_crossover_4096 = 2 * 4096"),
    ),
    wrong(
        "C5-overtakes-strictly",
        "Gives the first T at which attention's work is larger than the weights', one past where it reaches them.",
        "The question asks for the first T at which attention's work is at least the layer's weights.",
        "C5_code",
        changed(_WORK, "while attention_work(T, d) < layer_weights(d):",
                "while attention_work(T, d) <= layer_weights(d):"),
    ),
    wrong(
        "C5-in-thousands",
        "Gives the crossover for d = 4096 in thousands of tokens (24.6) where a length is asked for.",
        "The answer is a number of tokens: 24.6 thousand is written as the number itself.",
        "C5_code",
        _WORK.replace("c5_crossover_4096 = 6 * 4096", "c5_crossover_4096 = 24.6"),
    ),
]

VARIANTS = [
    variant("C2-math-prod-and-text", "C2_code", '''
import math as _math


def attention_scores(batch, heads, T, n_layers):
    return _math.prod([batch, heads, T, T, n_layers])


c2_double_T = "4.0"
c2_double_N = 2.0
'''),
    variant("C2-numpy-ints", "C2_code", '''
import numpy as np


def attention_scores(batch, heads, T, n_layers):
    return np.int64(batch) * heads * T ** 2 * n_layers


c2_double_T = np.float32(4)
c2_double_N = np.int64(2)
'''),
    variant("C3-closed-form-and-rounded", "C3_code", '''
def layer_weights(d):
    return 12 * d ** 2


def model_weights(d, n_layers, vocab_size):
    return 12 * n_layers * d * d + 2 * vocab_size * d


c3_double_d = 4
c3_layer_4096 = "2e8"
c3_estimate_7b = 6.7e9
'''),
    variant("C3-tensor-counts", "C3_code", '''
import torch as _torch


def layer_weights(d):
    return _torch.tensor(4 * d * d + 8 * d * d)        # a 0-d int64 tensor


def model_weights(d, n_layers, vocab_size):
    return n_layers * layer_weights(d) + 2 * vocab_size * d


c3_double_d = layer_weights(2) / layer_weights(1)
c3_layer_4096 = 201_326_592
c3_estimate_7b = "6.70e9, close to the exact 6.74e9"
'''),
    variant("C3-counts-as-written", "C3_code", _LAYER + '''

c3_double_d = "4x"
c3_layer_4096 = "201,326,592"
c3_estimate_7b = "about 6.7 billion"
'''),
    variant("C3-counts-typeset", "C3_code", _LAYER + '''

c3_double_d = "4 times"
c3_layer_4096 = "2.01 × 10⁸"
c3_estimate_7b = "6 704 594 944"
'''),
    variant("C4-bytes-first", "C4_code", '''
def weights_memory_gb(n_params, bits=16):
    bytes_per_weight = bits / 8
    return n_params * bytes_per_weight / 10 ** 9


c4_7b_gb = 14
c4_70b_4bit_gb = "35 GB"
'''),
    variant("C4-integer-arithmetic", "C4_code", '''
def weights_memory_gb(n_params, bits=16):
    return (n_params * bits // 8) / 1_000_000_000


c4_7b_gb = 14.0
c4_70b_4bit_gb = 35
'''),
    variant("C4-exact-count-and-units", "C4_code", _MEMORY.replace("c4_7b_gb = weights_memory_gb(7e9)",
                                                                  "c4_7b_gb = \"about 13.5 GB\"")
            .replace("c4_70b_4bit_gb = weights_memory_gb(70e9, bits=4)", "c4_70b_4bit_gb = \"35GB\"")),
    variant("C4-own-estimate", "C4_code", _MEMORY.replace("c4_7b_gb = weights_memory_gb(7e9)",
                                                         "c4_7b_gb = weights_memory_gb(6_704_594_944)")),
    variant("C5-closed-form-and-text", "C5_code", _LAYER + '''

def attention_work(T, d):
    keys = T * d        # the query against every key
    values = T * d      # the values mixed by the scores
    return keys + values


def crossover_length(d):
    return layer_weights(d) // (2 * d)


c5_crossover_4096 = "24,576 tokens"
'''),
    variant("C5-rounded", "C5_code", _WORK.replace("c5_crossover_4096 = 6 * 4096",
                                                    "c5_crossover_4096 = \"about 24.6 thousand\"")),
]
