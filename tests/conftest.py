"""Shared fixtures: a throwaway course folder built from the repo's sources, like a TA's."""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder import api
from autograder.assignment import Assignment


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A course folder with solutions/ rebuilt from the text sources and a fresh nbgrader release."""
    root = tmp_path_factory.mktemp("course")
    api.make_course(root)
    return root


@pytest.fixture(scope="session")
def assignment(course) -> Assignment:
    return Assignment(repo=course)
