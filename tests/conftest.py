"""Shared fixtures: a throwaway course folder built from the repo's sources, like a TA's."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder import api, authoring
from autograder.assignment import REPO, Assignment


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A course folder with solutions/ rebuilt from the text sources and a fresh nbgrader release."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(REPO / "solutions", root / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__", "visible_checks", "*.ipynb"))
    shutil.copy(REPO / "nbgrader_config.py", root)
    authoring.build(root / "solutions" / "transformer-block")
    api.nbgrader("generate_assignment", "transformer-block", "--force", "--log-level=WARN", repo=root)
    return root


@pytest.fixture(scope="session")
def assignment(course) -> Assignment:
    return Assignment(repo=course)
