"""Checks for `blocks`: the decoder's sublayers (C6), norm placement (C7), and the pre-norm (B6)
and post-norm (B7) blocks against torch's own encoder layer with the same weights."""
import functools

import torch

from autograder.grader_side.free_text import expect_answer, expect_parts, normalize
from autograder.student_side.checks import check, expect_close, seeded
from autograder.student_side.student import CheckFailed
from ...student_side.checks.blocks import TRANSFORMER_LAYERS
from ..reference import blocks as ref

# (batch, tokens, d_model, heads, d_ff): d_ff is not always 4 * d_model.
CONFIGS = [(2, 5, 16, 4, 64), (1, 7, 12, 3, 20), (3, 4, 8, 2, 40)]


@check("C6", points=3, hidden=True, says="q6_decoder_sublayers names the three sublayers of the 2017 decoder block")
def test_C6_sublayers(student):
    _sublayers(student.value("q6_decoder_sublayers"))


def _sublayers(value) -> dict:
    """string -> sublayer, for a list naming the three decoder sublayers (the paper's plain
    "Multi-Head Attention" is the cross-attention once the other two are named)."""
    return expect_parts(value, ref.DECODER_SUBLAYERS, ref.NOT_A_SUBLAYER, ref.ATTENTION_LABELS, "q6_decoder_sublayers")


@check("C6", points=2, hidden=True, says="q6_gpt_drops names the sublayer a GPT block leaves out")
def test_C6_gpt_drops(student):
    value = student.value("q6_gpt_drops")
    if isinstance(value, str) and normalize(value) in {normalize(label) for label in ref.ATTENTION_LABELS}:
        # A bare "Multi-Head Attention" is right when the student's own list uses it for the cross-attention.
        try:
            labels = _sublayers(student.value("q6_decoder_sublayers"))
        except CheckFailed:
            labels = {}
        if any(normalize(s) == normalize(value) and kind == "cross attention" for s, kind in labels.items()):
            return
    others = set().union(ref.NOT_A_SUBLAYER, *(v for k, v in ref.DECODER_SUBLAYERS.items() if k != "cross attention"))
    expect_answer(value, ref.GPT_DROPS, others, "q6_gpt_drops")


@check("C7", points=2, hidden=True,
       says="q7_2017_paper names the norm placement of the 2017 paper (by name, label or formula)")
def test_C7_2017_paper(student):
    expect_answer(student.value("q7_2017_paper"), ref.PAPER_2017, ref.MODERN_DEFAULT | ref.NOT_A_PLACEMENT,
                  "q7_2017_paper", formulas=ref.PLACEMENT_FORMULAS)


@check("C7", points=2, hidden=True, says="q7_modern_default names the placement most current LLMs ship")
def test_C7_modern_default(student):
    expect_answer(student.value("q7_modern_default"), ref.MODERN_DEFAULT, ref.PAPER_2017 | ref.NOT_A_PLACEMENT,
                  "q7_modern_default", formulas=ref.PLACEMENT_FORMULAS)

@functools.lru_cache(maxsize=None)
def _torch_case(seed, norm_first, causal):
    """(state_dict, x, expected output) of torch's layer for one config: the same for every
    submission, so it is computed once per grading run."""
    B, T, d, h, d_ff = CONFIGS[seed]
    # Random norm gains and shifts too: a block that shares one norm for both sublayers fails.
    layer = seeded(ref.torch_block(d, h, d_ff, norm_first=norm_first), 1000 + seed).eval()
    x = torch.randn(B, T, d, generator=torch.Generator().manual_seed(1100 + seed))
    with torch.no_grad():
        return layer.state_dict(), x, ref.torch_block_forward(layer, x, causal)


def _matches_torch(student, cls, norm_first, causal):
    for seed, (B, T, d, h, d_ff) in enumerate(CONFIGS):
        state, x, want = _torch_case(seed, norm_first, causal)
        forwards = [((x,), {"causal": causal})] + ([((x,), {})] if causal else [])
        outs = student.module(cls, (d, h, d_ff), state=state, forwards=forwards, forbid=TRANSFORMER_LAYERS)
        what = f"{cls}(d_model, n_heads, d_ff) with d_ff {'=' if d_ff == 4 * d else '!='} 4 d_model, causal={causal}"
        expect_close(outs[0], want, what)
        if causal:
            expect_close(outs[1], want, f"{cls}.forward(x) without the causal argument (it defaults to True)")


@check("B6", points=4, hidden=True,
       says="PreNormBlock matches nn.TransformerEncoderLayer(norm_first=True) with the same random weights, causal")
def test_B6_causal(student):
    _matches_torch(student, "PreNormBlock", norm_first=True, causal=True)


@check("B6", points=3, hidden=True, says="PreNormBlock matches the torch layer with the mask off")
def test_B6_bidirectional(student):
    _matches_torch(student, "PreNormBlock", norm_first=True, causal=False)


@check("B7", points=3, hidden=True,
       says="PostNormBlock matches nn.TransformerEncoderLayer(norm_first=False) with the same random weights, causal")
def test_B7_causal(student):
    _matches_torch(student, "PostNormBlock", norm_first=False, causal=True)


@check("B7", points=2, hidden=True, says="PostNormBlock matches the torch layer with the mask off")
def test_B7_bidirectional(student):
    _matches_torch(student, "PostNormBlock", norm_first=False, causal=False)
