"""Time marks for the one-submission bench (``bench/one_submission.py``): where the environment
variable ``AUTOGRADER_TIME_MARKS`` names a file, the grader's side of the sandbox appends one line
``<mark> <time.monotonic()>`` to it at each step the bench splits a run by (the sandbox asked for,
started, ready, its first session, closed). Without the variable nothing is written: a run that
is not measured pays one dictionary look-up per mark. The zygote and its sessions never see the
variable (their environment is built from nothing: host._zygote_env)."""
from __future__ import annotations

import os
import time

ENV = "AUTOGRADER_TIME_MARKS"


def mark(name: str) -> None:
    """Append ``name`` and the monotonic clock (shared by every process of the machine) to the file
    ``AUTOGRADER_TIME_MARKS`` names, if it names one."""
    path = os.environ.get(ENV)
    if path:
        with open(path, "a") as f:
            f.write(f"{name} {time.monotonic():.6f}\n")
