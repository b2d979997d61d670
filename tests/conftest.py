"""Shared fixtures: a throwaway course folder built from the repo's sources, like a TA's."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from autograder import api
from autograder.grader_side.assignment import Assignment

pytest_plugins = ("servers",)   # real PostgreSQL and dask servers on 127.0.0.1 (tests/servers.py)

# The checks' tensors are tiny and `make test` runs a test process per core: one torch thread each,
# as the graders use (more would only spin), here and in the kernels and commands the tests start.
torch.set_num_threads(1)
os.environ["OMP_NUM_THREADS"] = "1"


def pytest_collection_modifyitems(items):
    """The files marked slow first: `make test` runs the files side by side, one per process, and
    the long ones started early finish with the rest instead of after them."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A course folder with solutions/ rebuilt from the text sources and a fresh nbgrader release."""
    root = tmp_path_factory.mktemp("course")
    api.make_course(root, "transformer-block")
    return root


@pytest.fixture(scope="session")
def assignment(course) -> Assignment:
    return Assignment("transformer-block", course)


SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "results.schema.json"


def validate_results(doc: dict) -> dict:
    """``doc`` checked against the results schema (raises with the first violation)."""
    import json

    import jsonschema

    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    return doc


@pytest.fixture(autouse=True)
def every_results_document_follows_the_schema(monkeypatch):
    """Every results document a test produces through ``api.autograde`` (or the typed
    ``api.grade_class`` it wraps) is validated."""
    real = api.autograde

    def autograde(*args, **kwargs):
        return validate_results(real(*args, **kwargs))
    monkeypatch.setattr(api, "autograde", autograde)
    typed = api.grade_class     # what the package's own modules call (typed results)

    def grade_class(*args, **kwargs):
        results = typed(*args, **kwargs)
        validate_results(results.to_dict())
        return results
    monkeypatch.setattr(api, "grade_class", grade_class)
