"""The kit runs on the Pythons its pinned dependencies have wheels for (torch 2.13.0: CPython 3.10
to 3.14; 3.10 to 3.13 tested), so that Gradescope's Ubuntu 22.04 image grades with its own Python 3.10: every source
parses as Python 3.10, and compiles under a real 3.10 where the machine has one; pyproject's
``requires-python``, ruff's and mypy's targets and Gradescope's setup.sh name the same oldest."""
import ast
import glob
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.compat import tomllib
from autograder.tooling import gradescope

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for top in ("autograder", "solutions", "tests", "bench") for p in (REPO / top).rglob("*.py")
                 if "__pycache__" not in p.parts)
OLDEST = min(gradescope.PYTHONS, key=lambda v: tuple(map(int, v.split("."))))


def test_the_oldest_python_is_named_the_same_everywhere():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert OLDEST == "3.10"
    assert project["project"]["requires-python"] == f">={OLDEST}"
    assert project["tool"]["ruff"]["target-version"] == "py" + OLDEST.replace(".", "")
    assert project["tool"]["mypy"]["python_version"] == OLDEST


def test_every_source_parses_as_the_oldest_python():
    assert len(SOURCES) > 100
    major, minor = map(int, OLDEST.split("."))
    refused = []
    for path in SOURCES:
        try:
            ast.parse(path.read_text(), str(path), feature_version=(major, minor))
        except SyntaxError as exc:
            refused.append(f"{path.relative_to(REPO)}:{exc.lineno}: {exc.msg}")
    assert not refused, refused


def _oldest_interpreter() -> str | None:
    """A working ``python3.10`` (pyenv's, or one on PATH; a pyenv shim without that version is not one)."""
    pyenv = sorted(glob.glob(str(Path.home() / f".pyenv/versions/{OLDEST}.*/bin/python{OLDEST}")))
    for candidate in [*pyenv, shutil.which(f"python{OLDEST}")]:
        if candidate and subprocess.run([candidate, "-c", f"import sys; assert sys.version.startswith('{OLDEST}.')"],
                                        capture_output=True).returncode == 0:
            return candidate
    return None


@pytest.mark.skipif(_oldest_interpreter() is None, reason=f"no Python {OLDEST} on this machine to compile with")
def test_every_source_compiles_under_a_real_oldest_python(tmp_path):
    script = ("import sys\nbad = []\nfor path in sys.argv[1:]:\n    try:\n"
              "        compile(open(path, encoding='utf-8').read(), path, 'exec', dont_inherit=True)\n"
              "    except SyntaxError as exc:\n        bad.append(f'{path}:{exc.lineno}: {exc.msg}')\n"
              "print('\\n'.join(bad))\nsys.exit(1 if bad else 0)\n")
    done = subprocess.run([_oldest_interpreter(), "-c", script, *map(str, SOURCES)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
