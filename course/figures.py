"""Figures for the notes of the transformer-block unit (course/notes/transformer-block.md).

Every number drawn comes from the set's hidden PyTorch references
(solutions/transformer-block/grading/reference/), so the figures always agree with what the
autograder checks. Run from the repository root with the
root on the import path (nothing here edits sys.path):

    PYTHONPATH=. python course/figures.py [OUTDIR]
    PYTHONPATH=. python -m course.figures [OUTDIR]

OUTDIR defaults to course/figures/ (next to this file) and is created if missing. Four PNGs are
written, each 1350 px wide (9 in at 150 dpi), and nothing is printed:

    params_breakdown.png   where the parameters sit: GPT-2 small vs Llama 2 7B   (params)
    activations.png        ReLU, exact GELU, tanh-approximate GELU, SiLU        (mlp)
    grad_norm_depth.png    gradient norm per layer at depth 32, residual vs plain (depth)
    norms.png              LayerNorm vs RMSNorm on one vector, scaled and shifted (norms)

The output is deterministic: fixed inputs and seeds, no timestamps or version strings in the
PNG metadata.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from autograder.grader_side.assignment import REPO, Assignment  # noqa: E402
from autograder.tooling.figures import FigureError, outside_canvas, save  # noqa: E402,F401

depth, norms, params = (Assignment("transformer-block", REPO).set.reference(c) for c in ("depth", "norms", "params"))

DEFAULT_OUTDIR = Path(__file__).resolve().parent / "figures"
WIDTH_IN, DPI = 9.0, 150
PARTS = ("embeddings", "attention", "mlp", "norms")
PART_LABELS = {"embeddings": "embeddings", "attention": "attention", "mlp": "MLP",
               "norms": "norms"}
COLORS = {"gpt2": "#1f77b4", "llama": "#d62728", "relu": "#7f7f7f", "gelu": "#1f77b4",
          "gelu_tanh": "#ff7f0e", "silu": "#2ca02c", "residual": "#1f77b4", "plain": "#d62728",
          "x": "#7f7f7f", "scaled": "#1f77b4", "shifted": "#ff7f0e"}
STYLE = {"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 10,
         "xtick.labelsize": 10, "ytick.labelsize": 10, "figure.titlesize": 13,
         "axes.spines.top": False, "axes.spines.right": False}


def _human(n: int) -> str:
    """124439808 -> '124.4M', 38400 -> '38.4K', 6738415616 -> '6.74B'."""
    for div, suffix, digits in ((1e9, "B", 2), (1e6, "M", 1), (1e3, "K", 1)):
        if n >= div:
            return f"{n / div:.{digits}f}{suffix}"
    return str(n)




def params_breakdown(path: Path) -> Path:
    """Grouped bars: share of each part in GPT-2 small and Llama 2 7B, absolute count on top."""
    models = (("GPT-2 small", params.GPT2_SMALL, COLORS["gpt2"]),
              ("Llama 2 7B", params.LLAMA2_7B, COLORS["llama"]))
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.2), layout="constrained")
    width = 0.38
    for k, (name, config, color) in enumerate(models):
        counts = params.count_parameters(config)
        shares = [100 * counts[p] / counts["total"] for p in PARTS]
        xs = [i + (k - 0.5) * width for i in range(len(PARTS))]
        label = f"{name}: {counts['total']:,} total"
        bars = ax.bar(xs, shares, width, color=color, label=label)
        for bar, part, share in zip(bars, PARTS, shares, strict=True):
            pct = (f"{share:.1f}%" if share >= 0.1 else f"{share:.2f}%" if share >= 0.01
                   else "<0.01%")
            ax.annotate(f"{pct}\n{_human(counts[part])}",
                        (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                        fontsize=10)
    ax.set_xticks(range(len(PARTS)), [PART_LABELS[p] for p in PARTS])
    ax.set_ylabel("share of all parameters (%)")
    ax.set_ylim(0, 92)
    ax.set_title("Where the parameters sit (bar label: share, then absolute count)")
    ax.text(0.99, 0.97, "embeddings: GPT-2 small ties the output layer to the token table\n"
            "and adds 1,024 learned positions; Llama 2 7B keeps a separate\n"
            "output matrix and has no position table (it rotates q and k)",
            transform=ax.transAxes, ha="right", va="top", fontsize=9, color="#444444")
    ax.legend(loc="upper left", frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return save(fig, path, DPI)


def activations(path: Path) -> Path:
    """ReLU, exact GELU, tanh-approximate GELU and SiLU on [-4, 4], plus the GELU gap."""
    z = torch.linspace(-4, 4, 801, dtype=torch.float64)
    curves = (
        ("ReLU  max(0, z)", torch.relu(z), COLORS["relu"], "-"),
        ("GELU (exact)  z Φ(z)", torch.nn.functional.gelu(z), COLORS["gelu"], "-"),
        ("GELU (tanh approx.)", torch.nn.functional.gelu(z, approximate="tanh"),
         COLORS["gelu_tanh"], "--"),
        ("SiLU  z σ(z)", torch.nn.functional.silu(z), COLORS["silu"], "-"),
    )
    fig, (ax, gap) = plt.subplots(1, 2, figsize=(WIDTH_IN, 4.6), layout="constrained",
                                  gridspec_kw={"width_ratios": [2.1, 1]})
    for label, y, color, ls in curves:
        ax.plot(z, y, ls, color=color, lw=2.2 if ls == "-" else 2.0, label=label)
    ax.axhline(0, color="black", lw=0.6)
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-4, 4)
    ax.set_ylim(-1, 4)
    ax.set_xlabel("pre-activation z")
    ax.set_ylabel("φ(z)")
    ax.set_title("MLP nonlinearities")
    ax.legend(loc="upper left", frameon=False)
    ax.grid(alpha=0.3)

    diff = torch.nn.functional.gelu(z, approximate="tanh") - torch.nn.functional.gelu(z)
    gap.plot(z, diff * 1e3, color=COLORS["gelu_tanh"], lw=2)
    gap.axhline(0, color="black", lw=0.6)
    gap.set_xlim(-4, 4)
    gap.set_xlabel("pre-activation z")
    gap.set_ylabel("difference (× 10⁻³)")
    gap.set_title("tanh approx. − exact GELU")
    gap.grid(alpha=0.3)
    return save(fig, path, DPI)


def grad_norm_depth(path: Path, n_layers: int = 32) -> Path:
    """Gradient norm reaching each layer of a 32-layer tanh stack, with and without x + f(x)."""
    res = depth.grad_norms_per_layer(depth=n_layers, d=64, residual=True, seed=0)
    plain = depth.grad_norms_per_layer(depth=n_layers, d=64, residual=False, seed=0)
    layers = list(range(1, n_layers + 1))          # layer 1 is nearest the input, as in B9's plot
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.0), layout="constrained")
    ax.semilogy(layers, res, "o-", color=COLORS["residual"], ms=4, lw=2,
                label="residual:  x ← x + f(x)")
    ax.semilogy(layers, plain, "s-", color=COLORS["plain"], ms=4, lw=2,
                label="plain:  x ← f(x)")
    ax.axhline(1.0, color="black", lw=0.8, ls=":")
    ax.annotate("unit gradient handed in at the top", (1, 1.0), xytext=(0, -13),
                textcoords="offset points", fontsize=9)
    ax.annotate(f"{plain[0]:.1e}", (1, plain[0]), xytext=(8, -4), textcoords="offset points",
                color=COLORS["plain"], fontsize=10)
    ax.annotate(f"{res[0]:.1f}", (1, res[0]), xytext=(8, 4), textcoords="offset points",
                color=COLORS["residual"], fontsize=10)
    ax.set_xlabel("layer (1 = nearest the input; the gradient travels right to left)")
    ax.set_ylabel("mean ‖∂L/∂x‖ at the layer's input (log scale)")
    ax.set_title(f"Gradient norm per layer in a {n_layers}-layer tanh stack (d = 64, seed 0)")
    ax.set_xlim(0.5, n_layers + 0.5)
    lo = 10 ** math.floor(math.log10(min(plain)))
    ax.set_ylim(lo, 10 ** math.ceil(math.log10(max(res)) + 0.3))
    ax.legend(loc="lower right", frameon=False)
    ax.grid(alpha=0.3, which="major")
    return save(fig, path, DPI)


def norms_figure(path: Path) -> Path:
    """One vector, its 2x rescaling and its +2 shift, before and after LayerNorm and RMSNorm."""
    x = torch.tensor([1.0, 2.5, -0.5, 3.0, 0.5, 1.5])
    d = x.numel()
    gamma, beta = torch.ones(d), torch.zeros(d)
    variants = (("x", x, COLORS["x"]), ("2x (rescaled)", 2 * x, COLORS["scaled"]),
                ("x + 2 (shifted)", x + 2, COLORS["shifted"]))
    panels = (
        ("before (input)", lambda v: v),
        ("after LayerNorm", lambda v: norms.layer_norm(v, gamma, beta)),
        ("after RMSNorm", lambda v: norms.rms_norm(v, gamma)),
    )
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH_IN, 4.4), layout="constrained")
    width = 0.27
    idx = range(d)
    for ax, (title, fn) in zip(axes, panels, strict=True):
        for k, (label, v, color) in enumerate(variants):
            ax.bar([i + (k - 1) * width for i in idx], fn(v).tolist(), width, color=color,
                   label=label)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(list(idx), [f"x{i + 1}" for i in idx])
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("value")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3,
               frameon=False)
    fig.suptitle("LayerNorm forgets both scale and shift; RMSNorm forgets only scale "
                 "(γ = 1, β = 0)")
    return save(fig, path, DPI)


FIGURES = {
    "params_breakdown.png": params_breakdown,
    "activations.png": activations,
    "grad_norm_depth.png": grad_norm_depth,
    "norms.png": norms_figure,
}


def main(argv: list[str] | None = None) -> list[Path]:
    """Write every figure into OUTDIR (argv[0], default course/figures/); return the paths."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) > 1:
        raise SystemExit("usage: PYTHONPATH=. python course/figures.py [OUTDIR]")
    outdir = Path(argv[0]) if argv else DEFAULT_OUTDIR
    outdir.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(STYLE):
        return [make(outdir / name) for name, make in FIGURES.items()]


if __name__ == "__main__":
    main()
