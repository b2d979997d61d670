"""C2, C3, C4: what a stack of blocks costs: attention scores, weights per layer, memory."""

# C2 -----------------------------------------------------------------------------------------


def attention_scores(batch: int, heads: int, T: int, n_layers: int) -> int:
    """Every head of every block scores every query against every key: a full T x T matrix
    (masked entries included) per head, per sequence, per block."""
    return batch * heads * T * T * n_layers


DOUBLE_T = 4.0    # (2T)^2 / T^2
DOUBLE_N = 2.0    # the bill is paid once per block

# C3 -----------------------------------------------------------------------------------------


def layer_weights(d: int) -> int:
    """Attention's W_Q, W_K, W_V, W_O (4 d^2) plus the MLP's W1, W2 with d_ff = 4d (8 d^2); no
    biases, no norms."""
    return 4 * d * d + 2 * d * (4 * d)


def model_weights(d: int, n_layers: int, vocab_size: int) -> int:
    """n_layers blocks plus a token table and an unembedding of vocab_size x d each."""
    return n_layers * layer_weights(d) + 2 * vocab_size * d


DOUBLE_D = 4.0                                   # layer_weights(2d) / layer_weights(d)
LAYER_4096 = layer_weights(4096)                 # 201,326,592
ESTIMATE_7B = model_weights(4096, 32, 32000)     # 6,704,594,944 (Llama 2 7B has 6,738,415,616)

# C4 -----------------------------------------------------------------------------------------


def weights_memory_gb(n_params, bits: int = 16) -> float:
    """Gigabytes (10^9 bytes) to hold n_params weights at ``bits`` bits each."""
    return n_params * bits / 8 / 1e9


MEMORY_7B_GB = weights_memory_gb(7e9)                 # 14.0
MEMORY_70B_4BIT_GB = weights_memory_gb(70e9, bits=4)  # 35.0

# Approximations (the c3_ and c4_ numbers a student may round) count within this relative error.
APPROX_RTOL = 0.02
