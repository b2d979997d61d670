"""`course autograde --scheduler`: the class graded on a real dask.distributed cluster (a scheduler
and two worker processes on 127.0.0.1) gives the same results as a local run, also when a worker
is killed in the middle of the run."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side.misconceptions import catalogue, edits
from autograder.tooling.demo import HOSTILE
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results

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


def test_course_autograde_with_scheduler_matches_a_local_run(submissions, dask_cluster, tmp_path):
    # The command line grades with the repository's own course files: compare with a local run of those.
    local = api.autograde("transformer-block", submissions, workers=1)
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "autograde", "transformer-block",
                           "--submissions", str(submissions), "--scheduler", dask_cluster.address, "--out", str(out),
                           "--no-gradebook"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{STUDENTS}/{STUDENTS}" in done.stderr, "the progress bar counts the results as they come back"
    remote = validate_results(json.loads(out.read_text()))
    assert scores(remote) == scores(local)
    assert remote["workers"] == 2
    assert remote["isolation"] == local["isolation"], "each worker isolates as a local run does"


def test_a_worker_killed_mid_run_loses_no_student(course, submissions, local, dask_cluster):
    from distributed import Client

    seen, killed = [], {}
    with Client(dask_cluster.address, timeout=60) as watcher:
        def progress(student):
            seen.append(student)
            if len(seen) == 2:   # both workers hold tasks now: kill one that is running one
                names = {addr: w["name"] for addr, w in watcher.scheduler_info()["workers"].items()}
                busy = [(addr, keys) for addr, keys in watcher.processing().items() if keys]
                addr, keys = busy[0]
                killed.update(name=names[addr], keys=list(keys))
                dask_cluster.kill(names[addr])

        remote = api.autograde("transformer-block", submissions, scheduler=dask_cluster.address,
                               progress=progress, repo=course)
        survivors = [w["name"] for w in watcher.scheduler_info()["workers"].values()]
    assert killed["keys"], "the killed worker was running a submission"
    assert killed["name"] not in survivors and len(survivors) == 1
    assert sorted(seen) == sorted(local["students"]), "every student reported exactly once"
    assert scores(remote) == scores(local)
