"""Misconceptions of `lens`: the logit lens (B1), reading its rows (B2), and the lens with a part
knocked out (B7). B6 is graded by hand."""
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

# The correct KnockoutLensLM and B7 answers, written so that one line can be made wrong.
_KNOCKOUT = '''
class KnockoutLensLM(TinyLM):
    def forward(self, tokens, block, part="block"):
        h = self.embed(tokens)
        rows = []
        for number, blk in enumerate(self.blocks, start=1):
            if not (number == block and part in ("attention", "block")):
                h = h + blk.attention(blk.norm1(h))
            if not (number == block and part in ("mlp", "block")):
                h = h + blk.fc2(F.gelu(blk.fc1(blk.norm2(h))))
            rows.append(self.unembed(self.norm_f(h[-1])))
        return torch.stack(rows)
'''

_B7_ANSWERS = '''
b7_drop = 0.5277
b7_settled = 3
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
    # ---- B7 ------------------------------------------------------------------------------------
    wrong(
        "B7-blocks-counted-from-0",
        "Counts the blocks from 0, so block=2 knocks out the third block and block=4 knocks out none.",
        "Blocks count from 1 here, as settled_at counts them: block=1 is self.blocks[0].",
        "B7_code",
        changed(_KNOCKOUT, "enumerate(self.blocks, start=1)", "enumerate(self.blocks)"),
    ),
    wrong(
        "B7-stream-zeroed",
        "Knocks a whole block out by zeroing the stream, which also throws away what the embedding and every "
        "earlier block wrote.",
        "A knockout removes only what the part would add: the stream goes past the block unchanged.",
        "B7_code",
        changed(_KNOCKOUT, "            rows.append(", "            if number == block and part == 'block':\n"
                                                   "                h = torch.zeros_like(h)\n"
                                                   "            rows.append("),
    ),
    wrong(
        "B7-parts-swapped",
        "Knocks out the MLP when asked for attention, and attention when asked for the MLP.",
        "A block's first update is attention's, attention(norm1(h)); its second is the MLP's, "
        "fc2(gelu(fc1(norm2(h)))).",
        "B7_code",
        changed(changed(_KNOCKOUT, 'part in ("attention", "block")):\n                h = h + blk.attention',
                        'part in ("mlp", "block")):\n                h = h + blk.attention'),
                'part in ("mlp", "block")):\n                h = h + blk.fc2',
                'part in ("attention", "block")):\n                h = h + blk.fc2'),
    ),
    wrong(
        "B7-last-position-only",
        "Removes the part's update at the last position only, so the other positions, which later blocks' "
        "attention reads, still carry it.",
        "Knock the part out at every position: the last position's later attention reads the others.",
        "B7_code",
        '''
class KnockoutLensLM(TinyLM):
    def forward(self, tokens, block, part="block"):
        h = self.embed(tokens)
        rows = []
        for number, blk in enumerate(self.blocks, start=1):
            update = blk.attention(blk.norm1(h))
            if number == block and part in ("attention", "block"):
                update = torch.cat([update[:-1], torch.zeros_like(update[-1:])])
            h = h + update
            update = blk.fc2(F.gelu(blk.fc1(blk.norm2(h))))
            if number == block and part in ("mlp", "block"):
                update = torch.cat([update[:-1], torch.zeros_like(update[-1:])])
            h = h + update
            rows.append(self.unembed(self.norm_f(h[-1])))
        return torch.stack(rows)
''',
    ),
    wrong(
        "B7-drop-is-what-is-left",
        "Gives the probability left after the knockout (0.47) instead of how far it fell.",
        "The drop is the intact probability minus the knocked-out one, both from the last row.",
        "B7_answers",
        changed(_B7_ANSWERS, "b7_drop = 0.5277", "b7_drop = 0.4669"),
    ),
    wrong(
        "B7-settled-of-the-intact-model",
        "Gives where the intact model's guesses settle (block 2) instead of the knocked-out model's.",
        "Run settled_at on the guesses of the knocked-out lens.",
        "B7_answers",
        changed(_B7_ANSWERS, "b7_settled = 3", "b7_settled = 2"),
    ),
    wrong(
        "B7-third-block-knocked-out",
        "Measures with the attention of the third block knocked out (block 2 counted from 0): a drop of 0.003.",
        "Blocks count from 1: block 2 is self.blocks[1].",
        "B7_answers",
        changed(_B7_ANSWERS, "b7_drop = 0.5277", "b7_drop = 0.0026"),
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
    variant("B7-silenced-copy", "B7_code", '''
import copy


class KnockoutLensLM(TinyLM):
    def forward(self, tokens, block, part="block"):
        model = copy.deepcopy(self)                     # silence the part's output layers in a copy
        blk = model.blocks[block - 1]
        with torch.no_grad():
            if part in ("attention", "block"):
                blk.proj.weight.zero_()
            if part in ("mlp", "block"):
                blk.fc2.weight.zero_()
                blk.fc2.bias.zero_()
        h = model.embed(tokens)
        rows = []
        for b in model.blocks:
            h = b(h)
            rows.append(model.unembed(model.norm_f(h[-1])))
        return torch.stack(rows)
'''),
    variant("B7-forward-hooks", "B7_code", '''
class KnockoutLensLM(TinyLM):
    def forward(self, tokens, block, part="block"):
        blk = self.blocks[block - 1]
        silenced = {"attention": [blk.proj], "mlp": [blk.fc2], "block": [blk.proj, blk.fc2]}[part]
        hooks = [layer.register_forward_hook(lambda m, i, out: torch.zeros_like(out)) for layer in silenced]
        try:
            h = self.embed(tokens)
            rows = []
            for b in self.blocks:
                h = b(h)
                rows.append(self.unembed(self.norm_f(h[-1])))
        finally:
            for hook in hooks:
                hook.remove()
        return torch.stack(rows)
'''),
    variant("B7-answers-as-text", "B7_answers", '''
b7_drop = "about 0.53"
b7_settled = "3"
'''),
]
