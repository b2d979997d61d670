"""Figures for the notes of the inside-the-block set (``../notes/inside-the-block.md``).

Every number drawn comes from the set's hidden references (``reference/`` next to this file), so
the figures agree with what the grader checks; none of them draws a graded case. Run it from
anywhere with the course's environment (it needs torch and matplotlib only):

    python solutions/inside-the-block/grading/figures.py [OUTDIR]

OUTDIR defaults to ``../figures/`` (the set's released figures folder) and is created if missing.
Four PNGs are written, each 1350 px wide (9 in at 150 dpi), and nothing is printed:

    costs.png           attention scores against T for three depths; the weights of one layer against d  (costs)
    lens.png            the logit lens on a TinyLM trained for a second to copy the first token     (lens)
    memory.png          how much of a value comes back against the overlap with its key; recall error
                        of random keys as the table fills up                                         (memory)
    superposition.png   eight features in two numbers: three readouts, and the worst off-feature
                        readout against the number of features                                       (superposition)

The output is deterministic: fixed seeds and inputs, one thread, no timestamps or version strings in
the PNG metadata.
"""
from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from autograder.tooling.figures import FigureError, outside_canvas, save  # noqa: E402,F401

HERE = Path(__file__).resolve().parent
DEFAULT_OUTDIR = HERE.parent / "figures"
WIDTH_IN, DPI = 9.0, 150
STYLE = {"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 10,
         "xtick.labelsize": 10, "ytick.labelsize": 10, "figure.titlesize": 13,
         "axes.spines.top": False, "axes.spines.right": False}
BLUE, RED, GREEN, ORANGE, GREY = "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#7f7f7f"


def _reference(concept: str):
    """The reference module ``reference/<concept>.py``, as the grader loads it (the set mounted as a
    package: the set's folder name is not a Python package name, and the references import from
    their package)."""
    from autograder.grader_side import problem_set

    return problem_set.load(HERE.parent).reference(concept)


costs, lens, memory, superposition = (_reference(c) for c in ("costs", "lens", "memory", "superposition"))




def costs_figure(path: Path) -> Path:
    """Left: attention scores of one sequence against T, for 1, 6 and 24 blocks of 8 heads.
    Right: weights per layer against the width d, by part."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 4.4), layout="constrained")
    lengths = [2 ** k for k in range(6, 15)]
    for n_layers, color in ((1, GREY), (6, BLUE), (24, RED)):
        scores = [costs.attention_scores(1, 8, T, n_layers) for T in lengths]
        left.loglog(lengths, scores, "o-", color=color, ms=4, lw=2, label=f"{n_layers} block{'s' * (n_layers > 1)}")
    left.set_xscale("log", base=2)
    left.set_xlabel("sequence length T (log scale)")
    left.set_ylabel("attention scores per forward pass")
    left.set_title("8 heads per block, one sequence")
    left.legend(frameon=False)
    left.grid(alpha=0.3, which="major")

    widths = [192, 384, 768, 1536, 3072, 6144]
    attention = [4 * d * d for d in widths]
    layer = [costs.layer_weights(d) for d in widths]
    right.loglog(widths, layer, "o-", color=BLUE, lw=2, ms=4, label="one layer (attention + MLP)")
    right.loglog(widths, attention, "s--", color=ORANGE, lw=2, ms=4, label="attention's part")
    right.set_xticks(widths, [str(d) for d in widths])
    right.minorticks_off()
    right.set_xlabel("width d (log scale)")
    right.set_ylabel("weights (no biases, no norms)")
    right.set_title("Weights of one layer, d_ff = 4d")
    right.legend(frameon=False)
    right.grid(alpha=0.3, which="major")
    fig.suptitle("What a stack costs: both axes logarithmic, so a power law is a straight line")
    return save(fig, path, DPI)


def lens_figure(path: Path, prompts: int = 200) -> Path:
    """Left: probability of the right token (the prompt's first) after each block, over random
    prompts. Right: the lens of one prompt, block by block, over the whole vocabulary."""
    state = lens.trained_state(seed=0)
    g = torch.Generator().manual_seed(2024)
    with torch.no_grad():
        chances = torch.stack([lens.token_probability(lens.logit_lens(state, p), int(p[0]))
                               for p in torch.randint(16, (prompts, 8), generator=g)])   # (prompts, n_layers)
        example = torch.tensor([3, 11, 6, 3, 9, 14, 1, 7])
        lens_rows = lens.logit_lens(state, example)
        rows = lens_rows.softmax(dim=-1)                                                  # (n_layers, V)
    blocks = list(range(1, chances.shape[1] + 1))
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 4.3), layout="constrained",
                                      gridspec_kw={"width_ratios": [1, 1.35]})
    low, mid, high = (chances.quantile(q, dim=0) for q in (0.1, 0.5, 0.9))
    left.fill_between(blocks, low, high, color=BLUE, alpha=0.2, label="10% to 90% of prompts")
    left.plot(blocks, mid, "o-", color=BLUE, lw=2, label="median")
    left.set_xticks(blocks)
    left.set_ylim(0, 1.02)
    left.set_xlabel("block")
    left.set_ylabel("P(first token of the prompt)")
    left.set_title(f"P(answer) after each block, {prompts} prompts")
    left.legend(loc="lower right", frameon=False)
    left.grid(alpha=0.3)

    image = right.imshow(rows.numpy(), aspect="auto", cmap="Blues", vmin=0, vmax=1)
    right.set_yticks(range(len(blocks)), [f"block {b}" for b in blocks])
    right.set_xticks(range(16))
    right.set_xlabel(f"vocabulary token (prompt {example.tolist()})")
    right.axvline(int(example[0]), color=RED, lw=1, ls=":")
    for b, guess in enumerate(lens.lens_guesses(lens_rows)):
        right.text(guess, b, "●", ha="center", va="center", color=ORANGE, fontsize=9)
    right.set_title("One prompt: softmax of each row (● = guess)")
    fig.colorbar(image, ax=right, shrink=0.8, label="probability")
    fig.suptitle("The logit lens on a TinyLM trained to repeat the first token (dotted: the answer)")
    return save(fig, path, DPI)


def memory_figure(path: Path) -> Path:
    """Left: the share of value 0 recalled against the input's overlap with key 0, for three
    thresholds. Right: mean recall error of the stored keys as more random (not perpendicular)
    unit keys share 32 dimensions."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 4.3), layout="constrained")
    keys, values = memory.orthonormal_keys(4, 16, seed=3), memory.random_values(4, 16, seed=4)
    overlaps = torch.linspace(-1, 1, 201)
    for threshold, color in ((0.2, GREY), (0.5, BLUE), (0.8, RED)):
        W1, b1, W2 = memory.store_pairs(keys, values, threshold)
        probes = memory.partial_probes(keys, [(0, float(c)) for c in overlaps.clamp(-0.9999, 0.9999)], seed=5)
        share = memory.recall(W1, b1, W2, probes) @ values[0] / values[0].norm() ** 2
        left.plot(overlaps, share, color=color, lw=2, label=f"threshold {threshold}")
    left.set_xticks([-1, -0.5, 0, 0.5, 1])
    left.set_xlabel("overlap of the input with key 0 (cosine)")
    left.set_ylabel("share of value 0 written back")
    left.set_title("One stored pair, read through the ReLU")
    left.legend(frameon=False)
    left.grid(alpha=0.3)

    d, counts = 32, list(range(2, 97, 4))
    for threshold, color in ((0.0, GREY), (0.3, BLUE), (0.6, RED)):
        errors = []
        for n in counts:
            g = torch.Generator().manual_seed(n)
            random_keys = torch.randn(n, d, generator=g)
            random_keys = random_keys / random_keys.norm(dim=1, keepdim=True)
            vals = torch.randn(n, d, generator=g)
            W1, b1, W2 = memory.store_pairs(random_keys, vals, threshold)
            err = (memory.recall(W1, b1, W2, random_keys) - vals).norm(dim=1) / vals.norm(dim=1)
            errors.append(float(err.mean()))
        right.plot(counts, errors, "o-", color=color, ms=3, lw=2, label=f"threshold {threshold}")
    right.axvline(d, color="black", lw=0.8, ls=":")
    right.text(d + 1, 0.02, "n = d", fontsize=9)
    right.set_xlabel("pairs stored (random unit keys, d = 32)")
    right.set_ylabel("mean relative recall error")
    right.set_title("Random keys: a threshold filters cross-talk")
    right.legend(frameon=False)
    right.grid(alpha=0.3)
    fig.suptitle("An MLP as a key-value memory: rows of W1 are keys, columns of W2 are values")
    return save(fig, path, DPI)


def superposition_figure(path: Path) -> Path:
    """Eight features in the plane with bias -0.75: the directions, the readouts of three cases,
    and the worst readout of an off feature (one feature on) against n, for three biases."""
    n, bias = 8, -0.75
    W = superposition.feature_directions(n)
    cases = (("feature 0 alone", [0]), ("features 0 and 1", [0, 1]), ("features 0 and 2", [0, 2]))
    fig = plt.figure(figsize=(WIDTH_IN, 6.4), layout="constrained")
    grid = fig.add_gridspec(2, 3)
    arrows = fig.add_subplot(grid[0, 0])
    for k in range(n):
        arrows.annotate("", xy=(float(W[0, k]), float(W[1, k])), xytext=(0, 0),
                        arrowprops=dict(arrowstyle="->", color=GREY, lw=1.5))
        arrows.text(1.18 * float(W[0, k]), 1.18 * float(W[1, k]), str(k), ha="center", va="center", fontsize=9)
    h = W @ torch.tensor([1.0, 0, 1, 0, 0, 0, 0, 0])
    arrows.annotate("", xy=(float(h[0]), float(h[1])), xytext=(0, 0),
                    arrowprops=dict(arrowstyle="->", color=RED, lw=2.2))
    arrows.text(0.05, 1.3, "h = w₀ + w₂", color=RED, fontsize=9)
    arrows.set_xlim(-1.4, 1.6)
    arrows.set_ylim(-1.4, 1.4)
    arrows.set_aspect("equal")
    arrows.axis("off")
    arrows.set_title("8 directions in 2 numbers")
    for i, (label, active) in enumerate(cases, start=1):
        ax = fig.add_subplot(grid[0, i]) if i < 3 else fig.add_subplot(grid[1, 0])
        x = torch.zeros(n)
        x[active] = 1.0
        reads = superposition.readout(x, W, bias)
        colors = [BLUE if k in active else (RED if float(reads[k]) > superposition.TOLERANCE else GREY)
                  for k in range(n)]
        ax.bar(range(n), reads.tolist(), color=colors)
        ax.set_xticks(range(n))
        ax.set_ylim(0, 1.4)
        ax.set_title(f"{label}: " + ("interferes" if superposition.interferes(n, active, bias) else "clean"))
        ax.set_xlabel("feature")
        ax.grid(axis="y", alpha=0.3)
    worst = fig.add_subplot(grid[1, 1:])
    ns = list(range(3, 17))
    for b, color in ((-0.3, GREY), (-0.6, BLUE), (-0.9, RED)):
        values = [float(superposition.readout(torch.eye(m)[0], superposition.feature_directions(m), b)[1:].max())
                  for m in ns]
        worst.plot(ns, values, "o-", color=color, ms=4, lw=2, label=f"b = {b}")
    worst.set_xlabel("number of features n (one of them on)")
    worst.set_ylabel("largest readout of an off feature")
    worst.set_title("One feature on: its neighbour reads cos(2π/n) + b")
    worst.legend(frameon=False)
    worst.grid(alpha=0.3)
    fig.suptitle(f"Superposition with n = {n} features and b = {bias} (blue: on, red: off but lit)")
    return save(fig, path, DPI)


FIGURES = {
    "costs.png": costs_figure,
    "lens.png": lens_figure,
    "memory.png": memory_figure,
    "superposition.png": superposition_figure,
}


def main(argv: list[str] | None = None) -> list[Path]:
    """Write every figure into OUTDIR (argv[0], default ../figures/); return the paths."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) > 1:
        raise SystemExit("usage: python solutions/inside-the-block/grading/figures.py [OUTDIR]")
    outdir = Path(argv[0]) if argv else DEFAULT_OUTDIR
    outdir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)                  # the same sums in the same order on every machine
    with plt.rc_context(STYLE):
        return [make(outdir / name) for name, make in FIGURES.items()]


if __name__ == "__main__":
    main()
