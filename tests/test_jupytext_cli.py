"""Jupytext's own command line reads every set's ``.pct.py`` into the cells ``course release`` builds
(a process per file: left out of ``make test-unit``, which stays in one process)."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(REPO.glob("solutions/*/*.pct.py"))


def test_jupytext_on_the_command_line_gives_the_cells_course_release_builds(tmp_path):
    """`jupytext --to ipynb` of a set's source, against the source notebook `course release` built."""
    jupytext_cli = Path(sys.executable).with_name("jupytext")
    assert SOURCES
    for source in SOURCES:
        out = tmp_path / f"{source.parent.name}-{source.name}.ipynb"
        subprocess.run([str(jupytext_cli), "--to", "ipynb", "-o", str(out), str(source)], check=True,
                       capture_output=True)
        theirs = json.loads(out.read_text())["cells"]
        built = json.loads(source.with_name(source.name.replace(".pct.py", ".ipynb")).read_text())["cells"]
        assert [(c["cell_type"], "".join(c["source"])) for c in theirs] == \
            [(c["cell_type"], "".join(c["source"])) for c in built], source
