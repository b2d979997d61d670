"""The gradebook's recorder in its own process (``recorder_process``), next to a local
``course autograde``: a course without a gradebook is refused before anyone is graded; a
recorder that dies mid-class leaves each student it had not written with the reason, the students
it wrote as written, and the run finishes."""
import os
import signal
import time

import pytest

from autograder import api
from autograder.grader_side.results import StudentResult
from autograder.nbgrader.recorder_process import RecorderProcess
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import ASSIGNMENT, clone_course, gradebook_checks


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    """A private course, two honest students, and their results document (graded, not recorded)."""
    root = clone_course(course, tmp_path_factory.mktemp("recorder"))
    a = api.Assignment(ASSIGNMENT, root)
    for sid in ("ann", "ben"):
        write_submission(root / "submitted" / sid, a, signed=True)
    return root, api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root)


def test_a_course_without_its_gradebook_is_refused_before_grading(graded, tmp_path):
    root, _ = graded
    os.rename(root / "gradebook.db", tmp_path / "gradebook.db")
    try:
        started = time.monotonic()
        with pytest.raises(api.CourseError, match="no gradebook .*run `nbgrader generate_assignment"):
            api.autograde(ASSIGNMENT, root / "submitted", repo=root, gradebook=True)
        assert not (root / "autograded").exists()
    finally:
        os.rename(tmp_path / "gradebook.db", root / "gradebook.db")
    assert time.monotonic() - started < 30


def test_a_recorder_that_dies_mid_class_flags_the_students_it_did_not_write(graded):
    root, doc = graded
    ann, ben = (StudentResult.from_dict(doc["students"][sid]) for sid in ("ann", "ben"))
    with RecorderProcess(root, ASSIGNMENT) as recorder:
        recorder.ready()
        recorder.record_safely("ann", ann, root / "submitted" / "ann")
        deadline = time.monotonic() + 60
        while "ann" not in recorder.replies and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "ann" in recorder.replies
        os.kill(recorder._child.pid, signal.SIGKILL)
        recorder.record_safely("ben", ben, root / "submitted" / "ben")
    assert not any("gradebook" in flag for flag in ann.flags)
    (why,) = [flag for flag in ben.flags if "gradebook" in flag]
    assert why.startswith("not written to nbgrader's gradebook: ended with exit status -9")
    recorded = gradebook_checks(root)
    assert set(recorded) == {"ann"} and sum(recorded["ann"].values()) == doc["students"]["ann"]["score"]
    assert (root / "autograded" / "ann" / ASSIGNMENT / "build.ipynb").is_file()
    assert not (root / "autograded" / "ben").exists()
    assert recorder.core_seconds > 0
