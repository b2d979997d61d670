# %% [markdown]
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

# %%
from student_side import check, ready

# %% [markdown]
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

# %% [markdown]
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

# %% role="solution" grade_id="C1_code"
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

# %% role="check" grade_id="C1_n_layers"
# C1_n_layers · 1 point · hidden, runs when your notebook is graded: c1_categories['n_layers']: the number of blocks N
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_n_layers')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_norm_statistics"
# C1_norm_statistics · 1 point · hidden, runs when your notebook is graded: c1_categories['norm_statistics']: the mean and standard deviation a LayerNorm takes of a token
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_norm_statistics')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_mlp_weights"
# C1_mlp_weights · 1 point · hidden, runs when your notebook is graded: c1_categories['mlp_weights']: the MLP's matrices W1 and W2
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_mlp_weights')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_residual_adds"
# C1_residual_adds · 1 point · hidden, runs when your notebook is graded: c1_categories['residual_adds']: the residual connections, each sublayer's output added back to its input
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_residual_adds')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_attention_pattern"
# C1_attention_pattern · 1 point · hidden, runs when your notebook is graded: c1_categories['attention_pattern']: the attention matrix softmax(QK^T / sqrt(d_k) + M)
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_attention_pattern')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_norm_gains"
# C1_norm_gains · 1 point · hidden, runs when your notebook is graded: c1_categories['norm_gains']: a LayerNorm's gain and shift
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_norm_gains')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_d_ff"
# C1_d_ff · 1 point · hidden, runs when your notebook is graded: c1_categories['d_ff']: the MLP's hidden width
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_d_ff')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_mlp_hidden"
# C1_mlp_hidden · 1 point · hidden, runs when your notebook is graded: c1_categories['mlp_hidden']: the MLP's hidden activations
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_mlp_hidden')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_attention_projections"
# C1_attention_projections · 1 point · hidden, runs when your notebook is graded: c1_categories['attention_projections']: W_Q, W_K, W_V and W_O
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_attention_projections')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_norm_eps"
# C1_norm_eps · 1 point · hidden, runs when your notebook is graded: c1_categories['norm_eps']: the epsilon inside a norm's square root
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_norm_eps')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_residual_stream"
# C1_residual_stream · 1 point · hidden, runs when your notebook is graded: c1_categories['residual_stream']: the stream after block 2 for one prompt
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_residual_stream')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_mlp_biases"
# C1_mlp_biases · 1 point · hidden, runs when your notebook is graded: c1_categories['mlp_biases']: the MLP's biases b1 and b2
ready('c1_categories')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C1_mlp_biases')
### END HIDDEN TESTS

# %% [markdown]
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

# %% [markdown]
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

# %% role="solution" grade_id="C2_code"
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

# %% role="check" grade_id="C2_worked_example"
# C2_worked_example · 1 point · attention_scores gives 16 for one sequence, one head, T=4, one block, and 1536 for batch=2, heads=4, T=8, n_layers=3
check('C2_worked_example')

# %% role="check" grade_id="C2_counts"
# C2_counts · 2 points · hidden, runs when your notebook is graded: attention_scores for other batches, head counts, lengths and depths, as ints
ready('attention_scores')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C2_counts')
### END HIDDEN TESTS

# %% role="check" grade_id="C2_double_T"
# C2_double_T · 1 point · hidden, runs when your notebook is graded: c2_double_T: how many times the scores grow when T doubles
ready('c2_double_T')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C2_double_T')
### END HIDDEN TESTS

# %% role="check" grade_id="C2_double_N"
# C2_double_N · 1 point · hidden, runs when your notebook is graded: c2_double_N: how many times the scores grow when the depth doubles
ready('c2_double_N')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C2_double_N')
### END HIDDEN TESTS

# %% [markdown]
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

# %% [markdown]
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

# %% role="solution" grade_id="C3_code"
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

# %% role="check" grade_id="C3_worked_example"
# C3_worked_example · 2 points · layer_weights gives 192 for d=4 and 768 for d=8; model_weights(8, 2, 10) is 1696
check('C3_worked_example')

# %% role="check" grade_id="C3_counts"
# C3_counts · 2 points · hidden, runs when your notebook is graded: layer_weights and model_weights for other widths, depths and vocabularies
ready('layer_weights', 'model_weights')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C3_counts')
### END HIDDEN TESTS

# %% role="check" grade_id="C3_double_d"
# C3_double_d · 1 point · hidden, runs when your notebook is graded: c3_double_d: how many times a layer's weights grow when d doubles
ready('c3_double_d')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C3_double_d')
### END HIDDEN TESTS

# %% role="check" grade_id="C3_layer_4096"
# C3_layer_4096 · 1 point · hidden, runs when your notebook is graded: c3_layer_4096: about how many weights one layer of width 4096 holds
ready('c3_layer_4096')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C3_layer_4096')
### END HIDDEN TESTS

# %% role="check" grade_id="C3_estimate_7b"
# C3_estimate_7b · 1 point · hidden, runs when your notebook is graded: c3_estimate_7b: the rule's estimate for d=4096, 32 layers and 32,000 tokens, tables included
ready('c3_estimate_7b')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C3_estimate_7b')
### END HIDDEN TESTS

# %% [markdown]
# ## C4 · Memory for the weights (4 points)
#
# To run a model, its weights must first sit in memory. How much memory depends on how many bits
# each weight is stored in: 32 for a plain `float32`, 16 for `float16` or `bfloat16` (the usual
# choice for serving a model), and 8 or even 4 when the weights are quantized. Eight bits make a
# byte. Here a GB is $10^9$ bytes (the GiB of $2^{30}$ bytes is about 7% larger).
#
# That is only the entry fee. The forward pass also needs room for its state (activations,
# attention matrices), on top of the weights.

# %% [markdown]
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

# %% role="solution" grade_id="C4_code"
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

# %% role="check" grade_id="C4_worked_example"
# C4_worked_example · 1 point · weights_memory_gb(1e9) is 2.0 GB at the default 16 bits, and 4.0 GB with bits=32
check('C4_worked_example')

# %% role="check" grade_id="C4_memory"
# C4_memory · 1 point · hidden, runs when your notebook is graded: weights_memory_gb for other sizes and for 32, 8 and 4 bits per weight
ready('weights_memory_gb')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C4_memory')
### END HIDDEN TESTS

# %% role="check" grade_id="C4_7b"
# C4_7b · 1 point · hidden, runs when your notebook is graded: c4_7b_gb: the gigabytes 7 billion weights take at 16 bits
ready('c4_7b_gb')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C4_7b')
### END HIDDEN TESTS

# %% role="check" grade_id="C4_70b_4bit"
# C4_70b_4bit · 1 point · hidden, runs when your notebook is graded: c4_70b_4bit_gb: the gigabytes 70 billion weights take at 4 bits
ready('c4_70b_4bit_gb')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C4_70b_4bit')
### END HIDDEN TESTS

# %% [markdown]
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

# %% [markdown]
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

# %% role="solution" grade_id="C5_code"
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

# %% role="check" grade_id="C5_worked_example"
# C5_worked_example · 1 point · attention_work gives 12 for T=3, d=2 and 40 for T=5, d=4; crossover_length(3) is the first T at which your attention_work reaches your layer_weights(3)
check('C5_worked_example')

# %% role="check" grade_id="C5_work"
# C5_work · 1 point · hidden, runs when your notebook is graded: attention_work for other lengths and widths, as ints
ready('attention_work')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C5_work')
### END HIDDEN TESTS

# %% role="check" grade_id="C5_crossover"
# C5_crossover · 1 point · hidden, runs when your notebook is graded: crossover_length for other widths: the first T at which your attention_work reaches your layer_weights
ready('crossover_length', 'attention_work')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C5_crossover')
### END HIDDEN TESTS

# %% role="check" grade_id="C5_crossover_4096"
# C5_crossover_4096 · 1 point · hidden, runs when your notebook is graded: c5_crossover_4096: the length at which attention's work reaches the weights'
ready('c5_crossover_4096')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'C5_crossover_4096')
### END HIDDEN TESTS
