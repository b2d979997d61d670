# %% [markdown]
# # The transformer block: build it
#
# In this notebook you build a transformer block from its parts: layer norm and RMSNorm (forward
# and backward), the MLP and its gated SwiGLU variant, the pre-norm and post-norm blocks, an exact
# parameter count for whole models, and residual stacks with the gradients they let through.
#
# **How this notebook works**
#
# - Run the setup cell first, then work from top to bottom.
# - Write code only inside the cells marked by a **TODO** box, where `raise NotImplementedError`
#   stands. Keep every given name, signature and argument default as it is.
# - After each TODO cell come its check cells. Run them. A *visible* check runs right away and prints
#   what it checked when it passes; a *hidden* check shows one line saying what it will check and
#   runs only when your notebook is graded, on shapes, seeds and weights you never see. So test
#   your code on more than the visible examples.
# - Do not edit, move or delete the check cells.
# - Outputs must have exactly the expected shape and match within `atol=1e-5, rtol=1e-4`
#   (`atol=1e-4, rtol=1e-3` for gradients). Inputs may have any number of leading batch dims.
# - B1 and B2 ask you to write the norms yourself. Code that reaches `F.layer_norm`, `nn.LayerNorm`,
#   `torch.layer_norm`, `F.rms_norm` or `nn.RMSNorm` fails those checks. In B6 and B7,
#   `nn.TransformerEncoderLayer` and its relatives are off limits.
#
# There are 70 points: B1 to B9. The lesson notes, `notes/transformer-block.md` (figures in
# `figures/`), sit next to this notebook.

# %%
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from student_side import check, ready

_ = torch.manual_seed(0)  # the same random draws as the reference run

# %% [markdown]
# ## B1 · Layer norm (8 points)
#
# Layer norm normalizes each token vector $x \in \mathbb{R}^d$ over its own $d$ features, then applies
# a learned gain $\gamma \in \mathbb{R}^d$ and shift $\beta \in \mathbb{R}^d$:
#
# $$\mu = \frac1d \sum_{k=1}^d x_k, \qquad \sigma^2 = \frac1d \sum_{k=1}^d (x_k - \mu)^2, \qquad
# \hat x = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}, \qquad \mathrm{LN}(x) = \gamma \odot \hat x + \beta .$$
#
# Three details decide whether you match PyTorch:
#
# - $\sigma^2$ is the **population** variance (divide by $d$, not $d - 1$).
# - $\epsilon$ goes **inside** the square root. This matters for nearly constant rows, where
#   $\sigma^2$ is about as small as $\epsilon$.
# - `x` has shape `(..., d)`, with any number of leading dims. Reduce over the last dim only and
#   keep it (`keepdim=True`), so that the `(..., 1)` statistics broadcast against `(..., d)`.
#
# Each token is normalized on its own. Nothing is shared across tokens or across the batch, so the
# layer behaves the same in training and at inference.

# %% [markdown]
# > **TODO (B1, 8 points, about 4 lines).** Write `layer_norm(x, gamma, beta, eps=1e-5)` for `x` of
# > shape `(..., d)` and `gamma`, `beta` of shape `(d,)`. Do not call `F.layer_norm`,
# > `nn.LayerNorm` or `torch.layer_norm`. Hint: `torch.var_mean(x, dim=-1, keepdim=True,
# > correction=0)` gives $\sigma^2$ and $\mu$ in one call.
# >
# > **Checked:** every row of a `(2, 3, 8)` output has mean 0 and population variance 1, and
# > `[2, 4, 4, 4, 5, 5, 7, 9]` with `gamma=1`, `beta=0`, `eps=0` gives
# > `[-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2]` (visible); random `gamma` and `beta` on inputs with 0 to
# > 3 leading dims, and nearly constant rows with the default and a given `eps` (hidden).

# %% role="solution" grade_id="B1_code"
def layer_norm(x, gamma, beta, eps=1e-5):
    """gamma * (x - mu) / sqrt(sigma^2 + eps) + beta over the last dim.

    x: (..., d); gamma, beta: (d,); mu, sigma^2: mean and population variance of each row.
    """
    ### BEGIN SOLUTION
    sigma2, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)  # (..., 1) each
    xhat = (x - mu) / torch.sqrt(sigma2 + eps)                          # (..., d)
    return gamma * xhat + beta                                          # (..., d)
    ### END SOLUTION

# %% role="check" grade_id="B1_worked_example"
# B1_worked_example · 2 points · rows of a (2, 3, 8) input get mean 0 and population variance 1; the worked example [2, 4, 4, 4, 5, 5, 7, 9] with gamma=1, beta=0, eps=0 gives [-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2]
check('B1_worked_example')

# %% role="check" grade_id="B1_affine_example"
# B1_affine_example · 1 point · the worked example [2, 4, 4, 4, 5, 5, 7, 9] with gamma=2, beta=1, eps=0 gives [-2, 0, 0, 0, 1, 1, 3, 5]
check('B1_affine_example')

# %% role="check" grade_id="B1_random_affine"
# B1_random_affine · 3 points · hidden, runs when your notebook is graded: layer_norm matches the reference for random gamma and beta, inputs with 0 to 3 leading dims
ready('layer_norm')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B1_random_affine')
### END HIDDEN TESTS

# %% role="check" grade_id="B1_near_constant"
# B1_near_constant · 2 points · hidden, runs when your notebook is graded: layer_norm handles nearly constant rows, where the place of eps matters, with default and given eps
ready('layer_norm')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B1_near_constant')
### END HIDDEN TESTS

# %% [markdown]
# ## B2 · RMSNorm (5 points)
#
# Most recent LLMs (Llama, Mistral, Qwen, Gemma) use RMSNorm instead. It skips the mean
# subtraction and the shift $\beta$, and only divides by the root mean square of the row:
#
# $$\mathrm{RMSNorm}(x) = \frac{x}{\sqrt{\frac1d \sum_{k} x_k^2 + \epsilon}} \odot \gamma .$$
#
# It costs fewer operations and one parameter vector less, and it works just as well in practice.
# Each model sets its own $\epsilon$ (Llama 2 uses $10^{-5}$); the default here is $10^{-6}$, and
# your function must use whichever `eps` it is given.

# %% [markdown]
# > **TODO (B2, 5 points, about 2 lines).** Write `rms_norm(x, gamma, eps=1e-6)` for `x` of shape
# > `(..., d)` and `gamma` of shape `(d,)`, without `F.rms_norm` or `nn.RMSNorm`.
# >
# > **Checked:** `rms_norm([3, 4])` with `gamma=1`, `eps=0` is `[3, 4] / sqrt(12.5)` (visible);
# > random `gamma` on inputs with a non-zero mean and leading dims, and rows of tiny magnitude where
# > `eps` dominates (hidden).

# %% role="solution" grade_id="B2_code"
def rms_norm(x, gamma, eps=1e-6):
    """x / sqrt(mean(x^2) + eps) * gamma over the last dim. x: (..., d); gamma: (d,)."""
    ### BEGIN SOLUTION
    mean_sq = (x * x).mean(dim=-1, keepdim=True)                        # (..., 1)
    return gamma * x / torch.sqrt(mean_sq + eps)                        # (..., d)
    ### END SOLUTION

# %% role="check" grade_id="B2_worked_example"
# B2_worked_example · 1 point · rms_norm([3, 4]) with gamma=1, eps=0 gives [3, 4] / sqrt(12.5)
check('B2_worked_example')

# %% role="check" grade_id="B2_gain_and_eps_example"
# B2_gain_and_eps_example · 1 point · rms_norm([3, 4]) with gamma=[2, 0.5] and eps=0, with eps=12.5, and rms_norm([0.001, 0.001]) with the default eps
check('B2_gain_and_eps_example')

# %% role="check" grade_id="B2_random_gain"
# B2_random_gain · 1 point · hidden, runs when your notebook is graded: rms_norm matches the reference for random gamma on inputs with a non-zero mean and leading dims
ready('rms_norm')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B2_random_gain')
### END HIDDEN TESTS

# %% role="check" grade_id="B2_tiny_rows"
# B2_tiny_rows · 2 points · hidden, runs when your notebook is graded: rms_norm on rows of tiny magnitude, where eps dominates, with default and given eps
ready('rms_norm')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B2_tiny_rows')
### END HIDDEN TESTS

# %% [markdown]
# ## B3 · The layer norm backward pass (10 points)
#
# Write $r = 1/\sqrt{\sigma^2 + \epsilon}$, so $\hat x = (x - \mu)\,r$ and $y = \gamma \odot \hat x + \beta$.
# Let $G = \partial L / \partial y$ be the gradient arriving from above, with the shape `(..., d)` of `x`.
#
# **The parameters.** $\gamma$ and $\beta$ are shared by every token, so their gradients add up
# the contributions of all of them, summed over **every** leading dim:
#
# $$\frac{\partial L}{\partial \beta} = \sum_{\text{rows}} G, \qquad
# \frac{\partial L}{\partial \gamma} = \sum_{\text{rows}} G \odot \hat x .$$
#
# **The input.** Within one row, let $g = \gamma \odot G$ be the gradient with respect to $\hat x$.
# Each $\hat x_i$ depends on every $x_j$ through $\mu$ and $\sigma^2$. Using
# $\partial \mu / \partial x_j = 1/d$ and $\partial r / \partial x_j = -r^2 \hat x_j / d$:
#
# $$\frac{\partial \hat x_i}{\partial x_j} = r\left(\delta_{ij} - \frac1d - \frac{\hat x_i \hat x_j}{d}\right)
# \quad\Longrightarrow\quad
# \frac{\partial L}{\partial x} = r\,\Big(g - \operatorname{mean}(g) - \hat x \odot \operatorname{mean}(g \odot \hat x)\Big),$$
#
# with both means taken over the row's $d$ features. The two subtracted terms remove the parts of
# $g$ along the constant direction and along $\hat x$. Layer norm ignores shifts and rescalings of
# its input, so moving the input in those directions cannot change the loss. As a consequence,
# every row of $\partial L/\partial x$ sums to zero.

# %% [markdown]
# > **TODO (B3, 10 points, about 9 lines).** Write `layer_norm_backward(grad_out, x, gamma, eps=1e-5)`
# > returning the tuple `(grad_x, grad_gamma, grad_beta)` from the formulas above, without autograd.
# > `grad_x` has the shape of `x`, and `grad_gamma`, `grad_beta` have the shape `(d,)` of `gamma`.
# > Hint: to sum over all leading dims, reshape to `(-1, d)` and sum over dim 0. Be careful:
# > `t.sum(dim=())` sums over *everything*, so a tuple of leading dims breaks for 1-D inputs.
# >
# > **Checked:** the three shapes, `grad_beta` equal to `grad_out` summed over leading dims, and rows
# > of `grad_x` summing to 0 (visible); `grad_x` against autograd through `F.layer_norm` for random
# > inputs, `grad_gamma` and `grad_beta` for 1 to 3 leading dims, and nearly constant rows with
# > `eps=1e-3` (hidden).

# %% role="solution" grade_id="B3_code"
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    """Gradients of layer_norm(x, gamma, beta, eps) given grad_out = dL/dy.

    grad_out, x: (..., d); gamma: (d,). r = 1/sqrt(sigma^2 + eps), xhat = (x - mu) r, g = gamma grad_out.
    Returns grad_x (..., d), grad_gamma (d,), grad_beta (d,).
    """
    ### BEGIN SOLUTION
    d = x.shape[-1]
    sigma2, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)  # (..., 1) each
    r = torch.rsqrt(sigma2 + eps)                                       # (..., 1)
    xhat = (x - mu) * r                                                 # (..., d)
    g = gamma * grad_out                                                # (..., d)
    grad_x = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(dim=0)            # (d,)
    grad_beta = grad_out.reshape(-1, d).sum(dim=0)                      # (d,)
    return grad_x, grad_gamma, grad_beta
    ### END SOLUTION

# %% role="check" grade_id="B3_shapes_and_sums"
# B3_shapes_and_sums · 2 points · layer_norm_backward returns three gradients of the right shapes; grad_beta sums grad_out; each row of grad_x sums to 0
check('B3_shapes_and_sums')

# %% role="check" grade_id="B3_worked_example"
# B3_worked_example · 2 points · layer_norm_backward on x = [[-1, 0, 1]], gamma = [2, 1, 1], grad_out = [[1, 0, 0]], eps=0: grad_x is [[1, -2, 1]] / sqrt(6), grad_gamma [-sqrt(1.5), 0, 0], grad_beta [1, 0, 0]
check('B3_worked_example')

# %% role="check" grade_id="B3_grad_x"
# B3_grad_x · 2 points · hidden, runs when your notebook is graded: grad_x matches autograd through F.layer_norm for random inputs and gamma
ready('layer_norm_backward')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B3_grad_x')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_grad_params"
# B3_grad_params · 2 points · hidden, runs when your notebook is graded: grad_gamma and grad_beta sum over every leading dim for inputs with 0 to 3 of them
ready('layer_norm_backward')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B3_grad_params')
### END HIDDEN TESTS

# %% role="check" grade_id="B3_near_constant"
# B3_near_constant · 2 points · hidden, runs when your notebook is graded: the backward pass on nearly constant rows with a given eps
ready('layer_norm_backward')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B3_near_constant')
### END HIDDEN TESTS

# %% [markdown]
# For your own curiosity (not graded), the next cell compares your closed form with what autograd
# gets by differentiating through PyTorch's layer norm.

# %% grader="skip"
x_demo = 3 * torch.randn(4, 6) + 1                                  # (B, d)
gamma_demo, beta_demo, grad_demo = torch.randn(6), torch.randn(6), torch.randn(4, 6)
try:
    yours = layer_norm_backward(grad_demo, x_demo, gamma_demo)
except NotImplementedError:
    print("Write layer_norm_backward in the B3 cell first, then run this cell again.")
else:
    leaves = [t.clone().requires_grad_(True) for t in (x_demo, gamma_demo, beta_demo)]
    F.layer_norm(leaves[0], (6,), leaves[1], leaves[2], eps=1e-5).backward(grad_demo)
    for name, got, leaf in zip(("grad_x", "grad_gamma", "grad_beta"), yours, leaves):
        print(f"{name:10s} largest difference from autograd: {(got - leaf.grad).abs().max().item():.1e}")

# %% [markdown]
# ## B4 · The position-wise MLP (6 points)
#
# Attention mixes information *across* tokens. The MLP then transforms every token *on its own*,
# with the same weights at every position:
#
# $$\mathrm{MLP}(x) = W_2\,\phi(W_1 x + b_1) + b_2, \qquad W_1 \in \mathbb{R}^{d_{ff} \times d},
# \quad W_2 \in \mathbb{R}^{d \times d_{ff}}, \quad d_{ff} = 4d \text{ by default}.$$
#
# GPT-style models use GELU, $\phi(z) = z\,\Phi(z) = \tfrac{z}{2}\big(1 + \operatorname{erf}(z/\sqrt2)\big)$,
# with $\Phi$ the standard normal CDF: a smooth version of ReLU, $\max(0, z)$. GPT-2 itself computed
# the tanh approximation of this formula; this course asks for PyTorch's default, the **exact** erf
# form, which `F.gelu(z)` and `nn.GELU()` compute. The `approximate="tanh"` variant differs
# from it by up to about $5 \times 10^{-4}$ (near $|z| = 2.7$), more than the tolerance, so the
# checks notice.
#
# `nn.Linear(d_in, d_out)` stores its weight as `(d_out, d_in)` and computes `x @ W.T + b` on the
# last dim, so it handles any number of leading dims for you.

# %% [markdown]
# > **TODO (B4, 6 points, about 10 lines).** Complete `MLP`. In `__init__`, call
# > `super().__init__()`, then build `self.linear1` ($d \to d_{ff}$) and `self.linear2`
# > ($d_{ff} \to d$), both with biases, taking `d_ff = 4 * d_model` when `d_ff` is `None`. Accept
# > `activation="gelu"` (exact) or `"relu"`, and raise `ValueError` for anything else. `forward`
# > maps `(..., d_model)` to `(..., d_model)`. Keep the names `linear1` and `linear2`: the grader
# > loads weights into them.
# >
# > **Checked:** `MLP(8)`'s parameter shapes, and a hand-made example with identity weights for exact
# > GELU and ReLU (visible); random weights with $d_{ff} \ne 4d$ on batched inputs, exact GELU (hidden);
# > `activation="relu"` (hidden).

# %% role="solution" grade_id="B4_code"
class MLP(nn.Module):
    """linear2(act(linear1(x))) on every token: d_model -> d_ff (default 4 d_model) -> d_model."""

    def __init__(self, d_model, d_ff=None, activation="gelu"):
        ### BEGIN SOLUTION
        super().__init__()
        activations = {"gelu": nn.GELU(), "relu": nn.ReLU()}   # nn.GELU() is the exact erf form
        if activation not in activations:
            raise ValueError(f"activation must be 'gelu' or 'relu', got {activation!r}")
        if d_ff is None:
            d_ff = 4 * d_model
        self.linear1 = nn.Linear(d_model, d_ff)                # W_1, b_1
        self.act = activations[activation]                     # phi
        self.linear2 = nn.Linear(d_ff, d_model)                # W_2, b_2
        ### END SOLUTION

    def forward(self, x):                                      # x: (..., d_model)
        ### BEGIN SOLUTION
        return self.linear2(self.act(self.linear1(x)))         # (..., d_model)
        ### END SOLUTION

# %% role="check" grade_id="B4_structure_example"
# B4_structure_example · 1 point · MLP builds linear1 (d -> d_ff) and linear2 (d_ff -> d), with d_ff = 4d by default; on a hand-made example with identity weights it applies exact GELU or ReLU, and with linear2 = -I (ReLU) it gives -relu(x)
check('B4_structure_example')

# %% role="check" grade_id="B4_gelu"
# B4_gelu · 3 points · hidden, runs when your notebook is graded: MLP with exact GELU matches the reference with random weights, d_ff other than 4d, batched inputs
ready('MLP')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B4_gelu')
### END HIDDEN TESTS

# %% role="check" grade_id="B4_relu"
# B4_relu · 1 point · hidden, runs when your notebook is graded: MLP with activation='relu' matches the reference
ready('MLP')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B4_relu')
### END HIDDEN TESTS

# %% role="check" grade_id="B4_unknown_activation"
# B4_unknown_activation · 1 point · hidden, runs when your notebook is graded: MLP raises ValueError for an activation other than 'gelu' and 'relu'
ready('MLP')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B4_unknown_activation')
### END HIDDEN TESTS

# %% [markdown]
# ## B5 · SwiGLU (7 points)
#
# Llama, PaLM and most recent models use a *gated* MLP. One projection, passed through
# $\mathrm{SiLU}(z) = z\,\sigma(z)$, acts as a gate that multiplies a second projection element by
# element, and a third matrix maps the result back down:
#
# $$\mathrm{SwiGLU}(x) = W_2\big(\mathrm{SiLU}(W_1 x) \odot W_3 x\big), \qquad
# W_1, W_3 \in \mathbb{R}^{d_{ff} \times d}\ (\text{gate, up}), \quad W_2 \in \mathbb{R}^{d \times d_{ff}}\ (\text{down}),$$
#
# with no biases. Three matrices of $d \cdot d_{ff}$ weights instead of two: to keep the plain MLP's
# $2 \cdot d \cdot 4d$ weights, the hidden width shrinks to about $\tfrac23 \cdot 4d$. Llama
# computes `int(2 * 4 * d / 3)` and rounds it **up** to a multiple of `multiple_of` (256) for
# efficient hardware use. For $d = 4096$: $10922 \to 11008$.

# %% [markdown]
# > **TODO (B5, 7 points, about 10 lines).**
# >
# > - Complete `SwiGLU(d_model, d_ff)`. In `__init__`, call `super().__init__()` and build bias-free
# >   `nn.Linear` layers `self.w1` and `self.w3` ($d \to d_{ff}$) and `self.w2` ($d_{ff} \to d$).
# >   `forward` maps `(..., d_model)` to `(..., d_model)`. `F.silu` is fine here.
# > - Write `swiglu_hidden_dim(d_model, multiple_of=256)`: `int(2 * 4 * d_model / 3)`, rounded up to
# >   the next multiple of `multiple_of` (left unchanged if it already is one), as an `int`.
# >
# > **Checked:** `SwiGLU(8, 16)`'s parameter shapes, and `swiglu_hidden_dim` of 4096 and 512
# > (visible); other widths and `multiple_of` values, and the forward pass with random weights on
# > batched inputs (hidden).

# %% role="solution" grade_id="B5_code"
class SwiGLU(nn.Module):
    """w2(silu(w1 x) * w3 x) with bias-free w1 (gate), w3 (up): d_model -> d_ff and w2 (down): d_ff -> d_model."""

    def __init__(self, d_model, d_ff):
        ### BEGIN SOLUTION
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)         # W_1, gate
        self.w3 = nn.Linear(d_model, d_ff, bias=False)         # W_3, up
        self.w2 = nn.Linear(d_ff, d_model, bias=False)         # W_2, down
        ### END SOLUTION

    def forward(self, x):                                      # x: (..., d_model)
        ### BEGIN SOLUTION
        gate = self.w1(x)                                      # (..., d_ff)
        return self.w2(gate * torch.sigmoid(gate) * self.w3(x))  # (..., d_model)
        ### END SOLUTION


def swiglu_hidden_dim(d_model, multiple_of=256):
    """int(2/3 * 4 * d_model), rounded up to a multiple of multiple_of."""
    ### BEGIN SOLUTION
    hidden = 8 * d_model // 3                                  # int(2 * 4 * d_model / 3)
    return -(-hidden // multiple_of) * multiple_of             # ceil(hidden / multiple_of) * multiple_of
    ### END SOLUTION

# %% role="check" grade_id="B5_structure"
# B5_structure · 1 point · SwiGLU(8, 16) has bias-free w1, w3 (8 -> 16) and w2 (16 -> 8)
check('B5_structure')

# %% role="check" grade_id="B5_hidden_dim_example"
# B5_hidden_dim_example · 1 point · swiglu_hidden_dim(4096) is Llama's 11008 and swiglu_hidden_dim(512) is 1536
check('B5_hidden_dim_example')

# %% role="check" grade_id="B5_forward_example"
# B5_forward_example · 1 point · SwiGLU(2, 1) with w1 = [[1, 0]], w3 = [[0, 1]], w2 = [[1], [-1]] on x = [2, 3] gives [h, -h] with h = silu(2) * 3 = 5.284782
check('B5_forward_example')

# %% role="check" grade_id="B5_hidden_dim_random"
# B5_hidden_dim_random · 1 point · hidden, runs when your notebook is graded: swiglu_hidden_dim for other widths and multiple_of values, as an int
ready('swiglu_hidden_dim')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B5_hidden_dim_random')
### END HIDDEN TESTS

# %% role="check" grade_id="B5_forward"
# B5_forward · 3 points · hidden, runs when your notebook is graded: SwiGLU matches w2(silu(w1 x) * w3 x) with random weights on batched inputs
ready('SwiGLU')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B5_forward')
### END HIDDEN TESTS

# %% [markdown]
# ## B6 · The pre-norm block (10 points)
#
# The pre-norm block is two residual updates. Each sublayer reads a normalized copy of the stream
# and adds its result back:
#
# $$x \leftarrow x + \mathrm{Attn}\big(\mathrm{LN}_1(x)\big), \qquad x \leftarrow x + \mathrm{MLP}\big(\mathrm{LN}_2(x)\big).$$
#
# The `__init__` below is given. Its submodules have the names of `nn.TransformerEncoderLayer`
# (`norm1`, `self_attn`, `norm2`, `linear1`, `linear2`), so the grader can load that layer's
# weights into your block and compare outputs. Two helpers are given too:
#
# - `_attention(h, causal)` runs multi-head self-attention on `h` of shape `(B, T, d)`. With
#   `causal=True` it passes a `(T, T)` boolean mask that is `True` above the diagonal. For
#   `nn.MultiheadAttention`, `True` means *may not attend*, so token $t$ sees only tokens
#   $\le t$.
# - `_mlp(h)` is the exact-GELU MLP `linear2(gelu(linear1(h)))`.
#
# So B6 (and B7) are about the wiring only.

# %% [markdown]
# > **TODO (B6, 10 points, 3 lines).** Write `PreNormBlock.forward(x, causal=True)` for `x` of
# > shape `(B, T, d)`: the two residual updates above, using `self.norm1`, `self.norm2` and the two
# > helpers. Return a tensor of the same shape. Do not use `nn.TransformerEncoderLayer` or its
# > relatives.
# >
# > **Checked:** the output shape, and that with `causal=True` changing the last token leaves all
# > earlier outputs unchanged while with `causal=False` it does not (visible); with both sublayers'
# > output weights set to zero, the block returns `x` itself: the residual path (visible);
# > `nn.TransformerEncoderLayer(..., norm_first=True)` with the same random weights, mask on and
# > off, including `d_ff` other than `4 * d_model` (hidden).

# %% role="solution" grade_id="B6_code"
class PreNormBlock(nn.Module):
    """x + Attn(LN1(x)), then + MLP(LN2(.)). x: (B, T, d_model)."""

    def __init__(self, d_model, n_heads, d_ff=None):
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def _attention(self, h, causal):                           # h: (B, T, d)
        T = h.shape[1]
        future = torch.ones(T, T, dtype=torch.bool, device=h.device).triu(1)  # (T, T), True = hidden
        return self.self_attn(h, h, h, attn_mask=future if causal else None, need_weights=False)[0]

    def _mlp(self, h):                                         # h: (B, T, d)
        return self.linear2(F.gelu(self.linear1(h)))           # (B, T, d)

    def forward(self, x, causal=True):                         # x: (B, T, d)
        ### BEGIN SOLUTION
        x = x + self._attention(self.norm1(x), causal)
        x = x + self._mlp(self.norm2(x))
        return x                                               # (B, T, d)
        ### END SOLUTION

# %% role="check" grade_id="B6_causality"
# B6_causality · 1 point · PreNormBlock keeps the shape, and its causal flag hides (only) the future
check('B6_causality')

# %% role="check" grade_id="B6_residual"
# B6_residual · 1 point · PreNormBlock whose attention and MLP add nothing (zero output weights) returns x itself: the residual path
check('B6_residual')

# %% role="check" grade_id="B6_mlp_path"
# B6_mlp_path · 1 point · PreNormBlock whose attention adds nothing (zero out_proj) returns x + mlp(norm2(x))
check('B6_mlp_path')

# %% role="check" grade_id="B6_causal"
# B6_causal · 4 points · hidden, runs when your notebook is graded: PreNormBlock matches nn.TransformerEncoderLayer(norm_first=True) with the same random weights, causal
ready('PreNormBlock')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B6_causal')
### END HIDDEN TESTS

# %% role="check" grade_id="B6_bidirectional"
# B6_bidirectional · 3 points · hidden, runs when your notebook is graded: PreNormBlock matches the torch layer with the mask off
ready('PreNormBlock')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B6_bidirectional')
### END HIDDEN TESTS

# %% [markdown]
# ## B7 · The post-norm block (8 points)
#
# The post-norm block normalizes *after* each residual addition:
#
# $$x \leftarrow \mathrm{LN}_1\big(x + \mathrm{Attn}(x)\big), \qquad x \leftarrow \mathrm{LN}_2\big(x + \mathrm{MLP}(x)\big).$$
#
# The sublayers read the stream directly, and the stream itself is renormalized twice per block.
# `PostNormBlock` inherits `__init__` and the two helpers from `PreNormBlock`, so only `forward`
# changes.

# %% [markdown]
# > **TODO (B7, 8 points, 3 lines).** Write `PostNormBlock.forward(x, causal=True)`, the two
# > post-norm updates above, for `x` of shape `(B, T, d)`.
# >
# > **Checked:** shape and causality as in B6, and with both sublayers' output weights set to zero
# > the block returns `norm2(norm1(x))` (visible); `nn.TransformerEncoderLayer(...,
# > norm_first=False)` with the same random weights, mask on and off (hidden).

# %% role="solution" grade_id="B7_code"
class PostNormBlock(PreNormBlock):
    """LN1(x + Attn(x)), then LN2(. + MLP(.)). x: (B, T, d_model)."""

    def forward(self, x, causal=True):                         # x: (B, T, d)
        ### BEGIN SOLUTION
        x = self.norm1(x + self._attention(x, causal))
        x = self.norm2(x + self._mlp(x))
        return x                                               # (B, T, d)
        ### END SOLUTION

# %% role="check" grade_id="B7_causality"
# B7_causality · 1 point · PostNormBlock keeps the shape, and its causal flag hides (only) the future
check('B7_causality')

# %% role="check" grade_id="B7_residual"
# B7_residual · 1 point · PostNormBlock whose attention and MLP add nothing (zero output weights) returns norm2(norm1(x)): the residual path
check('B7_residual')

# %% role="check" grade_id="B7_mlp_path"
# B7_mlp_path · 1 point · PostNormBlock whose attention adds nothing (zero out_proj) returns norm2(h + mlp(h)) with h = norm1(x)
check('B7_mlp_path')

# %% role="check" grade_id="B7_causal"
# B7_causal · 3 points · hidden, runs when your notebook is graded: PostNormBlock matches nn.TransformerEncoderLayer(norm_first=False) with the same random weights, causal
ready('PostNormBlock')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B7_causal')
### END HIDDEN TESTS

# %% role="check" grade_id="B7_bidirectional"
# B7_bidirectional · 2 points · hidden, runs when your notebook is graded: PostNormBlock matches the torch layer with the mask off
ready('PostNormBlock')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B7_bidirectional')
### END HIDDEN TESTS

# %% [markdown]
# ## B8 · Counting the parameters of a whole model (10 points)
#
# A decoder-only model is a token table, maybe a learned position table, $N$ blocks, a
# final norm, and an unembedding that maps each final vector to one logit per vocabulary entry.
# `count_parameters(config)` counts them exactly. A config is a dict with these keys:
#
# | key | symbol | meaning |
# |---|---|---|
# | `vocab_size` | $V$ | number of tokens in the vocabulary |
# | `max_positions` | $P$ | rows of the learned position table; `0` means no table (e.g. models with RoPE) |
# | `d_model` | $d$ | width of the residual stream |
# | `n_layers` | $N$ | number of blocks |
# | `d_ff` | $f$ | hidden width of the MLP |
# | `norm` | | `"layernorm"` or `"rmsnorm"` |
# | `mlp` | | `"gelu"` (two matrices, `linear1`, `linear2`) or `"swiglu"` (three, `w1`, `w3`, `w2`) |
# | `bias` | $b$ | `True`: every Linear layer in the blocks and every LayerNorm has a bias; `False`: none has |
# | `tie_embeddings` | | `True`: the unembedding reuses the token table, so it adds no parameters |
#
# Count each part as follows ($b$ is 1 with biases and 0 without):
#
# | part | what it holds | parameters |
# |---|---|---|
# | `embeddings` | token table, position table, unembedding when not tied (never with a bias) | $Vd + Pd$, plus $Vd$ if not tied |
# | `attention` | per block $W_Q, W_K, W_V, W_O$, each $d \times d$, with their biases | $N\,(4d^2 + 4d\,b)$ |
# | `mlp` | per block, `"gelu"`: $d \to f \to d$ | $N\,(2df + (f + d)\,b)$ |
# | | per block, `"swiglu"`: two $d \to f$, one $f \to d$ | $N\,(3df + (2f + d)\,b)$ |
# | `norms` | 2 per block plus 1 final; LayerNorm has $\gamma$ (and $\beta$ with biases), RMSNorm only $\gamma$ | $(2N + 1)\,d\,(1 + b)$ or $(2N + 1)\,d$ |
# | `total` | the sum of the four parts | |
#
# The number of heads does not change any count (C4). Two targets: GPT-2 small (tied, learned
# positions, LayerNorm, GELU, biases) has **124,439,808** parameters, and Llama 2 7B (untied, no
# position table, RMSNorm, SwiGLU, no biases) has **6,738,415,616**.

# %% [markdown]
# > **TODO (B8, 10 points, about 15 lines).** Write `count_parameters(config)`, which returns a dict
# > with the keys `embeddings`, `attention`, `mlp`, `norms` and `total`, every value a Python `int`.
# > A small helper such as `linear(n_in, n_out)` (weights plus the bias, if any) keeps it short.
# > The hidden checks use random configs, with every norm, MLP, bias and tying choice, and compare
# > with a model built from the config, so hard-coding the two targets earns little.
# >
# > **Checked:** GPT-2 small, part by part (visible); Llama 2 7B, and 12 random configs (hidden).

# %% role="solution" grade_id="B8_code"
def count_parameters(config):
    """Exact parameter counts of a decoder-only model, by part (see the tables above)."""
    ### BEGIN SOLUTION
    V, P, d = config["vocab_size"], config["max_positions"], config["d_model"]
    N, f, bias = config["n_layers"], config["d_ff"], config["bias"]

    def linear(n_in, n_out):                                   # weight (+ bias)
        return n_in * n_out + (n_out if bias else 0)

    if config["mlp"] == "gelu":
        per_mlp = linear(d, f) + linear(f, d)
    elif config["mlp"] == "swiglu":
        per_mlp = 2 * linear(d, f) + linear(f, d)
    else:
        raise ValueError(f"mlp must be 'gelu' or 'swiglu', got {config['mlp']!r}")
    if config["norm"] == "layernorm":
        per_norm = 2 * d if bias else d                        # gamma (+ beta)
    elif config["norm"] == "rmsnorm":
        per_norm = d                                           # gamma
    else:
        raise ValueError(f"norm must be 'layernorm' or 'rmsnorm', got {config['norm']!r}")

    counts = {
        "embeddings": V * d + P * d + (0 if config["tie_embeddings"] else V * d),
        "attention": N * 4 * linear(d, d),
        "mlp": N * per_mlp,
        "norms": (2 * N + 1) * per_norm,
    }
    counts["total"] = sum(counts.values())
    return counts
    ### END SOLUTION

# %% role="check" grade_id="B8_gpt2_small"
# B8_gpt2_small · 3 points · count_parameters on GPT-2 small gives 124,439,808 = 39,383,808 + 28,348,416 + 56,669,184 + 38,400
check('B8_gpt2_small')

# %% role="check" grade_id="B8_small_configs"
# B8_small_configs · 2 points · count_parameters on two small configs: an untied RMSNorm/SwiGLU one with biases gives 460, a tied LayerNorm/GELU one without biases gives 180
check('B8_small_configs')

# %% role="check" grade_id="B8_llama2_7b"
# B8_llama2_7b · 2 points · hidden, runs when your notebook is graded: count_parameters on Llama 2 7B (RMSNorm, SwiGLU, no biases, untied)
ready('count_parameters')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B8_llama2_7b')
### END HIDDEN TESTS

# %% role="check" grade_id="B8_random_configs"
# B8_random_configs · 3 points · hidden, runs when your notebook is graded: count_parameters on random configs (every norm, MLP, bias and tying choice) equals a built model's count
ready('count_parameters')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B8_random_configs')
### END HIDDEN TESTS

# %% [markdown]
# ## B9 · Residual stacks and their gradients (6 points)
#
# Stack $L$ sublayers $f_1, \dots, f_L$. A plain stack computes $x \leftarrow f_\ell(x)$ and a
# residual stack computes $x \leftarrow x + f_\ell(x)$. By the chain rule, the Jacobian of the whole
# stack is the product of the per-layer Jacobians:
#
# $$\text{plain: } \prod_{\ell} J_{f_\ell}, \qquad \text{residual: } \prod_{\ell}\big(I + J_{f_\ell}\big),
# \qquad \text{since } \frac{\partial\,(x + f(x))}{\partial x} = I + \frac{\partial f}{\partial x}.$$
#
# If every $J_{f_\ell}$ shrinks vectors a little (a tanh layer does wherever it saturates), the plain
# product goes to zero exponentially with depth, and the first layers get almost no gradient. The
# residual product, multiplied out, always contains the identity term, so some gradient reaches
# every layer whatever the depth.

# %% [markdown]
# > **TODO (B9, 6 points, about 6 lines).**
# >
# > - `stack_forward(sublayers, x, residual=True)`: apply the functions in `sublayers` to `x` in
# >   order, as a residual or a plain stack, and return the result. `x` may have any shape the
# >   sublayers accept.
# > - `residual_jacobian(f, x)`: for a 1-D `x` of size $d$ and a function `f` from $\mathbb{R}^d$ to
# >   $\mathbb{R}^d$, return the `(d, d)` Jacobian of $x \mapsto x + f(x)$.
# >   `torch.autograd.functional.jacobian` may do the differentiation for you.
# >
# > **Checked:** `stack_forward` on two `tanh` sublayers from `[1, -2]`, both ways (visible); 6 random
# > sublayers on batched inputs, both ways (hidden); `residual_jacobian` against $I + \partial f/\partial x$
# > for random sublayers (hidden).

# %% role="solution" grade_id="B9_code"
def stack_forward(sublayers, x, residual=True):
    """x <- x + f(x) for each f in order if residual, else x <- f(x)."""
    ### BEGIN SOLUTION
    for f in sublayers:
        update = f(x)
        x = x + update if residual else update
    return x
    ### END SOLUTION


def residual_jacobian(f, x):
    """J = d(x + f(x))/dx = I + df/dx, shape (d, d), for a 1-D x of size d."""
    ### BEGIN SOLUTION
    df_dx = torch.autograd.functional.jacobian(f, x)          # (d, d)
    return torch.eye(x.shape[0], dtype=x.dtype) + df_dx       # (d, d)
    ### END SOLUTION

# %% role="check" grade_id="B9_stack_example"
# B9_stack_example · 1 point · stack_forward on two tanh(x) sublayers from x = [1, -2]: residual and plain; and, plain, a sublayer that ignores its input (tanh([1, 0])) followed by tanh(x)
check('B9_stack_example')

# %% role="check" grade_id="B9_jacobian_example"
# B9_jacobian_example · 1 point · residual_jacobian of f(x) = tanh(x W) with W = [[0, 2], [0, 0]] at x = 0 is [[1, 0], [2, 1]]
check('B9_jacobian_example')

# %% role="check" grade_id="B9_stack"
# B9_stack · 2 points · hidden, runs when your notebook is graded: stack_forward through 6 random sublayers on batched inputs, both modes
ready('stack_forward')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B9_stack')
### END HIDDEN TESTS

# %% role="check" grade_id="B9_jacobian"
# B9_jacobian · 2 points · hidden, runs when your notebook is graded: residual_jacobian(f, x) equals I + df/dx for random sublayers
ready('residual_jacobian')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('transformer-block', 'B9_jacobian')
### END HIDDEN TESTS

# %% [markdown]
# The next cell uses your `stack_forward` on 32 random layers `tanh(Linear(64, 64))`, built the
# same way for both modes, and plots the size of the gradient at each layer's input after one
# backward pass. The loss is `out.sum() / sqrt(64)`, which hands every example a gradient of norm
# 1 at the top; each point is the mean over the 32 examples of the norm of that example's
# gradient. Layer 1 is the closest to the input, the farthest from the loss. Compare how far the
# signal falls through the plain stack with the residual one.

# %% grader="skip"
import matplotlib.pyplot as plt


def grad_norm_per_layer(residual, depth=32, d=64, batch=32):
    """Mean norm of dL/dh per example at the input h of every layer of a random tanh stack, layer 1 first."""
    torch.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(d, d), nn.Tanh()) for _ in range(depth)]
    x = torch.randn(batch, d)                                      # (batch, d)
    inputs = []

    def recorded(layer):
        def f(h):
            h.retain_grad()
            inputs.append(h)
            return layer(h)
        return f

    x.requires_grad_(True)
    out = stack_forward([recorded(layer) for layer in layers], x, residual=residual)
    (out.sum() / d ** 0.5).backward()                              # a unit gradient per example
    return [h.grad.norm(dim=-1).mean().item() for h in inputs]


try:
    plain, residual = grad_norm_per_layer(residual=False), grad_norm_per_layer(residual=True)
except NotImplementedError:
    print("Write stack_forward in the B9 cell first, then run this cell again to see the plot.")
else:
    layer_ids = range(1, len(plain) + 1)
    plt.figure(figsize=(7, 4))
    plt.semilogy(layer_ids, residual, "o-", label="residual: x + f(x)")
    plt.semilogy(layer_ids, plain, "s-", label="plain: f(x)")
    plt.xlabel("layer (1 = closest to the input)")
    plt.ylabel("gradient norm at the layer's input")
    plt.title("Gradient norm per layer in a 32-layer tanh stack")
    plt.legend()
    plt.show()
    print(f"layer 1: residual {residual[0]:.1f}, plain {plain[0]:.0e}")
