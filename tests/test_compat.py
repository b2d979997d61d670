"""What the kit takes from Python 3.11 holds on 3.10 too: a child the grader starts never has the
working folder on sys.path (a submission's json.py must not shadow the grader's json), by -P from
3.11 and by hand on 3.10; and the sandbox's package, which also runs inside the sessions as a
package of its own, imports nothing of the kit at its top (the zygote could not start)."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import compat

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("version", [sys.version_info, (3, 10, 13)], ids=["this-python", "as-on-3.10"])
@pytest.mark.parametrize("kind", ["module", "code"])
def test_a_child_never_imports_from_its_working_folder(tmp_path, monkeypatch, version, kind):
    (tmp_path / "json.py").write_text("raise SystemExit('the working folder shadowed json')\n")
    (tmp_path / "probe.py").write_text("raise SystemExit('the working folder shadowed probe')\n")
    monkeypatch.setattr(compat.sys, "version_info", version)
    command = (compat.python_command(module="json.tool") + ["--help"] if kind == "module" else
               compat.python_command(code="import json, sys; print(json.__file__); sys.exit('probe' in sys.modules)"))
    monkeypatch.undo()
    assert ("-P" in command) == (version >= (3, 11))
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and "shadowed" not in done.stderr, done.stderr
    assert str(tmp_path) not in done.stdout


def test_the_sandbox_package_imports_nothing_of_the_kit_at_its_top():
    for path in sorted((REPO / "autograder" / "grader_side" / "sandbox").glob("*.py")):
        tree = ast.parse(path.read_text())
        top = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               and not any(isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) for p in _parents(tree, n))]
        named = [ast.unparse(n) for n in top if any(a.startswith("autograder") for a in _modules(n))]
        assert not named, f"{path.name}: {named}"


def _modules(node) -> list[str]:
    return [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]


def _parents(tree, target) -> list:
    path: list = []

    def walk(node, above):
        if node is target:
            path.extend(above)
            return True
        return any(walk(child, above + [node]) for child in ast.iter_child_nodes(node))

    walk(tree, [])
    return path
