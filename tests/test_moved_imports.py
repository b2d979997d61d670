"""A course folder's ``nbgrader_config.py`` written for an earlier kit imports nbgrader's plugins from
where they used to live. nbgrader only logs a config file that fails to load and goes on with its
own ``Execute`` (hidden tests in the student's kernel): so every old import path must keep working,
and say which line to change."""
from __future__ import annotations

import importlib
import json

import pytest

from autograder import api, compat
from autograder.tooling.sampleclass import write_submission
from toyset import toy_course

# The import lines of the kit's nbgrader_config.py before nbgrader's plugins moved to autograder/nbgrader/.
OLD_LINES = {
    "from autograder.nbgrader.files import submission_files_by_the_rule  # noqa: E402\n"
    "from autograder.nbgrader.log import clean_log_records  # noqa: E402":
        "from autograder.grader_side.nbgrader_execute import clean_log_records, submission_files_by_the_rule",
    "from autograder.nbgrader.exporter import SubmittedNotebookExporter  # noqa: E402\n"
    "from autograder.nbgrader.preprocessors import AUTOGRADE, SANITIZE  # noqa: E402":
        "from autograder.grader_side.nbgrader_execute import AUTOGRADE, SANITIZE, SubmittedNotebookExporter",
    "from autograder.nbgrader.plugins.late import CourseLatePenalty":
        "from autograder.grader_side.late import CourseLatePenalty",
    "from autograder.nbgrader.plugins.export import NbgraderCsvExport":
        "from autograder.reports.lms import NbgraderCsvExport",
    "from autograder.nbgrader.plugins.zip_collect import CourseCollector, CourseExtractor":
        "from autograder.grader_side.collect import CourseCollector, CourseExtractor",
}


@pytest.mark.unit
@pytest.mark.parametrize("old, name", [(old, name) for old, names in compat.MOVED.items() for name in names])
def test_every_moved_name_is_the_same_object_from_its_old_module(old, name, caplog):
    compat._WARNED.clear()     # warned once a process: this test may not be the first to import it
    where, _, now = compat.MOVED[old][name].partition(":")
    new = importlib.import_module(where)
    assert getattr(importlib.import_module(old), name) is getattr(new, now or name)
    assert f"write `from {new.__name__} import {now or name}` instead" in caplog.text


@pytest.mark.unit
def test_a_name_that_never_lived_in_an_old_module_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="nbgrader_execute' has no attribute 'Execute'"):
        importlib.import_module("autograder.grader_side.nbgrader_execute").Execute   # noqa: B018


@pytest.mark.slow
def test_nbgrader_autograde_with_an_old_config_still_grades_through_the_sandbox(tmp_path):
    toy = toy_course(tmp_path / "course")
    config = toy.root / "nbgrader_config.py"
    text = config.read_text()
    for new, old in OLD_LINES.items():
        assert new in text, new
        text = text.replace(new, old)
    config.write_text(text)
    write_submission(toy.root / "submitted" / "solved", toy)
    done = api.nbgrader("autograde", "toy", "--force", repo=toy.root, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Exception while loading config file" not in done.stderr
    warning = "which moved: write `from autograder.nbgrader.preprocessors import AUTOGRADE` instead"
    assert done.stderr.count(warning) == 1
    graded = json.loads((toy.root / "autograded" / "solved" / "toy" / "answers.ipynb").read_text())
    outputs = [o for cell in graded["cells"] if cell.get("metadata", {}).get("nbgrader", {}).get("grade")
               for o in cell.get("outputs", [])]
    # SandboxExecute's pass line, which nbgrader's own Execute never writes: the sandbox graded it.
    assert outputs and all(o.get("name") == "stdout" and "".join(o["text"]).startswith("passed ")
                           for o in outputs), outputs
