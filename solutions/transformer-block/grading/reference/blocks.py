"""B6, B7, C6, C7: pre-norm and post-norm blocks that match nn.TransformerEncoderLayer."""
import re

import torch
import torch.nn as nn
import torch.nn.functional as F


def causal_mask(T: int) -> torch.Tensor:
    """(T, T) bool mask, True where query i may NOT look at key j (j > i).

    Same convention as the bool attn_mask of nn.MultiheadAttention.
    """
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


class _Block(nn.Module):
    """Submodules shared by both placements; state_dict keys match nn.TransformerEncoderLayer."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def _attend(self, h, causal: bool):                             # h: (B, T, d)
        mask = causal_mask(h.shape[1]).to(h.device) if causal else None
        return self.self_attn(h, h, h, attn_mask=mask, need_weights=False)[0]

    def _mlp(self, h):                                              # h: (B, T, d)
        return self.linear2(F.gelu(self.linear1(h)))                # exact (erf) GELU


class PreNormBlock(_Block):
    """x + Attn(LN1(x)), then + MLP(LN2(.)): the identity path from input to output stays clean."""

    def forward(self, x, causal: bool = True):                      # x: (B, T, d)
        x = x + self._attend(self.norm1(x), causal)
        x = x + self._mlp(self.norm2(x))
        return x                                                    # (B, T, d)


class PostNormBlock(_Block):
    """LN1(x + Attn(x)), then LN2(. + MLP(.)): the 2017 placement, norm after each residual add."""

    def forward(self, x, causal: bool = True):                      # x: (B, T, d)
        x = self.norm1(x + self._attend(x, causal))
        x = self.norm2(x + self._mlp(x))
        return x                                                    # (B, T, d)


def torch_block(d_model: int, n_heads: int, d_ff: int | None = None,
                norm_first: bool = True) -> nn.TransformerEncoderLayer:
    """The PyTorch layer the blocks are graded against (dropout off, exact GELU, batch first)."""
    d_ff = 4 * d_model if d_ff is None else d_ff
    return nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.0, activation="gelu",
                                      batch_first=True, norm_first=norm_first)


def torch_block_forward(layer: nn.TransformerEncoderLayer, x, causal: bool):
    """Run layer on x (B, T, d) with the causal mask, or with no mask at all."""
    if causal:
        mask = causal_mask(x.shape[1]).to(x.device)
        return layer(x, src_mask=mask, is_causal=True)
    return layer(x)


# C6, C7 answer sets in normalized form (lowercase, hyphens as spaces, no punctuation).
_MASKED_SELF_ATTENTION = frozenset({
    "masked self attention", "causal self attention", "masked attention", "causal attention",
    "masked multi head attention", "masked multihead attention", "masked multi head self attention",
    "causal multi head attention", "causal multi head self attention", "masked mha", "causal mha",
    "masked self attention layer", "decoder masked self attention",
})
_CROSS_ATTENTION = frozenset({
    "cross attention", "crossattention", "cross attention layer", "encoder decoder attention",
    "encoder decoder cross attention", "enc dec attention", "multi head cross attention",
    "cross multi head attention", "encoder attention", "attention over the encoder",
    "attention to the encoder", "source attention",
})
_FEED_FORWARD = frozenset({
    "feed forward", "feedforward", "feed forward network", "feedforward network", "ffn", "ff",
    "feed forward layer", "position wise feed forward", "position wise feed forward network",
    "positionwise feed forward", "positionwise feed forward network", "mlp", "the mlp",
    "token wise mlp", "position wise mlp", "multilayer perceptron", "multi layer perceptron",
})
# The 2017 figure labels the cross-attention just "Multi-Head Attention": such a bare label names
# the one attention the other strings of an answer leave over.
ATTENTION_LABELS = frozenset({"multi head attention", "multihead attention", "attention", "mha",
                              "multi head self attention"})
# Not a sublayer of the decoder (the norm belongs to every sublayer; the encoder's attention is unmasked).
NOT_A_SUBLAYER = frozenset({
    "layer norm", "layernorm", "layer normalization", "norm", "normalization", "add norm", "add and norm",
    "residual", "residual connection", "encoder self attention", "unmasked self attention",
    "bidirectional self attention", "embedding", "embeddings", "positional encoding", "softmax", "linear",
})
DECODER_SUBLAYERS = {
    "masked self attention": _MASKED_SELF_ATTENTION,
    "cross attention": _CROSS_ATTENTION,
    "feed forward": _FEED_FORWARD,
}
GPT_DROPS = _CROSS_ATTENTION

PAPER_2017 = frozenset({
    "post norm", "postnorm", "post ln", "postln", "post layer norm", "post layernorm",
    "post layer normalization", "post layernormalization", "post normalization",
    "post norm residual", "post ln transformer", "add norm", "add and norm", "norm first false",
    "norm after", "norm after residual", "normalization after", "layernorm after", "layer norm after",
    "after residual", "after residual addition", "after each residual addition", "after addition",
})
MODERN_DEFAULT = frozenset({
    "pre norm", "prenorm", "pre ln", "preln", "pre layer norm", "pre layernorm",
    "pre layer normalization", "pre layernormalization", "pre normalization",
    "pre norm residual", "pre ln transformer", "pre rmsnorm", "pre rms norm", "norm first", "norm first true",
    "norm before", "normalization before", "layernorm before", "layer norm before", "before sublayer",
    "before each sublayer",
})
# Not a placement at all: the kind of norm.
NOT_A_PLACEMENT = frozenset({"rmsnorm", "rms norm", "layernorm", "layer norm", "layer normalization",
                             "batch norm", "batchnorm", "batch normalization"})

# The placements written as the 2017 paper writes them, LayerNorm(x + Sublayer(x)), or as the
# lesson does, x + F(Norm(x)): any norm's name (LN, LayerNorm, Norm, RMSNorm, LN_1...), any
# sublayer's name (nested ones too: Dropout(Sublayer(x))), any variable, either order of the sum.
_S = r"\s*"
_VAR = r"(?P<v>[a-z][a-z0-9_']*)"
_SAME = r"(?P=v)"
_NORM = r"(?:layer[ _-]?norm(?:alization)?|rms[ _-]?norm|norm(?:alize)?|ln)[ _]?\d?"
_CALLS = rf"(?:[a-z][\w.-]*{_S}\({_S})+"        # one or more sublayer calls opening: F( or Dropout(F(
_CLOSES = rf"(?:{_S}\))+"


def _formula(*parts: str) -> re.Pattern:
    return re.compile(r"(?<![\w.])" + _S.join(parts), re.IGNORECASE)


PLACEMENT_FORMULAS = (
    # post-norm: Norm(x + F(x)) and Norm(F(x) + x)
    (_formula(_NORM, r"\(", _VAR, r"\+", _CALLS + _SAME + _CLOSES), "post norm"),
    (_formula(_NORM, r"\(", _CALLS + _VAR + _CLOSES, r"\+", _SAME, r"\)"), "post norm"),
    # pre-norm: x + F(Norm(x)) and F(Norm(x)) + x
    (_formula(_VAR, r"\+", _CALLS + _NORM, r"\(", _SAME, r"\)" + _CLOSES), "pre norm"),
    (_formula(_CALLS + _NORM, r"\(", _VAR, r"\)" + _CLOSES, r"\+", _SAME), "pre norm"),
)
