"""Grading a class on this machine: a pool of threads, each grading in the one warm sandbox.

The counterpart of ``cluster.py`` (one task per submission on a Dask cluster): the same
pipeline per student (``pipeline.grade_safely``), the same ``Results``, and the same two
callbacks for the gradebook's recorder (``ready`` before the first student, ``graded`` as each
one's result comes back)."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autograder.course import CourseError
from autograder.grader_side import pipeline
from autograder.grader_side.assignment import Assignment
from autograder.grader_side.results import Results, StudentResult
from autograder.grader_side.sandbox import PRELOAD, PRELOAD_ONE, SandboxError, grading_sandbox


def grade_students(a: Assignment, students: dict[str, Path], workers: int, timeout: float,
              progress: Callable[[str], object] | None = None, hide: Sequence[Path] = (),
              allow_weak_isolation: bool = False, ready: Callable[[], None] | None = None,
              graded: Callable[[str, StudentResult], None] | None = None) -> Results:
    """Grade ``students`` (id -> folder) of ``a`` with ``workers`` threads (0: one per core) in one
    sandbox that hides ``hide`` from student code; the results but their ``seconds``."""
    import torch

    # The grader's own tensors (references, comparisons) are tiny: torch's intra-op threads would
    # only spin, at about 0.1 s of core time per submission. Parallelism comes from the tasks.
    torch.set_num_threads(1)
    workers = workers or os.cpu_count() or 1
    results: dict[str, StudentResult] = {}
    try:
        sandbox = grading_sandbox(timeout, hide=hide, allow_weak_isolation=allow_weak_isolation,
                                  preload=PRELOAD if len(students) > 1 else PRELOAD_ONE)
    except SandboxError as exc:
        raise CourseError(str(exc)) from None
    with sandbox:
        if ready:
            ready()   # the gradebook opened (or its reason why not) before the first student
        env = pipeline.Env(a, sandbox, workers)
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            futures = {pool.submit(pipeline.grade_safely, sid, folder, env): sid for sid, folder in students.items()}
            for future in as_completed(futures):
                sid = futures[future]
                results[sid] = future.result()
                if graded:
                    graded(sid, results[sid])
                if progress:
                    progress(sid)
        except BaseException:
            # Interrupted (Ctrl-C) or failed: no student waits to start, and closing the sandbox ends
            # the sessions in flight, so their threads return now instead of at the notebook's timeout.
            pool.shutdown(wait=False, cancel_futures=True)
            pipeline.log.disabled = True    # the students in flight fail on the closed sandbox: not news
            sandbox.close()
            raise
        finally:
            pool.shutdown(wait=True)
            pipeline.log.disabled = False
        isolation = dict(sandbox.isolation)
    return Results(a.name, isolation, workers, {sid: results[sid] for sid in sorted(results)})
