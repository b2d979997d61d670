"""Misconceptions of `depth`: the residual path's recurrent cousin (C2), residual stacks and the
residual Jacobian (B9)."""
from autograder.grader_side.misconceptions import changed, phrasings, variant, wrong

# Correct answers, each written so one line can be made wrong.
_STACK = '''
def stack_forward(sublayers, x, residual=True):
    for f in sublayers:
        x = x + f(x) if residual else f(x)
    return x
'''

_JACOBIAN = '''
def residual_jacobian(f, x):
    return torch.eye(x.shape[0], dtype=x.dtype) + torch.autograd.functional.jacobian(f, x)
'''

ENTRIES = [
    # ---- C2 ------------------------------------------------------------------------------------
    wrong(
        "C2-plain-rnn",
        "Names the plain RNN, whose state goes through a matrix and a squashing function at every "
        "step, so its gradient fades instead of riding an additive path.",
        "Re-read C2: the architecture you want fixed the plain RNN's fading gradient with a gated, "
        "additive memory.",
        "C2_code",
        '''
q2_residual_cousin = "RNN"
''',
    ),
    wrong(
        "C2-hedge-lstm-or-rnn",
        "Hedges between the LSTM and the plain RNN; an answer that also names a wrong option earns nothing.",
        "Pick one architecture: which of the two carries its memory by addition?",
        "C2_code",
        '''
q2_residual_cousin = "LSTM or RNN"
''',
    ),
    wrong(
        "C2-resnet",
        "Names ResNet, where residual connections are usually credited, but the question asks for the "
        "earlier recurrent network with an additive memory path.",
        "C2 asks for a recurrent architecture: think of the network whose cell state is updated by "
        "gated addition from one time step to the next.",
        "C2_code",
        '''
q2_residual_cousin = "ResNet"
''',
    ),
    wrong(
        "C2-cnn",
        "Names a convolutional network, which is not recurrent and has no memory carried across time steps.",
        "The cousin is a recurrent network: re-read the paragraph on gated, additive memory in C2.",
        "C2_code",
        '''
q2_residual_cousin = "CNN"
''',
    ),
    # ---- B9: stack_forward ---------------------------------------------------------------------
    wrong(
        "B9-residual-replaces",
        "Treats the residual update as \"replace x\": x <- f(x) even when residual=True, so nothing is added.",
        "A residual sublayer adds its output to the stream it read: compare your residual and plain "
        "results on the two tanh layers of the visible check.",
        "B9_code",
        changed(_STACK, "x = x + f(x) if residual else f(x)", "x = f(x)"),
    ),
    wrong(
        "B9-reverse-order",
        "Applies the sublayers from last to first.",
        "The first function in the list is the layer closest to the input: make sure the order of "
        "application follows the list.",
        "B9_code",
        changed(_STACK, "for f in sublayers:", "for f in reversed(sublayers):"),
    ),
    wrong(
        "B9-adds-stack-input",
        "Adds the stack's original input at every layer (x <- x0 + f(x)) instead of the current stream.",
        "Each residual update adds to the vector the sublayer just read: trace two layers by hand and "
        "compare with your code.",
        "B9_code",
        '''
def stack_forward(sublayers, x, residual=True):
    x0 = x
    for f in sublayers:
        x = x0 + f(x) if residual else f(x)
    return x
''',
    ),
    wrong(
        "B9-residual-flag-inverted",
        "Swaps the two modes: plain when residual=True and residual when residual=False.",
        "Check which branch your code takes when residual=True: that is the mode that adds f(x) to x.",
        "B9_code",
        changed(_STACK, "x + f(x) if residual else f(x)", "f(x) if residual else x + f(x)"),
    ),
    wrong(
        "B9-always-residual",
        "Always adds the residual, ignoring residual=False.",
        "residual=False asks for the plain stack x <- f(x): check both modes of the visible example.",
        "B9_code",
        changed(_STACK, "x = x + f(x) if residual else f(x)", "x = x + f(x)"),
    ),
    # ---- B9: residual_jacobian -----------------------------------------------------------------
    wrong(
        "B9-jacobian-without-identity",
        "Returns df/dx, the Jacobian of f alone, where the Jacobian of x + f(x) also has the identity term.",
        "Differentiate x + f(x) term by term: the x contributes I. That identity is the gradient highway.",
        "B9_code",
        changed(_JACOBIAN, "torch.eye(x.shape[0], dtype=x.dtype) + ", ""),
    ),
    wrong(
        "B9-jacobian-transposed",
        "Returns the transpose of the Jacobian: rows and columns are swapped.",
        "Entry (i, j) of a Jacobian is d out_i / d x_j; test on a function whose Jacobian is not "
        "symmetric, such as x -> tanh(W x) with a random W.",
        "B9_code",
        changed(_JACOBIAN, "return torch.eye(x.shape[0], dtype=x.dtype) + torch.autograd.functional.jacobian(f, x)",
                "return (torch.eye(x.shape[0], dtype=x.dtype) + torch.autograd.functional.jacobian(f, x)).T"),
    ),
    wrong(
        "B9-ones-instead-of-identity",
        "Adds a matrix of ones where the identity matrix belongs.",
        "The derivative of x with respect to x is the identity: 1 on the diagonal, 0 elsewhere.",
        "B9_code",
        changed(_JACOBIAN, "torch.eye(x.shape[0], dtype=x.dtype)", "torch.ones(x.shape[0], x.shape[0])"),
    ),
]

VARIANTS = [
    # ---- C2: the answer as students write it -----------------------------------------------------
    *phrasings("C2", "C2_code", "q2_residual_cousin", {
        "long-short-term-memory": "Long Short-Term Memory",
        "lstm-cell-state": "the LSTM cell state",
        "an-lstm": "an lstm",
        "sentence": "It is the LSTM.",
        "both-names": "Long short-term memory (LSTM) networks",
        "with-a-reason": "LSTM: its cell state is updated by gated addition, a highway for the gradient",
        "denies-a-wrong-option": "The LSTM, not a plain RNN.",
        "plural": "LSTMs",
    }),
    # ---- B9 ------------------------------------------------------------------------------------
    variant("B9-index-loop", "B9_code", '''
def stack_forward(sublayers, x, residual=True):
    out = x
    for i in range(len(sublayers)):
        if residual:
            out = out + sublayers[i](out)
        else:
            out = sublayers[i](out)
    return out
'''),
    variant("B9-jacobian-of-the-sum", "B9_code", '''
def residual_jacobian(f, x):
    return torch.autograd.functional.jacobian(lambda v: v + f(v), x)
'''),
    variant("B9-jacrev", "B9_code", '''
def residual_jacobian(f, x):
    return torch.func.jacrev(lambda v: v + f(v))(x)
'''),
    variant("B9-rows-by-backward", "B9_code", '''
def residual_jacobian(f, x):
    x = x.detach().requires_grad_(True)
    y = x + f(x)
    rows = [torch.autograd.grad(y[i], x, retain_graph=True)[0] for i in range(y.shape[0])]
    return torch.stack(rows)
'''),
]
