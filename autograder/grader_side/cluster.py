"""Grading a class on a ``dask.distributed`` cluster: one task per submission.

``course autograde ... --scheduler tls://HOST:PORT`` sends every submission to the cluster as one
task. The cluster must speak TLS with the course's certificates (``CourseAutograde.tls_ca_file``,
``tls_cert_file``, ``tls_key_file`` in ``nbgrader_config.py``): the workers hold the hidden
references, and a scheduler without TLS takes tasks from anyone who can reach it. A plain
``tcp://`` scheduler is refused unless ``--insecure-cluster`` says the network is private.

Each worker process keeps one warm sandbox (the ``Grader`` worker plugin, started when the run
registers it and kept for the next run), so a task costs what it costs locally: a fork from a
warm zygote and the checks. A task carries the submission's notebook files as bytes, and the
plugin carries the trusted source and release notebooks, so a worker needs the same installed
environment as the grader but no shared folder. A worker whose sandbox cannot isolate student code
(no namespaces) fails to set up, and the run stops with its reason, as a local run does;
``--allow-weak-isolation`` grades one submission per throwaway environment, so a class on a cluster
is refused with it (``api.autograde`` says why).

A worker lost at any moment costs only time. Lost while the plugin is being registered, the
scheduler still holds the plugin (every worker that joins sets it up) and the run goes on with the
workers that are left; lost in the middle of the run, the tasks it held are re-run by the scheduler
on another worker (``distributed.scheduler.allowed-failures`` times, after which that student fails
with the reason). The run stops (exit 2) only when no worker is left for ``WORKERS_TIMEOUT``
seconds. Every student appears exactly once: results are keyed by student. A hostile notebook
cannot take a worker down: it runs in a sandboxed child, like locally.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import CancelledError
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from distributed import WorkerPlugin, get_worker
from traitlets import Unicode
from traitlets.config import Configurable

if TYPE_CHECKING:
    from distributed import Client, Future, Worker
    from distributed.security import Security

    from autograder.grader_side.assignment import Assignment
    from autograder.grader_side.results import Results, StudentResult

# Only light imports here: the scheduler and each worker unpickle the plugin, importing this
# module, on their event loop; the grader's heavy modules (torch) load in Grader.start.

PLUGIN = "course-autograde"
CONNECT_TIMEOUT = 30.0      # seconds to reach the scheduler
WORKERS_TIMEOUT = 120.0     # seconds to wait for the first worker, or for one after the last left
SETUP_TIMEOUT = 600.0       # seconds for a worker to start its sandbox once registered
SECURE_SCHEMES = ("tls", "wss")
IN_FLIGHT = 4               # tasks queued per worker thread (bounds the client's and scheduler's memory)
T = TypeVar("T")


class CourseAutograde(Configurable):
    """``course autograde``'s settings in the course's ``nbgrader_config.py``: the certificate files
    of the course's dask cluster (paths relative to the course folder; see docs/scaling.md)."""

    tls_ca_file = Unicode("", help="the cluster's certificate authority (PEM)").tag(config=True)
    tls_cert_file = Unicode("", help="this grader's certificate, signed by that authority (PEM)").tag(config=True)
    tls_key_file = Unicode("", help="the private key of tls_cert_file (PEM)").tag(config=True)


def security(scheduler: str, root: Path, insecure: bool = False) -> Security | None:
    """The ``distributed.Security`` for reaching ``scheduler`` from the course at ``root``: TLS with
    the course's certificate files for ``tls://``; ``None`` for a plain scheduler, which is refused
    (a usage error) unless ``insecure``."""
    from distributed.comm.addressing import parse_address

    from autograder.course import CourseError

    try:
        scheme, _ = parse_address(scheduler)
    except ValueError as exc:
        raise CourseError(f"--scheduler {scheduler!r} is not an address: give tls://HOST:PORT ({exc})") from None
    if scheme not in SECURE_SCHEMES:
        if insecure:
            return None
        raise CourseError(f"--scheduler {scheduler} is not encrypted and lets anyone who reaches it run code "
                          "beside the hidden tests: use tls://HOST:PORT with the course's certificates "
                          "(CourseAutograde.tls_ca_file, tls_cert_file, tls_key_file in nbgrader_config.py; "
                          "see docs/scaling.md), or add --insecure-cluster on a private network")
    from distributed.security import Security

    from autograder.course import Course

    settings = CourseAutograde(config=Course(root).config)
    files = {}
    for trait in ("tls_ca_file", "tls_cert_file", "tls_key_file"):
        value = getattr(settings, trait)
        if not value:
            raise CourseError(f"--scheduler {scheduler} needs the course's certificate files: set "
                              f"c.CourseAutograde.{trait} (and the other two of tls_ca_file, tls_cert_file, "
                              "tls_key_file) in nbgrader_config.py (see docs/scaling.md)")
        path = (Path(root) / value).resolve()
        if not path.is_file():
            raise CourseError(f"c.CourseAutograde.{trait} names {path}, which is not a file (see docs/scaling.md)")
        files[trait] = str(path)
    return Security(tls_ca_file=files["tls_ca_file"], tls_client_cert=files["tls_cert_file"],
                    tls_client_key=files["tls_key_file"], require_encryption=True)


class Grader(WorkerPlugin):
    """A warm sandbox and the trusted assignment on one worker process."""

    idempotent = True       # a second run with the same assignment reuses the warm sandbox

    def __init__(self, assignment: str, course_files: dict[str, bytes], timeout: float,
                 preload: tuple[str, ...], allow_weak_isolation: bool = False):
        self.assignment = assignment
        self.course_files = course_files
        self.timeout = timeout
        self.preload = preload
        self.allow_weak_isolation = allow_weak_isolation

    async def setup(self, worker: Worker) -> None:
        # The sandbox takes seconds to warm (it imports torch): keep the worker's event loop free.
        self.ready: bool = False
        self.failed: str | None = None
        try:
            await asyncio.to_thread(self.start, worker.state.nthreads)
        except Exception as exc:
            # This worker cannot grade (its sandbox cannot start): it reports why, then leaves the
            # cluster, so no task waits for it or fails on it.
            self.failed = f"{type(exc).__name__}: {exc}"
            worker.loop.call_later(1.0, lambda: asyncio.ensure_future(
                worker.close(reason=f"the course's sandbox could not start: {self.failed}")))
            raise
        self.ready = True

    def wait_ready(self) -> None:
        """Block (in a task's thread) until ``setup`` has finished on this worker: a worker that joins
        in the middle of a run can get a task while it is still starting its sandbox."""
        deadline = time.monotonic() + SETUP_TIMEOUT
        while not getattr(self, "ready", False):
            if getattr(self, "failed", None) or time.monotonic() > deadline:
                raise RuntimeError(f"this worker could not start its sandbox: {getattr(self, 'failed', None)}")
            time.sleep(0.1)

    def start(self, threads: int) -> None:
        import torch

        from autograder.grader_side import pipeline
        from autograder.grader_side.assignment import Assignment
        from autograder.grader_side.sandbox import grading_sandbox

        torch.set_num_threads(1)   # see api.autograde

        self.root = Path(tempfile.mkdtemp(prefix="course-worker-"))
        for name, data in self.course_files.items():
            path = self.root / "course" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (self.root / "submissions").mkdir()
        self.sandbox = grading_sandbox(self.timeout, hide=(self.root,),
                                       allow_weak_isolation=self.allow_weak_isolation)
        self.env = pipeline.Env(Assignment(self.assignment, self.root / "course"), self.sandbox, workers=0)
        for slot in range(threads):         # the sandbox holds a machine-wide slot (uid) for each
            self.env.slots.put(slot)

    def teardown(self, worker: Worker) -> None:
        if getattr(self, "sandbox", None) is not None:
            self.sandbox.close()
        if getattr(self, "root", None) is not None:
            shutil.rmtree(self.root, ignore_errors=True)


def grade_task(plugin: str, student: str, files: dict[str, bytes | str]) -> dict[str, Any]:
    """Run on a worker: grade one submission given as its files (a notebook the sending grader
    refused to read comes as the reason, a str); returns its result in JSON form (what travels back
    to the client: ``StudentResult.from_dict`` there)."""
    from autograder.grader_side.pipeline import grade_safely

    grader = cast(Grader, get_worker().plugins[plugin])   # registered by _register under this name
    grader.wait_ready()
    refused = {Path(name).stem: data for name, data in files.items() if isinstance(data, str)}
    with tempfile.TemporaryDirectory(dir=grader.root / "submissions") as tmp:
        folder = Path(tmp) / "submission"
        folder.mkdir()
        for name, data in files.items():
            if isinstance(data, bytes):
                path = folder / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        return grade_safely(student, folder, grader.env, refused).to_dict()


def isolation_of(plugin: str, dask_worker: Worker | None = None) -> dict[str, Any] | None:
    """Run on each worker (``Client.run``): what its sandbox enforces, or None while it starts."""
    grader = cast("Grader | None", dask_worker.plugins.get(plugin) if dask_worker is not None else None)
    if grader is None or not getattr(grader, "ready", False):
        return None
    return dict(grader.sandbox.isolation)


def course_files(a: Assignment) -> dict[str, bytes]:
    """The trusted files a worker needs: the source and the released notebooks, and the set's code
    (its contract, checks, catalogue and references: every ``.py`` of its folder)."""
    files = {}
    for folder in (a.source_dir, a.release_dir):
        for notebook in a.notebooks:
            path = folder / f"{notebook}.ipynb"
            files[str(path.relative_to(a.root))] = path.read_bytes()
    for path in sorted(a.source_dir.rglob("*.py")):
        if "__pycache__" not in path.parts:
            files[str(path.relative_to(a.root))] = path.read_bytes()
    return files


def submission_files(a: Assignment, folder: Path) -> dict[str, bytes | str]:
    """The notebooks of a student's folder as the one reader reads them (``grader_side.submitted``),
    by path inside it; one it refuses (a link, not a regular file, over the size cap) travels as
    the reason, under ``<notebook>.ipynb``, and a missing one not at all."""
    from autograder.grader_side import submitted

    files: dict[str, bytes | str] = {}
    for notebook in a.notebooks:
        try:
            parts = submitted.find(folder, submitted.layouts(a.name, f"{notebook}.ipynb"))
        except submitted.Missing:
            continue
        except submitted.Refused as exc:   # the reason pipeline.locate gives
            files[f"{notebook}.ipynb"] = str(exc)
            continue
        try:
            files["/".join(parts)] = submitted.read(folder, parts)
        except submitted.Refused as exc:   # the reason pipeline.read gives
            files[f"{notebook}.ipynb"] = f"{notebook}.ipynb could not be read: {exc}"
    return files


def autograde(a: Assignment, students: dict[str, Path], scheduler: str, timeout: float, preload: tuple[str, ...],
              progress: Callable[[str], object] | None = None, security: Security | None = None,
              allow_weak_isolation: bool = False,
              graded: Callable[[str, StudentResult], None] | None = None) -> Results:
    """Grade ``students`` (id -> folder) of the assignment ``a`` on the cluster at ``scheduler``
    (reached with ``security``, see :func:`security`); the results but their ``seconds``.
    ``graded(student, result)`` is called as each student's result comes back (the gradebook's
    recorder)."""
    from distributed import Client

    from autograder.course import CourseError
    from autograder.grader_side.results import Results

    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT, security=security)
    except (OSError, TimeoutError) as exc:
        raise CourseError(f"cannot reach the dask scheduler at {scheduler} ({exc}): start one with "
                          "`dask scheduler` and workers with `dask worker ADDRESS` (see docs/scaling.md)") from None
    with client:
        _some_worker(client, scheduler, f"no dask worker joined {scheduler} within {WORKERS_TIMEOUT:g} s")
        grader = Grader(a.name, course_files(a), timeout, tuple(preload), allow_weak_isolation)
        name = f"{PLUGIN}-{a.name}-{_digest(grader)}"
        isolation = _register(client, grader, name, scheduler)
        threads = sum(_quietly(client.nthreads, {}).values()) or len(isolation)
        results = _run(client, a, students, name, scheduler, progress, graded)
    return Results(a.name, _merged(list(isolation.values())), threads, {sid: results[sid] for sid in sorted(results)})


def _quietly(call: Callable[[], T], default: T) -> T:
    """``call()``, or ``default`` when the connection fails meanwhile."""
    try:
        return call()
    except (OSError, TimeoutError):
        return default


def _some_worker(client: Client, scheduler: str, why: str) -> None:
    """Return once the cluster has a worker; CourseError(``why``) after WORKERS_TIMEOUT without one."""
    from autograder.course import CourseError

    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
    except TimeoutError:
        raise CourseError(f"{why}: start one with `dask worker {scheduler}` (with the course's certificates, "
                          "see docs/scaling.md) where the course environment is installed") from None
    except OSError as exc:
        raise CourseError(f"lost the connection to the dask scheduler at {scheduler} ({exc}): "
                          "check it is running, then grade again") from None


def _register(client: Client, grader: Grader, name: str, scheduler: str) -> dict[str, dict[str, Any]]:
    """Register the plugin and wait until a worker has started its sandbox; worker -> isolation.

    A worker lost while the plugin registers makes the registration raise (``CommClosedError``),
    but the scheduler has kept the plugin: every worker left, and every one that joins, sets it up.
    A worker that fails to set it up (its sandbox cannot start) stops the run with the reason."""
    from distributed.comm import CommClosedError

    from autograder.course import CourseError

    try:
        client.register_plugin(grader, name=name)
    except (CommClosedError, OSError, TimeoutError):
        pass    # a worker left mid-registration (or the scheduler did: found out just below)
    except Exception as exc:
        raise CourseError(f"a worker could not start its sandbox: {type(exc).__name__}: {exc}; "
                          "see that worker's log, and docs/scaling.md for what a worker needs") from None
    deadline = time.monotonic() + SETUP_TIMEOUT
    while True:
        _some_worker(client, scheduler, f"every dask worker left {scheduler} while the course's plugin was "
                                        f"being registered, and none joined within {WORKERS_TIMEOUT:g} s")
        try:
            ready = {addr: i for addr, i in client.run(isolation_of, name, on_error="ignore").items()
                     if isinstance(i, dict)}
        except (OSError, TimeoutError):
            ready = {}      # a worker left while asked: ask the others again
        if ready:
            return ready
        if time.monotonic() > deadline:
            raise CourseError(f"no dask worker at {scheduler} started its sandbox within {SETUP_TIMEOUT:g} s: "
                              "see the workers' logs, and docs/scaling.md for what a worker needs")
        time.sleep(0.5)


def _run(client: Client, a: Assignment, students: dict[str, Path], name: str, scheduler: str,
         progress: Callable[[str], object] | None,
         graded: Callable[[str, StudentResult], None] | None) -> dict[str, StudentResult]:
    """Every student's result, a task each, at most IN_FLIGHT per worker thread at a time. A lost
    worker's tasks are re-run by the scheduler; with no worker left for WORKERS_TIMEOUT, CourseError."""
    from distributed import as_completed

    from autograder.course import CourseError
    from autograder.grader_side.results import StudentResult

    threads = sum(_quietly(client.nthreads, {}).values())
    results: dict[str, StudentResult] = {}
    todo = iter(students.items())
    running: dict[Future, str] = {}

    def submit() -> Future | None:
        for sid, folder in todo:
            future = client.submit(grade_task, name, sid, submission_files(a, folder), pure=False,
                                   key=f"{name}-{sid}-{os.urandom(4).hex()}")
            running[future] = sid
            return future
        return None

    window = as_completed([f for f in (submit() for _ in range(max(1, threads) * IN_FLIGHT)) if f])
    alone_since = None      # when the cluster was last seen without a worker
    checked = time.monotonic()
    try:
        while running:
            if not window.has_ready():
                if time.monotonic() - checked > 2.0:     # is any worker left?
                    checked = time.monotonic()
                    if _quietly(client.nthreads, None) == {}:
                        alone_since = alone_since or checked
                        if checked - alone_since > WORKERS_TIMEOUT:
                            raise CourseError(f"every dask worker left {scheduler} after {len(results)} of "
                                              f"{len(students)} submissions, and none joined within "
                                              f"{WORKERS_TIMEOUT:g} s: start workers, then grade again")
                    else:
                        alone_since = None
                time.sleep(0.02)
                continue
            for future in window.next_batch(block=False):
                sid = running.pop(future)
                try:
                    results[sid] = StudentResult.from_dict(future.result())   # the task's JSON form
                except CancelledError:
                    raise CourseError(f"lost the connection to the dask scheduler at {scheduler} after "
                                      f"{len(results)} of {len(students)} submissions: check it is running, "
                                      "then grade again") from None
                except Exception as exc:   # its workers kept dying (KilledWorker): this student only
                    results[sid] = _failed(a, f"the cluster could not grade this submission: "
                                              f"{type(exc).__name__}: {exc}")
                if graded:
                    graded(sid, results[sid])
                if progress:
                    progress(sid)
                nxt = submit()
                if nxt is not None:
                    window.add(nxt)
    finally:
        _quietly(lambda: client.cancel(list(running)), None)
    return results


def _failed(a: Assignment, reason: str) -> StudentResult:
    from autograder.grader_side.results import StudentResult

    return StudentResult("grader-error", 0.0, a.max_score, reason=reason[:400])


def _digest(grader: Grader) -> str:
    h = hashlib.sha256(repr((grader.timeout, grader.preload, grader.allow_weak_isolation)).encode())
    for name in sorted(grader.course_files):
        h.update(name.encode() + b"\0" + grader.course_files[name])
    return h.hexdigest()[:12]


def _merged(isolations: list[dict[str, Any]]) -> dict[str, Any]:
    """What the workers' sandboxes enforce: a field on which they differ lists each distinct value."""
    merged: dict[str, Any] = {}
    for key in sorted({k for i in isolations for k in i}):
        values = []
        for i in isolations:
            if i.get(key) not in values:
                values.append(i.get(key))
        merged[key] = values[0] if len(values) == 1 else values
    return merged
