"""Grading a class on a ``dask.distributed`` cluster: one task per submission.

``course autograde ... --scheduler tcp://HOST:PORT`` sends every submission to the cluster as one
task. Each worker process keeps one warm sandbox (the ``Grader`` worker plugin, started when the
run registers it and kept for the next run), so a task costs what it costs locally: a fork from a
warm zygote and the checks. A task carries the submission's notebook files as bytes, and the
plugin carries the trusted source and release notebooks, so a worker needs the same installed
environment as the grader but no shared folder.

Every student appears exactly once: results are keyed by student, and a task whose worker is lost
is re-run by the scheduler on another worker (``distributed.scheduler.allowed-failures`` times,
after which that student fails with the reason). A hostile notebook cannot take a worker down: it
runs in a sandboxed child, like locally.
"""
from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import shutil
import tempfile
import time
from concurrent.futures import CancelledError
from pathlib import Path

from distributed import WorkerPlugin, get_worker

# Only light imports here: the scheduler and each worker unpickle the plugin, importing this
# module, on their event loop; the grader's heavy modules (torch) load in Grader.start.

PLUGIN = "course-autograde"
CONNECT_TIMEOUT = 30.0      # seconds to reach the scheduler
WORKERS_TIMEOUT = 120.0     # seconds to wait for the first worker
IN_FLIGHT = 4               # tasks queued per worker thread (bounds the client's and scheduler's memory)
# Worker processes on one machine lock distinct slots here (a slot is the child's uid when root).
SLOTS = Path("/run/course-autograde") if os.geteuid() == 0 else Path(tempfile.gettempdir()) / "course-autograde-slots"


class Grader(WorkerPlugin):
    """A warm sandbox and the trusted assignment on one worker process."""

    idempotent = True       # a second run with the same assignment reuses the warm sandbox

    def __init__(self, assignment: str, course_files: dict[str, bytes], timeout: float,
                 preload: tuple[str, ...]):
        self.assignment = assignment
        self.course_files = course_files
        self.timeout = timeout
        self.preload = preload

    async def setup(self, worker):
        # The sandbox takes seconds to warm (it imports torch): keep the worker's event loop free.
        await asyncio.to_thread(self.start, worker.state.nthreads)

    def start(self, threads: int) -> None:
        import torch

        from autograder import api
        from autograder.grader_side import pipeline
        from autograder.grader_side.assignment import Assignment

        torch.set_num_threads(1)   # see api.autograde

        self.root = Path(tempfile.mkdtemp(prefix="course-worker-"))
        for name, data in self.course_files.items():
            path = self.root / "course" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (self.root / "submissions").mkdir()
        self.locks = claim_slots(threads)
        self.sandbox = api.grading_sandbox(self.timeout, hide=(self.root,))
        self.env = pipeline.Env(Assignment(self.assignment, self.root / "course"), self.sandbox, workers=0)
        for slot in self.locks:
            self.env.slots.put(slot)

    def teardown(self, worker):
        if getattr(self, "sandbox", None) is not None:
            self.sandbox.close()
        for lock in getattr(self, "locks", {}).values():
            lock.close()
        if getattr(self, "root", None) is not None:
            shutil.rmtree(self.root, ignore_errors=True)


def claim_slots(count: int) -> dict[int, object]:
    """``count`` sandbox slots no other grader on this machine holds (each slot is a uid for the
    child); held by an open locked file until this process exits."""
    SLOTS.mkdir(mode=0o700, exist_ok=True)
    held = {}
    for slot in range(4000):
        f = open(SLOTS / str(slot), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        held[slot] = f
        if len(held) == count:
            return held
    from autograder.grader_side.assignment import CourseError

    raise CourseError(f"every sandbox slot in {SLOTS} is taken: stop other graders on this machine")


def grade_task(plugin: str, student: str, files: dict[str, bytes | str]) -> dict:
    """Run on a worker: grade one submission given as its files (a notebook the sending grader
    refused to read comes as the reason, a str); returns its result."""
    from autograder.api import grade_safely

    grader = get_worker().plugins[plugin]
    refused = {Path(name).stem: data for name, data in files.items() if isinstance(data, str)}
    with tempfile.TemporaryDirectory(dir=grader.root / "submissions") as tmp:
        folder = Path(tmp) / "submission"
        folder.mkdir()
        for name, data in files.items():
            if isinstance(data, bytes):
                path = folder / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        return grade_safely(student, folder, grader.env, refused)


def isolation_of(plugin: str, dask_worker=None) -> dict:
    """Run on each worker (``Client.run``): what its sandbox could enforce."""
    return dict(dask_worker.plugins[plugin].sandbox.isolation)


def course_files(a) -> dict[str, bytes]:
    """The trusted files a worker needs: the source and the released notebooks."""
    files = {}
    for folder in (a.source_dir, a.release_dir):
        for notebook in a.notebooks:
            path = folder / f"{notebook}.ipynb"
            files[str(path.relative_to(a.repo))] = path.read_bytes()
    return files


def submission_files(a, folder: Path) -> dict[str, bytes | str]:
    """The notebooks of a student's folder as the one reader reads them (``grader_side.submitted``),
    by path inside it; one it refuses (a link, not a regular file, over the size cap) travels as
    the reason, under ``<notebook>.ipynb``, and a missing one not at all."""
    from autograder.grader_side import submitted

    files = {}
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


def autograde(a, students: dict[str, Path], scheduler: str, timeout: float, preload, progress=None) -> dict:
    """Grade ``students`` (id -> folder) of the assignment ``a`` on the cluster at ``scheduler``;
    the results document."""
    from distributed import Client, as_completed

    from autograder.grader_side.assignment import CourseError

    started = time.monotonic()
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise CourseError(f"cannot reach the dask scheduler at {scheduler} ({exc}): start one with "
                          "`dask scheduler` and workers with `dask worker ADDRESS` (see docs/scaling.md)") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except TimeoutError:
            raise CourseError(f"no dask worker joined {scheduler} within {WORKERS_TIMEOUT:g} s: start one with "
                              f"`dask worker {scheduler}` where the course environment is installed") from None
        grader = Grader(a.name, course_files(a), timeout, tuple(preload))
        name = f"{PLUGIN}-{a.name}-{_digest(grader)}"
        try:
            client.register_plugin(grader, name=name)
        except Exception as exc:
            raise CourseError(f"a worker could not start its sandbox: {type(exc).__name__}: {exc}; "
                              "see that worker's log, and docs/scaling.md for what a worker needs") from None
        isolation = client.run(isolation_of, name, on_error="ignore")
        threads = sum(client.nthreads().values())
        results: dict[str, dict] = {}
        todo = iter(students.items())
        running = {}

        def submit():
            for sid, folder in todo:
                future = client.submit(grade_task, name, sid, submission_files(a, folder), pure=False,
                                       key=f"{name}-{sid}-{os.urandom(4).hex()}")
                running[future] = sid
                return future
            return None

        window = as_completed([f for f in (submit() for _ in range(max(1, threads) * IN_FLIGHT)) if f])
        try:
            for future in window:
                sid = running.pop(future)
                try:
                    results[sid] = future.result()
                except CancelledError:
                    raise CourseError(f"lost the connection to the dask scheduler at {scheduler} after "
                                      f"{len(results)} of {len(students)} submissions: check it is running, "
                                      "then grade again") from None
                except Exception as exc:   # its workers kept dying (KilledWorker): this student only
                    results[sid] = _failed(a, f"the cluster could not grade this submission: "
                                              f"{type(exc).__name__}: {exc}")
                if progress:
                    progress(sid)
                nxt = submit()
                if nxt is not None:
                    window.add(nxt)
        finally:
            client.cancel(list(running))
    return {"assignment": a.name, "isolation": _merged(list(isolation.values())), "workers": threads,
            "seconds": round(time.monotonic() - started, 2),
            "students": {sid: results[sid] for sid in sorted(results)}}


def _failed(a, reason: str) -> dict:
    from autograder.grader_side.results import StudentResult

    return StudentResult("grader-error", 0.0, a.max_score, reason=reason[:400]).to_dict()


def _digest(grader: Grader) -> str:
    h = hashlib.sha256(repr((grader.timeout, grader.preload)).encode())
    for name in sorted(grader.course_files):
        h.update(name.encode() + b"\0" + grader.course_files[name])
    return h.hexdigest()[:12]


def _merged(isolations: list[dict]) -> dict:
    """What the workers' sandboxes enforce: a field on which they differ lists each distinct value."""
    merged = {}
    for key in sorted({k for i in isolations for k in i}):
        values = []
        for i in isolations:
            if i.get(key) not in values:
                values.append(i.get(key))
        merged[key] = values[0] if len(values) == 1 else values
    return merged
