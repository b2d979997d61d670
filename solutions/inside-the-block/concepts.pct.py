# %% md
# # Inside the block: concepts
#
# Last week you assembled a transformer block. This notebook sorts its numbers and counts its
# costs: which numbers training sets, which you fix before it starts, and which are worked out
# afresh for every prompt; then how many attention scores, weights and bytes a stack of blocks
# needs. `build.ipynb` then looks inside a running block: the logit lens, the MLP read as a
# memory, and superposition. The lesson notes, `notes/inside-the-block.md` (figures in
# `figures/`), sit next to this notebook.
#
# **How this notebook works**
#
# - Run the setup cell first, then work from top to bottom.
# - Write your answers only in the cells marked by a **TODO** box, and keep every given name as it
#   is: the grader reads your answers by name.
# - Each TODO cell is followed by its check cells; run them. A *visible* check runs at once and
#   prints what it checked when it passes. A *hidden* check prints one line saying what it will
#   check and runs only when your notebook is graded, on inputs you do not see.
# - Leave the check cells where they are, unedited.
# - Counts are Python `int`s. An approximate number may be rounded as the TODO box allows, and
#   may be an `int`, a `float` or a short string that states one number (`"3.5e9"`,
#   `"3,500,000,000"`, `"3.5 billion"`); the hidden check cell echoes the number it read.
#
# 32 points, all graded automatically (C1 to C5).

# %% code
from student_side import check, ready

# %% md
# ## C1 · Learned, config or state (12 points)
#
# Every number that takes part in running a transformer belongs to one of three kinds.
#
# - **learned**: a weight. Training moves it by gradient descent, it is saved with the model, and
#   one value serves every input.
# - **config**: a choice made before training begins and never touched by it: a size, a small
#   constant, which function to use, how the parts are wired together. Hyperparameters and the
#   architecture are config.
# - **state**: a value the forward pass computes from the input in front of it. Another prompt
#   gives another value. It exists while the forward pass (and, during training, the backward
#   pass) needs it, and is not saved with the model.
#
# Two questions sort almost anything. Would it be different for another prompt? Then it is state.
# If not: does training change it? Learned if it does, config if it does not. For example, the token
# embedding table is learned, the number of heads $h$ is config, and the queries $Q = XW_Q$ of a
# prompt are state.

# %% md
# > **TODO (C1, 12 points, one line per quantity).** Set `c1_categories` to a dict that maps each
# > name below to `"learned"`, `"config"` or `"state"`. Use these three words only (capital
# > letters do not matter). Every item earns its own point.
# >
# > | name | the quantity |
# > |---|---|
# > | `"n_layers"` | the number of blocks $N$ |
# > | `"norm_statistics"` | the mean $\mu$ and standard deviation $\sigma$ a LayerNorm takes of a token vector |
# > | `"mlp_weights"` | the MLP's matrices $W_1$ and $W_2$, in every block |
# > | `"residual_adds"` | the residual connections around each sublayer: where the block adds a sublayer's output back |
# > | `"attention_pattern"` | the attention matrix $A = \mathrm{softmax}(QK^\top/\sqrt{d_k} + M)$ |
# > | `"norm_gains"` | a LayerNorm's gain $\gamma$ and shift $\beta$ |
# > | `"d_ff"` | the MLP's hidden width $d_{ff}$ |
# > | `"mlp_hidden"` | the MLP's hidden activations $\phi(W_1 x + b_1)$ |
# > | `"attention_projections"` | $W_Q$, $W_K$, $W_V$ and $W_O$ |
# > | `"norm_eps"` | the $\epsilon$ under a norm's square root |
# > | `"residual_stream"` | the residual stream $H^{(2)}$ that block 2 outputs for one prompt |
# > | `"mlp_biases"` | the MLP's biases $b_1$ and $b_2$ |
# >
# > **Checked (hidden):** each of the twelve categories, one point each.

# %% solution id=C1_code
# Your answer, in this form (replace each "..." by "learned", "config" or "state"):
# c1_categories = {
#     "n_layers": "...",
#     "norm_statistics": "...",
#     "mlp_weights": "...",
#     "residual_adds": "...",
#     "attention_pattern": "...",
#     "norm_gains": "...",
#     "d_ff": "...",
#     "mlp_hidden": "...",
#     "attention_projections": "...",
#     "norm_eps": "...",
#     "residual_stream": "...",
#     "mlp_biases": "...",
# }
### BEGIN SOLUTION
c1_categories = {
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
### END SOLUTION

# %% checks C1

# %% md
# ## C2 · Attention's bill, paid in every block (5 points)
#
# One head of self-attention compares every query with every key: for a sequence of $T$ tokens,
# $QK^\top$ is a $T \times T$ matrix of scores. A causal mask hides the scores above the diagonal,
# but the usual implementation still computes the whole matrix and then overwrites the hidden
# entries, so count every entry, masked or not.
#
# That matrix is made many times over. Each of the $h$ heads computes its own, for each of the $B$
# sequences of a batch. And attention is not a single layer at the bottom of the model: every one
# of the $N$ blocks has its own attention sublayer, so a stack pays the bill once per block. Note
# which of these numbers the count depends on linearly, and which one it does not.

# %% md
# > **TODO (C2, 5 points, about 3 lines).** Write
# >
# > - `attention_scores(batch, heads, T, n_layers)`: the number of attention scores one forward pass
# >   computes, over all heads of all blocks for the whole batch, as an `int`;
# > - `c2_double_T`: how many times larger that number gets when $T$ doubles and nothing else
# >   changes, as a number;
# > - `c2_double_N`: the same when the number of blocks doubles.
# >
# > **Checked:** `attention_scores(1, 1, 4, 1)` is 16 and `attention_scores(2, 4, 8, 3)` is 1536
# > (visible); other batches, head counts, lengths and depths (hidden); the two factors (hidden).

# %% solution id=C2_code
def attention_scores(batch, heads, T, n_layers):
    """Scores one forward pass computes: a full T x T matrix per head, per sequence, per block."""
    ### BEGIN SOLUTION
    return batch * heads * T * T * n_layers
    ### END SOLUTION


# Your answers, in this form:
# c2_double_T = ...  # a number
# c2_double_N = ...  # a number
### BEGIN SOLUTION
c2_double_T = attention_scores(1, 1, 2 * 10, 1) / attention_scores(1, 1, 10, 1)
c2_double_N = 2
### END SOLUTION

# %% checks C2

# %% md
# ## C3 · Weights per layer, and for a whole model (7 points)
#
# Count only the weight matrices, no biases and no norms (they add a multiple of $d$, not of
# $d^2$). A block then has
#
# - in attention, the four $d \times d$ projections $W_Q, W_K, W_V, W_O$;
# - in the MLP, $W_1 \in \mathbb{R}^{d_{ff} \times d}$ and $W_2 \in \mathbb{R}^{d \times d_{ff}}$,
#   with the usual $d_{ff} = 4d$.
#
# Both parts are a whole number times $d^2$, and so is their sum. For a whole model, add $N$ such
# layers to two tables of $V \times d$: the token embedding and an unembedding that is not tied
# to it. The result is an estimate. It ignores biases, norms and any position table, and a model
# with a gated MLP uses three matrices at a narrower width, which comes to about the same count
# (week 4, B5).

# %% md
# > **TODO (C3, 7 points, about 4 lines).**
# >
# > - `layer_weights(d)`: the weights of one layer as counted above, an `int`;
# > - `model_weights(d, n_layers, vocab_size)`: $N$ layers plus the two $V \times d$ tables, an `int`;
# > - `c3_double_d`: how many times larger a layer gets when $d$ doubles, as a number;
# > - `c3_layer_4096`: about how many weights one layer of width $d = 4096$ holds, within 1%;
# > - `c3_estimate_7b`: the rule's estimate for $d = 4096$, 32 layers and a vocabulary of 32,000
# >   tokens, within 0.3% (two significant figures are close enough; week 4's exact count of
# >   Llama 2 7B answers a different question, and is not accepted here).
# >
# > Give each count as a number of weights: `201326592`, `2.01e8`, or a string such as
# > `"201,326,592"`, `"2.01 x 10^8"` or `"201 million"`. The check cell below echoes the number it
# > read from your answer; if it cannot read exactly one number, a TA reads your text instead.
# >
# > **Checked:** `layer_weights` of 4 and 8 is 192 and 768, and `model_weights(8, 2, 10)` is 1696
# > (visible); other widths, depths and vocabularies (hidden); the three numbers (hidden).

# %% solution id=C3_code
def layer_weights(d):
    """Attention's four d x d matrices plus the MLP's two (d_ff = 4d), without biases or norms."""
    ### BEGIN SOLUTION
    attention = 4 * d * d
    mlp = 2 * d * (4 * d)
    return attention + mlp
    ### END SOLUTION


def model_weights(d, n_layers, vocab_size):
    """n_layers layers plus a token table and an untied unembedding, vocab_size x d each."""
    ### BEGIN SOLUTION
    return n_layers * layer_weights(d) + 2 * vocab_size * d
    ### END SOLUTION


# Your answers, in this form:
# c3_double_d = ...     # a number
# c3_layer_4096 = ...   # a number, within 1%
# c3_estimate_7b = ...  # a number, within 0.3%
### BEGIN SOLUTION
c3_double_d = layer_weights(2 * 64) / layer_weights(64)
c3_layer_4096 = 2.0e8
c3_estimate_7b = model_weights(4096, 32, 32000)
### END SOLUTION

# %% checks C3

# %% md
# ## C4 · Memory for the weights (4 points)
#
# To run a model, its weights must first sit in memory. How much memory depends on how many bits
# each weight is stored in: 32 for a plain `float32`, 16 for `float16` or `bfloat16` (the usual
# choice for serving a model), and 8 or even 4 when the weights are quantized. Eight bits make a
# byte. Here a GB is $10^9$ bytes (the GiB of $2^{30}$ bytes is about 7% larger).
#
# That is only the entry fee. The forward pass also needs room for its state (activations,
# attention matrices), on top of the weights.

# %% md
# > **TODO (C4, 4 points, about 3 lines).**
# >
# > - `weights_memory_gb(n_params, bits=16)`: the GB that `n_params` weights take at `bits` bits
# >   each, as a `float`;
# > - `c4_7b_gb`: about how many GB a model of 7 billion weights takes at 16 bits, within 1%. For
# >   "7 billion" you may take $7 \times 10^9$ itself, your C3 estimate, or week 4's exact count of
# >   Llama 2 7B: each is accepted;
# > - `c4_70b_4bit_gb`: about how many GB a model of 70 billion weights takes at 4 bits, within 1%.
# >
# > A number, or a string such as `"14 GB"`. The unit is GB ($10^9$ bytes): an answer in GiB, MB or
# > bits is not converted, and loses the point.
# >
# > **Checked:** `weights_memory_gb(1e9)` is 2.0 and `weights_memory_gb(1e9, bits=32)` is 4.0
# > (visible); other sizes and bit widths (hidden); the two numbers (hidden).

# %% solution id=C4_code
def weights_memory_gb(n_params, bits=16):
    """GB (10^9 bytes) to hold n_params weights at `bits` bits each."""
    ### BEGIN SOLUTION
    return n_params * bits / 8 / 1e9
    ### END SOLUTION


# Your answers, in this form:
# c4_7b_gb = ...        # a number of GB, within 1%
# c4_70b_4bit_gb = ...  # a number of GB, within 1%
### BEGIN SOLUTION
c4_7b_gb = weights_memory_gb(7e9)
c4_70b_4bit_gb = weights_memory_gb(70e9, bits=4)
### END SOLUTION

# %% checks C4

# %% md
# ## C5 · When attention's work overtakes the weights' (4 points)
#
# C2 counted attention's scores and C3 a layer's weights. Both turn into work, counted here in
# multiply-adds for **one token in one layer**:
#
# - every weight of the layer is used once per token (each row of a matrix meets the token's
#   vector once), so the weights cost as many multiply-adds as C3's `layer_weights(d)`;
# - attention's own work does not touch the weights: the token's query meets each of the $T$ keys
#   (a dot product of $d$ numbers), and its output mixes the $T$ value vectors by those scores
#   ($d$ numbers each). As in C2, count all $T$ positions, masked or not.
#
# The weights' work does not depend on $T$; attention's grows with it. For a short context the
# weights dominate, and past some length attention's work is the larger. Over a whole sequence of
# $T$ tokens both bills are $T$ times larger, which is where attention's $T^2$ comes from.

# %% md
# > **TODO (C5, 4 points, about 4 lines).** Write
# >
# > - `attention_work(T, d)`: the multiply-adds attention's scores and its weighted sum of values
# >   take for one token in one layer, over a context of $T$ positions, as an `int`;
# > - `crossover_length(d)`: the smallest $T$ at which `attention_work(T, d)` is at least
# >   `layer_weights(d)` (your C3 function), as an `int` (a closed form, or a search);
# > - `c5_crossover_4096`: that length for $d = 4096$, as a number, within 1%.
# >
# > **Checked:** `attention_work(3, 2)` is 12 and `attention_work(5, 4)` is 40, and
# > `crossover_length(3)` is the first $T$ where your `attention_work` reaches your
# > `layer_weights` (visible); other lengths and widths, and the number (hidden).

# %% solution id=C5_code
def attention_work(T, d):
    """Multiply-adds for one token in one layer: its query against T keys, then T values mixed."""
    ### BEGIN SOLUTION
    return 2 * T * d
    ### END SOLUTION


def crossover_length(d):
    """The smallest T with attention_work(T, d) >= layer_weights(d)."""
    ### BEGIN SOLUTION
    return 6 * d
    ### END SOLUTION


# Your answer, in this form:
# c5_crossover_4096 = ...  # a number, within 1%
### BEGIN SOLUTION
c5_crossover_4096 = crossover_length(4096)
### END SOLUTION

# %% checks C5
