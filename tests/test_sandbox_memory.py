"""A sandbox in a container with a memory limit fits its sessions under it: the limit is read from
the grader's cgroup or one above it (v2's memory.max, v1's memory.limit_in_bytes, the tightest),
what the grader holds is counted without the page cache, a session gets what is left, and a
container too small for any notebook stops the start with the size to give it. Then for real: a
grader in a memory cgroup of its own, where a notebook that asks for more than is left gets a
MemoryError in its own session, and the container is never pushed over its limit."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.grader_side.sandbox import memory

MiB = 1 << 20


def _v2(root: Path, path: str, limits: dict, stats: dict) -> Path:
    """A cgroup v2 tree at ``root``: memory.max per folder ("max" where none), memory.stat per folder."""
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "proc" / "cgroup").write_text(f"0::/{path}\n")
    folder = root / "sys"
    for part in ["", *path.split("/")]:
        folder = folder / part if part else folder
        folder.mkdir(parents=True, exist_ok=True)
        key = str(folder.relative_to(root / "sys"))
        (folder / "memory.max").write_text(f"{limits.get(key, 'max')}\n")
        anon, mapped = stats.get(key, (0, 0))
        (folder / "memory.stat").write_text(f"anon {anon}\nfile 999999999\nfile_mapped {mapped}\nshmem 0\n"
                                            "inactive_file 5\n")
    return root


@pytest.mark.unit
def test_the_tightest_limit_over_the_cgroup_and_its_parents_is_taken(tmp_path):
    root = _v2(tmp_path, "pod/grader", {".": 9 << 30, "pod": 800 * MiB},
               {".": (500 * MiB, 0), "pod": (300 * MiB, 20 * MiB), "pod/grader": (290 * MiB, 20 * MiB)})
    assert memory.container(str(root / "proc" / "cgroup"), str(root / "sys")) == (800 * MiB, 320 * MiB)


@pytest.mark.unit
def test_no_limit_and_no_cgroup_change_nothing(tmp_path):
    root = _v2(tmp_path, "grader", {}, {})
    assert memory.container(str(root / "proc" / "cgroup"), str(root / "sys")) is None
    assert memory.container(str(tmp_path / "missing"), str(root / "sys")) is None


@pytest.mark.unit
def test_cgroup_v1_reads_its_own_files_and_takes_no_limit_for_its_huge_number(tmp_path):
    (tmp_path / "cgroup").write_text("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    leaf = tmp_path / "sys" / "memory" / "docker" / "abc"
    leaf.mkdir(parents=True)
    for folder, limit in ((tmp_path / "sys" / "memory", 9223372036854771712), (leaf.parent, 9223372036854771712),
                          (leaf, 768 * MiB)):
        (folder / "memory.limit_in_bytes").write_text(f"{limit}\n")
        (folder / "memory.stat").write_text(f"cache 4000000000\ntotal_rss {300 * MiB}\ntotal_mapped_file {30 * MiB}\n"
                                            f"total_shmem {MiB}\ntotal_inactive_file 100\n")
    assert memory.container(str(tmp_path / "cgroup"), str(tmp_path / "sys")) == (768 * MiB, 331 * MiB)


@pytest.mark.unit
def test_a_session_gets_what_the_limit_leaves_and_never_more_than_configured():
    assert memory.fit(2048, 768 * MiB, 330 * MiB, 170 * MiB) == 267   # 768 - 330 - 170/4 - 128, rounded down
    assert memory.fit(2048, 64 << 30, 330 * MiB, 170 * MiB) == 2048
    assert memory.fit(2048, 300 * MiB, 330 * MiB, 0) == 0
    needed = memory.needed(330 * MiB, 170 * MiB, 160)
    assert memory.fit(2048, needed * MiB, 330 * MiB, 170 * MiB) >= 160 > memory.fit(2048, (needed - 2) * MiB,
                                                                                     330 * MiB, 170 * MiB)


def _memory_cgroup() -> Path | None:
    """A folder where this process may make a memory cgroup with a limit (v1 or v2), or None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
        elif number == "0" and (Path("/sys/fs/cgroup") / "cgroup.controllers").exists():
            base = Path("/sys/fs/cgroup") / path.lstrip("/")
        else:
            continue
        if os.access(base, os.W_OK):
            return base
    return None


GRADER = textwrap.dedent("""
    import json, sys
    from autograder.grader_side.sandbox import Limits, Sandbox
    handler = {"sandbox_echo_handler": sys.argv[2]}
    with Sandbox(Limits(timeout=60), preload=("numpy", "torch"), handler="sandbox_echo_handler:serve",
                 packages=handler) as sb:
        with sb.open(["import numpy as np", f"x = np.ones(({sys.argv[1]}, 1 << 17))", "y = 2"]) as s:
            report, after = s.load_report, s.request({"get": "y"})[0]
        print(json.dumps({"memory": sb.isolation.get("memory", ""), "rlimits": sb.isolation["rlimits"],
                          "report": report, "after": after}))
""")


@pytest.mark.sandboxed
@pytest.mark.skipif(os.geteuid() != 0 or _memory_cgroup() is None, reason="needs root and a writable memory cgroup")
def test_in_a_real_memory_cgroup_a_session_gets_what_is_left_and_the_container_holds(tmp_path):
    base = _memory_cgroup()
    assert base is not None
    v1 = (base / "memory.limit_in_bytes").exists() or "memory" in str(base).split("/")
    group = base / f"course-test-{os.getpid()}"
    group.mkdir()
    try:
        (group / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(str(768 * MiB))
        script = tmp_path / "grader.py"
        script.write_text(GRADER)
        handler = Path(__file__).with_name("sandbox_echo_handler.py")
        done = subprocess.run(["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$0" "$@"', sys.executable,
                               str(script), "800", str(handler)], capture_output=True, text=True, timeout=180,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        seen = json.loads(done.stdout.splitlines()[-1])
        assert seen["memory"].startswith("the container's limit, 768 MiB: a notebook may use "), seen
        fitted = int(seen["memory"].split("may use ")[1].split()[0])
        assert 160 <= fitted <= 768 - 128 - 64 and f"AS=zygote+{fitted - 64 - 32} MiB" in seen["rlimits"], seen
        # 800 MiB asked for in a cell: a MemoryError there, the next cell and requests still served
        assert [r["ok"] for r in seen["report"]] == [True, False, True], seen["report"]
        assert seen["report"][1]["error"].startswith("MemoryError") and seen["after"] == {"result": 2}, seen
        if v1:
            assert int((group / "memory.max_usage_in_bytes").read_text()) < 768 * MiB
            assert "oom_kill 0" in (group / "memory.oom_control").read_text()
        else:
            assert "oom_kill 0" in (group / "memory.events").read_text()
    finally:
        group.rmdir()
