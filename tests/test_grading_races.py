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
        result = pipeline.grade_safely("honest", folder, env)
    assert result["status"] == "grader-error" and result["questions"] == {} and result["score"] == 0
    reason = result["reason"]
    assert reason.startswith("the grader could not grade this submission (step execute, at "), reason
    assert re.search(r"at autograder\.grader_side\.sandbox\.host:\d+ in _ask\): SandboxError: the sandbox is closed",
                     reason), reason
    assert "\n" not in reason and len(reason) <= 400
    logged = [r for r in caplog.records if r.name == "autograder.grader_side.pipeline"]
    assert len(logged) == 1 and "honest" in logged[0].getMessage()
    assert "Traceback" in logged[0].getMessage() and "SandboxError" in logged[0].getMessage()
