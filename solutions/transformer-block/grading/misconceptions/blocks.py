"""Misconceptions of `blocks`: the decoder's sublayers (C6), where the norm goes (C7), and the
pre-norm (B6) and post-norm (B7) blocks.

B6 and B7 entries replace only `forward` (the given `__init__` and helpers stay), as a student
who edits the TODO would.
"""
from autograder.grader_side.misconceptions import changed, variant, wrong

# The correct forward passes, each written so one line can be made wrong.
_PRE_NORM = '''
def _forward(self, x, causal=True):
    x = x + self._attention(self.norm1(x), causal)
    x = x + self._mlp(self.norm2(x))
    return x


PreNormBlock.forward = _forward
'''

_POST_NORM = '''
def _forward(self, x, causal=True):
    x = self.norm1(x + self._attention(x, causal))
    x = self.norm2(x + self._mlp(x))
    return x


PostNormBlock.forward = _forward
'''

ENTRIES = [
    # ---- C6 ------------------------------------------------------------------------------------
    wrong(
        "C6-gpt-drops-masked-self-attention",
        "Says GPT drops the masked self-attention, which is the one attention it keeps: a GPT block "
        "is drawn with the encoder's cross-attention \"because the 2017 paper had it\".",
        "GPT has no encoder, so one of the two attentions has nothing to attend to: which one reads "
        "the encoder's output?",
        "C6_code",
        '''
q6_gpt_drops = "masked self-attention"
''',
    ),
    wrong(
        "C6-gpt-drops-mlp",
        "Says GPT drops the feed-forward MLP, which every GPT block keeps (and which holds most of its weights).",
        "Re-read C6: GPT is decoder-only and has no source sentence. Which sublayer needs one?",
        "C6_code",
        '''
q6_gpt_drops = "feed-forward network"
''',
    ),
    wrong(
        "C6-gpt-drops-hedge",
        "Hedges: names cross-attention together with another sublayer; an answer that also names a "
        "wrong option earns nothing.",
        "Name the one sublayer that a GPT block leaves out, and only that one.",
        "C6_code",
        '''
q6_gpt_drops = "cross-attention or the MLP"
''',
    ),
    wrong(
        "C6-encoder-self-attention",
        "Lists the encoder's unmasked self-attention as a decoder sublayer instead of the cross-attention "
        "into the source.",
        "The decoder's second attention takes its keys and values from the encoder's output: re-read "
        "sublayer 2 in C6.",
        "C6_code",
        '''
q6_decoder_sublayers = ["masked self-attention", "encoder self-attention", "feed-forward network"]
''',
    ),
    wrong(
        "C6-norm-as-sublayer",
        "Counts layer norm as one of the three sublayers and leaves out the cross-attention.",
        "Every sublayer comes with its own residual and norm; the three sublayers are the parts that "
        "compute: two attentions and the MLP.",
        "C6_code",
        '''
q6_decoder_sublayers = ["masked self-attention", "layer norm", "feed-forward network"]
''',
    ),
    wrong(
        "C6-self-attention-twice",
        "Names self-attention twice, so the cross-attention is missing.",
        "The decoder's two attentions differ in where keys and values come from: give each its own name.",
        "C6_code",
        '''
q6_decoder_sublayers = ["masked self-attention", "causal self-attention", "MLP"]
''',
    ),
    # ---- C7 ------------------------------------------------------------------------------------
    wrong(
        "C7-swapped",
        "Swaps the two placements: the 2017 paper put the norm after the residual addition, and "
        "current LLMs put it before the sublayer.",
        "Re-read C7: which placement leaves a clean identity path through the stack, and which one "
        "needed careful warm-up in deep stacks?",
        "C7_code",
        '''
q7_2017_paper = "pre-norm"
q7_modern_default = "post-norm"
''',
    ),
    wrong(
        "C7-2017-was-pre-norm",
        "Assumes the 2017 transformer already used today's pre-norm placement.",
        "The original block normalizes x + F(x), after the residual addition: which placement is that?",
        "C7_code",
        '''
q7_2017_paper = "pre-norm"
''',
    ),
    wrong(
        "C7-hedge",
        "Hedges with both placements for the modern default; an answer that names a wrong option earns nothing.",
        "Give one placement: the one that trains stably at depth.",
        "C7_code",
        '''
q7_modern_default = "pre-norm or post-norm"
''',
    ),
    wrong(
        "C7-names-the-norm-type",
        "Names the kind of norm (RMSNorm) where the question asks where the norm is placed.",
        "C7 is about placement, before the sublayer or after the residual addition, not about which "
        "normalization is used.",
        "C7_code",
        '''
q7_modern_default = "RMSNorm"
''',
    ),
    # ---- B6 ------------------------------------------------------------------------------------
    wrong(
        "B6-no-causal-mask",
        "Never applies the causal mask, so every token also sees the tokens after it.",
        "Pass the causal flag on to the attention helper; the visible check changes the last token "
        "and watches the earlier outputs.",
        "B6_code",
        changed(_PRE_NORM, "self.norm1(x), causal)", "self.norm1(x), False)"),
    ),
    wrong(
        "B6-inverted-causal-mask",
        "Builds the mask below the diagonal, which hides the past and lets every token see the future.",
        "For nn.MultiheadAttention, True means \"may not attend\": the positions to hide for token t "
        "are those after t, above the diagonal.",
        "B6_code",
        '''
def _forward(self, x, causal=True):
    def attend(h):
        T = h.shape[1]
        past = torch.ones(T, T, dtype=torch.bool).tril(-1)
        return self.self_attn(h, h, h, attn_mask=past if causal else None, need_weights=False)[0]

    x = x + attend(self.norm1(x))
    x = x + self._mlp(self.norm2(x))
    return x


PreNormBlock.forward = _forward
''',
    ),
    wrong(
        "B6-always-causal",
        "Applies the causal mask even when causal=False.",
        "With causal=False every token may see every other one: check that the flag reaches the "
        "attention helper.",
        "B6_code",
        changed(_PRE_NORM, "self.norm1(x), causal)", "self.norm1(x), True)"),
    ),
    wrong(
        "B6-post-norm-wiring",
        "Wires the pre-norm block as post-norm: normalizes after the residual addition.",
        "In a pre-norm block each sublayer reads a normalized copy and the stream itself is never "
        "normalized: re-read the two updates in B6.",
        "B6_code",
        '''
def _forward(self, x, causal=True):
    x = self.norm1(x + self._attention(x, causal))
    x = self.norm2(x + self._mlp(x))
    return x


PreNormBlock.forward = _forward
''',
    ),
    wrong(
        "B6-norm1-used-twice",
        "Uses norm1 before both sublayers, so norm2's own gain and shift are never used.",
        "Each sublayer has its own norm with its own parameters: the MLP reads norm2 of the stream.",
        "B6_code",
        changed(_PRE_NORM, "self._mlp(self.norm2(x))", "self._mlp(self.norm1(x))"),
    ),
    wrong(
        "B6-residual-replaces",
        "Treats each sublayer as \"replace x\" (x = f(norm(x))) instead of adding its output to x.",
        "Re-read the two updates in B6: each sublayer's output is added to the stream. Without the "
        "addition there is no identity path.",
        "B6_code",
        changed(changed(_PRE_NORM, "x = x + self._attention", "x = self._attention"),
                "x = x + self._mlp", "x = self._mlp"),
    ),
    wrong(
        "B6-adds-normalized-input",
        "Adds the sublayer output to the normalized copy instead of to the raw stream.",
        "Only the sublayer's input is normalized; the residual adds to x itself, so the stream is "
        "never rescaled in a pre-norm block.",
        "B6_code",
        '''
def _forward(self, x, causal=True):
    h = self.norm1(x)
    x = h + self._attention(h, causal)
    h = self.norm2(x)
    x = h + self._mlp(h)
    return x


PreNormBlock.forward = _forward
''',
    ),
    wrong(
        "B6-causal-default-off",
        "Changes the signature's default to causal=False, so forward(x) is no longer masked.",
        "Keep the given signature forward(x, causal=True): callers rely on the default.",
        "B6_code",
        changed(_PRE_NORM, "causal=True", "causal=False"),
    ),
    # ---- B7 ------------------------------------------------------------------------------------
    wrong(
        "B7-pre-norm-wiring",
        "Wires the post-norm block as pre-norm: normalizes the sublayer's input instead of the sum.",
        "Post-norm normalizes x + F(x) after the addition, and the sublayer reads the raw stream.",
        "B7_code",
        '''
def _forward(self, x, causal=True):
    x = x + self._attention(self.norm1(x), causal)
    x = x + self._mlp(self.norm2(x))
    return x


PostNormBlock.forward = _forward
''',
    ),
    wrong(
        "B7-no-causal-mask",
        "Never applies the causal mask in the post-norm block.",
        "Pass the causal flag on to the attention helper; test by changing the last token.",
        "B7_code",
        changed(_POST_NORM, "self._attention(x, causal)", "self._attention(x, False)"),
    ),
    wrong(
        "B7-always-causal",
        "Applies the causal mask in the post-norm block even when causal=False.",
        "With causal=False every token may see every other one: pass the flag on to the attention helper.",
        "B7_code",
        changed(_POST_NORM, "self._attention(x, causal)", "self._attention(x, True)"),
    ),
    wrong(
        "B7-norms-swapped",
        "Uses norm2 after attention and norm1 after the MLP.",
        "norm1 belongs to the first sublayer (attention) and norm2 to the second (MLP): the grader "
        "loads torch's weights by these names.",
        "B7_code",
        '''
def _forward(self, x, causal=True):
    x = self.norm2(x + self._attention(x, causal))
    x = self.norm1(x + self._mlp(x))
    return x


PostNormBlock.forward = _forward
''',
    ),
    wrong(
        "B7-normalizes-sublayer-output",
        "Normalizes the sublayer's output before adding it (x + Norm(F(x))) instead of normalizing the sum.",
        "Post-norm applies the norm to x + F(x), after the residual addition.",
        "B7_code",
        changed(changed(_POST_NORM, "x = self.norm1(x + self._attention(x, causal))",
                                "x = x + self.norm1(self._attention(x, causal))"),
                "x = self.norm2(x + self._mlp(x))", "x = x + self.norm2(self._mlp(x))"),
    ),
    wrong(
        "B7-mlp-reads-old-stream",
        "Feeds the MLP the block's input instead of the output of the attention update.",
        "The two updates run one after the other: the MLP reads (and adds to) the result of the first.",
        "B7_code",
        '''
def _forward(self, x, causal=True):
    h = self.norm1(x + self._attention(x, causal))
    return self.norm2(h + self._mlp(x))


PostNormBlock.forward = _forward
''',
    ),
    wrong(
        "B7-residual-replaces",
        "Treats each sublayer as \"replace x\": x = Norm(F(x)), with no residual addition.",
        "Post-norm moves the norm, not the residual: re-read the two updates in B7.",
        "B7_code",
        '''
def _forward(self, x, causal=True):
    x = self.norm1(self._attention(x, causal))
    x = self.norm2(self._mlp(x))
    return x


PostNormBlock.forward = _forward
''',
    ),
]

# A hand-written multi-head attention over nn.MultiheadAttention's own weights, for the variants
# that do not call the module (or F.scaled_dot_product_attention).
_MANUAL_ATTENTION = '''
def _manual_attention(block, h, causal):
    """softmax(q k^T / sqrt(d_head) + mask) v per head, with self_attn's packed in_proj and out_proj."""
    B, T, d = h.shape
    heads = block.self_attn.num_heads
    q, k, v = F.linear(h, block.self_attn.in_proj_weight, block.self_attn.in_proj_bias).chunk(3, dim=-1)
    q, k, v = (t.reshape(B, T, heads, d // heads).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(d // heads)                 # (B, heads, T, T)
    if causal:
        scores = scores + torch.full((T, T), float("-inf")).triu(1)
    out = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, d)
    return block.self_attn.out_proj(out)
'''

VARIANTS = [
    # ---- C6 ------------------------------------------------------------------------------------
    variant("C6-paper-labels", "C6_code", '''
q6_decoder_sublayers = ["Masked Multi-Head Attention", "Multi-Head Attention", "Feed Forward"]
q6_gpt_drops = "Multi-Head Attention"
'''),
    variant("C6-sentences", "C6_code", '''
q6_decoder_sublayers = ["The masked self-attention layer.",
                        "Encoder-decoder attention: queries from the decoder, keys and values from the encoder.",
                        "The position-wise feed-forward network."]
q6_gpt_drops = "Cross-attention, since GPT has no encoder to attend to."
'''),
    variant("C6-capitals", "C6_code", '''
q6_decoder_sublayers = ["MASKED SELF-ATTENTION", "CROSS-ATTENTION", "FEED-FORWARD"]
q6_gpt_drops = "CROSS-ATTENTION"
'''),
    variant("C6-causal-and-mlp", "C6_code", '''
q6_decoder_sublayers = ["causal self-attention", "cross attention", "MLP"]
q6_gpt_drops = "the encoder-decoder cross-attention"
'''),
    variant("C6-encoder-decoder-attention", "C6_code", '''
q6_decoder_sublayers = ["causal self-attention", "encoder-decoder attention", "position-wise feed-forward network"]
q6_gpt_drops = "encoder-decoder attention"
'''),
    variant("C6-tuple-abbreviations", "C6_code", '''
q6_decoder_sublayers = ("FFN", "Masked Multi-Head Attention", "Cross Attention")
q6_gpt_drops = "the cross-attention"
'''),
    # ---- C7 ------------------------------------------------------------------------------------
    variant("C7-sentences", "C7_code", '''
q7_2017_paper = "The 2017 paper used post-norm."
q7_modern_default = "Pre-norm."
'''),
    variant("C7-capitals", "C7_code", '''
q7_2017_paper = "POST-NORM"
q7_modern_default = "PRE-NORM"
'''),
    variant("C7-norm-first-flag", "C7_code", '''
q7_2017_paper = "norm_first=False"
q7_modern_default = "norm_first=True"
'''),
    variant("C7-paper-label-and-reason", "C7_code", '''
q7_2017_paper = "Add & Norm: the norm comes after the residual addition"
q7_modern_default = "pre-norm: the sublayer reads a normalized copy, the stream is never rescaled"
'''),
    variant("C7-ln-abbreviations", "C7_code", '''
q7_2017_paper = "Post-LN"
q7_modern_default = "Pre-LN"
'''),
    variant("C7-spelled-out", "C7_code", '''
q7_2017_paper = "post layer normalization"
q7_modern_default = "Pre-RMSNorm"
'''),
    variant("C7-paper-formulas", "C7_code", '''
q7_2017_paper = "LayerNorm(x + Sublayer(x))"
q7_modern_default = "x + Sublayer(LayerNorm(x))"
'''),
    variant("C7-lesson-formulas", "C7_code", '''
q7_2017_paper = "x <- Norm(x + F(x)), the norm after the residual addition"
q7_modern_default = "x = x + F(LN(x))"
'''),
    # ---- B6 ------------------------------------------------------------------------------------
    variant("B6-sublayers-also-in-a-list", "B6_code", '''
_given_init = PreNormBlock.__init__


def _init(self, d_model, n_heads, d_ff=None):
    _given_init(self, d_model, n_heads, d_ff)
    # The same submodules again, as (norm, sublayer) pairs: the state_dict has steps.* keys too.
    self.steps = nn.ModuleList([nn.ModuleList([self.norm1, self.self_attn]),
                                nn.ModuleList([self.norm2, nn.Sequential(self.linear1, nn.GELU(), self.linear2)])])


def _forward(self, x, causal=True):
    (norm1, _), (norm2, mlp) = self.steps
    x = x + self._attention(norm1(x), causal)
    return x + mlp(norm2(x))


PreNormBlock.__init__ = _init
PreNormBlock.forward = _forward
'''),
    variant("B6-additive-float-mask", "B6_code", '''
def _forward(self, x, causal=True):
    T = x.shape[1]
    mask = torch.full((T, T), float("-inf")).triu(1) if causal else None    # 0 on and below the diagonal
    h = self.norm1(x)
    x = x + self.self_attn(h, h, h, attn_mask=mask, need_weights=False)[0]
    return x + self._mlp(self.norm2(x))


PreNormBlock.forward = _forward
'''),
    variant("B6-manual-attention", "B6_code", _MANUAL_ATTENTION + '''

def _forward(self, x, causal=True):
    x = x + _manual_attention(self, self.norm1(x), causal)
    h = self.norm2(x)
    return x + self.linear2(0.5 * self.linear1(h) * (1 + torch.erf(self.linear1(h) / math.sqrt(2))))


PreNormBlock.forward = _forward
'''),
    variant("B6-functional-norms", "B6_code", '''
def _forward(self, x, causal=True):
    d = x.shape[-1]
    h = F.layer_norm(x, (d,), self.norm1.weight, self.norm1.bias, self.norm1.eps)
    x = x + self._attention(h, causal=causal)
    h = F.layer_norm(x, (d,), self.norm2.weight, self.norm2.bias, self.norm2.eps)
    return x + self._mlp(h)


PreNormBlock.forward = _forward
'''),
    # ---- B7 ------------------------------------------------------------------------------------
    variant("B7-additive-float-mask", "B7_code", '''
def _forward(self, x, causal=True):
    T = x.shape[1]
    mask = torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    attended = self.self_attn(x, x, x, attn_mask=mask if causal else None, need_weights=False)[0]
    x = self.norm1(x + attended)
    return self.norm2(x + self._mlp(x))


PostNormBlock.forward = _forward
'''),
    variant("B7-manual-attention", "B7_code", _MANUAL_ATTENTION + '''

def _forward(self, x, causal=True):
    x = self.norm1(x + _manual_attention(self, x, causal))
    x = self.norm2(x + self.linear2(F.gelu(self.linear1(x))))
    return x


PostNormBlock.forward = _forward
'''),
    variant("B7-named-steps", "B7_code", '''
class PostNormBlock(PreNormBlock):
    def forward(self, x, causal=True):
        after_attention = self.norm1(x + self._attention(x, causal))
        after_mlp = self.norm2(after_attention + self._mlp(after_attention))
        return after_mlp
'''),
]

# ---- forbidden routes: the checks' values are right, the grader judges the source ---------------
_OWN_BLOCK = ("Build the block from its parts (self.norm1, self.norm2, the attention and MLP helpers); "
              "nn.TransformerEncoderLayer and its relatives are off limits in any form, subclassed or borrowed.")

_SUBCLASSES = '''
class PreNormBlock(nn.TransformerEncoderLayer):
    def __init__(self, d_model, n_heads, d_ff=None):
        super().__init__(d_model, n_heads, d_ff or 4 * d_model, dropout=0.0, activation="gelu",
                         batch_first=True, norm_first=True)

    def forward(self, x, causal=True):
        T = x.shape[1]
        return super().forward(x, src_mask=torch.ones(T, T, dtype=torch.bool).triu(1) if causal else None)
'''

_BORROWS = '''
_encoder_forward = nn.TransformerEncoderLayer.forward


def _forward(self, x, causal=True):
    T, d = x.shape[1], x.shape[2]
    layer = nn.TransformerEncoderLayer(d, self.self_attn.num_heads, self.linear1.out_features, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
    layer.load_state_dict(self.state_dict())
    return _encoder_forward(layer, x, src_mask=torch.ones(T, T, dtype=torch.bool).triu(1) if causal else None)


PreNormBlock.forward = _forward
'''


def _post_norm(code: str) -> str:
    """The same route taken by PostNormBlock (B7): the other class, the norms after the sublayers."""
    return code.replace("PreNormBlock", "PostNormBlock").replace("norm_first=True", "norm_first=False")


ENTRIES += [
    wrong("B6-subclasses-encoder-layer",
          "Subclasses nn.TransformerEncoderLayer and runs its forward, the layer B6 asks you to build yourself.",
          _OWN_BLOCK, "B6_code", _SUBCLASSES),
    wrong("B6-borrows-encoder-forward",
          "Copies its weights into an nn.TransformerEncoderLayer and runs that layer's forward, taken "
          "before the checks run.",
          _OWN_BLOCK, "B6_code", _BORROWS),
    wrong("B7-subclasses-encoder-layer",
          "Subclasses nn.TransformerEncoderLayer (norm_first=False) and runs its forward, the layer B7 asks "
          "you to build yourself.",
          _OWN_BLOCK, "B7_code", _post_norm(_SUBCLASSES)),
    wrong("B7-borrows-encoder-forward",
          "Copies its weights into an nn.TransformerEncoderLayer (norm_first=False) and runs that layer's "
          "forward, taken before the checks run.",
          _OWN_BLOCK, "B7_code", _post_norm(_BORROWS)),
]

VARIANTS += [
    variant("B6-compared-with-torch-layer", "B6_code", '''
def _forward(self, x, causal=True):
    x = x + self._attention(self.norm1(x), causal)
    return x + self._mlp(self.norm2(x))


PreNormBlock.forward = _forward

_mine = PreNormBlock(8, 2).eval()
_torch_layer = nn.TransformerEncoderLayer(8, 2, 32, dropout=0.0, activation="gelu", batch_first=True,
                                          norm_first=True).eval()
_torch_layer.load_state_dict(_mine.state_dict())
_x = torch.randn(2, 5, 8)
assert torch.allclose(_mine(_x, causal=False), _torch_layer(_x), atol=1e-5)
'''),
]
