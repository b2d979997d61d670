"""A submission the grader itself could not grade (``grade_safely``'s ``grader-error``: no
questions, no points) says in its reason what failed: the step of the pipeline that stopped and
the grader's own line it stopped at, with the error. One such result, seen once in a loaded full
run and not since, said no more than the error: the next one must say where it came from."""
from __future__ import annotations

import logging
import re

import pytest

from autograder.grader_side import pipeline
from autograder.grader_side.sandbox import grading_sandbox
from autograder.tooling.sampleclass import write_submission

pytestmark = pytest.mark.slow


def test_a_result_the_grader_could_not_make_names_the_step_and_line_that_failed(assignment, tmp_path, caplog):
    """The sandbox gone when a notebook is to run (its zygote could not be restarted: what a
    SandboxError from ``Sandbox.open`` means) fails that one student with a reason naming the
    execute step and the sandbox's line, and the traceback is logged for whoever runs the grader."""
    folder = write_submission(tmp_path / "honest", assignment)
    sandbox = grading_sandbox(60.0)
    sandbox.close()     # a real sandbox, stopped: its next open() raises SandboxError, as a failed restart does
    env = pipeline.Env(assignment, sandbox, workers=1)
    with caplog.at_level(logging.ERROR, logger="autograder.grader_side.pipeline"):
        result = pipeline.grade_safely("honest", folder, env).to_dict()
    assert result["status"] == "grader-error" and result["questions"] == {} and result["score"] == 0
    reason = result["reason"]
    assert reason.startswith("the grader could not grade this submission (step execute, at "), reason
    assert re.search(r"at autograder\.grader_side\.sandbox\.host:\d+ in _ask\): SandboxError: the sandbox is closed",
                     reason), reason
    assert "\n" not in reason and len(reason) <= 400
    logged = [r for r in caplog.records if r.name == "autograder.grader_side.pipeline"]
    assert len(logged) == 1 and "honest" in logged[0].getMessage()
    assert "Traceback" in logged[0].getMessage() and "SandboxError" in logged[0].getMessage()


# ---- parsing in threads ---------------------------------------------------------------------------

# A finalizer that runs Python code (so another thread may run) whenever the collector frees one.
_CHURN = '''
import ast, gc, sys, threading, time
from autograder.grader_side import syntax

parse = syntax.parse if sys.argv[1] == "locked" else ast.parse
source = "x = " + "(" * 60 + "1" + ")" * 60 + "\\n" + "def f():\\n    return [a for a in range(3)]\\n" * 50
failed = []

class Churn:
    def __del__(self):
        time.sleep(0)

def work():
    for _ in range(int(sys.argv[2])):
        junk = [Churn() for _ in range(50)]
        for j in junk:
            j.me = j                       # cycles: freed by the collector, in the middle of a parse
        del junk
        try:
            parse(source)
        except SystemError as exc:
            failed.append(str(exc))
            return

gc.set_threshold(50, 5, 5)
sys.setswitchinterval(1e-6)
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(failed[:1])
'''


def test_the_grader_parses_in_threads_without_the_ast_constructors_race(tmp_path):
    """Four threads parsing while the collector runs finalizers: through ``syntax.parse`` (one lock)
    no parse fails. ``ast.parse`` itself, in the same run, fails now and then with "AST constructor
    recursion depth mismatch" on CPython 3.11: seen once in a full run as an honest student scored 0
    (a grader error from the execute step), the cause of the empty results seen before."""
    import subprocess
    import sys

    locked = subprocess.run([sys.executable, "-c", _CHURN, "locked", "400"], capture_output=True, text=True,
                            timeout=600)
    assert locked.returncode == 0 and locked.stdout.strip() == "[]", locked.stdout + locked.stderr[-2000:]


def test_no_code_of_the_grader_parses_python_but_through_the_lock():
    """Every ``ast.parse`` in code the grader runs in threads (grader_side, reports, the API, the
    pytest plugin) goes through ``syntax.parse``."""
    from autograder.grader_side.assignment import REPO

    roots = [REPO / "autograder" / "grader_side", REPO / "autograder" / "reports"]
    files = [p for root in roots for p in root.rglob("*.py")] + \
        [REPO / "autograder" / name for name in ("api.py", "cli.py", "pytest_plugin.py")]
    raw = [f"{p.relative_to(REPO)}:{n}" for p in files if p.name != "syntax.py"
           for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\bast\.parse\(", line)]
    assert raw == []
