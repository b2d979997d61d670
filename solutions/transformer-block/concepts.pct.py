# %% [markdown]
# # The transformer block: concepts
#
# Before you build a block in `build.ipynb`, this notebook goes through the ideas it rests on:
# why attention needs position vectors, the residual path, where the parameters sit, what
# normalization does, how encoder and decoder blocks differ, and where the norm goes. The lesson
# notes, `notes/transformer-block.md` (figures in `figures/`), sit next to this notebook.
#
# **How this notebook works**
#
# - Run the setup cell first, then work from top to bottom.
# - Write your answers only in the cells marked by a **TODO** box. Keep every given name exactly as
#   it is: the grader looks your answers up by name.
# - After each TODO cell come its check cells. Run them. A *visible* check runs right away and prints
#   what it checked when it passes; a *hidden* check shows one line saying what it will check, and
#   it runs only when your notebook is graded (on inputs you do not see).
# - Do not edit, move or delete the check cells.
# - Free-text answers are short strings such as `"batch norm"`. Capital letters, hyphens,
#   punctuation and articles do not matter, common spellings and the 2017 paper's own labels are
#   accepted, and so is a short sentence or a reason after your answer. Give **one** option only:
#   an answer that also names a wrong option (`"A or B"`) earns nothing. An answer the grader
#   cannot place is not marked wrong: a TA reads it.
# - C8 is a short written answer, read and graded by a TA.
#
# 30 points are graded automatically (C1 to C7) and 4 by hand (C8).

# %%
import math

import torch

from student_side import check, ready

# %% [markdown]
# ## C1 · Word order and position vectors (8 points)
#
# Self-attention from the last lesson maps the rows of $X \in \mathbb{R}^{T \times d}$ (one row per
# token) to
#
# $$\mathrm{Attn}(X) = \mathrm{softmax}\!\left(\frac{(XW_Q)(XW_K)^\top}{\sqrt{d_k}}\right) XW_V .$$
#
# No term in this formula knows the *index* of a row. If you reorder the rows with a permutation
# matrix $P$, the same scores are computed, only in reordered rows and columns, and so
#
# $$\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X).$$
#
# A map with this property is **permutation-equivariant**: shuffle the tokens going in and the
# outputs come back shuffled the same way, and otherwise unchanged. Each token therefore gets the
# same output vector wherever it stands. Two sentences that use the same words in a different order
# give the same set of vectors, just listed differently, and what the word order meant (who did what
# to whom) is lost. A row-wise MLP, which applies one function to every row separately, is
# equivariant too. A causal mask is not, since what row $t$ may see depends on $t$, but the
# mask alone does not give each token a clean record of where it stands.
#
# The usual fix is to add a position vector to every token embedding before the first block:
# row $t$ becomes $x_t + p_t$. Now two tokens that trade places also trade *different*
# position vectors, so the inputs are no longer just a reordering of each other. The 2017 transformer
# used a fixed table of sines and cosines. For position $p = 0, \dots, n-1$ and pair index
# $i = 0, \dots, d/2 - 1$:
#
# $$\mathrm{PE}[p, 2i] = \sin(p\,\omega_i), \qquad \mathrm{PE}[p, 2i+1] = \cos(p\,\omega_i),
# \qquad \omega_i = \frac{1}{10000^{2i/d}} .$$
#
# Each pair of columns shares one frequency, and the frequencies fall geometrically from $1$
# towards $1/10000$. The first columns change quickly as $p$ grows and the last ones slowly, a bit
# like the hands of a clock. Since columns come in sin/cos pairs, $d$ must be even. Other models
# learn the table (GPT-2), or rotate queries and keys by position inside attention (RoPE, in
# most recent LLMs). We do not cover those here.

# %% [markdown]
# > **TODO (C1, 8 points, about 15 lines).** In the cell below, write:
# >
# > 1. `permutes_with_input(f, X, perm, atol=1e-5)`. `X` has shape `(T, d)` with tokens along dim 0,
# >    and `perm` is a `LongTensor` that reorders `0, ..., T-1`. Return a Python `bool` that is True
# >    exactly when `f(X[perm])` and `f(X)[perm]` agree elementwise within `atol`, with no relative
# >    tolerance (`torch.allclose(a, b, rtol=0, atol=atol)` does this). About 3 lines.
# > 2. `sinusoidal_positions(n, d)`: the float32 table $\mathrm{PE}$ of shape `(n, d)` above. Raise a
# >    `ValueError` when `d` is odd. Hint: build the angles $p\,\omega_i$ as an `(n, d/2)` outer
# >    product, then fill the even columns (`0::2`) with sines and the odd ones (`1::2`) with
# >    cosines. Working in float64 and casting at the end keeps large positions accurate. About 8 lines.
# > 3. `q1_sentences`: two short sentences made of the same three words, *dog*, *bites* and
# >    *man*, that report different events yet become indistinguishable to attention without
# >    positions, as a list of two strings.
# >
# > **Checked:** the values of `sinusoidal_positions(4, 8)` (visible); other sizes and the
# > `ValueError` for an odd `d` (hidden); `permutes_with_input` on plain self-attention, attention
# > on `X + positions`, causal attention and a row-wise MLP, all with random weights, and on a
# > function that only moves rows around (hidden); your two sentences (hidden).

# %% role="solution" grade_id="C1_code"
def permutes_with_input(f, X, perm, atol=1e-5):
    """True iff f(X[perm]) equals f(X)[perm] within atol. X: (T, d), perm: (T,) indices."""
    ### BEGIN SOLUTION
    permuted_then_f = f(X[perm])                                   # (T, d_out)
    f_then_permuted = f(X)[perm]                                   # (T, d_out)
    if permuted_then_f.shape != f_then_permuted.shape:
        return False
    return bool(torch.allclose(permuted_then_f, f_then_permuted, rtol=0.0, atol=atol))
    ### END SOLUTION


def sinusoidal_positions(n, d):
    """PE of shape (n, d): PE[p, 2i] = sin(p * w_i), PE[p, 2i+1] = cos(p * w_i), w_i = 10000^(-2i/d)."""
    ### BEGIN SOLUTION
    if d % 2 != 0:
        raise ValueError(f"d must be even (sin/cos come in pairs), got d={d}")
    p = torch.arange(n, dtype=torch.float64)                       # (n,)
    w = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = torch.outer(p, w)                                     # (n, d/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)         # (n, d/2, 2): sin, cos side by side
    return pe.reshape(n, d).float()                                # (n, d)
    ### END SOLUTION


# Your answer, in this form:
# q1_sentences = ["...", "..."]  # two sentences
### BEGIN SOLUTION
q1_sentences = ["dog bites man", "man bites dog"]
### END SOLUTION

# %% role="check" grade_id="C1_positions_example"
# C1_positions_example · 2 points · sinusoidal_positions(4, 8) has shape (4, 8) and matches published values of rows 0, 1 and 3
check('C1_positions_example')

# %% role="check" grade_id="C1_sentences"
# C1_sentences · 2 points · hidden, runs when your notebook is graded: q1_sentences holds the two sentences that lose their difference
ready('q1_sentences')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C1_sentences')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_positions_random"
# C1_positions_random · 1 point · hidden, runs when your notebook is graded: sinusoidal_positions matches the formula for other lengths and widths, as a float32 table
ready('sinusoidal_positions')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C1_positions_random')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_odd_width"
# C1_odd_width · 1 point · hidden, runs when your notebook is graded: sinusoidal_positions raises ValueError for an odd width
ready('sinusoidal_positions')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C1_odd_width')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_permutes"
# C1_permutes · 1 point · hidden, runs when your notebook is graded: permutes_with_input gives the right answer for attention with and without positions or a causal mask, for a row-wise MLP, and for a function that only reorders rows
ready('permutes_with_input')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C1_permutes')
### END HIDDEN TESTS

# %% role="check" grade_id="C1_permutes_atol"
# C1_permutes_atol · 1 point · hidden, runs when your notebook is graded: permutes_with_input compares within the atol it is given and no relative tolerance, on functions that are order-blind up to a small error
ready('permutes_with_input')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C1_permutes_atol')
### END HIDDEN TESTS

# %% [markdown]
# Before running the next cell, predict which of the four functions permute with their input.
# The cell runs your `permutes_with_input` on them, with weights of its own.

# %% grader="skip"
torch.manual_seed(0)
T, d = 5, 8
X = torch.randn(T, d)                                              # (T, d)
perm = torch.tensor([2, 0, 4, 1, 3])
Wq, Wk, Wv, W1, W2 = (torch.randn(d, d) / math.sqrt(d) for _ in range(5))


def one_head(H, causal=False):
    scores = (H @ Wq) @ (H @ Wk).T / math.sqrt(d)                  # (T, T)
    if causal:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return scores.softmax(dim=-1) @ (H @ Wv)                       # (T, d)


try:
    examples = {
        "self-attention": lambda H: one_head(H),
        "self-attention on H + positions": lambda H: one_head(H + sinusoidal_positions(T, d)),
        "causal self-attention": lambda H: one_head(H, causal=True),
        "row-wise MLP relu(H W1) W2": lambda H: torch.relu(H @ W1) @ W2,
    }
    for name, f in examples.items():
        print(f"{name:34s} permutes with its input: {permutes_with_input(f, X, perm)}")
except NotImplementedError:
    print("Write permutes_with_input and sinusoidal_positions in the C1 cell first, then run this cell again.")

# %% [markdown]
# ## C2 · The residual path (2 points)
#
# No sublayer of a transformer replaces its input. Each one adds its output to it:
#
# $$x \leftarrow x + F(x).$$
#
# If $F$ outputs almost nothing (a head that attends to nothing useful, or a freshly initialized
# layer), the vector passes through unchanged. The backward pass gets the same benefit: the
# Jacobian of $x + F(x)$ is $I + \partial F / \partial x$, so part of the gradient always flows
# through the identity, however many layers lie below. (You will compute this Jacobian in B9.)
#
# You have seen this idea before, in a recurrent network. Its memory is carried from one time step
# to the next by a gated, elementwise **addition**, instead of passing through a matrix and a
# squashing function at every step. That additive path let it learn dependencies over long
# sequences, where a plain RNN's gradient faded away.

# %% [markdown]
# > **TODO (C2, 2 points, 1 line).** Set `q2_residual_cousin` to the name of that recurrent
# > architecture, as a short string (the usual abbreviation is fine). Name one architecture only.
# >
# > **Checked (hidden):** that your string names it.

# %% role="solution" grade_id="C2_code"
# Your answer, in this form:
# q2_residual_cousin = "..."  # one short name
### BEGIN SOLUTION
q2_residual_cousin = "LSTM"
### END SOLUTION

# %% role="check" grade_id="C2_answer"
# C2_answer · 2 points · hidden, runs when your notebook is graded: q2_residual_cousin names the earlier architecture with a gradient highway
ready('q2_residual_cousin')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C2_answer')
### END HIDDEN TESTS

# %% [markdown]
# ## C3 · Where the weights are (2 points)
#
# A block has two sublayers with weights. **Attention** has four projections, $W_Q, W_K, W_V$ and
# the output projection $W_O$. The **MLP** has two matrices: $W_1$ maps a token from width $d$ up to
# a hidden width $d_{ff}$ (usually $4d$), and $W_2$ maps it back down. Norms and biases are tiny
# next to these.

# %% [markdown]
# > **TODO (C3, 2 points, 1 line).** Which of the two holds most of a block's weights? Set
# > `q3_most_weights` to `"attention"` or `"MLP"` (just one). C4 lets you check your answer by
# > counting.
# >
# > **Checked (hidden):** your answer.

# %% role="solution" grade_id="C3_code"
# Your answer, in this form:
# q3_most_weights = "..."  # "attention" or "MLP"
### BEGIN SOLUTION
q3_most_weights = "MLP"
### END SOLUTION

# %% role="check" grade_id="C3_answer"
# C3_answer · 2 points · hidden, runs when your notebook is graded: q3_most_weights names the sublayer that holds most of a block's weights
ready('q3_most_weights')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C3_answer')
### END HIDDEN TESTS

# %% [markdown]
# ## C4 · Counting attention and MLP weights (6 points)
#
# Ignore the biases (they add only a multiple of $d$). Then:
#
# - **Attention** has four $d \times d$ matrices, so $4d^2$ weights. With $h$ heads, each head uses a
#   $d \times d/h$ slice of $W_Q$, $W_K$ and $W_V$. The slices together still fill $d \times d$, so
#   the count does not depend on $h$.
# - **MLP** has $W_1 \in \mathbb{R}^{d_{ff} \times d}$ and $W_2 \in \mathbb{R}^{d \times d_{ff}}$,
#   so $2\,d\,d_{ff}$ weights.
#
# At the usual $d_{ff} = 4d$ both counts are a whole number times $d^2$. Find the two numbers and
# you know the ratio for every width (and the answer to C3). The notes count a block with a
# narrower MLP as a worked example (section `params`).

# %% [markdown]
# > **TODO (C4, 6 points, about 5 lines).** Write
# >
# > - `attention_weights(d)`, which returns the number of attention weights as an `int`;
# > - `mlp_weights(d, d_ff=None)`, which returns the number of MLP weights as an `int`, with
# >   `d_ff = 4 * d` when it is `None`;
# > - `q4_ratio`: MLP weights divided by attention weights for $d = 8$, as a number (you may compute
# >   it with your two functions).
# >
# > No biases in either count. Try your functions on the notes' worked example first:
# > `attention_weights(16)` is 1024, `mlp_weights(16, d_ff=48)` is 1536 and `mlp_weights(16, d_ff=16)`
# > is 512. **Checked:** both counts at two small widths (visible); other widths, with and without
# > `d_ff` (hidden); `q4_ratio` (hidden).

# %% role="solution" grade_id="C4_code"
def attention_weights(d):
    """W_Q, W_K, W_V, W_O: four d x d matrices, no biases."""
    ### BEGIN SOLUTION
    return 4 * d * d
    ### END SOLUTION


def mlp_weights(d, d_ff=None):
    """W_1 (d_ff x d) and W_2 (d x d_ff), no biases; d_ff = 4d when None."""
    ### BEGIN SOLUTION
    if d_ff is None:
        d_ff = 4 * d
    return 2 * d * d_ff
    ### END SOLUTION


# MLP weights / attention weights for d = 8. Your answer, in this form:
# q4_ratio = ...  # a number
### BEGIN SOLUTION
q4_ratio = mlp_weights(8) / attention_weights(8)
### END SOLUTION

# %% role="check" grade_id="C4_worked_example"
# C4_worked_example · 2 points · attention_weights gives 144 for d=6 and 64 for d=4; mlp_weights(6, 10) is 120, mlp_weights(4, 10) 80
check('C4_worked_example')

# %% role="check" grade_id="C4_counts"
# C4_counts · 2 points · hidden, runs when your notebook is graded: attention_weights and mlp_weights for other widths, with and without d_ff, as ints
ready('attention_weights', 'mlp_weights')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C4_counts')
### END HIDDEN TESTS

# %% role="check" grade_id="C4_ratio"
# C4_ratio · 2 points · hidden, runs when your notebook is graded: q4_ratio is the ratio of MLP to attention weights
ready('q4_ratio')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C4_ratio')
### END HIDDEN TESTS

# %% [markdown]
# ## C5 · Layer norm by hand (3 points)
#
# Layer norm treats each token vector $u \in \mathbb{R}^d$ on its own. It subtracts the mean of the
# vector's $d$ entries and divides by their standard deviation:
#
# $$\mu = \frac{1}{d}\sum_k u_k, \qquad \sigma = \sqrt{\frac{1}{d}\sum_k (u_k - \mu)^2}, \qquad
# \hat u = \frac{u - \mu}{\sigma}.$$
#
# This is the *population* standard deviation: divide by $d$, not $d - 1$. The statistics come
# from the features of one token, never from other tokens or from the batch. The full layer also
# adds a small $\epsilon$ under the square root and applies a learned gain $\gamma$ and shift $\beta$.
# You will build that in `build.ipynb` (B1). Here, leave them out.

# %% [markdown]
# > **TODO (C5, 3 points, 1 line).** Set `q5_layer_norm_u` to the normalized $u = [3, 1]$ (population
# > standard deviation, no $\epsilon$, no $\gamma$ or $\beta$), as a list of two numbers `[a, b]`.
# > Work it out by hand. If you compute it with torch instead, `.tolist()` turns a tensor into a list.
# >
# > **Checked (hidden):** the two numbers, to within $10^{-4}$.

# %% role="solution" grade_id="C5_code"
# Your answer, in this form:
# q5_layer_norm_u = [..., ...]  # two numbers
### BEGIN SOLUTION
q5_layer_norm_u = [1.0, -1.0]
### END SOLUTION

# %% role="check" grade_id="C5_answer"
# C5_answer · 3 points · hidden, runs when your notebook is graded: q5_layer_norm_u holds the two numbers of the normalized u
ready('q5_layer_norm_u')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C5_answer')
### END HIDDEN TESTS

# %% [markdown]
# ## C6 · Encoder, decoder, decoder-only (5 points)
#
# The 2017 transformer was built for translation. An **encoder** reads the whole source sentence,
# and every source token attends to every other one. A **decoder** writes the translation one
# token at a time. Each decoder block has three sublayers, each with its own residual and norm:
#
# 1. attention among the target tokens written so far, masked so that no token sees a later one;
# 2. attention from the target into the source: queries come from the decoder, keys and values
#    from the encoder's output;
# 3. the per-token MLP.
#
# Later models kept only one half. BERT is encoder-only. GPT is decoder-only: it has no source
# sentence and no encoder. T5 and BART keep both halves, which is worth it only when the task maps
# one sequence to another. How attention sublayers are named, after where their queries, keys and
# values come from, is in the notes (section `blocks`).

# %% [markdown]
# > **TODO (C6, 5 points, 2 lines).**
# >
# > - `q6_decoder_sublayers`: a list of three strings, the usual name of each sublayer above,
# >   one per string, in any order.
# > - `q6_gpt_drops`: the name of the sublayer a GPT block leaves out.
# >
# > **Checked (hidden):** each string names exactly one distinct sublayer (3 points), and the
# > sublayer GPT drops (2 points).

# %% role="solution" grade_id="C6_code"
# Your answers, in this form:
# q6_decoder_sublayers = ["...", "...", "..."]  # three short names
# q6_gpt_drops = "..."  # one short name
### BEGIN SOLUTION
q6_decoder_sublayers = ["masked self-attention", "cross-attention", "feed-forward network"]
q6_gpt_drops = "cross-attention"
### END SOLUTION

# %% role="check" grade_id="C6_sublayers"
# C6_sublayers · 3 points · hidden, runs when your notebook is graded: q6_decoder_sublayers names the three sublayers of the 2017 decoder block
ready('q6_decoder_sublayers')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C6_sublayers')
### END HIDDEN TESTS

# %% role="check" grade_id="C6_gpt_drops"
# C6_gpt_drops · 2 points · hidden, runs when your notebook is graded: q6_gpt_drops names the sublayer a GPT block leaves out
ready('q6_gpt_drops')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C6_gpt_drops')
### END HIDDEN TESTS

# %% [markdown]
# ## C7 · Where the norm goes (4 points)
#
# There are two places to put the norm around a sublayer $F$:
#
# $$\text{post-norm:}\quad x \leftarrow \mathrm{Norm}\big(x + F(x)\big) \qquad\qquad
# \text{pre-norm:}\quad x \leftarrow x + F\big(\mathrm{Norm}(x)\big)$$
#
# With post-norm, the residual stream goes through a norm after every sublayer, so there is no clean
# identity path from the bottom of the network to the top. Deep post-norm stacks need a careful
# learning-rate warm-up to avoid diverging. Pre-norm normalizes only the copy that the sublayer
# reads, so the stream itself is never rescaled. It trains stably at depth, and one final norm
# after the last block takes care of the output scale. Both use the same parts: the placement is a
# stability setting, not a different kind of model. You will build both in B6 and B7. Which models
# used which placement is in the notes (section `blocks`).

# %% [markdown]
# > **TODO (C7, 4 points, 2 lines).** Set `q7_2017_paper` to the placement of the original 2017
# > transformer, and `q7_modern_default` to the one most current LLMs ship. Each is `"pre-norm"`
# > or `"post-norm"`.
# >
# > **Checked (hidden):** both answers, 2 points each.

# %% role="solution" grade_id="C7_code"
# Your answers, in this form:
# q7_2017_paper = "..."  # "pre-norm" or "post-norm"
# q7_modern_default = "..."  # "pre-norm" or "post-norm"
### BEGIN SOLUTION
q7_2017_paper = "post-norm"
q7_modern_default = "pre-norm"
### END SOLUTION

# %% role="check" grade_id="C7_2017_paper"
# C7_2017_paper · 2 points · hidden, runs when your notebook is graded: q7_2017_paper names the norm placement of the 2017 paper (by name, label or formula)
ready('q7_2017_paper')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C7_2017_paper')
### END HIDDEN TESTS

# %% role="check" grade_id="C7_modern_default"
# C7_modern_default · 2 points · hidden, runs when your notebook is graded: q7_modern_default names the placement most current LLMs ship
ready('q7_modern_default')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'C7_modern_default')
### END HIDDEN TESTS

# %% [markdown]
# ## C8 · Why the MLP needs its nonlinearity (4 points, graded by hand)
#
# The MLP of a block computes
#
# $$\mathrm{MLP}(x) = W_2\,\phi(W_1 x + b_1) + b_2,$$
#
# with an elementwise nonlinearity $\phi$ such as GELU or ReLU.

# %% [markdown]
# > **TODO (C8, 4 points, 3 to 6 sentences).** In the cell below, explain what the MLP computes
# > when $\phi$ is removed (the identity), and what that means for a network that stacks many such
# > layers. Include one line of algebra. A TA grades this answer. Double-click the cell to edit it.

# %% [markdown] role="answer" grade_id="C8_answer" points=4
# ### BEGIN SOLUTION
# Without $\phi$ the MLP is $W_2(W_1 x + b_1) + b_2 = (W_2 W_1)\,x + (W_2 b_1 + b_2)$, a single
# affine map $x \mapsto Wx + b$ with $W = W_2 W_1$ and $b = W_2 b_1 + b_2$. The wide hidden layer
# adds nothing, since $W_2 W_1$ is just one $d \times d$ matrix.
# Composing affine maps gives another affine map, so stacking such MLPs, with residual additions in
# between or not, still gives one affine map of the input: depth buys nothing. An affine map cannot
# represent the nonlinear functions a language model needs (thresholds, "this and that"
# conditions, a next-token distribution that depends on the context in complicated ways). The
# elementwise $\phi$ between $W_1$ and $W_2$ is what prevents this collapse and makes depth useful.
# ### END SOLUTION

# %% [markdown] grade_id="C8_rubric"
# *C8 is graded by hand, out of 4 points, by a TA who reads your explanation and your line of
# algebra.*
#
# <!-- BEGIN MARK SCHEME -->
# **C8 rubric (for TAs: formgrader shows it, the students' notebooks do not have it).** Four
# elements, one idea each, worth 1 point each. An element earns its point or nothing: there are no
# half points. Score each element on its own, wherever in the answer it appears and in whatever
# words; a mistake that belongs to one element costs that element only.
#
# | element | points | earns it | does not earn it |
# |---|---|---|---|
# | **Algebra.** The line of algebra for one MLP without $\phi$. | 1 | A correct expansion in which the product $W_2 W_1$ acts on $x$ and the rest is a constant: $W_2(W_1 x + b_1) + b_2 = (W_2 W_1)\,x + (W_2 b_1 + b_2)$. Leaving the biases out, or writing the constant as $c$, is fine. | Words only ("it becomes linear"); the matrices in the wrong order ($W_1 W_2$); a sign or a term lost that changes the result. |
# | **One affine map.** What the algebra means for one MLP. | 1 | Says the MLP is then a single affine (or "linear plus a constant") map $x \mapsto Wx + b$, the same as one layer: the wide hidden layer adds nothing, since $W_2 W_1$ is just one $d \times d$ matrix. | Calling the whole network "linear" without saying that one MLP reduces to one map; the algebra alone, with no statement of what it shows. |
# | **Stacking.** What it means for many layers. | 1 | Says a composition of affine maps is affine, so any number of such layers (with the residual additions between them or without) is no more expressive than one: depth buys nothing. | "More layers do not help" with no reason; a statement about one MLP only. |
# | **Why it matters.** What an affine map cannot do. | 1 | Names a concrete thing an affine map cannot do that a model needs: a threshold or switch (a unit on for some inputs, off for others), an interaction such as "this and that" (AND, XOR), an output that is not proportional to changes of the input. That $\phi$ between $W_1$ and $W_2$ is what prevents the collapse may be said or left implicit. | "A nonlinearity makes the network more powerful" or "linear models are too simple", with no concrete limit. |
#
# Not scored either way: an answer may add that softmax and the norms are nonlinear too, and that
# they only decide how much of each token to mix in or rescale whole vectors; that is right and
# loses nothing, and leaving it out loses nothing either.
#
# **Anchor answers.** Three answers scored with the elements above, to calibrate on before grading.
#
# *Anchor full, 4 of 4.*
# > Without $\phi$, $\mathrm{MLP}(x) = W_2(W_1 x + b_1) + b_2 = W_2 W_1 x + (W_2 b_1 + b_2)$. That is
# > one affine map $Wx + b$ with $W = W_2 W_1$, so the $4d$-wide hidden layer could be replaced by a
# > single $d \times d$ matrix. Stacking such layers gives affine maps of affine maps, which is again
# > affine, so a deep network would be no better than one layer. An affine map cannot compute "fire
# > only when both features are present" (an AND): its output just moves in proportion to its
# > input. $\phi$ is what lets the network do such things.
#
# *Anchor half, 2 of 4.*
# > If you remove $\phi$ the MLP is $W_2 W_1 x + W_2 b_1 + b_2$. So the network becomes linear,
# > and adding more layers does not help, because linear maps of linear maps are linear.
#
# *Anchor little, 1 of 4.*
# > Without the nonlinearity the network would just be linear, and a linear network could not
# > even learn XOR, let alone language.
#
# | anchor | Algebra | One affine map | Stacking | Why it matters | total |
# |---|---|---|---|---|---|
# | full · every element, each in its own sentence | 1 | 1 | 1 | 1 | 4 |
# | half · the line and the composition argument; "the network becomes linear" does not say that one MLP is one map, and nothing says what an affine map cannot do | 1 | 0 | 1 | 0 | 2 |
# | little · a concrete limit (XOR); no algebra, no statement about one MLP, and "linear" for the stack with no reason | 0 | 0 | 0 | 1 | 1 |
# <!-- END MARK SCHEME -->
