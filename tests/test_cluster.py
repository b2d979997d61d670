"""`course autograde --scheduler`: the class graded on a real dask.distributed cluster (a scheduler
and two worker processes on 127.0.0.1, over TLS with certificates made for the test) gives the
same results as a local run, also when a worker is killed while the course's plugin registers or
in the middle of the run; a plain tcp:// scheduler is refused without --insecure-cluster."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder import api
from autograder.demo import HOSTILE
from autograder.grader_side import cluster
from autograder.grader_side.misconceptions import edits
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results
from nbgrader_course import clone_course
from servers import free_port, name_certificates
from week4 import catalogue

pytestmark = pytest.mark.slow

STUDENTS = 9


@pytest.fixture(scope="module")
def submissions(course, assignment, tmp_path_factory) -> Path:
    """Honest submissions, catalogued wrong answers (so scores differ) and a hostile notebook."""
    folder = tmp_path_factory.mktemp("cluster-class")
    source = {c.grade_id: c.source for n in assignment.notebooks for c in assignment.cells(n)}
    wrong = [e for e in catalogue() if e.question.startswith("B")][::5]
    for i in range(STUDENTS - 1):
        entry = wrong[i % len(wrong)] if i % 2 else None
        write_submission(folder / f"student{i}", assignment, edits=edits(entry, source[entry.cell]) if entry else None)
    # A notebook whose process exits in the middle of a check: its worker must not notice.
    write_submission(folder / "hostile", assignment, extra_cells=[HOSTILE["exits-the-process"]])
    return folder


@pytest.fixture(scope="module")
def local(course, submissions) -> dict:
    return api.autograde("transformer-block", submissions, workers=1, repo=course)


def scores(results: dict) -> dict:
    return {sid: (r["score"], r["status"], {q: v["score"] for q, v in r["questions"].items()})
            for sid, r in results["students"].items()}


def test_the_local_run_has_varied_scores(local):
    assert len({r["score"] for r in local["students"].values()}) > 2, "the class should not all score alike"
    assert local["students"]["hostile"]["flags"], "the hostile notebook's crash is flagged"


@pytest.fixture(scope="module")
def tls_course(course, dask_cluster, tmp_path_factory) -> Path:
    """A copy of the course whose nbgrader_config.py names the cluster's certificate files (relative
    to the course folder, as docs/scaling.md shows)."""
    return name_certificates(clone_course(course, tmp_path_factory.mktemp("tls-course")), dask_cluster)


def course_cli(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", "transformer-block", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_course_autograde_with_scheduler_matches_a_local_run(tls_course, submissions, local, dask_cluster,
                                                              tmp_path):
    out = tmp_path / "results.json"
    assert dask_cluster.address.startswith("tls://")
    done = course_cli(tls_course, "--submissions", str(submissions), "--scheduler", dask_cluster.address,
                      "--out", str(out), "--no-gradebook")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{STUDENTS}/{STUDENTS}" in done.stderr, "the progress bar counts the results as they come back"
    remote = validate_results(json.loads(out.read_text()))
    assert scores(remote) == scores(local)
    assert remote["workers"] == 2
    assert remote["isolation"] == local["isolation"], "each worker isolates as a local run does"


def test_a_plain_tcp_scheduler_is_refused_without_the_flag(tls_course, course, submissions, tmp_path):
    """Refused before anything is sent: a usage error (exit 2) in one line saying what to do."""
    plain = f"tcp://127.0.0.1:{free_port()}"
    for address in (plain, f"127.0.0.1:{free_port()}"):     # no scheme is dask's tcp://
        done = course_cli(tls_course, "--submissions", str(submissions), "--scheduler", address,
                          "--out", str(tmp_path / "r.json"), "--no-gradebook", timeout=120)
        assert done.returncode == 2, done.stderr[-2000:]
        line = done.stderr.strip()
        assert line.count("\n") == 0 and "tls://HOST:PORT" in line and "--insecure-cluster" in line, line
    assert not (tmp_path / "r.json").exists()
    # With the flag it is allowed (and then only needs a scheduler to reach).
    assert cluster.security(plain, tls_course, insecure=True) is None
    # tls:// in a course that names no certificates: what to set, in one line.
    done = course_cli(course, "--submissions", str(submissions), "--scheduler", "tls://127.0.0.1:1",
                      "--no-gradebook", "--out", str(tmp_path / "r.json"), timeout=120)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr[-2000:]
    assert "c.CourseAutograde.tls_ca_file" in done.stderr


def test_the_tls_cluster_turns_away_a_client_without_the_certificates(dask_cluster):
    from distributed import Client

    plain = dask_cluster.address.replace("tls://", "tcp://")
    for address, security in ((plain, None), (dask_cluster.address, None)):
        with pytest.raises((OSError, TimeoutError, TypeError, ValueError)):
            Client(address, timeout=5, security=security)


def two_workers(dask_cluster, watcher) -> None:
    """Start workers until two are alive and joined."""
    while len(dask_cluster.alive()) < 2:
        dask_cluster.add_worker(f"w{len(dask_cluster.workers)}")
    watcher.wait_for_workers(2, timeout=120)


def _watcher(dask_cluster):
    """The test's own client of the cluster. dask gives a new client's event-loop thread a fixed
    10 s to start and fails with a bare AssertionError past it, which a 2-core machine running the
    other test files beside this one has hit: a second try, after a pause, is the test's, not the
    grader's."""
    from distributed import Client

    for attempt in range(3):
        try:
            return Client(dask_cluster.address, timeout=60, security=dask_cluster.security())
        except AssertionError:
            if attempt == 2:
                raise
            time.sleep(5)


def test_a_worker_killed_while_the_plugin_registers_loses_no_student(course, tls_course, assignment, submissions,
                                                                      local, dask_cluster):
    """A timeout of its own makes a new plugin (a new registration on both workers): one worker is
    killed as soon as it starts setting it up, before it is ready; the run goes on with the other."""

    timeout = 59.0
    grader = cluster.Grader("transformer-block", cluster.course_files(assignment), timeout, api.PRELOAD)
    name = f"{cluster.PLUGIN}-transformer-block-{cluster._digest(grader)}"
    seen, killed = [], {}
    with _watcher(dask_cluster) as watcher:
        two_workers(dask_cluster, watcher)
        stop = threading.Event()

        def killer():
            while not stop.is_set():
                for worker in dask_cluster.alive():
                    if f"Starting Worker plugin {name}" in dask_cluster.log(worker):
                        dask_cluster.kill(worker)
                        killed.update(name=worker, at=time.monotonic())
                        return
                time.sleep(0.02)

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        try:
            remote = api.autograde("transformer-block", submissions, timeout=timeout, scheduler=dask_cluster.address,
                                   progress=lambda sid: seen.append((sid, time.monotonic())), repo=tls_course)
        finally:
            stop.set()
            thread.join()
        survivors = [w["name"] for w in watcher.scheduler_info()["workers"].values()]
        watcher.unregister_worker_plugin(name)      # its sandbox is not needed again
    assert killed, "a worker was killed while it set up the plugin"
    assert killed["at"] < min(at for _, at in seen), "before any student was graded"
    assert killed["name"] not in survivors and len(survivors) == 1
    assert sorted(sid for sid, _ in seen) == sorted(local["students"]), "every student reported exactly once"
    assert scores(remote) == scores(local)


def test_a_worker_killed_mid_run_loses_no_student(course, tls_course, submissions, local, dask_cluster):

    seen, killed = [], {}
    with _watcher(dask_cluster) as watcher:
        two_workers(dask_cluster, watcher)

        def progress(student):
            seen.append(student)
            if len(seen) == 2:   # both workers hold tasks now: kill one that is running one
                names = {addr: w["name"] for addr, w in watcher.scheduler_info()["workers"].items()}
                busy = [(addr, keys) for addr, keys in watcher.processing().items() if keys]
                addr, keys = busy[0]
                killed.update(name=names[addr], keys=list(keys))
                dask_cluster.kill(names[addr])

        remote = api.autograde("transformer-block", submissions, scheduler=dask_cluster.address,
                               progress=progress, repo=tls_course)
        survivors = [w["name"] for w in watcher.scheduler_info()["workers"].values()]
    assert killed["keys"], "the killed worker was running a submission"
    assert killed["name"] not in survivors and len(survivors) == 1
    assert sorted(seen) == sorted(local["students"]), "every student reported exactly once"
    assert scores(remote) == scores(local)


def test_the_run_stops_when_no_worker_is_left(tls_course, submissions, dask_cluster, monkeypatch):
    """Last, as it kills every worker: with none left (and none joining), the run stops with the
    reason instead of waiting for ever."""
    from autograder.course import CourseError

    monkeypatch.setattr(cluster, "WORKERS_TIMEOUT", 5.0)

    def progress(student):
        for worker in dask_cluster.alive():
            dask_cluster.kill(worker)

    started = time.monotonic()
    with pytest.raises(CourseError, match=r"every dask worker left .* after \d+ of 9 submissions"):
        api.autograde("transformer-block", submissions, scheduler=dask_cluster.address, progress=progress,
                      repo=tls_course)
    assert time.monotonic() - started < 120


def test_a_worker_whose_sandbox_cannot_start_reports_why_and_leaves(monkeypatch):
    """What docs/scaling.md says of a worker without namespaces: its plugin's setup fails with the
    sandbox's reason (the run that registers it stops with that reason), and the worker closes, so
    no task waits for it; a task that reached it first fails with the reason, not a KeyError."""
    import asyncio
    from types import SimpleNamespace

    from autograder.grader_side.sandbox import SandboxError

    def start(self, threads):
        raise SandboxError("student code cannot be isolated here: no user namespaces")

    monkeypatch.setattr(cluster.Grader, "start", start)
    closed = []

    async def close(reason=""):
        closed.append(reason)

    async def main():
        worker = SimpleNamespace(state=SimpleNamespace(nthreads=1), loop=asyncio.get_running_loop(), close=close)
        grader = cluster.Grader("transformer-block", {}, 60.0, api.PRELOAD)
        with pytest.raises(SandboxError):
            await grader.setup(worker)
        await asyncio.sleep(1.5)
        return grader

    grader = asyncio.run(main())
    assert closed and "no user namespaces" in closed[0]
    with pytest.raises(RuntimeError, match="could not start its sandbox: SandboxError: .*no user namespaces"):
        grader.wait_ready()
