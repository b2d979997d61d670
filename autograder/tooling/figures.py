"""Saving the notes' figures: a PNG with no text cut off at the canvas's edge, and no software tag
(so drawing it twice writes the same bytes). Both sets' figure scripts save through ``save``."""
from __future__ import annotations

from pathlib import Path

import matplotlib.text


class FigureError(RuntimeError):
    """A figure would be saved with text cut off at the canvas's edge; the message names the text."""


def _tick_labels_out_of_view(fig) -> set[int]:
    """ids of the tick labels matplotlib keeps but does not draw: those of ticks beyond an axis's
    view limits, and all of those of an axis turned off."""
    undrawn: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            shown = ax.axison and axis.get_visible()
            lo, hi = sorted(axis.get_view_interval())
            slack = (hi - lo) * 1e-9
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                loc = tick.get_loc()
                if not shown or loc is None or not lo - slack <= loc <= hi + slack:
                    undrawn.update((id(tick.label1), id(tick.label2)))
    return undrawn


def outside_canvas(fig, slack_px: float = 1.0) -> list[str]:
    """The visible text of ``fig`` (titles, labels, tick labels, legends, notes) that reaches past
    the edge of its canvas once laid out, and so would be clipped in the saved PNG. Constrained
    layout makes room for labels but not for a title wider than its panel."""
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    box, undrawn = fig.bbox, _tick_labels_out_of_view(fig)
    cut = []
    for text in fig.findobj(lambda a: isinstance(a, matplotlib.text.Text)):
        if not (text.get_visible() and text.get_text().strip()) or id(text) in undrawn:
            continue
        extent = text.get_window_extent(renderer)
        if (extent.x0 < box.x0 - slack_px or extent.x1 > box.x1 + slack_px
                or extent.y0 < box.y0 - slack_px or extent.y1 > box.y1 + slack_px):
            cut.append(text.get_text())
    return cut


def save(fig, path: Path, dpi: int) -> Path:
    """Write ``fig`` to ``path`` as PNG without a software tag, after checking no text is clipped."""
    import matplotlib.pyplot as plt  # after the script chose its backend

    cut = outside_canvas(fig)
    if cut:
        plt.close(fig)
        raise FigureError(f"{path.name}: text runs off the canvas: {cut}; shorten it, or widen the panel")
    fig.savefig(path, dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return path
