"""Benchmark: Gradescope's autograder in a container's memory limit (not a timed test).

    sudo .venv/bin/python bench/gradescope_memory.py [--limits 768 1536] [--ask 800]

Builds the package (`course gradescope-package`), lays it out as Gradescope does, and runs its own
``run_autograder`` once per limit and submission inside a memory cgroup of that size (v1 or v2; needs
root and a writable cgroup, as a container's is to its host): the reference, and the reference with a
last cell asking for ``--ask`` MiB (an 800 MB tensor). Prints the score, the cgroup's peak, whether
its out-of-memory killer ran, and what the sandbox fitted a notebook to (its staff-only line).
The docs' figures for Gradescope's resources come from this script.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.grader_side.assignment import Assignment  # noqa: E402
from autograder.tooling import gradescope  # noqa: E402
from autograder.tooling.sampleclass import write_submission  # noqa: E402


def cgroup_base() -> tuple[Path, bool] | None:
    """(a folder where a memory cgroup can be made, whether it is cgroup v1), or None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base, v1 = Path("/sys/fs/cgroup/memory") / path.lstrip("/"), True
        elif number == "0" and Path("/sys/fs/cgroup/cgroup.controllers").exists():
            base, v1 = Path("/sys/fs/cgroup") / path.lstrip("/"), False
        else:
            continue
        if os.access(base, os.W_OK):
            return base, v1
    return None


def run(package: Path, limit_mb: int, ask_mb: int, base: Path, v1: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="gs-memory-") as tmp:
        root = Path(tmp)
        for part in ("submission", "results"):
            (root / part).mkdir()
        zipfile.ZipFile(package).extractall(root / "source")
        (root / "source" / "run_autograder").chmod(0o755)
        cells = (f"import numpy as _np\n_big = _np.ones(({ask_mb}, 1 << 17))\n",) if ask_mb else ()
        write_submission(root / "submission", Assignment("transformer-block", REPO), nested=False, extra_cells=cells)
        group = base / f"gs-memory-{os.getpid()}"
        group.mkdir()
        try:
            (group / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(str(limit_mb << 20))
            env = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable)
            done = subprocess.run(["sh", "-c", f'echo $$ > {group}/cgroup.procs; exec "$0"',
                                   str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True)
            peak = int((group / ("memory.max_usage_in_bytes" if v1 else "memory.peak")).read_text()) >> 20
            events = (group / ("memory.oom_control" if v1 else "memory.events")).read_text().split()
            killed = int(events[events.index("oom_kill") + 1]) if "oom_kill" in events else 0
        finally:
            group.rmdir()
        result = json.loads((root / "results" / "results.json").read_text())
        fitted = next((line.split("memory: ", 1)[1].split(";")[0] for line in done.stdout.splitlines()
                       if "isolation, whole" in line and "memory: " in line), "")
        return {"score": result["score"], "peak": peak, "killed": killed, "fitted": fitted,
                "output": result.get("output", "").splitlines()[0][:100] if result.get("output") else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limits", type=int, nargs="+", default=[768, 1536], help="container sizes, MiB")
    parser.add_argument("--ask", type=int, default=800, help="MiB the hungry submission's last cell asks for")
    args = parser.parse_args()
    found = cgroup_base()
    if os.geteuid() != 0 or found is None:
        sys.stderr.write("needs root and a writable memory cgroup (run it as root on a Linux machine)\n")
        return 2
    base, v1 = found
    with tempfile.TemporaryDirectory() as tmp:
        package = gradescope.build("transformer-block", Path(tmp) / "autograder.zip", REPO)
        print(f"{'limit':>7} {'submission':<22} {'score':>6} {'peak MiB':>9} {'OOM kills':>9}  a notebook may use")
        for limit in args.limits:
            for ask in (0, args.ask):
                r = run(package, limit, ask, base, v1)
                name = "reference" if not ask else f"+ a {ask} MiB cell"
                print(f"{limit:>7} {name:<22} {r['score']:>6g} {r['peak']:>9} {r['killed']:>9}  "
                      f"{r['fitted'] or r['output']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
