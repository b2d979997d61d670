"""Fuzzing the submission reader: whatever bytes a student hands in, reading, tamper detection
and building the program to run either work or give a one-line reason; nothing else escapes."""
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.grader_side.assignment import REPO, Assignment
from autograder.grader_side.pipeline import Submission, program, read, tamper

ASSIGNMENT = Assignment("transformer-block", REPO)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30)

cells = st.fixed_dictionaries(
    {"cell_type": st.sampled_from(["code", "markdown", "raw"]) | st.text(max_size=5)},
    optional={"source": st.text(max_size=80) | st.lists(st.text(max_size=20), max_size=4) | json_values,
              "metadata": st.fixed_dictionaries({}, optional={"nbgrader": json_values | st.fixed_dictionaries(
                  {"grade_id": st.sampled_from(["B1_worked_example", "build_code_2", "B1_code", "x"]) | json_values,
                   "grade": st.booleans() | json_values, "points": json_values})}) | json_values})

notebooks = st.fixed_dictionaries({"cells": st.lists(cells | json_values, max_size=6)},
                                  optional={"metadata": json_values, "nbformat": json_values})


def _read(data: bytes):
    sub = Submission("s", Path("."))
    try:
        sub.cells["build"] = read.parse(data)
    except read.NotANotebook as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    tamper.run(sub, _Env)
    program.run(sub, _Env)
    assert all(isinstance(code, str) for code in sub.programs["build"])


class _Env:
    assignment = ASSIGNMENT


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notebooks)
def test_structured_garbage_never_crashes_the_reader(nb):
    _read(json.dumps(nb).encode())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_arbitrary_bytes_never_crash_the_reader(data):
    _read(data)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2000))
def test_truncated_real_notebooks_never_crash_the_reader(cut):
    data = (ASSIGNMENT.release_dir / "build.ipynb").read_bytes()
    _read(data[: len(data) * cut // 2000])


def test_deeply_nested_json_is_refused_with_a_reason():
    deep = b'{"cells": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    with pytest.raises(read.NotANotebook, match="^the JSON nests too deeply$"):
        read.parse(deep)
