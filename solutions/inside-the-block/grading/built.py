"""The files this set builds into its folder, which nbgrader copies into the release: the build
notebook's ``TinyLM`` trained on the copy-first task, as ``trained/copy_first.pt`` (its state_dict,
about 70 kB), which the notebook loads instead of training on every run.

The weights are committed with the set (``solutions/inside-the-block/trained/``), so every release
ships the same bytes on every machine: ``build`` trains only where the file is missing. A training
is the same byte for byte on one machine (a child Python with torch's CPU kernels pinned: one
thread, the portable kernels, MKL's compatible code path), but not from one CPU to another (an AMD
EPYC with AVX2 lands within 5e-6 of the committed weights, not on them), which is why the trained
file is a source, not a product of each release.

The training is ``copy_first.trained_model`` (``../copy_first.py``, shipped with the notebook, whose
optional retrain cell runs it too) on the ``TinyLM`` class of the notebook's own model cell, so the
weights fit the model exactly as students have it. After changing that cell or ``copy_first.py``,
retrain and commit: ``python solutions/inside-the-block/grading/built.py solutions/inside-the-block
solutions/inside-the-block/trained/copy_first.pt``, then ``course release inside-the-block``
(``tests/test_trained_model.py`` fails until the committed weights are what a training makes, to 1e-4).

Run as a script, ``python built.py SET_FOLDER OUT``, it is that child: it trains and writes OUT.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WEIGHTS = Path("trained") / "copy_first.pt"    # in the set's folder, and so in the release
FILES = (WEIGHTS,)                              # what build() writes, relative to the set's folder
NOTEBOOK = "build.pct.py"                       # whose model cell defines TinyLM
# The child's environment: torch reads these when it loads, so only a fresh process can pin them.
PINNED = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE",
          "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# The names the model cell uses from the notebook's setup cell.
SETUP = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def build(source_dir: Path) -> list[Path]:
    """Write ``trained/copy_first.pt`` into ``source_dir`` (a copy of this set's folder) from a fresh
    training where it is missing; the committed file is left untouched. Returns the files."""
    target = Path(source_dir) / WEIGHTS
    if not target.is_file():
        data = trained_bytes(Path(source_dir))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return [target]


def trained_bytes(source_dir: Path) -> bytes:
    """The bytes of ``trained/copy_first.pt`` as a fresh, pinned training of ``source_dir``'s
    notebook model makes them (in a child Python: see the module's docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "copy_first.pt"
        done = subprocess.run([sys.executable, __file__, str(source_dir), str(out)],
                              env={**os.environ, **PINNED}, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not out.is_file():
            raise RuntimeError(f"training the copy-first TinyLM of {source_dir} failed (exit {done.returncode}); "
                               f"run `python {__file__} {source_dir} out.pt` to see why:\n{done.stderr[-2000:]}")
        return out.read_bytes()


def model_class(notebook: Path):
    """``TinyLM`` as the notebook's model cell (the code cell that defines it) writes it."""
    from autograder.tooling.authoring import parse

    cells = [body for kind, _, body in parse(notebook.read_text(), notebook.name)
             if kind == "code" and "class TinyLM(" in body]
    if len(cells) != 1:
        raise RuntimeError(f"{notebook}: expected one code cell defining class TinyLM, found {len(cells)}")
    namespace: dict = {"__name__": "tinylm_cell"}
    exec(compile(SETUP + cells[0], f"<{notebook.name}: model cell>", "exec"), namespace)
    return namespace["TinyLM"]


def _train(source_dir: Path, out: Path) -> None:
    """The child: train the notebook's TinyLM and save its state_dict (tensors only) to ``out``."""
    import copy_first  # the set's, from source_dir (first on sys.path)
    import torch

    model, _ = copy_first.trained_model(model_class(source_dir / NOTEBOOK))
    buffer = io.BytesIO()   # saved to memory first: the archive's inner names do not depend on out's name
    torch.save({name: t.detach().clone() for name, t in model.state_dict().items()}, buffer)
    out.write_bytes(buffer.getvalue())


if __name__ == "__main__":
    os.environ.update(PINNED)   # before torch loads (in _train): run by hand too, the training is pinned
    folder = Path(sys.argv[1]).resolve()
    sys.path[0] = str(folder)   # the set's folder instead of grading/ (whose names are not the notebook's)
    _train(folder, Path(sys.argv[2]))
