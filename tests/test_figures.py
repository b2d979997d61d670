"""The notes' figures are drawn whole: every piece of text of every figure (titles, labels, tick
labels, legends, notes) lies inside the saved canvas. Each set's figure script refuses to save a
figure that clips one; these tests run both scripts into a scratch folder and show that the
refusal catches the title that week 5's memory figure used to cut off."""
from __future__ import annotations

import importlib.util

import matplotlib.pyplot as plt
import pytest

from autograder.grader_side.assignment import REPO


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPTS = {"inside-the-block": REPO / "solutions" / "inside-the-block" / "grading" / "figures.py",
           "transformer-block": REPO / "course" / "figures.py"}


@pytest.fixture(scope="module", params=sorted(SCRIPTS))
def script(request):
    return _load(SCRIPTS[request.param], f"figures_{request.param.replace('-', '_')}")


def test_a_title_wider_than_its_panel_is_caught(script):
    """The right panel of week 5's memory figure, as it was: its title ran off the canvas."""
    with plt.rc_context(script.STYLE):
        fig, (left, right) = plt.subplots(1, 2, figsize=(script.WIDTH_IN, 4.3), layout="constrained")
        left.set_title("One stored pair, read through the ReLU")
        right.set_title("Many random keys: the threshold filters cross-talk")
        right.plot([0, 90], [0, 1.2])
        assert script.outside_canvas(fig) == ["Many random keys: the threshold filters cross-talk"]
        with pytest.raises(script.FigureError, match="cross-talk"):
            script.save(fig, REPO / "never-written.png", script.DPI)
    assert not (REPO / "never-written.png").exists()


def test_every_figure_of_the_notes_keeps_its_text_on_the_canvas(script, tmp_path):
    written = script.main([str(tmp_path)])     # each save checks its figure, and raises on clipped text
    assert len(written) == 4 and all(p.stat().st_size > 0 for p in written)
