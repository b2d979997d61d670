"""Misconceptions of `norms`: layer norm by hand (C5), layer norm (B1), RMSNorm (B2) and the
layer norm backward pass (B3).

Most wrong answers are a correct function with one line changed (``changed``), the way a student's
almost-right answer usually is."""
from autograder.grader_side.misconceptions import changed, variant, wrong

# Correct answers, each written so one line can be made wrong.
_LAYER_NORM = '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta
'''

_RMS_NORM = '''
def rms_norm(x, gamma, eps=1e-6):
    return gamma * x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)
'''

_BACKWARD = '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    d = x.shape[-1]
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    r = torch.rsqrt(var + eps)
    xhat = (x - mu) * r
    g = gamma * grad_out
    grad_x = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(0), grad_out.reshape(-1, d).sum(0)
'''

ENTRIES = [
    # ---- C5 ------------------------------------------------------------------------------------
    wrong(
        "C5-sample-std",
        "Divides by the sample standard deviation (d - 1 under the root), which gives [0.7071, -0.7071].",
        "Layer norm uses the population statistics of the d features: re-read the formula for sigma in C5.",
        "C5_code",
        '''
q5_layer_norm_u = [0.7071, -0.7071]
''',
    ),
    wrong(
        "C5-not-centered",
        "Divides u by its standard deviation without subtracting the mean first.",
        "The normalized vector has mean 0: check that your two numbers add up to zero.",
        "C5_code",
        '''
q5_layer_norm_u = [3.0, 1.0]
''',
    ),
    wrong(
        "C5-mean-not-divided",
        "Takes the sum of the entries as the mean (forgets to divide by d), so the vector is shifted "
        "by the wrong amount.",
        "The mean of [3, 1] is their sum divided by d = 2; then check that your result has mean 0 "
        "and population std 1.",
        "C5_code",
        '''
q5_layer_norm_u = [-0.4472, -1.3416]
''',
    ),
    # ---- B1 ------------------------------------------------------------------------------------
    wrong(
        "B1-sample-variance",
        "Divides by d - 1 (sample variance) where layer norm uses the population variance.",
        "torch.var divides by d - 1 unless told otherwise: check the variance of your output rows "
        "(it should be 1) and the worked example of B1's visible check.",
        "B1_code",
        changed(_LAYER_NORM, "var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)",
                "var = x.var(dim=-1, keepdim=True)"),
    ),
    wrong(
        "B1-eps-outside-sqrt",
        "Adds eps after the square root, sqrt(var) + eps, instead of under it.",
        "The formula is sqrt(sigma^2 + eps). The difference shows on rows that are nearly constant, "
        "where sigma^2 is about as small as eps: test one.",
        "B1_code",
        changed(_LAYER_NORM, "torch.sqrt(var + eps)", "(torch.sqrt(var) + eps)"),
    ),
    wrong(
        "B1-eps-ignored",
        "Leaves eps out of the normalizer altogether.",
        "eps keeps the division stable when a row is nearly constant: compare your output with "
        "F.layer_norm on such a row, with eps=1e-3.",
        "B1_code",
        changed(_LAYER_NORM, "torch.sqrt(var + eps)", "torch.sqrt(var)"),
    ),
    wrong(
        "B1-normalizes-over-dim-0",
        "Takes the mean and variance over dim 0 (across tokens or the batch) instead of over each "
        "token's own features.",
        "Layer norm normalizes every token vector on its own: reduce over the last dim, for any "
        "number of leading dims.",
        "B1_code",
        changed(changed(_LAYER_NORM, "mu = x.mean(dim=-1, keepdim=True)", "mu = x.mean(dim=0, keepdim=True)"),
                "var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)", "var = ((x - mu) ** 2).mean(dim=0, keepdim=True)"),
    ),
    wrong(
        "B1-normalizes-over-all-dims",
        "Takes one mean and one variance over the whole tensor instead of one per token.",
        "Each row (token) gets its own statistics: check that every row of your output has mean 0.",
        "B1_code",
        changed(changed(_LAYER_NORM, "mu = x.mean(dim=-1, keepdim=True)", "mu = x.mean()"),
                "var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)", "var = ((x - mu) ** 2).mean()"),
    ),
    wrong(
        "B1-no-gamma",
        "Forgets the gain gamma: returns xhat + beta.",
        "The learned gain multiplies the normalized vector: test with a gamma that is not all ones.",
        "B1_code",
        changed(_LAYER_NORM, "return gamma * (x - mu)", "return (x - mu)"),
    ),
    wrong(
        "B1-no-beta",
        "Forgets the shift beta: returns gamma * xhat.",
        "The learned shift is added at the end: test with a beta that is not all zeros.",
        "B1_code",
        changed(_LAYER_NORM, " + beta\n", "\n"),
    ),
    wrong(
        "B1-gamma-beta-swapped",
        "Multiplies by beta and adds gamma, the two parameters' roles swapped.",
        "gamma is the gain (it multiplies) and beta the shift (it is added): re-read the last step "
        "of the formula in B1.",
        "B1_code",
        changed(_LAYER_NORM, "return gamma * (x - mu) / torch.sqrt(var + eps) + beta",
                "return beta * (x - mu) / torch.sqrt(var + eps) + gamma"),
    ),
    wrong(
        "B1-calls-builtin",
        "Calls torch's built-in F.layer_norm where the question asks you to write layer norm yourself.",
        "B1 is about the computation itself: write the mean, variance and normalization with basic "
        "tensor operations.",
        "B1_code",
        '''
def layer_norm(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
''',
    ),
    # ---- B2 ------------------------------------------------------------------------------------
    wrong(
        "B2-centers",
        "Subtracts the row mean as layer norm does; RMSNorm does not center.",
        "RMSNorm only rescales: re-read its formula in B2 and compare with the worked example [3, 4].",
        "B2_code",
        changed(_RMS_NORM, "return gamma * x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)",
                "xc = x - x.mean(dim=-1, keepdim=True)\n    return gamma * xc / torch.sqrt((xc * xc).mean(dim=-1, keepdim=True) + eps)"),
    ),
    wrong(
        "B2-divides-by-std",
        "Divides x by its standard deviation instead of its root mean square.",
        "The root mean square averages x_k^2 itself, not the squared distance from the mean: they "
        "differ whenever the row mean is not 0.",
        "B2_code",
        '''
def rms_norm(x, gamma, eps=1e-6):
    var = x.var(dim=-1, keepdim=True, correction=0)
    return gamma * x / torch.sqrt(var + eps)
''',
    ),
    wrong(
        "B2-eps-outside-sqrt",
        "Adds eps after the square root instead of under it.",
        "The formula puts eps inside the root; test on a row of size about 1e-4, where the mean "
        "square is smaller than eps.",
        "B2_code",
        changed(_RMS_NORM, "torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)",
                "(torch.sqrt((x * x).mean(dim=-1, keepdim=True)) + eps)"),
    ),
    wrong(
        "B2-mean-abs",
        "Averages |x| instead of x^2 under the square root.",
        "RMS stands for root of the mean of the squares: check [3, 4], whose RMS is sqrt(12.5).",
        "B2_code",
        changed(_RMS_NORM, "(x * x).mean(", "x.abs().mean("),
    ),
    wrong(
        "B2-sums-squares",
        "Sums the squares of the row under the root instead of averaging them.",
        "The mean square divides the sum of x_k^2 by d, the row's length: check [3, 4], whose RMS is "
        "sqrt(12.5), not 5.",
        "B2_code",
        changed(_RMS_NORM, "(x * x).mean(", "(x * x).sum("),
    ),
    wrong(
        "B2-no-gamma",
        "Forgets the gain gamma.",
        "RMSNorm still has a learned gain: test with a gamma that is not all ones.",
        "B2_code",
        changed(_RMS_NORM, "return gamma * x /", "return x /"),
    ),
    wrong(
        "B2-layer-norm-eps",
        "Changes rms_norm's default eps from 1e-6 to layer norm's 1e-5.",
        "Keep every default of the signature as given (eps=1e-6 here), and use the eps you are given.",
        "B2_code",
        changed(_RMS_NORM, "eps=1e-6", "eps=1e-5"),
    ),
    # ---- B3 ------------------------------------------------------------------------------------
    wrong(
        "B3-no-mean-term",
        "Leaves out the mean(g) term of grad_x, so the rows of grad_x no longer sum to 0.",
        "Every x_j moves the mean mu: re-read the derivation of d xhat_i / d x_j and check that each "
        "row of your grad_x sums to zero.",
        "B3_code",
        changed(_BACKWARD, "(g - g.mean(-1, keepdim=True) - xhat", "(g - xhat"),
    ),
    wrong(
        "B3-no-xhat-term",
        "Leaves out the xhat * mean(g * xhat) term of grad_x, which comes from the variance's "
        "dependence on x.",
        "sigma^2 depends on every x_j too: compare your grad_x with autograd through F.layer_norm "
        "on a random input.",
        "B3_code",
        changed(_BACKWARD, " - xhat * (g * xhat).mean(-1, keepdim=True))", ")"),
    ),
    wrong(
        "B3-no-gamma-in-g",
        "Uses grad_out where the formula has g = gamma * grad_out.",
        "The gradient with respect to xhat goes back through the gain: test with a gamma that is "
        "not all ones.",
        "B3_code",
        changed(_BACKWARD, "g = gamma * grad_out", "g = grad_out"),
    ),
    wrong(
        "B3-no-r-factor",
        "Forgets the overall factor r = 1/sqrt(sigma^2 + eps) in grad_x.",
        "xhat = (x - mu) r, so every part of d xhat / d x carries a factor r: re-read the formula.",
        "B3_code",
        changed(_BACKWARD, "grad_x = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))",
                "grad_x = g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True)"),
    ),
    wrong(
        "B3-param-grads-sum-dim-0",
        "Sums grad_gamma and grad_beta over dim 0 only, so with more than one leading dim they keep "
        "extra dims.",
        "gamma and beta are shared by every token of every batch: sum over all leading dims and "
        "check that the result has gamma's shape (d,).",
        "B3_code",
        changed(_BACKWARD, "(grad_out * xhat).reshape(-1, d).sum(0), grad_out.reshape(-1, d).sum(0)",
                "(grad_out * xhat).sum(dim=0), grad_out.sum(dim=0)"),
    ),
    wrong(
        "B3-empty-dim-tuple",
        "Sums the parameter gradients over a tuple of leading dims, which is empty for a 1-D input, "
        "and sum(dim=()) then sums over everything.",
        "Try a 1-D x: grad_gamma must still have shape (d,). The hint in B3 shows a reshape that "
        "works for any number of leading dims.",
        "B3_code",
        '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    r = torch.rsqrt(var + eps)
    xhat = (x - mu) * r
    g = gamma * grad_out
    grad_x = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    leading = tuple(range(x.dim() - 1))
    return grad_x, (grad_out * xhat).sum(dim=leading), grad_out.sum(dim=leading)
''',
    ),
    wrong(
        "B3-grad-gamma-uses-x",
        "Computes grad_gamma from the raw input x instead of the normalized xhat.",
        "gamma multiplies xhat in the forward pass, so its gradient sums grad_out times xhat.",
        "B3_code",
        changed(_BACKWARD, "(grad_out * xhat).reshape(-1, d)", "(grad_out * x).reshape(-1, d)"),
    ),
    wrong(
        "B3-eps-ignored",
        "Computes r = 1/sqrt(sigma^2) without eps, so the gradient is wrong on nearly constant rows.",
        "The backward pass must use the same r as the forward pass, eps included: test a nearly "
        "constant row with eps=1e-3.",
        "B3_code",
        changed(_BACKWARD, "torch.rsqrt(var + eps)", "torch.rsqrt(var)"),
    ),
    # ---- an argument ignored: the default used whatever the caller passes -----------------------
    wrong(
        "B1-eps-hard-coded",
        "Uses the default 1e-5 under the square root whatever eps the caller passes.",
        "eps is an argument: nearly constant rows with eps=1e-3 must use 1e-3.",
        "B1_code",
        changed(_LAYER_NORM, "torch.sqrt(var + eps)", "torch.sqrt(var + 1e-5)"),
    ),
    wrong(
        "B2-eps-hard-coded",
        "Uses the default 1e-6 under the square root whatever eps the caller passes.",
        "eps is an argument: rows of size 1e-4 with eps=1e-4 must use 1e-4.",
        "B2_code",
        changed(_RMS_NORM, "keepdim=True) + eps)", "keepdim=True) + 1e-6)"),
    ),
    wrong(
        "B3-eps-hard-coded",
        "Uses the default 1e-5 in r whatever eps the caller passes, so the gradient belongs to "
        "another layer norm than the forward pass.",
        "The backward pass must use the eps it is given, as the forward pass does.",
        "B3_code",
        changed(_BACKWARD, "torch.rsqrt(var + eps)", "torch.rsqrt(var + 1e-5)"),
    ),
    wrong(
        "B3-grad-out-ignored",
        "Differentiates the sum of the outputs (a grad_out of ones) instead of using the grad_out it is given.",
        "grad_out is dL/dy from the layers above: every gradient you return is built from it.",
        "B3_code",
        changed(_BACKWARD, "    d = x.shape[-1]\n", "    d = x.shape[-1]\n    grad_out = torch.ones_like(x)\n"),
    ),
]

VARIANTS = [
    # ---- C5 ------------------------------------------------------------------------------------
    variant("C5-tuple-of-ints", "C5_code", '''
q5_layer_norm_u = (1, -1)
'''),
    variant("C5-computed-with-torch", "C5_code", '''
u = torch.tensor([3.0, 1.0])
q5_layer_norm_u = ((u - u.mean()) / u.std(correction=0)).tolist()
'''),
    variant("C5-tensor", "C5_code", '''
q5_layer_norm_u = torch.tensor([1.0, -1.0])
'''),
    variant("C5-list-of-0d-tensors", "C5_code", '''
u = torch.tensor([3.0, 1.0])
q5_layer_norm_u = list((u - u.mean()) / u.std(correction=0))     # [tensor(1.), tensor(-1.)]
'''),
    variant("C5-text", "C5_code", '''
q5_layer_norm_u = "[1, -1]"
'''),
    # ---- B1 ------------------------------------------------------------------------------------
    variant("B1-float64-internals", "B1_code", '''
def layer_norm(x, gamma, beta, eps=1e-5):
    x64 = x.double()
    mu = x64.mean(dim=-1, keepdim=True)
    var = ((x64 - mu) ** 2).mean(dim=-1, keepdim=True)
    y = gamma.double() * (x64 - mu) / torch.sqrt(var + eps) + beta.double()
    return y.to(x.dtype)
'''),
    variant("B1-manual-rsqrt", "B1_code", '''
def layer_norm(x, gamma, beta, eps=1e-5):
    d = x.shape[-1]
    mu = x.sum(dim=-1, keepdim=True) / d
    centered = x - mu
    var = (centered * centered).sum(dim=-1, keepdim=True) / d
    return centered * torch.rsqrt(var + eps) * gamma + beta
'''),
    variant("B1-var-unbiased-false", "B1_code", '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mean = torch.mean(x, -1, keepdim=True)
    var = torch.var(x, -1, unbiased=False, keepdim=True)
    return torch.addcmul(beta, gamma, (x - mean) / (var + eps).sqrt())
'''),
    # ---- B2 ------------------------------------------------------------------------------------
    variant("B2-float64-internals", "B2_code", '''
def rms_norm(x, gamma, eps=1e-6):
    x64 = x.to(torch.float64)
    y = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)
    return (y * gamma.to(torch.float64)).to(x.dtype)
'''),
    variant("B2-einsum", "B2_code", '''
def rms_norm(x, gamma, eps=1e-6):
    d = x.shape[-1]
    mean_sq = torch.einsum("...k,...k->...", x, x).unsqueeze(-1) / d
    return x / (mean_sq + eps).sqrt() * gamma
'''),
    variant("B2-vector-norm", "B2_code", '''
def rms_norm(x, gamma, eps=1e-6):
    d = x.shape[-1]
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    return gamma * x / torch.sqrt(norm ** 2 / d + eps)
'''),
    # ---- B3 ------------------------------------------------------------------------------------
    variant("B3-float64-internals", "B3_code", '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    d = x.shape[-1]
    x64, go, gm = x.double(), grad_out.double(), gamma.double()
    mu = x64.mean(-1, keepdim=True)
    var = ((x64 - mu) ** 2).mean(-1, keepdim=True)
    r = 1.0 / torch.sqrt(var + eps)
    xhat = (x64 - mu) * r
    g = gm * go
    grad_x = (r / d) * (d * g - g.sum(-1, keepdim=True) - xhat * (g * xhat).sum(-1, keepdim=True))
    grad_gamma = (go * xhat).reshape(-1, d).sum(0)
    grad_beta = go.reshape(-1, d).sum(0)
    return grad_x.to(x.dtype), grad_gamma.to(x.dtype), grad_beta.to(x.dtype)
'''),
    variant("B3-einsum-list", "B3_code", '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    r = (var + eps) ** -0.5
    xhat = (x - mu) * r
    g = grad_out * gamma
    mean_g = g.mean(-1, keepdim=True)
    mean_gx = (g * xhat).mean(-1, keepdim=True)
    grad_x = r * (g - mean_g - xhat * mean_gx)
    grad_gamma = torch.einsum("...k,...k->k", grad_out, xhat)
    grad_beta = torch.einsum("...k->k", grad_out)
    return [grad_x, grad_gamma, grad_beta]
'''),
    variant("B3-flatten-rows", "B3_code", '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    shape, d = x.shape, x.shape[-1]
    X, G = x.reshape(-1, d), grad_out.reshape(-1, d)
    mu = X.mean(1, keepdim=True)
    r = 1 / torch.sqrt(X.var(1, unbiased=False, keepdim=True) + eps)
    xhat = (X - mu) * r
    g = G * gamma
    dx = r * (g - g.mean(1, keepdim=True) - xhat * (g * xhat).mean(1, keepdim=True))
    return dx.reshape(shape), (G * xhat).sum(0), G.sum(0)
'''),
]

# ---- forbidden routes: the checks' values are right, the grader judges the source ---------------
_BY_HAND = ("Any route to torch's own normalization counts, whatever it is called or however it is "
            "reached: compute the statistics and the normalization with basic tensor operations.")

ENTRIES += [
    wrong(
        "B1-torch-layer-norm",
        "Calls torch.layer_norm, the built-in layer norm under another name, where B1 asks for it written by hand.",
        _BY_HAND,
        "B1_code",
        '''
def layer_norm(x, gamma, beta, eps=1e-5):
    return torch.layer_norm(x, x.shape[-1:], gamma, beta, eps)
''',
    ),
    wrong(
        "B1-group-norm-one-group",
        "Computes layer norm as a group norm with a single group, a more general torch normalization "
        "that reduces to it.",
        _BY_HAND,
        "B1_code",
        '''
def layer_norm(x, gamma, beta, eps=1e-5):
    d = x.shape[-1]
    rows = F.group_norm(x.reshape(-1, 1, d), 1, eps=eps)     # (N, 1, d): one group per row
    return rows.reshape(x.shape) * gamma + beta
''',
    ),
    wrong(
        "B1-dispatch-off",
        "Calls F.layer_norm with torch's dispatch hooks switched off, so the call is hidden from the "
        "notebook's own checks.",
        _BY_HAND,
        "B1_code",
        '''
def layer_norm(x, gamma, beta, eps=1e-5):
    with torch._C.DisableTorchFunction():
        return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
''',
    ),
    wrong(
        "B1-aten-by-name",
        "Reaches torch's native layer norm kernel through torch.ops, by a name spelled in pieces.",
        _BY_HAND,
        "B1_code",
        '''
def layer_norm(x, gamma, beta, eps=1e-5):
    kernel = getattr(torch.ops.aten, "native_" + "layer" + "_norm")
    return kernel(x, [x.shape[-1]], gamma, beta, eps)[0]
''',
    ),
    wrong(
        "B2-calls-builtin",
        "Calls torch's built-in F.rms_norm where B2 asks for RMSNorm written by hand.",
        _BY_HAND,
        "B2_code",
        '''
def rms_norm(x, gamma, eps=1e-6):
    return F.rms_norm(x, x.shape[-1:], gamma, eps)
''',
    ),
    wrong(
        "B2-rms-norm-module",
        "Builds an nn.RMSNorm with gamma as its weight and runs it.",
        _BY_HAND,
        "B2_code",
        '''
def rms_norm(x, gamma, eps=1e-6):
    norm = nn.RMSNorm(x.shape[-1], eps=eps)
    with torch.no_grad():
        norm.weight.copy_(gamma)
        return norm(x)
''',
    ),
    wrong(
        "B2-dispatch-off",
        "Calls torch.rms_norm with torch's dispatch hooks switched off, so the call is hidden from the "
        "notebook's own checks.",
        _BY_HAND,
        "B2_code",
        '''
def rms_norm(x, gamma, eps=1e-6):
    with torch._C.DisableTorchFunction():
        return torch.rms_norm(x, [x.shape[-1]], gamma, eps)
''',
    ),
    wrong(
        "B3-autograd-grad",
        "Gets the three gradients from torch.autograd.grad through layer norm instead of the closed form "
        "B3 asks for.",
        "B3 is about deriving the backward pass: write grad_x, grad_gamma and grad_beta from the formulas, "
        "with no autograd inside layer_norm_backward.",
        "B3_code",
        '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    leaves = [t.detach().clone().requires_grad_(True) for t in (x, gamma, torch.zeros_like(gamma))]
    with torch.enable_grad():
        y = F.layer_norm(leaves[0], leaves[0].shape[-1:], leaves[1], leaves[2], eps)
        return torch.autograd.grad(y, leaves, grad_out)
''',
    ),
    wrong(
        "B3-calls-backward",
        "Runs .backward() through its own layer norm and returns the leaves' .grad instead of the closed form.",
        "B3 is about deriving the backward pass: write grad_x, grad_gamma and grad_beta from the formulas, "
        "with no autograd inside layer_norm_backward.",
        "B3_code",
        '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    leaves = [t.detach().clone().requires_grad_(True) for t in (x, gamma, torch.zeros_like(gamma))]
    with torch.enable_grad():
        layer_norm(*leaves, eps).backward(grad_out)
    return tuple(leaf.grad for leaf in leaves)
''',
    ),
    wrong(
        "B3-torch-func-vjp",
        "Gets the gradients from torch.func.vjp instead of the closed form.",
        "B3 is about deriving the backward pass: write grad_x, grad_gamma and grad_beta from the formulas, "
        "with no autograd inside layer_norm_backward.",
        "B3_code",
        '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    def forward(x, gamma, beta):
        var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return gamma * (x - mu) / torch.sqrt(var + eps) + beta
    _, pullback = torch.func.vjp(forward, x, gamma, torch.zeros_like(gamma))
    return pullback(grad_out)
''',
    ),
]

VARIANTS += [
    variant("B1-compared-with-builtin", "B1_code", '''
def layer_norm(x, gamma, beta, eps=1e-5):
    """By hand: F.layer_norm(x, x.shape[-1:], gamma, beta, eps) gives the same."""
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta


_x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
assert torch.allclose(layer_norm(_x, torch.ones(6), torch.zeros(6)), F.layer_norm(_x, (6,)), atol=1e-5)
'''),
    variant("B3-compared-with-autograd", "B3_code", '''
def layer_norm_backward(grad_out, x, gamma, eps=1e-5):
    d = x.shape[-1]
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    r = torch.rsqrt(var + eps)
    xhat = (x - mu) * r
    g = gamma * grad_out
    grad_x = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(0), grad_out.reshape(-1, d).sum(0)


_leaves = [t.requires_grad_(True) for t in (torch.randn(3, 5), torch.randn(5), torch.randn(5))]
_g = torch.randn(3, 5)
F.layer_norm(_leaves[0], (5,), _leaves[1], _leaves[2]).backward(_g)
for _mine, _leaf in zip(layer_norm_backward(_g, _leaves[0].detach(), _leaves[1].detach()), _leaves):
    assert torch.allclose(_mine, _leaf.grad, atol=1e-4)
'''),
]
