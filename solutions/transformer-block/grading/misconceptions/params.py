"""Misconceptions of `params`: where a block's weights sit (C3), attention vs MLP weights (C4),
and the exact parameter count of a decoder-only model (B8)."""
from autograder.grader_side.misconceptions import phrasings, variant, wrong

# The correct count_parameters, written so that one line can be made wrong: each B8 entry below
# (but the last) is this function with one line changed, as a student's almost-right answer.
_COUNT = '''
def count_parameters(config):
    V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]
    N, f, bias = config["n_layers"], config["d_ff"], config["bias"]

    def linear(n_in, n_out):
        return n_in * n_out + (n_out if bias else 0)

    if config["mlp"] == "gelu":
        per_mlp = linear(d, f) + linear(f, d)
    else:
        per_mlp = 2 * linear(d, f) + linear(f, d)
    if config["norm"] == "layernorm":
        per_norm = 2 * d if bias else d
    else:
        per_norm = d
    counts = {
        "embeddings": V * d + P * d + (0 if config["tie_embeddings"] else V * d),
        "attention": N * 4 * linear(d, d),
        "mlp": N * per_mlp,
        "norms": (2 * N + 1) * per_norm,
    }
    counts["total"] = sum(counts.values())
    return counts
'''


def _count_with(line: str, changed: str) -> str:
    """count_parameters with its one line ``line`` (stripped) replaced by ``changed``."""
    lines = _COUNT.split("\n")
    hits = [i for i, text in enumerate(lines) if text.strip() == line]
    if len(hits) != 1:
        raise ValueError(f"{line!r} is not exactly one line of _COUNT")
    indent = lines[hits[0]][: len(lines[hits[0]]) - len(lines[hits[0]].lstrip())]
    lines[hits[0]] = indent + changed
    return "\n".join(lines)


ENTRIES = [
    # ---- C3 ------------------------------------------------------------------------------------
    wrong(
        "C3-attention",
        "Thinks attention holds most of a block's weights; the MLP holds about two thirds of them.",
        "Count them as in C4: four d x d matrices for attention against two d x 4d matrices for the MLP.",
        "C3_code",
        '''
q3_most_weights = "attention"
''',
    ),
    wrong(
        "C3-hedge-mlp-or-attention",
        "Hedges between the MLP and attention; an answer that also names a wrong option earns nothing.",
        "Pick one: compare 4d^2 with 2 * d * 4d.",
        "C3_code",
        '''
q3_most_weights = "the MLP or attention"
''',
    ),
    wrong(
        "C3-qkvo-projections",
        "Names the attention projections W_Q, W_K, W_V, W_O: four matrices, but each is only d x d.",
        "There are more attention matrices, but the MLP's two are each four times larger: count the "
        "entries, not the matrices.",
        "C3_code",
        '''
q3_most_weights = "W_Q, W_K, W_V and W_O"
''',
    ),
    wrong(
        "C3-layer-norm",
        "Names the layer norms, which hold only 2d parameters each.",
        "Norms and biases are vectors of length d, tiny next to the matrices: compare the two "
        "sublayers that have matrices.",
        "C3_code",
        '''
q3_most_weights = "layer norm"
''',
    ),
    # ---- C4 ------------------------------------------------------------------------------------
    wrong(
        "C4-with-biases",
        "Counts the biases too, where the question asks for weights only.",
        "C4 counts weights only: attention_weights(6) is exactly 4 * 6 * 6 = 144.",
        "C4_code",
        '''
def attention_weights(d):
    return 4 * (d * d + d)


def mlp_weights(d, d_ff=None):
    d_ff = 4 * d if d_ff is None else d_ff
    return 2 * d * d_ff + d_ff + d
''',
    ),
    wrong(
        "C4-ratio-inverted",
        "Gives attention / MLP (0.5) where the question asks for MLP weights divided by attention weights.",
        "Read the order in the question: the MLP's count goes on top.",
        "C4_code",
        '''
q4_ratio = attention_weights(8) / mlp_weights(8)
''',
    ),
    wrong(
        "C4-ratio-as-share",
        "Gives the MLP's share of the block's weights (2/3) instead of the ratio MLP / attention.",
        "A ratio of two counts divides one by the other, not by their sum.",
        "C4_code",
        '''
q4_ratio = mlp_weights(8) / (mlp_weights(8) + attention_weights(8))
''',
    ),
    wrong(
        "C4-mlp-ignores-d-ff",
        "Always counts the MLP as 8d^2, ignoring a d_ff that is given.",
        "4d is only the default width: use d_ff when the caller passes one.",
        "C4_code",
        '''
def mlp_weights(d, d_ff=None):
    return 8 * d * d
''',
    ),
    wrong(
        "C4-three-attention-matrices",
        "Counts W_Q, W_K and W_V but forgets the output projection W_O.",
        "Attention has four d x d projections: the heads' outputs are mixed by W_O too.",
        "C4_code",
        '''
def attention_weights(d):
    return 3 * d * d
''',
    ),
    wrong(
        "C4-mlp-one-matrix",
        "Counts only one of the MLP's two matrices.",
        "The MLP goes up with W1 (d -> d_ff) and back down with W2 (d_ff -> d).",
        "C4_code",
        '''
def mlp_weights(d, d_ff=None):
    d_ff = 4 * d if d_ff is None else d_ff
    return d * d_ff
''',
    ),
    # ---- B8 ------------------------------------------------------------------------------------
    wrong(
        "B8-bias-width-of-input",
        "Gives each Linear layer a bias as long as its input instead of its output.",
        "A bias has one entry per output unit: nn.Linear(n_in, n_out) has n_out bias values. "
        "Test a SwiGLU config with biases and d_ff != d_model.",
        "B8_code",
        _count_with("return n_in * n_out + (n_out if bias else 0)",
                    "return n_in * n_out + (n_in if bias else 0)"),
    ),
    wrong(
        "B8-biases-always",
        "Counts biases even when the config says bias=False.",
        "bias=False removes every bias of the blocks' Linear layers and LayerNorms: Llama 2 has none.",
        "B8_code",
        _count_with("return n_in * n_out + (n_out if bias else 0)", "return n_in * n_out + n_out"),
    ),
    wrong(
        "B8-biases-never",
        "Never counts the Linear layers' biases, even when the config says bias=True.",
        "With bias=True every Linear layer in the blocks has one: GPT-2's attention alone has 4d per block.",
        "B8_code",
        _count_with("return n_in * n_out + (n_out if bias else 0)", "return n_in * n_out"),
    ),
    wrong(
        "B8-tied-counted-twice",
        "Counts the unembedding as its own V x d matrix even when it is tied to the token table.",
        "With tie_embeddings the output layer reuses the token table, so it adds no parameters.",
        "B8_code",
        _count_with('"embeddings": V * d + P * d + (0 if config["tie_embeddings"] else V * d),',
                    '"embeddings": V * d + P * d + V * d,'),
    ),
    wrong(
        "B8-layernorm-no-beta",
        "Counts LayerNorm with its gain gamma only, forgetting the shift beta.",
        "With biases, a LayerNorm has both gamma and beta, 2d parameters: GPT-2's norms total 38,400.",
        "B8_code",
        _count_with("per_norm = 2 * d if bias else d", "per_norm = d"),
    ),
    wrong(
        "B8-rmsnorm-with-beta",
        "Gives RMSNorm a shift beta when the config has biases; RMSNorm only has a gain.",
        "RMSNorm never has beta, whatever the bias flag: re-read the norms row of the table.",
        "B8_code",
        _count_with("per_norm = d", "per_norm = 2 * d if bias else d"),
    ),
    wrong(
        "B8-swiglu-two-matrices",
        "Counts a SwiGLU MLP with two matrices like the GELU MLP, where it has three (w1, w3, w2).",
        "SwiGLU has a gate and an up projection plus the down projection: Llama 2 7B only adds up "
        "with all three.",
        "B8_code",
        _count_with("per_mlp = 2 * linear(d, f) + linear(f, d)", "per_mlp = linear(d, f) + linear(f, d)"),
    ),
    wrong(
        "B8-no-final-norm",
        "Forgets the final norm after the last block: counts 2N norms instead of 2N + 1.",
        "A pre-norm model has one more norm after its last block, before the unembedding.",
        "B8_code",
        _count_with('"norms": (2 * N + 1) * per_norm,', '"norms": 2 * N * per_norm,'),
    ),
    wrong(
        "B8-unembedding-bias",
        "Gives the untied unembedding a bias when the config has biases; the output layer never has one.",
        "The embeddings row of the table: the unembedding is a bias-free V x d matrix.",
        "B8_code",
        _count_with('"embeddings": V * d + P * d + (0 if config["tie_embeddings"] else V * d),',
                    '"embeddings": V * d + P * d + (0 if config["tie_embeddings"] else linear(d, V)),'),
    ),
    wrong(
        "B8-norms-per-block-only",
        "Counts one norm per block instead of two (one before attention, one before the MLP).",
        "Each of the two sublayers of a block has its own norm, and one more follows the last block.",
        "B8_code",
        _count_with('"norms": (2 * N + 1) * per_norm,', '"norms": (N + 1) * per_norm,'),
    ),
    # ---- a config key ignored ------------------------------------------------------------------
    wrong(
        "B8-no-position-table",
        "Leaves out the learned position table, ignoring max_positions.",
        "max_positions rows of width d_model are parameters too (GPT-2 has 1,024 of them); 0 means no table.",
        "B8_code",
        _count_with('"embeddings": V * d + P * d + (0 if config["tie_embeddings"] else V * d),',
                    '"embeddings": V * d + (0 if config["tie_embeddings"] else V * d),'),
    ),
    wrong(
        "B8-d-ff-as-4d",
        "Takes the MLP's hidden width as 4 * d_model, ignoring the config's d_ff.",
        "4d is only the usual width: Llama 2 7B has d_ff = 11008, not 16384. Read d_ff from the config.",
        "B8_code",
        _count_with('N, f, bias = config["n_layers"], config["d_ff"], config["bias"]',
                    'N, f, bias = config["n_layers"], 4 * config["d_model"], config["bias"]'),
    ),
    wrong(
        "B8-one-block",
        "Counts a single block, ignoring n_layers.",
        "The model stacks n_layers blocks, each with its own attention, MLP and two norms.",
        "B8_code",
        _count_with('N, f, bias = config["n_layers"], config["d_ff"], config["bias"]',
                    'N, f, bias = 1, config["d_ff"], config["bias"]'),
    ),
    wrong(
        "B8-gpt2-vocabulary",
        "Uses GPT-2's vocabulary of 50,257 tokens whatever the config's vocab_size.",
        "Read vocab_size from the config: Llama 2 has 32,000 tokens.",
        "B8_code",
        _count_with('V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]',
                    'V, P, d = 50257, config["max_positions"], config["d_model"]'),
    ),
    wrong(
        "B8-gpt2-width",
        "Uses GPT-2 small's width of 768 whatever the config's d_model.",
        "Read d_model from the config: every part of the count depends on it.",
        "B8_code",
        _count_with('V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]',
                    'V, P, d = config["vocab_size"], config["max_positions"], 768'),
    ),
    wrong(
        "B8-layernorm-always",
        "Counts every norm as a LayerNorm, ignoring the config's norm.",
        "RMSNorm has a gain only, even in a model with biases: read config[\"norm\"].",
        "B8_code",
        _count_with('if config["norm"] == "layernorm":', 'if True:'),
    ),
    wrong(
        "B8-hard-coded-famous-models",
        "Returns the published numbers of GPT-2 small and Llama 2 7B and a rough 12 N d^2 + 2 V d "
        "estimate for any other config.",
        "The hidden checks build random models: count each part from the config, and use the two "
        "famous models only to test your formula.",
        "B8_code",
        '''
def count_parameters(config):
    if config["vocab_size"] == 50257:
        return dict(embeddings=39_383_808, attention=28_348_416, mlp=56_669_184, norms=38_400,
                    total=124_439_808)
    if config["vocab_size"] == 32000:
        return dict(embeddings=262_144_000, attention=2_147_483_648, mlp=4_328_521_728, norms=266_240,
                    total=6_738_415_616)
    V, d, N = config["vocab_size"], config["d_model"], config["n_layers"]
    counts = dict(embeddings=2 * V * d, attention=4 * N * d * d, mlp=8 * N * d * d, norms=0)
    counts["total"] = sum(counts.values())
    return counts
''',
    ),
    wrong(
        "C4-float-counts",
        "Counts the weights with float arithmetic (d ** 2.0), so attention_weights(8) is 256.0, not the int 256.",
        "A count of weights is an int: keep to integer arithmetic (d * d, no / or float powers).",
        "C4_code",
        '''
def attention_weights(d):
    return 4 * d ** 2.0


def mlp_weights(d, d_ff=None):
    return 2 * d * (4 * d if d_ff is None else d_ff) * 1.0
''',
    ),
]

VARIANTS = [
    # ---- C3 ------------------------------------------------------------------------------------
    *phrasings("C3", "C3_code", "q3_most_weights", {
        "ffn": "FFN",
        "feed-forward-network": "the feed-forward network",
        "multi-layer-perceptron": "Multi-Layer Perceptron",
        "sentence": "The MLP.",
        "paper-label": "Feed Forward",
        "with-a-reason": "the MLP: about two thirds of a block's weights",
        "denies-a-wrong-option": "The MLP, not attention",
        "position-wise": "the position-wise MLP sublayer",
    }),
    # ---- C4 ------------------------------------------------------------------------------------
    variant("C4-int-ratio", "C4_code", '''
def attention_weights(d):
    return d ** 2 * 4


def mlp_weights(d, d_ff=None):
    return 2 * d * (d_ff or 4 * d)


q4_ratio = 2
'''),
    variant("C4-tensor-ratio", "C4_code", '''
q4_ratio = torch.tensor(mlp_weights(8) / attention_weights(8))     # a 0-d tensor
'''),
    variant("C4-numpy-ratio", "C4_code", '''
import numpy as np

q4_ratio = np.float32(mlp_weights(8)) / np.int64(attention_weights(8))
'''),
    variant("C4-text-ratio", "C4_code", '''
q4_ratio = "2.0"
'''),
    variant("C4-text-ratio-explained", "C4_code", '''
q4_ratio = "2, since the MLP has 8 d^2 weights and attention 4 d^2"
'''),
    variant("C4-tensor-counts", "C4_code", '''
def attention_weights(d):
    return torch.tensor(4 * d * d)          # a 0-d int64 tensor


def mlp_weights(d, d_ff=None):
    return torch.tensor(2 * d * (4 * d if d_ff is None else d_ff))


q4_ratio = mlp_weights(8) / attention_weights(8)   # a 0-d float tensor
'''),
    variant("C4-lambdas-and-fraction", "C4_code", '''
attention_weights = lambda d: 4 * d * d
mlp_weights = lambda d, d_ff=None: 2 * d * (4 * d if d_ff is None else d_ff)
q4_ratio = 512 / 256
'''),
    # ---- B8 ------------------------------------------------------------------------------------
    variant("B8-closed-form", "B8_code", '''
def count_parameters(config):
    V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]
    N, f, b = config["n_layers"], config["d_ff"], int(config["bias"])
    matrices = 2 if config["mlp"] == "gelu" else 3
    mlp_bias = (f + d) if config["mlp"] == "gelu" else (2 * f + d)
    norm = d * (1 + b) if config["norm"] == "layernorm" else d
    parts = dict(
        embeddings=(V + P) * d + (1 - int(config["tie_embeddings"])) * V * d,
        attention=N * (4 * d * d + 4 * d * b),
        mlp=N * (matrices * d * f + mlp_bias * b),
        norms=(2 * N + 1) * norm,
    )
    parts["total"] = sum(parts.values())
    return parts
'''),
    variant("B8-meta-modules", "B8_code", '''
def count_parameters(config):
    """Builds every part on the meta device (no memory) and counts its parameters."""
    V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]
    N, f, bias = config["n_layers"], config["d_ff"], bool(config["bias"])

    def size(*modules):
        return sum(p.numel() for m in modules for p in m.parameters())

    with torch.device("meta"):
        def norm():
            return nn.LayerNorm(d, bias=bias) if config["norm"] == "layernorm" else nn.RMSNorm(d)

        def linear(n_in, n_out):
            return nn.Linear(n_in, n_out, bias=bias)

        embeddings = size(nn.Embedding(V, d))
        if P > 0:
            embeddings += size(nn.Embedding(P, d))
        if not config["tie_embeddings"]:
            embeddings += size(nn.Linear(d, V, bias=False))
        attention = N * size(*(linear(d, d) for _ in range(4)))
        if config["mlp"] == "gelu":
            mlp = N * size(linear(d, f), linear(f, d))
        else:
            mlp = N * size(linear(d, f), linear(d, f), linear(f, d))
        norms = (2 * N + 1) * size(norm())
    return {"embeddings": embeddings, "attention": attention, "mlp": mlp, "norms": norms,
            "total": embeddings + attention + mlp + norms}
'''),
]
