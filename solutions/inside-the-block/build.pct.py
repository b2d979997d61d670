# %% [markdown]
# # Inside the block: build it
#
# In this notebook you open up a small transformer while it runs. You read its prediction after
# every block with the logit lens, build an MLP that works as a lookup table of (key, value)
# pairs, and squeeze five features into two numbers to see when they get in each other's way.
#
# **How this notebook works**
#
# - Run the setup cell and the model cell first, then work from top to bottom.
# - Write code only inside the cells marked by a **TODO** box, where `raise NotImplementedError`
#   stands. Keep every given name, signature and argument default as it is.
# - Each TODO cell is followed by its check cells; run them. A *visible* check runs at once and
#   prints what it checked when it passes. A *hidden* check prints one line saying what it will
#   check and runs only when your notebook is graded, on models, sizes and seeds you never see.
#   Test your code on more than the visible examples.
# - Leave the check cells where they are, unedited, and do not change the model cell: the grader
#   loads its own weights into the model as it is written there.
# - Tensors must have exactly the shape asked for, and match within `atol=1e-5, rtol=1e-4`
#   (`atol=1e-4, rtol=1e-4` for the logits of B1).
# - B6 is a short written answer, read and graded by a TA.
#
# 68 points are graded automatically (B1 to B5 and B7) and 4 by hand (B6). The lesson notes,
# `notes/inside-the-block.md` (figures in `figures/`), sit next to this notebook.

# %%
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from student_side import check, ready

_ = torch.manual_seed(0)
torch.set_num_threads(1)   # tensors this small run faster on one thread, and far faster on a busy machine

# %% [markdown]
# ## The model
#
# The cell below defines `TinyLM`, a decoder-only transformer small enough to read in full. It
# works on one sequence at a time: `tokens` is a 1-D `LongTensor` of $T$ token ids
# ($T \le$ `max_len`), and a model called on them, `untrained_model(tokens)` for instance, returns
# logits of shape `(T, vocab_size)`, one row per position, each predicting the token that comes next.
#
# - `embed(tokens)` turns each token id into its row of `tok_emb` and adds the row of `pos_emb` for
#   its position: the residual stream $h$, of shape `(T, d_model)`, enters the first block.
# - Each `TinyBlock` is a pre-norm block like the one you wrote in week 4 (B6), with causal
#   attention, two heads and a GELU MLP of width $4d$. It maps the stream `(T, d)` to `(T, d)`.
# - After the last block come the final norm `norm_f` and the unembedding `unembed`, a bias-free
#   map from $d$ to one logit per vocabulary entry.
#
# The cell builds `untrained_model`, the default `TinyLM` with its initial weights, drawn from a
# fixed seed so everyone starts from the same ones. It has learned nothing: its predictions, and
# what the logit lens reads from it, are noise. A trained copy comes after B2.

# %%
class TinyBlock(nn.Module):
    """Pre-norm block on one sequence h of shape (T, d): causal multi-head attention, then a GELU MLP."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)     # W_Q, W_K, W_V side by side
        self.proj = nn.Linear(d_model, d_model, bias=False)        # W_O
        self.norm2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)                 # W_1, b_1
        self.fc2 = nn.Linear(4 * d_model, d_model)                 # W_2, b_2

    def attention(self, h):                                        # h: (T, d)
        T, d = h.shape
        d_head = d // self.n_heads
        q, k, v = self.qkv(h).view(T, 3, self.n_heads, d_head).permute(1, 2, 0, 3)   # each (heads, T, d_head)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)       # (heads, T, T)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.proj((weights @ v).transpose(0, 1).reshape(T, d))   # (T, d)

    def forward(self, h):                                          # h: (T, d)
        h = h + self.attention(self.norm1(h))
        return h + self.fc2(F.gelu(self.fc1(self.norm2(h))))


class TinyLM(nn.Module):
    """Token and position tables, n_layers pre-norm blocks, a final LayerNorm, a bias-free unembedding."""

    def __init__(self, vocab_size=16, d_model=16, n_layers=4, n_heads=2, max_len=16):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(TinyBlock(d_model, n_heads) for _ in range(n_layers))
        self.norm_f = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)

    def embed(self, tokens):                                       # tokens: (T,) int64
        return self.tok_emb(tokens) + self.pos_emb(torch.arange(len(tokens)))   # (T, d)

    def forward(self, tokens):                                     # tokens: (T,) int64
        h = self.embed(tokens)
        for block in self.blocks:
            h = block(h)
        return self.unembed(self.norm_f(h))                        # (T, vocab_size)


torch.manual_seed(5)                                               # the same default model for everyone
untrained_model = TinyLM()                                         # random initial weights: it has learned nothing
print(f"TinyLM: {len(untrained_model.blocks)} blocks, "
      f"{sum(p.numel() for p in untrained_model.parameters()):,} parameters (untrained)")

# %% [markdown]
# ## B1 · The logit lens (14 points)
#
# No block ever replaces the residual stream: each one adds its two updates to it, and the
# stream keeps the width $d$ from the first block to the last. So the stream after block 2 is a
# vector of the same kind as the stream after the last block, and nothing stops you from handing
# it to the output head early. That is the **logit lens**: for each block $\ell = 1, \dots, N$,
# take the stream $h^{(\ell)}$ right after block $\ell$, at the last position $T$ (the one that
# predicts the next token), and compute
#
# $$\text{lens}_\ell = \texttt{unembed}\big(\texttt{norm\_f}(h^{(\ell)}_T)\big) \in \mathbb{R}^{V}.$$
#
# Apply the head as it is, final norm included: the unembedding was trained on vectors that come
# out of `norm_f`, and the raw stream's scale drifts as the blocks add to it. The row for the
# last block is exactly what the model itself outputs at that position. Reading the rows from
# top to bottom shows how the prediction takes shape through the stack.

# %% [markdown]
# > **TODO (B1, 14 points, about 6 lines).** Write `LensLM.forward(tokens)`. `LensLM` is `TinyLM`
# > with the same `__init__` and weights; only its `forward` differs: it returns the logit lens
# > at the last position, a tensor of shape `(n_layers, vocab_size)` whose row $\ell - 1$ is
# > $\text{lens}_\ell$. Use `self.embed`, `self.blocks`, `self.norm_f` and `self.unembed`, and
# > keep the stream as the blocks leave it (the norm is applied to a copy for reading only).
# >
# > **Checked:** on the default-sized model, one row of 16 logits per block, the last equal to
# > `TinyLM`'s own output at the last position; and on a model whose blocks add nothing, every
# > row equal to `unembed(norm_f(.))` of the last token's embedding (visible); three random
# > models, a deeper and wider model with another vocabulary, a single block, and prompts of one
# > token and of `max_len` tokens, against a reference (hidden).

# %% role="solution" grade_id="B1_code"
class LensLM(TinyLM):
    """TinyLM whose forward returns what the logit lens reads after each block, at the last position."""

    def forward(self, tokens):                                     # tokens: (T,) int64
        ### BEGIN SOLUTION
        h = self.embed(tokens)                                     # (T, d)
        rows = []
        for block in self.blocks:
            h = block(h)                                           # the stream after this block
            rows.append(self.unembed(self.norm_f(h[-1])))          # (vocab_size,)
        return torch.stack(rows)                                   # (n_layers, vocab_size)
        ### END SOLUTION

# %% role="check" grade_id="B1_last_row"
# B1_last_row · 2 points · LensLM on the default-sized model returns one row of 16 logits per block, and its last row is the model's own output at the last position
check('B1_last_row')

# %% role="check" grade_id="B1_quiet_blocks"
# B1_quiet_blocks · 2 points · LensLM on a model whose blocks add nothing: every row is unembed(norm_f(embedding of the last token))
check('B1_quiet_blocks')

# %% role="check" grade_id="B1_random_models"
# B1_random_models · 5 points · hidden, runs when your notebook is graded: LensLM matches the reference lens on three random models of the default size
ready('LensLM')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B1_random_models')
### END HIDDEN TESTS

# %% role="check" grade_id="B1_other_sizes"
# B1_other_sizes · 3 points · hidden, runs when your notebook is graded: LensLM matches the reference on a deeper, wider model with another vocabulary, and on a single block
ready('LensLM')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B1_other_sizes')
### END HIDDEN TESTS

# %% role="check" grade_id="B1_edge_prompts"
# B1_edge_prompts · 2 points · hidden, runs when your notebook is graded: LensLM on a one-token prompt and on a prompt as long as max_len
ready('LensLM')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B1_edge_prompts')
### END HIDDEN TESTS

# %% [markdown]
# ## B2 · Reading the lens (8 points)
#
# A row of the lens is a vector of logits. Three small functions turn the rows into something to
# read: the token each block would guess, the probability each block gives one token of your
# choice (a softmax over the vocabulary, row by row), and the block from which the guess stops
# changing.
#
# Say the guesses after four blocks are `[9, 2, 2, 2]`: from block 2 on, every guess is the final
# one, so the guess settles at block 2. For `[2, 2, 9, 2]` it settles only at block 4, because
# block 3 still disagrees.

# %% [markdown]
# > **TODO (B2, 8 points, about 6 lines).** Write, for `lens_logits` of shape `(n_layers, vocab_size)`
# > such as `LensLM`'s output:
# >
# > - `lens_guesses(lens_logits)`: the guess of each block, the index of its largest logit, as a
# >   list of `n_layers` Python ints;
# > - `token_probability(lens_logits, token)`: the probability each row gives `token`, a tensor of
# >   shape `(n_layers,)`;
# > - `settled_at(guesses)`: for a list of guesses, the first block (counted from 1) from which every
# >   guess equals the last one, as an `int`.
# >
# > **Checked:** a 3 x 4 example and three guess lists (visible); random lens outputs of several
# > sizes and more guess lists (hidden).

# %% role="solution" grade_id="B2_code"
def lens_guesses(lens_logits):
    """The arg max of each row, as a list of ints."""
    ### BEGIN SOLUTION
    return lens_logits.argmax(dim=-1).tolist()
    ### END SOLUTION


def token_probability(lens_logits, token):
    """softmax over the vocabulary of each row, at `token`: shape (n_layers,)."""
    ### BEGIN SOLUTION
    return lens_logits.softmax(dim=-1)[:, token]
    ### END SOLUTION


def settled_at(guesses):
    """The first block (from 1) from which every guess equals the last one."""
    ### BEGIN SOLUTION
    block = len(guesses)
    while block > 1 and guesses[block - 2] == guesses[-1]:
        block -= 1
    return block
    ### END SOLUTION

# %% role="check" grade_id="B2_worked_example"
# B2_worked_example · 2 points · on a 3 x 4 example: lens_guesses gives [1, 0, 2], token_probability matches a row-wise softmax, and settled_at gives 2 for [3, 5, 5, 5], 4 for [7, 7, 2, 7] and 1 for [4]
check('B2_worked_example')

# %% role="check" grade_id="B2_guesses"
# B2_guesses · 2 points · hidden, runs when your notebook is graded: lens_guesses on random lens outputs of several sizes
ready('lens_guesses')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B2_guesses')
### END HIDDEN TESTS

# %% role="check" grade_id="B2_probability"
# B2_probability · 2 points · hidden, runs when your notebook is graded: token_probability on random lens outputs, for several tokens
ready('token_probability')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B2_probability')
### END HIDDEN TESTS

# %% role="check" grade_id="B2_settled"
# B2_settled · 2 points · hidden, runs when your notebook is graded: settled_at on guess lists that settle early, late, never before the end, or at once
ready('settled_at')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B2_settled')
### END HIDDEN TESTS

# %% [markdown]
# A lens on `untrained_model` shows nothing worth reading: its guesses "settle" at block 1 on most
# prompts, only because its random blocks add too little to the stream to change the first guess.
# The next cell loads a `TinyLM` that *was* trained, on a task only attention can solve: at every
# position, predict the **first** token of the sequence. The course trained it once (150 steps of
# Adam on random sequences, with `copy_first.py` next to this notebook) and ships its weights as
# `trained/copy_first.pt`, so loading takes a moment. Set `RETRAIN = True` in that cell to train
# it yourself instead: 2 to 4 CPU-seconds on one thread, up to 15 s of waiting on a busy machine.
#
# The cell after it reads the lens on three prompts with your functions. Before you run it, guess:
# will the first block already know the answer?

# %% grader="skip"
import copy_first   # copy_first.py, next to this notebook: the task, its training and the shipped weights

RETRAIN = False     # True: train here instead of loading: 2 to 4 CPU-seconds (up to 15 s on a busy machine)
if RETRAIN:
    trained, loss = copy_first.trained_model(TinyLM)              # the same training, on one thread
    print(f"trained here, loss after training: {loss:.3f}")
else:
    trained = copy_first.load_trained(TinyLM())                    # torch.load(..., weights_only=True)
    print(f"trained TinyLM loaded from {copy_first.WEIGHTS.parent.name}/{copy_first.WEIGHTS.name}")

# %% grader="skip"
try:
    lens = LensLM()
    lens.load_state_dict(trained.state_dict())
    with torch.no_grad():
        for seed in range(3):
            prompt = torch.randint(16, (7,), generator=torch.Generator().manual_seed(100 + seed))
            rows = lens(prompt)
            guesses = lens_guesses(rows)
            chance = [f"{p:.2f}" for p in token_probability(rows, int(prompt[0])).tolist()]
            print(f"prompt {prompt.tolist()}: guesses per block {guesses}, P(first token) per block {chance}, "
                  f"settled at block {settled_at(guesses)}")
except NotImplementedError:
    print("Write LensLM (B1) and the three functions of B2 first, then run this cell again.")

# %% [markdown]
# ## B3 · The MLP as a key-value memory (12 points)
#
# Leave out $b_2$ and write the MLP as $\mathrm{MLP}(x) = W_2\,\mathrm{relu}(W_1 x + b_1)$ with
# $W_1 \in \mathbb{R}^{n \times d}$ and $W_2 \in \mathbb{R}^{d \times n}$ ($n$ hidden units).
# Look at one hidden unit $i$ at a time:
#
# - its input is $k_i^\top x + b_{1,i}$, where $k_i$ is **row** $i$ of $W_1$. The row is a
#   pattern, a *key*, and the unit measures how well the token matches it;
# - its output $a_i$ multiplies **column** $i$ of $W_2$, so the MLP returns
#   $\sum_i a_i\, (W_2)_{:, i}$. The column is what the unit writes into the stream when it fires,
#   its *value*.
#
# So an MLP can hold a table of pairs. Take $n$ unit-length keys $k_1, \dots, k_n$ that are
# nearly perpendicular, and values $v_1, \dots, v_n$. Put the keys in the rows of $W_1$ and give
# every unit the bias $-\theta$ for a threshold $0 < \theta < 1$: a unit then stays at zero unless
# the input lines up with its key by more than $\theta$. Column $i$ of $W_2$ holds $v_i$, scaled so
# that key $i$, fed in, gives back $v_i$ exactly. Working out that scale is yours: follow key $i$
# through unit $i$ (what is its overlap with itself, and what do the bias and the ReLU leave of it?).
# An input that matches no key well enough writes nothing at all.

# %% [markdown]
# > **TODO (B3, 12 points, about 6 lines, then two numbers).**
# >
# > - `store_pairs(keys, values, threshold=0.5)`: for `keys` of shape `(n, d)` (unit rows) and
# >   `values` of shape `(n, d)`, return the tuple `(W1, b1, W2)` of the memory above: `W1` of shape
# >   `(n, d)` with the keys as rows, `b1` of shape `(n,)` with every entry $-\theta$, and `W2` of shape
# >   `(d, n)` whose column $i$ is value $i$, scaled so that key $i$ recalls value $i$ exactly.
# > - `recall(W1, b1, W2, x)`: $W_2\,\mathrm{relu}(W_1 x + b_1)$ for one input `x` of shape `(d,)`,
# >   or for each row of a batch of shape `(m, d)`.
# > - `b3_share`: with threshold $\theta = 0.4$, a unit input $x$ has overlap $k_i^\top x = 0.85$ with
# >   key $i$ and less than $0.4$ with every other key. How many times $v_i$ does the memory return?
# > - `b3_threshold`: which threshold $\theta$ makes an input with overlap $0.9$ with its key (and
# >   below $\theta$ with the others) recall exactly a third of its value?
# >
# > Give each number as a Python number (a short string such as `"0.5"` is read too), exact to 1%.
# > Work them out on paper first; the cell after the answers lets you test them on your memory.
# >
# > **Checked:** three one-hot keys in $\mathbb{R}^4$ stored at two thresholds, each recalled
# > exactly, and `recall` with given weights (visible); random keys, values and thresholds against a
# > reference, `recall` with random weights, every stored key recalled through your own two
# > functions, inputs that only partly match a key, and the two numbers (hidden).

# %% role="solution" grade_id="B3_code"
def store_pairs(keys, values, threshold=0.5):
    """W1 (n, d): the keys as rows; b1 (n,): -threshold; W2 (d, n): column i recalls value i for key i."""
    ### BEGIN SOLUTION
    W1 = keys.clone()                                              # (n, d)
    b1 = torch.full((keys.shape[0],), -threshold)                  # (n,)
    W2 = values.T / (1 - threshold)                                # (d, n): a unit fed its key reaches 1 - threshold
    return W1, b1, W2
    ### END SOLUTION


def recall(W1, b1, W2, x):
    """W2 relu(W1 x + b1) for x of shape (d,) or (m, d)."""
    ### BEGIN SOLUTION
    hidden = torch.relu(x @ W1.T + b1)                             # (n,) or (m, n)
    return hidden @ W2.T                                           # (d,) or (m, d)
    ### END SOLUTION

# %% role="solution" grade_id="B3_answers"
# Your answers, in this form:
# b3_share = ...        # how many times v_i comes back (a number)
# b3_threshold = ...    # the threshold (a number between 0 and 1)
### BEGIN SOLUTION
b3_share = (0.85 - 0.4) / (1 - 0.4)        # the unit gets 0.85 - 0.4; the key alone would give it 1 - 0.4
b3_threshold = (0.9 - 1 / 3) / (1 - 1 / 3)  # (0.9 - t) / (1 - t) = 1/3, solved for t
### END SOLUTION

# %% [markdown]
# Test your numbers (not graded): the next cell stores four pairs in $\mathbb{R}^8$ and feeds the
# memory inputs that share less and less with key 0, at the threshold you choose. How much of
# value 0 comes back?

# %% grader="skip"
THRESHOLD = 0.5     # change it to test your numbers
g = torch.Generator().manual_seed(1)
demo_keys = torch.linalg.qr(torch.randn(8, 4, generator=g))[0].T   # (4, 8): orthonormal rows
demo_values = torch.randn(4, 8, generator=g)
away = torch.randn(8, generator=g)
away = away - demo_keys.T @ (demo_keys @ away)                     # perpendicular to every key
away = away / away.norm()
try:
    W1, b1, W2 = store_pairs(demo_keys, demo_values, threshold=THRESHOLD)
    for overlap in (1.0, 0.9, 0.75, 0.6, 0.5, 0.4, 0.2):
        probe = overlap * demo_keys[0] + math.sqrt(1 - overlap ** 2) * away
        share = recall(W1, b1, W2, probe) @ demo_values[0] / demo_values[0].norm() ** 2
        print(f"overlap with key 0: {overlap:.2f}  ->  value 0 recalled x {share.item():.3f}")
except NotImplementedError:
    print("Write store_pairs and recall first, then run this cell again.")

# %% role="check" grade_id="B3_store_example"
# B3_store_example · 2 points · store_pairs on three one-hot keys in R^4, at the default threshold and at 0.3: W1's rows are the keys, b1 is -threshold everywhere, and each key, fed through the pair, gives its value back exactly
check('B3_store_example')

# %% role="check" grade_id="B3_recall_example"
# B3_recall_example · 2 points · recall with given weights: key 1 gives W2 relu(W1 key + b1), the unused direction e_3 gives zeros, and a batch of the three keys gives three rows
check('B3_recall_example')

# %% role="check" grade_id="B3_store_random"
# B3_store_random · 2 points · hidden, runs when your notebook is graded: store_pairs matches the reference on random keys and values, for three thresholds
ready('store_pairs')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B3_store_random')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_recall_random"
# B3_recall_random · 2 points · hidden, runs when your notebook is graded: recall matches W2 relu(W1 x + b1) on random weights, for one x and a batch
ready('recall')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B3_recall_random')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_round_trip"
# B3_round_trip · 1 point · hidden, runs when your notebook is graded: store_pairs then recall: every stored key, alone and as a batch, gives its value
ready('store_pairs', 'recall')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B3_round_trip')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_partial_match"
# B3_partial_match · 1 point · hidden, runs when your notebook is graded: store_pairs then recall: the stored keys give their values, and inputs that only partly match a key (overlap below the threshold) give nothing back
ready('store_pairs', 'recall')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B3_partial_match')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_share"
# B3_share · 1 point · hidden, runs when your notebook is graded: b3_share: how many times its value an input recalls whose overlap with its key is 0.85, at threshold 0.4
ready('b3_share')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B3_share')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_threshold"
# B3_threshold · 1 point · hidden, runs when your notebook is graded: b3_threshold: the threshold at which an input whose overlap with its key is 0.9 recalls a third of its value
ready('b3_threshold')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B3_threshold')
### END HIDDEN TESTS

# %% [markdown]
# ## B4 · Superposition: more features than numbers (14 points)
#
# A model can detect far more features (concepts) than its stream has dimensions. It can afford
# that because it gives each feature a direction of its own, and in a space of thousands of
# dimensions a huge number of directions are nearly perpendicular. This is called
# **superposition**. Two numbers are enough to watch how it works and where it breaks.
#
# Give each of $n$ features a unit direction in the plane, evenly spread around the circle:
# column $k$ of $W \in \mathbb{R}^{2 \times n}$ is $(\cos(2\pi k/n), \sin(2\pi k/n))$. A vector
# $x \in \mathbb{R}^n$ of feature strengths, most of them zero, is stored in just two numbers,
# $h = Wx$. To read feature $j$ back, take its dot product with $h$, which is entry $j$ of
# $W^\top h$, add a negative bias and cut at zero:
#
# $$\hat x = \mathrm{relu}(W^\top W x + b), \qquad b < 0.$$
#
# Entry $j$ of $W^\top W x$ is $\sum_k x_k \cos(\text{angle between features } j \text{ and } k)$.
# A feature that is on contributes fully to its own readout and partly to the readouts of
# features whose directions lie close to its own; the bias is there to cancel those partial
# contributions.

# %% [markdown]
# > **TODO (B4, 14 points, about 5 lines).**
# >
# > - `feature_directions(n)`: the float32 tensor $W$ of shape `(2, n)` above (row 0 the cosines,
# >   row 1 the sines).
# > - `readout(x, W, b)`: $\mathrm{relu}(W^\top W x + b)$ for `W` of shape `(m, n)` and `x` of shape
# >   `(n,)` or with leading dims `(..., n)`, one readout per feature on the last dim; `b` is a number or a
# >   tensor of shape `(n,)`.
# >
# > **Checked:** `feature_directions(4)` and the lengths of `feature_directions(3)`'s columns, and
# > two readouts with the square's directions (visible); other $n$, random `W` with 2 or 3 rows, `b`
# > as a number and as a vector, and inputs with one and two leading dims (hidden).

# %% role="solution" grade_id="B4_code"
def feature_directions(n):
    """(2, n): column k is (cos(2 pi k / n), sin(2 pi k / n))."""
    ### BEGIN SOLUTION
    angles = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n
    return torch.stack([angles.cos(), angles.sin()]).float()       # (2, n)
    ### END SOLUTION


def readout(x, W, b):
    """relu(W^T W x + b) on the last dim: x (..., n), W (m, n), b a number or (n,)."""
    ### BEGIN SOLUTION
    h = x @ W.T                                                    # (..., m): the stored vector W x
    return torch.relu(h @ W + b)                                   # (..., n)
    ### END SOLUTION

# %% role="check" grade_id="B4_directions_example"
# B4_directions_example · 2 points · feature_directions(4) is [[1, 0, -1, 0], [0, 1, 0, -1]], and feature_directions(3) has unit columns
check('B4_directions_example')

# %% role="check" grade_id="B4_readout_example"
# B4_readout_example · 2 points · readout with the square's directions and b=-0.2: feature 0 alone reads [0.8, 0, 0, 0], features 0 and 1 together read [0.8, 0.8, 0, 0]
check('B4_readout_example')

# %% role="check" grade_id="B4_readout_batch_example"
# B4_readout_batch_example · 2 points · readout on a batch of two inputs, shape (2, 4), with the square's directions and b=-0.2: rows [1, 0, 0, 0] and [0, 1, 1, 0] read [0.8, 0, 0, 0] and [0, 0.8, 0.8, 0]
check('B4_readout_batch_example')

# %% role="check" grade_id="B4_directions"
# B4_directions · 3 points · hidden, runs when your notebook is graded: feature_directions for other numbers of features, one and two included
ready('feature_directions')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B4_directions')
### END HIDDEN TESTS

# %% role="check" grade_id="B4_readout_random"
# B4_readout_random · 4 points · hidden, runs when your notebook is graded: readout matches relu(W^T W x + b) for random W with 2 or 3 rows, a number or a vector for b, one x or a batch
ready('readout')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B4_readout_random')
### END HIDDEN TESTS

# %% role="check" grade_id="B4_readout_batched"
# B4_readout_batched · 1 point · hidden, runs when your notebook is graded: readout on inputs with two leading dims, with feature_directions' own W
ready('readout')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B4_readout_batched')
### END HIDDEN TESTS

# %% [markdown]
# ## B5 · When features interfere (14 points)
#
# Switch some features on, each with strength 1, store them in $h$ and read all $n$ back. The
# readout is **clean** when every active feature reads above zero and every other feature reads
# zero. Anything else is **interference**: a feature that is off lights up, or an active one is
# wiped out. Count a readout as lit when it is above $10^{-6}$, which keeps rounding errors from
# deciding.
#
# Whether a case is clean depends on the angles between the directions and on how deep the bias
# cuts. Two features at an angle $\alpha$ contribute $\cos\alpha$ to each other's readouts, and
# several active features add their contributions up, or cancel them out.

# %% [markdown]
# > **TODO (B5, 14 points, about 8 lines).**
# >
# > - `interferes(n, active, b)`: with the features whose indices are in the list `active` set to 1
# >   (the others 0), directions from `feature_directions(n)` and bias `b`, return `True` when the
# >   readout interferes and `False` when it is clean, as a Python `bool`.
# > - `b5_interferes`: a dict mapping each case below to `True` (interferes) or `False` (clean), all
# >   with $b = -0.4$. Predict each one first, then run your function on it.
# >
# > | name | features | active |
# > |---|---|---|
# > | `"pentagon_one"` | $n = 5$ | `[0]` |
# > | `"pentagon_neighbours"` | $n = 5$ | `[0, 1]` |
# > | `"pentagon_non_neighbours"` | $n = 5$ | `[0, 2]` |
# > | `"square_opposite"` | $n = 4$ | `[0, 2]` |
# > | `"hexagon_one"` | $n = 6$ | `[0]` |
# > | `"triangle_two"` | $n = 3$ | `[0, 1]` |
# >
# > **Checked:** three cases of `interferes` with $b = -0.4$ (visible); `interferes` on other
# > numbers of features, active sets and biases (hidden); each of the six answers, one point each
# > (hidden).

# %% role="solution" grade_id="B5_code"
def interferes(n, active, b):
    """True when reading back the active features (strength 1) lights an off feature or darkens an active one."""
    ### BEGIN SOLUTION
    x = torch.zeros(n)
    x[active] = 1.0
    out = readout(x, feature_directions(n), b)                     # (n,)
    on = x > 0
    return bool((out[~on] > 1e-6).any() or (out[on] <= 1e-6).any())
    ### END SOLUTION


# Your answer, in this form (replace each ... by True or False):
# b5_interferes = {
#     "pentagon_one": ...,
#     "pentagon_neighbours": ...,
#     "pentagon_non_neighbours": ...,
#     "square_opposite": ...,
#     "hexagon_one": ...,
#     "triangle_two": ...,
# }
### BEGIN SOLUTION
b5_interferes = {
    "pentagon_one": False,
    "pentagon_neighbours": False,
    "pentagon_non_neighbours": True,
    "square_opposite": True,
    "hexagon_one": True,
    "triangle_two": False,
}
### END SOLUTION

# %% role="check" grade_id="B5_worked_example"
# B5_worked_example · 2 points · interferes with b=-0.4: one feature of three is clean, two features of the square (0 and 1) are clean, one feature of eight interferes
check('B5_worked_example')

# %% role="check" grade_id="B5_cancellation_example"
# B5_cancellation_example · 2 points · interferes(2, [0, 1], -0.4) is True: the two features of n = 2 point in opposite directions, so storing both gives h = 0 and neither reads back
check('B5_cancellation_example')

# %% role="check" grade_id="B5_interferes"
# B5_interferes · 4 points · hidden, runs when your notebook is graded: interferes on other numbers of features, sets of active features and biases, cancellations included
ready('interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_interferes')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_pentagon_one"
# B5_pentagon_one · 1 point · hidden, runs when your notebook is graded: b5_interferes['pentagon_one']
ready('b5_interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_pentagon_one')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_pentagon_neighbours"
# B5_pentagon_neighbours · 1 point · hidden, runs when your notebook is graded: b5_interferes['pentagon_neighbours']
ready('b5_interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_pentagon_neighbours')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_pentagon_non_neighbours"
# B5_pentagon_non_neighbours · 1 point · hidden, runs when your notebook is graded: b5_interferes['pentagon_non_neighbours']
ready('b5_interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_pentagon_non_neighbours')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_square_opposite"
# B5_square_opposite · 1 point · hidden, runs when your notebook is graded: b5_interferes['square_opposite']
ready('b5_interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_square_opposite')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_hexagon_one"
# B5_hexagon_one · 1 point · hidden, runs when your notebook is graded: b5_interferes['hexagon_one']
ready('b5_interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_hexagon_one')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_triangle_two"
# B5_triangle_two · 1 point · hidden, runs when your notebook is graded: b5_interferes['triangle_two']
ready('b5_interferes')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B5_triangle_two')
### END HIDDEN TESTS

# %% [markdown]
# For your own curiosity (not graded): ten features, with feature 0 alone switched on. The cell
# prints every feature's readout for two biases. Which bias keeps the readout clean, and why?

# %% grader="skip"
try:
    W10 = feature_directions(10)
    for bias in (-0.7, -0.9):
        print(f"b = {bias}: readouts", [round(v, 3) for v in readout(torch.eye(10)[0], W10, bias).tolist()])
except NotImplementedError:
    print("Write feature_directions and readout (B4) first, then run this cell again.")

# %% [markdown]
# ## B6 · Does the last block matter? (4 points, graded by hand)
#
# A classmate runs `LensLM` on one prompt, sees the guesses settle at block 3 of 4, and concludes
# that block 4 does nothing for this model and could be removed without loss.

# %% [markdown]
# > **TODO (B6, 4 points, 3 to 6 sentences).** In the cell below, explain why that conclusion does
# > not follow from what the lens showed, and describe how you would test the claim instead. A TA
# > grades this answer. Double-click the cell to edit it.

# %% [markdown] role="answer" grade_id="B6_answer" points=4
# ### BEGIN SOLUTION
# The lens only reports the arg max of each row. Block 4 can still change the logits after the top
# guess is fixed, making the right token more or less probable and reshaping the rest of the
# distribution, and the training loss depends on those probabilities, not on the arg max alone. The
# observation also covers one prompt at one position, while block 4 is shared by every position of
# every prompt: other prompts may need it to settle at all. That the final head already decodes the
# answer from what block 3 leaves in the stream, with block 4 still part of the model, is a
# correlation: it says what that readout can see, not what the model would do without block 4 (which
# may strengthen the same direction, or write what the head does not read at this position). A claim
# about removing a block needs an intervention: remove block 4 (or zero its two output layers) and
# compare the loss and the accuracy of the model with and without it over many prompts and positions.
# ### END SOLUTION

# %% [markdown] grade_id="B6_rubric"
# *B6 is graded by hand, out of 4 points, by a TA who reads your explanation.*
#
# <!-- BEGIN MARK SCHEME -->
# **B6 rubric (for TAs: formgrader shows it, the students' notebooks do not have it).** Four
# elements, one idea each, worth 1 point each. An element earns its point or nothing: there are no
# half points. Score each element on its own, wherever in the answer it appears and in whatever
# words.
#
# | element | points | earns it | does not earn it |
# |---|---|---|---|
# | **The guess is not the output.** What the lens row shows at this one position. | 1 | Says the lens shows only the top guess, and that block 4 can still change the logits behind it: how probable the right token is, or the rest of the distribution; the loss (or the model's confidence) depends on those probabilities. | "Block 4 might still do something" with no word of what it could change; a claim that block 4 changes the guess here (the lens shows it does not). |
# | **One prompt is not the model.** How far one example reaches. | 1 | Says one prompt (or one position) cannot show what block 4 does in general: the block runs at every position of every prompt, and other inputs may settle only at block 4. "Try more prompts" counts. | A general "the evidence is weak" that names neither the single prompt nor other inputs. |
# | **Reading is not removing.** Why the lens cannot settle the claim. | 1 | Says the lens reads the stream of the whole model, block 4 still in place: it shows what the final head can decode after block 3, a correlation, not what the model would output if block 4 were gone. A claim about removing a block is causal, and only an intervention tests it. The final norm and unembedding were trained on the last block's output, so they read earlier streams only approximately: saying so also earns this element. | A knockout described with no reason why the lens cannot answer the question (that earns the next element only); "the lens might be wrong" with no reason. |
# | **A knockout test.** How to test the claim. | 1 | Describes an intervention and a measure: skip block 4 (or zero its two output layers, `proj` and `fc2`), run the model with and without it, and compare the loss, the accuracy or the probability of the right token. | Running the lens (or the unchanged model) on more prompts: that still only observes; "test it" with no procedure. |
#
# **Anchor answers.** Three answers scored with the elements above, to calibrate on before grading.
#
# *Anchor full, 4 of 4.*
# > The lens only shows which token is on top after each block. Block 4 can still make the model
# > more or less sure of that token, and the loss depends on that probability. It was also a single
# > prompt: block 4 runs on every prompt and position, and other prompts may settle only there.
# > Seeing the answer early shows what can be read from the stream while block 4 is still part of
# > the model, not what the model would do without it. To test it, run the model with block 4
# > skipped and compare its loss and accuracy with the full model's over a few hundred prompts.
#
# *Anchor half, 2 of 4.*
# > The guess not changing doesn't mean block 4 does nothing: it could still raise the probability
# > of the right token. To check, delete block 4 and see whether the loss goes up.
#
# *Anchor little, 1 of 4.*
# > The lens could be misleading and block 4 might still be doing something. You should look at
# > more prompts to be sure.
#
# | anchor | The guess is not the output | One prompt is not the model | Reading is not removing | A knockout test | total |
# |---|---|---|---|---|---|
# | full · every element, each in its own sentence | 1 | 1 | 1 | 1 | 4 |
# | half · the probability behind the guess, and a knockout with a measure; no word of other prompts, and no reason why the lens cannot answer | 1 | 0 | 0 | 1 | 2 |
# | little · "more prompts" names the one-prompt problem; "block 4 might still do something" says nothing it could change, "misleading" gives no reason, and looking at more prompts is no intervention | 0 | 1 | 0 | 0 | 1 |
# <!-- END MARK SCHEME -->

# %% [markdown]
# ## B7 · Knock a part out (6 points)
#
# The lens reads the model with every part in place, so it cannot say what a part *does*. To find
# out, take the part away and measure what changes: a **knockout**. Knocking out the attention of
# block $b$ means that block adds nothing from attention, at every position: the stream stays $h$
# where it would have become $h + \text{attention}(\text{norm1}(h))$, and the MLP after it runs as
# usual on what it gets. Knocking out the MLP of block $b$ drops its second update instead, and
# knocking out the whole block drops both, so the stream passes block $b$ unchanged. The residual
# stream itself is never zeroed: only what the part would have added.
#
# Then run the lens on the knocked-out model and compare with the intact one: how far the
# probability of the right token falls in the last row, and whether the guesses settle later.

# %% [markdown]
# > **TODO (B7, 6 points, about 12 lines, then two numbers).**
# >
# > - `KnockoutLensLM.forward(tokens, block, part="block")`: `KnockoutLensLM` is `TinyLM` with the
# >   same `__init__` and weights. Return the logit lens at the last position, shaped as `LensLM`'s
# >   `(n_layers, vocab_size)`, of the model with one part knocked out: `block` counts from 1, and
# >   `part` is `"attention"`, `"mlp"` or `"block"`. Run each block's two updates yourself from its
# >   layers: `blk.attention(blk.norm1(h))` and `blk.fc2(F.gelu(blk.fc1(blk.norm2(h))))`.
# > - On the trained model and the prompt `[15, 11, 1, 6, 15, 7, 13]` (the answer is its first
# >   token, 15), with the attention of block 2 knocked out:
# >   - `b7_drop`: the probability of token 15 in the last row of the intact lens minus that in the
# >     last row of the knocked-out lens, a number between 0 and 1 (right within 6% of the drop
# >     itself, about 0.03 either side);
# >   - `b7_settled`: the block at which the knocked-out model's guesses settle, an `int`.
# >
# > Write the two numbers themselves in the answer cell (such as `0.25` and `2`), not code: the
# > grader runs your notebook without the trained model, which only the cell that loads it has.
# >
# > **Checked:** on the default-sized model, block 4 knocked out (row 3 as in the intact model,
# > row 4 repeating it), and the last row with block 2's MLP or block 1's attention knocked out,
# > against `TinyLM` with that part's output layer set to zero (visible); random models, every part,
# > first, middle and last blocks, a deeper model and a single block, against a reference, and the
# > two numbers (hidden).

# %% role="solution" grade_id="B7_code"
class KnockoutLensLM(TinyLM):
    """TinyLM's weights; forward returns the logit lens with one part of one block knocked out."""

    def forward(self, tokens, block, part="block"):
        ### BEGIN SOLUTION
        h = self.embed(tokens)                                     # (T, d)
        rows = []
        for number, blk in enumerate(self.blocks, start=1):
            if not (number == block and part in ("attention", "block")):
                h = h + blk.attention(blk.norm1(h))                # (T, d)
            if not (number == block and part in ("mlp", "block")):
                h = h + blk.fc2(F.gelu(blk.fc1(blk.norm2(h))))     # (T, d)
            rows.append(self.unembed(self.norm_f(h[-1])))          # (vocab_size,)
        return torch.stack(rows)                                   # (n_layers, vocab_size)
        ### END SOLUTION

# %% [markdown]
# The next cell (not graded) runs the trained model on the prompt, intact and with block 4
# knocked out, the claim of B6. Copy it into a cell of your own to measure block 2's attention.

# %% grader="skip"
prompt = torch.tensor([15, 11, 1, 6, 15, 7, 13])
try:
    knockout = KnockoutLensLM()
    knockout.load_state_dict(trained.state_dict())
    lens = LensLM()
    lens.load_state_dict(trained.state_dict())
    with torch.no_grad():
        for label, rows in [("intact", lens(prompt)), ("block 4 knocked out", knockout(prompt, 4, "block"))]:
            guesses = lens_guesses(rows)
            print(f"{label}: guesses {guesses}, settled at block {settled_at(guesses)}, "
                  f"P(15) in the last row {token_probability(rows, 15)[-1].item():.4f}")
except NotImplementedError:
    print("Write LensLM (B1), the functions of B2 and KnockoutLensLM first, then run this cell again.")

# %% role="solution" grade_id="B7_answers"
# Your answers, the numbers themselves:
# b7_drop = ...       # P(15) intact minus P(15) without block 2's attention, last row
# b7_settled = ...    # where the guesses settle without block 2's attention
### BEGIN SOLUTION
b7_drop = 0.5277
b7_settled = 3
### END SOLUTION

# %% role="check" grade_id="B7_example"
# B7_example · 2 points · KnockoutLensLM on the default-sized model: with block 4 knocked out, row 3 is the intact model's and row 4 repeats it; with block 2's MLP or block 1's attention knocked out, the last row is TinyLM's own output with that part's output layer set to zero
check('B7_example')

# %% role="check" grade_id="B7_random_models"
# B7_random_models · 2 points · hidden, runs when your notebook is graded: KnockoutLensLM matches the reference on random models, for every part and for first, middle and last blocks, and on a deeper model and a single block
ready('KnockoutLensLM')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B7_random_models')
### END HIDDEN TESTS

# %% role="check" grade_id="B7_drop"
# B7_drop · 1 point · hidden, runs when your notebook is graded: b7_drop: how far the trained model's probability of the first token falls at block 4 on the prompt, with block 2's attention knocked out
ready('b7_drop')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B7_drop')
### END HIDDEN TESTS

# %% role="check" grade_id="B7_settled"
# B7_settled · 1 point · hidden, runs when your notebook is graded: b7_settled: the block at which the lens settles on the prompt with block 2's attention knocked out
ready('b7_settled')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('inside-the-block', 'B7_settled')
### END HIDDEN TESTS

# %% [markdown]
# Compare your two numbers with what knocking out block 4 did. A part can matter for the answer's
# probability while the lens's guesses hardly move, and a part the lens shows as busy may be one the
# model can do without: only knockouts, over many prompts, tell which.
