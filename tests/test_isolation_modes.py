"""The sandbox where courses grade: as a TA who is not root, and in a container that refuses
namespaces (a filter that denies them, as Docker's default profile does).

Each run is a real `course autograde` in its own process, on a class of an honest student and a
spy whose B8 is right only if it can read none of the course, its hidden references or a
classmate's notebook, and the demo's hostile notebooks. Each run says which isolation it used;
the spy reads nothing in either, and each hostile notebook earns what it earns with every
namespace. Weak isolation grades one submission per run (a class is refused: see
test_weak_isolation.py, which also holds the attacks on it), so there each student is a run.
The runs see the machine through a bubblewrap view in which the Python installation is
searchable by other users (on this machine it lives under /root), as it is on a TA's machine or
in a container image.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.demo import HOSTILE
from autograder.grader_side.assignment import REPO, Assignment, solved
from autograder.grader_side.sandbox import acl

pytestmark = pytest.mark.slow

SPY = '''
def _readable(path):
    try:
        with open(path, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False


_LEAKS = [p for p in {paths!r} if _readable(p)]
if _LEAKS:                                 # a wrong count: B8's points say whether anything leaked
    def count_parameters(config):
        return {{}}
'''
DENY_NAMESPACES = ("import sys\n"
                   "from autograder.grader_side.sandbox import seccomp, syscalls\n"
                   "syscalls.load_seccomp(seccomp.build(False, seccomp.NAMESPACES))\n"
                   "from autograder import cli\n"
                   "sys.exit(cli.main(sys.argv[1:]))\n")


def _python_view() -> list[str]:
    """bubblewrap options: the machine as it is, with the Python installation searchable by anyone."""
    base = os.path.realpath(sys.base_prefix)
    options, parent = ["--dev-bind", "/", "/"], Path(base)
    hidden = next((p for p in [parent, *parent.parents] if p != Path("/") and not os.stat(p).st_mode & 0o001), None)
    if hidden is not None:
        options += ["--tmpfs", str(hidden), "--ro-bind", base, base]
        for folder in Path(base).parents:
            if folder == hidden.parent:
                break
            options += ["--chmod", "0755", str(folder)]
    return options


@pytest.fixture(scope="module")
def classroom():
    """The class, in a folder of its own under /tmp that the other user reaches: not under pytest's
    own temporary folder, which any pytest started meanwhile on the machine makes private again."""
    if not shutil.which("bwrap") or not shutil.which("setpriv"):
        pytest.skip("needs bubblewrap and setpriv")
    if os.geteuid() != 0:
        pytest.skip("starts its runs as root, then as another user")
    root = Path(tempfile.mkdtemp(prefix="course-modes-"))
    try:
        yield _make_class(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _make_class(root: Path) -> Path:
    a = Assignment("transformer-block", REPO)
    from autograder.tooling.sampleclass import write_submission

    write_submission(root / "class" / "honest", a)
    secrets = [str(a.source_dir / "grading" / "reference" / "norms.py"), str(REPO / "nbgrader_config.py"),
               str(root / "class" / "honest" / a.name / "build.ipynb")]
    b8 = solved(next(c.source for c in a.cells("build") if c.grade_id == "B8_code"))
    write_submission(root / "class" / "spy", a, edits={"B8_code": b8 + SPY.format(paths=secrets)})
    for name, code in HOSTILE.items():
        write_submission(root / "class" / f"x_{name}", a, extra_cells=[code])
    for path in root.parents:                       # the other user reaches the class and writes results
        if path != Path("/"):
            os.chmod(path, os.stat(path).st_mode | 0o005)
    os.chmod(root, 0o777)
    for path in root.rglob("*"):
        os.chmod(path, os.stat(path).st_mode | 0o005)
    return root


def _alone(classroom: Path, sid: str) -> Path:
    """A submissions folder holding only ``sid``'s submission (weak isolation grades one)."""
    folder = classroom / f"alone-{sid}"
    if not folder.exists():
        shutil.copytree(classroom / "class" / sid, folder / sid)
        for path in [folder, *folder.rglob("*")]:
            os.chmod(path, os.stat(path).st_mode | 0o005)
    return folder


def _run(classroom: Path, name: str, wrapper: list[str], *flags: str, view: bool = True,
         submissions: Path | None = None):
    out = classroom / f"{name}.json"
    command = [*(["bwrap", *_python_view(), "--"] if view else []), *wrapper, "autograde", "transformer-block",
               "--submissions", str(submissions or classroom / "class"), "--out", str(out), "--workers", "1",
               "--no-gradebook", "--timeout", "24", *flags]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HOME": str(classroom), "PYTHONDONTWRITEBYTECODE": "1"})
    return done, (json.loads(out.read_text()) if out.exists() else {})


@pytest.fixture(scope="module")
def strong(classroom):
    """The same class as root with every namespace: what each hostile notebook earns there."""
    done, results = _run(classroom, "strong", [sys.executable, "-m", "autograder.cli"], view=False)
    assert done.returncode == 0 and "weak" not in results["isolation"], done.stderr[-2000:]
    return {sid: r["score"] for sid, r in results["students"].items()}


def _hostile_earn_what_they_earn_with_namespaces(results, strong):
    for sid in (f"x_{name}" for name in HOSTILE):
        assert results["students"][sid]["score"] == strong[sid], sid


def test_a_ta_who_is_not_root_gets_namespaces_and_the_spy_reads_nothing(classroom, strong):
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", sys.executable, "-m",
              "autograder.cli"]
    done, results = _run(classroom, "not-root", nobody)
    assert done.returncode == 0, done.stderr[-2000:]
    iso = results["isolation"]
    assert "weak" not in iso and iso["pid"] == "namespace" and iso["filesystem"].startswith("allowlist")
    assert iso["uid"].startswith("the grader's own uid 65534 (not root") and "user namespace" in iso["uid"]
    assert results["students"]["honest"]["score"] == 100.0
    assert results["students"]["spy"]["questions"]["B8"]["score"] == 10.0
    _hostile_earn_what_they_earn_with_namespaces(results, strong)


def test_where_namespaces_are_refused_the_grader_refuses_unless_told(classroom):
    done, results = _run(classroom, "refused", [sys.executable, "-c", DENY_NAMESPACES])
    assert done.returncode == 2 and not results
    assert "cannot be isolated" in done.stderr and "--allow-weak-isolation" in done.stderr


@pytest.mark.parametrize("sid", ["honest", "spy", *(f"x_{name}" for name in HOSTILE)])
def test_weak_isolation_as_root_uses_a_dedicated_uid_the_filter_and_acls(classroom, strong, sid):
    done, results = _run(classroom, f"weak-{sid}", [sys.executable, "-c", DENY_NAMESPACES], "--allow-weak-isolation",
                         submissions=_alone(classroom, sid))
    assert done.returncode == 0, done.stderr[-2000:]
    iso = results["isolation"]
    assert iso["weak"] and iso["uid"] == "dedicated uid 61000+slot"
    assert iso["seccomp"].startswith("keyring") and iso["network"] == "not isolated; new sockets denied by the filter"
    denied = re.search(r"denied to the sessions' group \((\d+)\) by ACL", iso["files"])
    assert iso["pid"].startswith("not isolated") and denied, iso["files"]
    assert iso["processes"].startswith("every process of the session's uid killed")
    assert "weak isolation" in done.stderr
    assert results["students"][sid]["score"] == strong[sid], results["students"][sid]["flags"]
    if sid == "spy":
        assert results["students"]["spy"]["questions"]["B8"]["score"] == 10.0, results["students"]["spy"]["flags"]
    # What the grader denied its sessions' group is given back when it stops (on what this run
    # alone denies: graders in other test files deny their own groups the kit's checkout meanwhile).
    group = int(denied.group(1))
    for path in (classroom, classroom / f"alone-{sid}"):
        for which in (acl._ACCESS, acl._DEFAULT):
            entries = acl._read(str(path), which, missing_ok=True)
            assert not [e for e in entries if e[0] == acl._GROUP and e[2] == group], (path, which)
