"""Misconceptions of `lens`: the logit lens (B1) and reading its rows (B2). B6 is graded by hand."""
from autograder.grader_side.misconceptions import changed, variant, wrong

# The correct LensLM, written so that one line can be made wrong.
_LENS = '''
class LensLM(TinyLM):
    def forward(self, tokens):
        h = self.embed(tokens)
        rows = []
        for block in self.blocks:
            h = block(h)
            rows.append(self.unembed(self.norm_f(h[-1])))
        return torch.stack(rows)
'''

_SETTLED = '''
def settled_at(guesses):
    block = len(guesses)
    while block > 1 and guesses[block - 2] == guesses[-1]:
        block -= 1
    return block
'''

ENTRIES = [
    # ---- B1 ------------------------------------------------------------------------------------
    wrong(
        "B1-no-final-norm",
        "Applies the unembedding to the raw stream, without the final norm.",
        "The output head is norm_f followed by unembed; the unembedding was trained on normalized vectors.",
        "B1_code",
        changed(_LENS, "rows.append(self.unembed(self.norm_f(h[-1])))", "rows.append(self.unembed(h[-1]))"),
    ),
    wrong(
        "B1-norm-kept-in-the-stream",
        "Normalizes the stream itself after every block and passes the normalized stream on to the next block.",
        "The lens only reads the stream: apply norm_f to a copy for the readout and give the next block h as "
        "the last block left it.",
        "B1_code",
        changed(_LENS, "rows.append(self.unembed(self.norm_f(h[-1])))",
                "h = self.norm_f(h)\n            rows.append(self.unembed(h[-1]))"),
    ),
    wrong(
        "B1-first-position",
        "Reads the lens at the first position instead of the last, which is the one predicting the next token.",
        "Row t of the stream predicts the token after position t: the next token of the prompt comes from h[-1].",
        "B1_code",
        changed(_LENS, "rows.append(self.unembed(self.norm_f(h[-1])))",
                "rows.append(self.unembed(self.norm_f(h[0])))"),
    ),
    wrong(
        "B1-before-each-block",
        "Reads the stream before each block instead of after it: the first row is the bare embedding and the "
        "last block's output is never read.",
        "Run the block first, then read: the last row must be the model's own output.",
        "B1_code",
        '''
class LensLM(TinyLM):
    def forward(self, tokens):
        h = self.embed(tokens)
        rows = []
        for block in self.blocks:
            rows.append(self.unembed(self.norm_f(h[-1])))
            h = block(h)
        return torch.stack(rows)
''',
    ),
    wrong(
        "B1-embedding-row",
        "Adds a row for the embedding before the first block: n_layers + 1 rows.",
        "One row per block, each read after its block has run.",
        "B1_code",
        changed(_LENS, "rows = []", "rows = [self.unembed(self.norm_f(h[-1]))]"),
    ),
    wrong(
        "B1-no-positions",
        "Starts from the token vectors alone and leaves out the position vectors.",
        "model.embed(tokens) adds the position table to the token table, as forward does.",
        "B1_code",
        changed(_LENS, "h = self.embed(tokens)", "h = self.tok_emb(tokens)"),
    ),
    wrong(
        "B1-probabilities",
        "Returns probabilities (a softmax of every row) where the lens asks for logits.",
        "Return the unembedding's output itself; B2's token_probability takes the softmax.",
        "B1_code",
        changed(_LENS, "return torch.stack(rows)", "return torch.stack(rows).softmax(dim=-1)"),
    ),
    # ---- B2 ------------------------------------------------------------------------------------
    wrong(
        "B2-settled-counted-from-0",
        "Counts the blocks from 0, so settled_at is one less than the block number.",
        "Blocks are counted from 1: a guess list that agrees from its first entry on settles at block 1.",
        "B2_code",
        changed(_SETTLED, "return block", "return block - 1"),
    ),
    wrong(
        "B2-settled-first-match",
        "Returns the first block whose guess equals the final one, even when a later block changes its mind.",
        "Settled means every guess from that block on is the final one: [7, 7, 2, 7] settles at block 4.",
        "B2_code",
        '''
def settled_at(guesses):
    return guesses.index(guesses[-1]) + 1
''',
    ),
    wrong(
        "B2-softmax-over-blocks",
        "Takes the softmax over the blocks (dim 0) instead of over the vocabulary.",
        "Each row is a distribution over the vocabulary: softmax along the last dim.",
        "B2_code",
        '''
def token_probability(lens_logits, token):
    return lens_logits.softmax(dim=0)[:, token]
''',
    ),
    wrong(
        "B2-guesses-over-blocks",
        "Takes the arg max over the blocks (dim 0), giving one index per vocabulary entry.",
        "A guess is the largest logit of one row: arg max along the last dim.",
        "B2_code",
        '''
def lens_guesses(lens_logits):
    return lens_logits.argmax(dim=0).tolist()
''',
    ),
]

VARIANTS = [
    variant("B1-all-positions-then-last", "B1_code", '''
class LensLM(TinyLM):
    def forward(self, tokens):
        h = self.embed(tokens)
        streams = []
        for block in self.blocks:
            h = block(h)
            streams.append(h)
        return self.unembed(self.norm_f(torch.stack(streams)))[:, -1]   # (n_layers, vocab_size)
'''),
    variant("B1-layer-norm-by-hand", "B1_code", '''
class LensLM(TinyLM):
    def forward(self, tokens):
        h = self.embed(tokens)
        rows = []
        for block in self.blocks:
            h = block(h)
            last = h[-1]
            normed = (last - last.mean()) / torch.sqrt(last.var(unbiased=False) + self.norm_f.eps)
            rows.append((normed * self.norm_f.weight + self.norm_f.bias) @ self.unembed.weight.T)
        return torch.stack(rows)
'''),
    variant("B1-super-forward-hooks", "B1_code", '''
class LensLM(TinyLM):
    def forward(self, tokens):
        seen = []
        hooks = [b.register_forward_hook(lambda m, i, out: seen.append(out)) for b in self.blocks]
        try:
            super().forward(tokens)
        finally:
            for hook in hooks:
                hook.remove()
        return torch.stack([self.unembed(self.norm_f(out[-1])) for out in seen])
'''),
    variant("B2-other-spellings", "B2_code", '''
def lens_guesses(lens_logits):
    return lens_logits.max(dim=-1).indices          # a 1-D integer tensor


def token_probability(lens_logits, token):
    e = torch.exp(lens_logits - lens_logits.max(dim=-1, keepdim=True).values)
    return (e / e.sum(dim=-1, keepdim=True))[:, token]


def settled_at(guesses):
    final, block = guesses[-1], 1
    for i, g in enumerate(guesses):
        if g != final:
            block = i + 2
    return block
'''),
    variant("B2-loops", "B2_code", '''
def lens_guesses(lens_logits):
    return [int(torch.argmax(row)) for row in lens_logits]


def token_probability(lens_logits, token):
    return torch.stack([torch.softmax(row, dim=0)[token] for row in lens_logits])


def settled_at(guesses):
    guesses = list(guesses)
    for block in range(1, len(guesses) + 1):
        if all(g == guesses[-1] for g in guesses[block - 1:]):
            return block
'''),
]
