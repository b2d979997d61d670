"""Misconceptions of `mlp`: the position-wise MLP (B4) and SwiGLU with its hidden width (B5).
C8 (why the nonlinearity is needed) is graded by hand, so it has no entries.

Most wrong answers are a correct answer with one line changed (``changed``)."""
from autograder.grader_side.misconceptions import changed, variant, wrong

# Correct answers, each written so one line can be made wrong.
_MLP = '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        if activation not in ("gelu", "relu"):
            raise ValueError(f"unknown activation {activation!r}")
        d_ff = d_ff or 4 * d_model
        self.linear1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU() if activation == "gelu" else nn.ReLU()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.act(self.linear1(x)))
'''

_SWIGLU = '''
class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))
'''

_HIDDEN_DIM = '''
def swiglu_hidden_dim(d_model, multiple_of=256):
    hidden = int(2 * 4 * d_model / 3)
    return -(-hidden // multiple_of) * multiple_of
'''

_ACT = 'nn.GELU() if activation == "gelu" else nn.ReLU()'
_CHECK_ACTIVATION = '''        if activation not in ("gelu", "relu"):
            raise ValueError(f"unknown activation {activation!r}")
'''
_FORWARD = "self.linear2(self.act(self.linear1(x)))"
_ROUND_UP = "return -(-hidden // multiple_of) * multiple_of"

ENTRIES = [
    # ---- B4 ------------------------------------------------------------------------------------
    wrong(
        "B4-tanh-gelu",
        "Uses the tanh approximation of GELU where the exact erf form is asked.",
        "The two GELUs differ by up to about 5e-4, more than the tolerance: re-read which form B4 "
        "asks for and what nn.GELU computes by default.",
        "B4_code",
        changed(_MLP, "nn.GELU()", 'nn.GELU(approximate="tanh")'),
    ),
    wrong(
        "B4-no-activation",
        "Leaves out the nonlinearity, so the MLP is two linear maps in a row: one affine map.",
        "Without phi the two layers collapse into a single affine map (C8): apply the activation "
        "between linear1 and linear2.",
        "B4_code",
        changed(_MLP, _FORWARD, "self.linear2(self.linear1(x))"),
    ),
    wrong(
        "B4-relu-always",
        "Always applies ReLU and ignores the activation argument, whose default is GELU.",
        "Build the activation from the argument you are given: \"gelu\" (the default) or \"relu\".",
        "B4_code",
        changed(_MLP, _ACT, "nn.ReLU()"),
    ),
    wrong(
        "B4-gelu-always",
        "Always applies GELU, even when activation=\"relu\" is asked for.",
        "Read the activation argument in __init__ and keep the function it names.",
        "B4_code",
        changed(_MLP, _ACT, "nn.GELU()"),
    ),
    wrong(
        "B4-default-d-ff-equals-d",
        "Takes d_ff = d_model by default instead of 4 * d_model.",
        "The hidden layer is usually four times wider than the stream: check MLP(8)'s parameter shapes.",
        "B4_code",
        changed(_MLP, "d_ff = d_ff or 4 * d_model", "d_ff = d_ff or d_model"),
    ),
    wrong(
        "B4-d-ff-ignored",
        "Always makes the hidden layer 4 * d_model wide, ignoring a d_ff that is given.",
        "4 * d_model is only the default: use d_ff when the caller passes one.",
        "B4_code",
        changed(_MLP, "d_ff = d_ff or 4 * d_model", "d_ff = 4 * d_model"),
    ),
    wrong(
        "B4-silu-for-gelu",
        "Uses SiLU (x times sigmoid(x)) for \"gelu\"; the two curves look alike but differ.",
        "GELU is x times the standard normal CDF of x: compare your activation with F.gelu at -1 and 2.",
        "B4_code",
        changed(_MLP, "nn.GELU() if", "nn.SiLU() if"),
    ),
    wrong(
        "B4-activation-on-output",
        "Applies the activation after linear2 instead of between the two layers.",
        "Re-read the MLP formula in B4: the nonlinearity acts on the hidden layer, not on the output.",
        "B4_code",
        changed(_MLP, _FORWARD, "self.act(self.linear2(self.linear1(x)))"),
    ),
    wrong(
        "B4-unknown-activation-accepted",
        "Accepts any activation name and silently falls back to ReLU, where anything but \"gelu\" and "
        "\"relu\" should raise ValueError.",
        "A typo such as activation=\"gleu\" should stop the program, not train another model: raise "
        "ValueError for any other name.",
        "B4_code",
        changed(_MLP, _CHECK_ACTIVATION, ""),
    ),
    wrong(
        "B4-asserts-activation",
        "Rejects an unknown activation with assert (an AssertionError) where the TODO asks for ValueError.",
        "assert is for the programmer's own invariants and vanishes under python -O: raise "
        "ValueError(...) for a bad argument.",
        "B4_code",
        changed(_MLP, _CHECK_ACTIVATION, '        assert activation in ("gelu", "relu"), activation\n'),
    ),
    # ---- B5 ------------------------------------------------------------------------------------
    wrong(
        "B5-silu-on-up-branch",
        "Puts SiLU on the up projection w3 instead of the gate w1.",
        "Re-read the SwiGLU formula in B5: which of the two up-projections passes through SiLU? "
        "The names matter because the grader loads weights into them.",
        "B5_code",
        changed(_SWIGLU, "F.silu(self.w1(x)) * self.w3(x)", "self.w1(x) * F.silu(self.w3(x))"),
    ),
    wrong(
        "B5-sigmoid-gate",
        "Gates with sigmoid(w1 x) instead of silu(w1 x) = w1 x * sigmoid(w1 x).",
        "SiLU multiplies its input by the sigmoid: compare F.silu and torch.sigmoid at a few points.",
        "B5_code",
        changed(_SWIGLU, "F.silu(self.w1(x))", "torch.sigmoid(self.w1(x))"),
    ),
    wrong(
        "B5-gelu-gate",
        "Gates with GELU (GEGLU) instead of SiLU.",
        "The \"Swi\" in SwiGLU is Swish, also called SiLU: z * sigmoid(z).",
        "B5_code",
        changed(_SWIGLU, "F.silu(self.w1(x))", "F.gelu(self.w1(x))"),
    ),
    wrong(
        "B5-with-biases",
        "Gives w1, w3 and w2 biases; SwiGLU's three projections have none.",
        "Build the three nn.Linear layers with bias=False and check SwiGLU(8, 16)'s parameters.",
        "B5_code",
        _SWIGLU.replace(", bias=False", ""),
    ),
    wrong(
        "B5-down-projection-shape",
        "Builds w2 as d_model -> d_ff, the shape of w1 and w3, where it maps d_ff back down to d_model.",
        "nn.Linear(n_in, n_out): the down projection takes the d_ff hidden units to d_model outputs.",
        "B5_code",
        changed(_SWIGLU, "self.w2 = nn.Linear(d_ff, d_model, bias=False)", "self.w2 = nn.Linear(d_model, d_ff, bias=False)"),
    ),
    wrong(
        "B5-d-ff-ignored",
        "Sizes the hidden layer with swiglu_hidden_dim(d_model) instead of the d_ff it is given.",
        "SwiGLU(d_model, d_ff) builds exactly the width it is given; swiglu_hidden_dim is for choosing one.",
        "B5_code",
        changed(_SWIGLU, "super().__init__()\n", "super().__init__()\n        d_ff = swiglu_hidden_dim(d_model)\n"),
    ),
    wrong(
        "B5-unrounded-width",
        "Returns int(2/3 * 4d) without rounding it up to a multiple of multiple_of.",
        "Llama rounds the width up to a multiple of 256: swiglu_hidden_dim(4096) is 11008, not 10922.",
        "B5_code",
        changed(_HIDDEN_DIM, _ROUND_UP, "return hidden"),
    ),
    wrong(
        "B5-rounds-down",
        "Rounds the width down to a multiple of multiple_of instead of up.",
        "Rounding must go up so the layer never gets narrower than 2/3 of 4d: check that 10922 "
        "becomes 11008.",
        "B5_code",
        changed(_HIDDEN_DIM, _ROUND_UP, "return hidden // multiple_of * multiple_of"),
    ),
    wrong(
        "B5-rounds-to-nearest",
        "Rounds the width to the nearest multiple, which can go down.",
        "Always round up to the next multiple; try swiglu_hidden_dim(512), whose 1365 must become 1536.",
        "B5_code",
        changed(_HIDDEN_DIM, _ROUND_UP, "return round(hidden / multiple_of) * multiple_of"),
    ),
    wrong(
        "B5-always-adds-a-multiple",
        "Adds one more multiple even when the width already is a multiple of multiple_of.",
        "Rounding up leaves a width that is already a multiple unchanged: try multiple_of=1.",
        "B5_code",
        changed(_HIDDEN_DIM, _ROUND_UP, "return (hidden // multiple_of + 1) * multiple_of"),
    ),
    wrong(
        "B5-rounds-hidden-to-nearest",
        "Rounds 2/3 of 4d to the nearest integer (round) before rounding up, where Llama truncates (int).",
        "int(2 * 4 * d_model / 3) drops the fraction; round() adds one whenever the fraction is 2/3, "
        "which shows with multiple_of=1: compare the two for d_model = 7.",
        "B5_code",
        changed(_HIDDEN_DIM, "int(2 * 4 * d_model / 3)", "round(2 * 4 * d_model / 3)"),
    ),
    wrong(
        "B5-ceil-hidden",
        "Rounds 2/3 of 4d up (ceil) before rounding up to the multiple, where Llama truncates (int).",
        "Only the second step rounds up: the first is int(2 * 4 * d_model / 3), which drops the fraction.",
        "B5_code",
        changed(_HIDDEN_DIM, "int(2 * 4 * d_model / 3)", "math.ceil(2 * 4 * d_model / 3)"),
    ),
    wrong(
        "B5-float-width",
        "Returns the width as a float (11008.0), where a layer width must be an int.",
        "nn.Linear needs an int width: use integer arithmetic (//) or int(...) around the result.",
        "B5_code",
        changed(_HIDDEN_DIM, _ROUND_UP, "return math.ceil(hidden / multiple_of) * multiple_of * 1.0"),
    ),
    wrong(
        "B5-multiple-of-ignored",
        "Always rounds up to a multiple of 256, ignoring a multiple_of that is given.",
        "256 is only the default: round up to the multiple_of the caller passes.",
        "B5_code",
        changed(_HIDDEN_DIM, _ROUND_UP, "return -(-hidden // 256) * 256"),
    ),
]

VARIANTS = [
    # ---- B4 ------------------------------------------------------------------------------------
    variant("B4-functional-activation", "B4_code", '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        if activation == "gelu":
            self.phi = F.gelu
        elif activation == "relu":
            self.phi = F.relu
        else:
            raise ValueError(activation)
        hidden = 4 * d_model if d_ff is None else d_ff
        self.linear1 = nn.Linear(d_model, hidden)
        self.linear2 = nn.Linear(hidden, d_model)

    def forward(self, x):
        return self.linear2(self.phi(self.linear1(x)))
'''),
    variant("B4-erf-by-hand", "B4_code", '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        if activation not in ("gelu", "relu"):
            raise ValueError(f"activation must be gelu or relu, got {activation}")
        self.activation = activation
        d_ff = d_ff if d_ff is not None else 4 * d_model
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        z = self.linear1(x)
        if self.activation == "gelu":
            z = 0.5 * z * (1.0 + torch.erf(z / math.sqrt(2.0)))
        else:
            z = z.clamp(min=0)
        return self.linear2(z)
'''),
    variant("B4-float64-einsum", "B4_code", '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        if activation not in ("gelu", "relu"):
            raise ValueError(activation)
        self.activation = activation
        d_ff = d_ff or 4 * d_model
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        x64 = x.double()
        h = torch.einsum("...i,oi->...o", x64, self.linear1.weight.double()) + self.linear1.bias.double()
        h = F.gelu(h) if self.activation == "gelu" else F.relu(h)
        y = torch.einsum("...i,oi->...o", h, self.linear2.weight.double()) + self.linear2.bias.double()
        return y.to(x.dtype)
'''),
    variant("B4-layers-also-in-sequential", "B4_code", '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        if activation not in ("gelu", "relu"):
            raise ValueError(activation)
        d_ff = d_ff or 4 * d_model
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        # The same two layers again, in a Sequential: the state_dict has net.0.* and net.2.* too.
        self.net = nn.Sequential(self.linear1, nn.GELU() if activation == "gelu" else nn.ReLU(), self.linear2)

    def forward(self, x):
        return self.net(x)
'''),
    variant("B4-sequential-first", "B4_code", '''
class MLP(nn.Module):
    def __init__(self, d_model, d_ff=None, activation="gelu"):
        super().__init__()
        acts = {"gelu": nn.GELU, "relu": nn.ReLU}
        if activation not in acts:
            raise ValueError(f"activation must be gelu or relu, not {activation!r}")
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), acts[activation](), nn.Linear(d_ff, d_model))
        self.linear1, self.linear2 = self.net[0], self.net[2]     # registered second: net.* come first

    def forward(self, x):
        return self.net(x)
'''),
    # ---- B5 ------------------------------------------------------------------------------------
    variant("B5-layers-also-in-a-list", "B5_code", '''
class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.projections = nn.ModuleList([self.w1, self.w3, self.w2])

    def forward(self, x):
        gate, up, down = self.projections
        return down(F.silu(gate(x)) * up(x))
'''),
    variant("B5-numpy-width", "B5_code", '''
import numpy as np


def swiglu_hidden_dim(d_model, multiple_of=256):
    hidden = np.int64(8 * d_model // 3)
    return (hidden + multiple_of - 1) // multiple_of * multiple_of     # a numpy int
'''),
    variant("B5-functional-silu", "B5_code", '''
def _forward(self, x):
    return self.w2(F.silu(self.w1(x)) * self.w3(x))


SwiGLU.forward = _forward
'''),
    variant("B5-einsum-weights", "B5_code", '''
def _forward(self, x):
    gate = torch.einsum("...d,fd->...f", x, self.w1.weight)
    up = torch.einsum("...d,fd->...f", x, self.w3.weight)
    return torch.einsum("...f,df->...d", gate * torch.sigmoid(gate) * up, self.w2.weight)


SwiGLU.forward = _forward
'''),
    variant("B5-llama-rounding", "B5_code", '''
def swiglu_hidden_dim(d_model, multiple_of=256):
    hidden_dim = int(2 * (4 * d_model) / 3)
    return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
'''),
    variant("B5-math-ceil", "B5_code", '''
def swiglu_hidden_dim(d_model, multiple_of=256):
    return int(math.ceil((8 * d_model // 3) / multiple_of) * multiple_of)
'''),
]
