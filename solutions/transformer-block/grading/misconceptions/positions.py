"""Misconceptions of `positions`: why attention needs position vectors, and the sinusoidal table (C1).

Every wrong answer redefines one name after the C1 cell's correct solution; every variant is a
correct answer written another way.
"""
from autograder.grader_side.misconceptions import changed, phrasings, variant, wrong

# Correct answers, each written so one line can be made wrong.
_PERMUTES = '''
def permutes_with_input(f, X, perm, atol=1e-5):
    return bool(torch.allclose(f(X[perm]), f(X)[perm], rtol=0.0, atol=atol))
'''
_COMPARISON = "bool(torch.allclose(f(X[perm]), f(X)[perm], rtol=0.0, atol=atol))"

_SINUSOIDAL = '''
def sinusoidal_positions(n, d):
    if d % 2 != 0:
        raise ValueError(f"d must be even, got {d}")
    p = torch.arange(n, dtype=torch.float64)
    w = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.outer(p, w)
    pe = torch.empty(n, d, dtype=torch.float64)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe.float()
'''
_FILL = """    pe = torch.empty(n, d, dtype=torch.float64)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe.float()"""

ENTRIES = [
    # ---- permutes_with_input -------------------------------------------------------------------
    wrong(
        "C1-unpermuted-output",
        "Compares f(X[perm]) with the unpermuted f(X), as if attention kept track of word order by itself.",
        "Equivariance means the outputs come back reordered the same way as the inputs: re-read the "
        "definition in C1 and ask which side of the comparison needs perm.",
        "C1_code",
        changed(_PERMUTES, "f(X)[perm]", "f(X)"),
    ),
    wrong(
        "C1-perm-applied-twice",
        "Permutes the output of f(X[perm]) a second time instead of permuting f(X).",
        "Write out both sides for T = 3 and a perm that is not its own inverse: one side permutes "
        "only the input, the other only the output.",
        "C1_code",
        changed(_PERMUTES, "f(X[perm]), f(X)[perm]", "f(X[perm])[perm], f(X)"),
    ),
    wrong(
        "C1-inverse-permutation",
        "Reorders f(X) with the inverse permutation, so the two sides are shuffled in different ways.",
        "X[perm] puts row perm[t] at place t; apply exactly the same indexing to the output of f(X).",
        "C1_code",
        '''
def permutes_with_input(f, X, perm, atol=1e-5):
    inverse = torch.argsort(perm)
    return bool(torch.allclose(f(X[perm]), f(X)[inverse], rtol=0.0, atol=atol))
''',
    ),
    wrong(
        "C1-shapes-only",
        "Compares only the shapes of the two outputs, so it calls every function order-blind, even "
        "attention with positions or a causal mask.",
        "Two outputs of the same shape can hold different numbers: compare the values, within atol.",
        "C1_code",
        changed(_PERMUTES, _COMPARISON, "f(X[perm]).shape == f(X)[perm].shape"),
    ),
    wrong(
        "C1-atol-ignored",
        "Compares within the default 1e-5 whatever atol the caller passes.",
        "atol is an argument: with atol=1e-2, outputs that differ by 1e-3 count as equal.",
        "C1_code",
        changed(_PERMUTES, "atol=atol", "atol=1e-5"),
    ),
    wrong(
        "C1-allclose-default-rtol",
        "Compares with torch.allclose's default relative tolerance, so large outputs that differ by more "
        "than atol still count as equal.",
        "The TODO asks for atol alone: torch.allclose(a, b, atol=atol) still adds rtol * |b| (rtol=1e-05 by "
        "default), which grows with the values; pass rtol=0.",
        "C1_code",
        changed(_PERMUTES, "rtol=0.0, atol=atol", "atol=atol"),
    ),
    wrong(
        "C1-exact-equality",
        "Asks for bit-for-bit equality, so rounding in a permuted softmax makes plain attention look "
        "order-sensitive.",
        "Reordering rows changes the order of floating-point sums; the TODO asks for a comparison "
        "within atol and no relative tolerance.",
        "C1_code",
        changed(_PERMUTES, _COMPARISON, "torch.equal(f(X[perm]), f(X)[perm])"),
    ),
    # ---- sinusoidal_positions ------------------------------------------------------------------
    wrong(
        "C1-sin-cos-swapped",
        "Puts cosines in the even columns and sines in the odd ones.",
        "Check row 0 of your table: position 0 should give sin(0) = 0 in column 0 and cos(0) = 1 in column 1.",
        "C1_code",
        changed(_SINUSOIDAL, "pe[:, 0::2] = angles.sin()\n    pe[:, 1::2] = angles.cos()",
                "pe[:, 0::2] = angles.cos()\n    pe[:, 1::2] = angles.sin()"),
    ),
    wrong(
        "C1-exponent-i-over-d",
        "Uses the exponent i/d with the pair index i, where the formula has 2i/d, so the frequencies "
        "fall only half as fast.",
        "In omega_i = 1/10000^(2i/d) the exponent is the even column index over d; check that the "
        "last pair of columns gets a frequency close to 1/10000.",
        "C1_code",
        changed(_SINUSOIDAL, "torch.arange(0, d, 2, dtype=torch.float64) / d", "torch.arange(d // 2, dtype=torch.float64) / d"),
    ),
    wrong(
        "C1-frequency-per-column",
        "Gives every column its own frequency 1/10000^(k/d), so a sine and its cosine no longer share one.",
        "Columns 2i and 2i+1 form a pair with the same frequency omega_i; compare columns 0 and 1 of "
        "row 1 with sin(1) and cos(1).",
        "C1_code",
        '''
def sinusoidal_positions(n, d):
    if d % 2 != 0:
        raise ValueError(f"d must be even, got {d}")
    p = torch.arange(n, dtype=torch.float64)
    k = torch.arange(d, dtype=torch.float64)
    angles = torch.outer(p, 10000.0 ** (-k / d))
    pe = torch.where(k.long() % 2 == 0, angles.sin(), angles.cos())
    return pe.float()
''',
    ),
    wrong(
        "C1-halves-not-interleaved",
        "Puts all the sines in the first half of the columns and all the cosines in the second half, "
        "where the formula interleaves them.",
        "PE[p, 2i] is a sine and PE[p, 2i+1] its cosine: even and odd columns, not two halves.",
        "C1_code",
        changed(_SINUSOIDAL, _FILL, "    return torch.cat([angles.sin(), angles.cos()], dim=-1).float()"),
    ),
    wrong(
        "C1-assert-for-odd-width",
        "Rejects an odd d with an assert, which raises AssertionError instead of the ValueError asked for.",
        "The TODO asks for a ValueError: raise it explicitly (asserts can also be switched off).",
        "C1_code",
        changed(_SINUSOIDAL, '    if d % 2 != 0:\n        raise ValueError(f"d must be even, got {d}")\n',
                '    assert d % 2 == 0, "d must be even"\n'),
    ),
    # ---- q1_sentences --------------------------------------------------------------------------
    wrong(
        "C1-sentences-paraphrase",
        "Gives two sentences with the same meaning but different words, instead of the same words in "
        "two orders with different meanings.",
        "Without positions, attention sees a sentence as a bag of tokens: look for two sentences made "
        "of exactly the same words whose order changes who does what.",
        "C1_code",
        '''
q1_sentences = ["dog bites man", "man is bitten by dog"]
''',
    ),
    wrong(
        "C1-sentences-one-string",
        "Writes both sentences into one string instead of a list of two strings.",
        "q1_sentences should be a list with two separate strings, one sentence each.",
        "C1_code",
        '''
q1_sentences = "dog bites man / man bites dog"
''',
    ),
    # Last on purpose: no check catches this one yet, so its replies are those of a correct answer,
    # and the diagnosis (first matching entry) must try every other C1 entry before it.
    wrong(
        "C1-compared-as-sets",
        "Sorts both outputs before comparing them, which tests for the same set of values instead of "
        "the same values in the same reordered rows.",
        "Equivariance is a row-by-row statement: row t of f(X[perm]) must equal row perm[t] of f(X). "
        "Try a function that reverses its rows: it is not equivariant, yet its sorted output is.",
        "C1_code",
        '''
def permutes_with_input(f, X, perm, atol=1e-5):
    a, b = f(X[perm]), f(X)[perm]
    if a.shape != b.shape:
        return False
    return bool(torch.allclose(a.sort(dim=0).values, b.sort(dim=0).values, rtol=0.0, atol=atol))
''',
    ),
    wrong(
        "C1-float64-table",
        "Returns the position table in float64, where the TODO asks for float32 (the dtype of the embeddings "
        "it is added to).",
        "Working in float64 is a good idea, but cast the finished table with .float() before returning it.",
        "C1_code",
        changed(_SINUSOIDAL, "return pe.float()", "return pe"),
    ),
]

VARIANTS = [
    variant(
        "C1-max-abs-difference",
        "C1_code",
        '''
def permutes_with_input(f, X, perm, atol=1e-5):
    a = f(X.index_select(0, perm))
    b = f(X).index_select(0, perm)
    return a.shape == b.shape and (a - b).abs().max().item() <= atol
''',
    ),
    variant(
        "C1-tensor-bool",
        "C1_code",
        '''
def permutes_with_input(f, X, perm, atol=1e-5):
    return ((f(X[perm]) - f(X)[perm]).abs() <= atol).all()   # a 0-d bool tensor
''',
    ),
    variant(
        "C1-exp-log-frequencies",
        "C1_code",
        '''
def sinusoidal_positions(n, d):
    if d % 2:
        raise ValueError("d must be even")
    position = torch.arange(n, dtype=torch.float64).unsqueeze(1)            # (n, 1)
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * freq)
    pe[:, 1::2] = torch.cos(position * freq)
    return pe.to(torch.float32)
''',
    ),
    variant(
        "C1-float32-loops",
        "C1_code",
        '''
def sinusoidal_positions(n, d):
    if d % 2 == 1:
        raise ValueError(f"odd d={d}")
    pe = torch.zeros(n, d)
    for p in range(n):
        for i in range(d // 2):
            angle = p / 10000 ** (2 * i / d)
            pe[p, 2 * i] = math.sin(angle)
            pe[p, 2 * i + 1] = math.cos(angle)
    return pe
''',
    ),
    # ---- q1_sentences as students write them ------------------------------------------------------
    *phrasings("C1", "C1_code", "q1_sentences", {
        "tuple-punctuated": ("Man bites dog!", "Dog bites man."),
        "articles": ["The dog bites the man.", "The man bites the dog."],
        "indefinite-articles": ["A dog bites a man", "A man bites a dog"],
        "capitals": ["DOG BITES MAN", "MAN BITES DOG"],
        "quoted": ['"Dog bites man"', '"Man bites dog"'],
        "curly-quotes-and-spaces": ["\u201cDog  bites man.\u201d", " man bites dog "],
    }),
]
