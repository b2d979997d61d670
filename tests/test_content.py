"""The lesson's text says what the code does: the numbers the notes quote are those the figures
and B9's plot draw, each fact is stated one way, and no visible check gives away a concept answer."""
from __future__ import annotations

import ast
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.grader_side.assignment import REPO
from autograder.student_side.checks import norms as visible_norms
from solutions.reference import depth

NOTES = (REPO / "course" / "notes" / "transformer-block.md").read_text()
BUILD = (REPO / "solutions" / "transformer-block" / "build.pct.py").read_text()


def _function(source: str, name: str) -> str:
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(source, node)


def test_b9_plot_draws_the_references_gradient_norms():
    ns = {"torch": torch, "nn": nn, "stack_forward": depth.stack_forward}
    exec(_function(BUILD, "grad_norm_per_layer"), ns)
    for residual in (True, False):
        assert ns["grad_norm_per_layer"](residual=residual) == depth.grad_norms_per_layer(residual=residual)


def test_the_notes_quote_the_depth_numbers_of_the_plot_at_layer_1():
    residual = depth.grad_norms_per_layer(residual=True)[0]
    plain = depth.grad_norms_per_layer(residual=False)[0]
    mantissa, exponent = f"{plain:.0e}".split("e")
    quoted = re.search(r"gradient at layer (\d+), the one nearest the input, is about \$([\d.]+)\$; "
                       r"without them it is about\s+\$(\d) \\times 10\^\{(-\d+)\}\$", NOTES)
    assert quoted, "the depth worked example no longer quotes layer 1's numbers"
    assert quoted.groups() == ("1", f"{residual:.1f}", mantissa, str(int(exponent)))
    assert "layer (1 = closest to the input)" in BUILD
    assert 'layer (1 = nearest the input' in (REPO / "course" / "figures.py").read_text()


def test_the_gelu_gap_is_stated_one_way_and_is_true():
    z = torch.linspace(-8, 8, 160_001, dtype=torch.float64)
    gap = (F.gelu(z) - F.gelu(z, approximate="tanh")).abs().max().item()
    assert 4.5e-4 < gap < 5e-4
    texts = [NOTES, BUILD, *(p.read_text() for p in (REPO / "autograder").rglob("*.py"))]
    for text in texts:   # no other size of the gap next to a mention of the tanh form
        for mention in re.finditer(r"tanh", text):
            assert not re.search(r"10\^\{-3\}|1e-3", text[mention.start():mention.start() + 160])
    for text in (NOTES, BUILD):
        assert "5 \\times 10^{-4}" in text
    assert "by up to 5e-4" in (REPO / "autograder" / "student_side" / "checks" / "mlp.py").read_text()


def test_rmsnorm_eps_is_not_attributed_to_llama():
    for text in (NOTES, BUILD, *(p.read_text() for p in (REPO / "autograder").rglob("misconceptions/*.py"))):
        assert "Llama's)" not in text and "is Llama's" not in text
    assert "Llama 2 uses $10^{-5}$" in BUILD


def test_no_visible_check_shows_the_answer_to_c5():
    """B1's visible example must not print [1, -1] for u = [3, 1] before the student answers C5."""
    source = open(visible_norms.__file__).read()
    assert "[3, 1]" not in source and "3.0, 1.0" not in source
