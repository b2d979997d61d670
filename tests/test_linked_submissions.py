"""A student whose submission is a link to a classmate's gets 0 with the reason, and nothing of the
classmate's reaches their `autograded/` copy or feedback, with either grader writing nbgrader's
gradebook: `course autograde` (the gradebook on, as for `submitted/`) and plain `nbgrader autograde`,
each followed by `nbgrader generate_feedback`. The classmate is graded as usual.

The links: the assignment folder (submitted/x/transformer-block -> the classmate's), the student's
folder (submitted/x -> the classmate's) and one notebook (build.ipynb -> the classmate's).
"""
import os
from datetime import datetime

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import api
from autograder.grader_side.assignment import Assignment
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import ASSIGNMENT, clone_course, gradebook_checks
from servers import name_certificates

pytestmark = pytest.mark.slow

MARK = "# only-in-the-classmates-notebook ZQX9134"
SECRET = "secret-of-the-classmate-7781"
WHEN = "2026-11-30 10:00:00.000000 UTC"
LINKED = ("x_folder_link", "x_student_link", "x_notebook_link")
SEEN = ("written by honest", "ZQX9134", SECRET, "2026-11-30")   # what only the classmate's files hold


def _class(root):
    a = Assignment(ASSIGNMENT, root)
    submitted = root / "submitted"
    honest = write_submission(submitted / "honest", a, extra_cells=[MARK], signed=True)
    (honest / "timestamp.txt").write_text(WHEN)
    (honest / "submission_secret.txt").write_text(SECRET)
    (honest / "notes.txt").write_text(f"{MARK}\n")   # another file of the classmate's folder
    (submitted / "x_folder_link").mkdir()
    os.symlink(honest, submitted / "x_folder_link" / ASSIGNMENT)
    os.symlink(submitted / "honest", submitted / "x_student_link")
    own = write_submission(submitted / "x_notebook_link", a, only=("concepts",), signed=True)
    os.symlink(honest / "build.ipynb", own / "build.ipynb")
    return a


def _seen(root, student) -> dict[str, list[str]]:
    """file -> the classmate's text found in it, for every file of the student's autograded/ and feedback/."""
    found = {}
    for kind in ("autograded", "feedback"):
        base = root / kind / student
        assert not base.is_symlink()
        for path in base.rglob("*"):
            assert not path.is_symlink(), path
            if path.is_file():
                text = path.read_text(errors="replace")
                hits = [s for s in SEEN if s in text]
                if hits:
                    found[str(path.relative_to(root))] = hits
    return found


def _snapshot(root):
    api.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        times = {s.student.id: s.timestamp for s in gb.assignment_submissions(ASSIGNMENT)}
    placeholders = {}
    for sid in LINKED:
        for name in ("concepts", "build"):
            path = root / "autograded" / sid / ASSIGNMENT / f"{name}.ipynb"
            first = nbformat.read(path, as_version=4).cells[0].source if path.is_file() else "(missing)"
            placeholders[(sid, name)] = first if first.startswith("**Not graded:**") else None
    return {"book": gradebook_checks(root), "times": times, "placeholders": placeholders,
            "seen": {sid: _seen(root, sid) for sid in LINKED},
            "files": {sid: sorted(p.name for p in (root / "autograded" / sid / ASSIGNMENT).iterdir() if p.is_file())
                      for sid in LINKED},
            "honest_pages": {p.name: p.read_text() for p in (root / "feedback" / "honest" / ASSIGNMENT).glob("*.html")}}


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    root = clone_course(course, tmp_path_factory.mktemp("linked"))
    _class(root)
    results = api.autograde(ASSIGNMENT, root / "submitted", workers=2, timeout=20.0, repo=root, gradebook=True)
    by_course = _snapshot(root)
    done = api.nbgrader("autograde", ASSIGNMENT, "--force", "--SandboxExecute.timeout=20", repo=root, check=False)
    by_nbgrader = _snapshot(root)
    return results, {"course autograde": by_course, "nbgrader autograde": by_nbgrader}, done


def test_course_autograde_gives_each_link_0_with_its_reason_and_the_classmate_full_marks(graded):
    results = graded[0]["students"]
    assert results["honest"]["score"] == 100.0 and results["honest"]["status"] == "graded"
    for sid in ("x_folder_link", "x_student_link"):
        assert results[sid]["score"] == 0.0 and results[sid]["status"] == "failed", results[sid]
        assert "is inside a link" in results[sid]["reason"] and "\n" not in results[sid]["reason"]
    mixed = results["x_notebook_link"]   # its own concepts.ipynb is graded; the linked build.ipynb is not
    assert "build.ipynb is a link; submit the notebook file itself" in mixed["reason"]
    assert mixed["questions"]["C1"]["score"] == mixed["questions"]["C1"]["max_score"] > 0
    assert all(q["score"] == 0 for qid, q in mixed["questions"].items() if qid.startswith("B"))


def test_a_linked_folder_gives_only_its_own_reason_no_timestamp_flag(graded):
    results = graded[0]["students"]
    for sid in ("x_folder_link", "x_student_link"):   # the folder's reason, not one for a timestamp.txt
        assert not [f for f in results[sid].get("flags", []) if "timestamp.txt" in f], results[sid].get("flags")
    assert not [f for f in results["honest"].get("flags", []) if "timestamp.txt" in f]


def test_nbgrader_autograde_completes(graded):
    done = graded[2]
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("grader", ["course autograde", "nbgrader autograde"])
def test_nothing_of_the_classmate_reaches_a_linked_students_autograded_copy_or_feedback(graded, grader):
    snap = graded[1][grader]
    assert snap["seen"] == {sid: {} for sid in LINKED}, snap["seen"]
    for sid in ("x_folder_link", "x_student_link"):
        assert snap["files"][sid] == ["build.ipynb", "concepts.ipynb"], snap["files"][sid]
        assert snap["times"][sid] is None   # the classmate's submission time is not theirs
        for name in ("concepts", "build"):
            assert "is inside a link" in snap["placeholders"][(sid, name)], (grader, sid, name)
    assert snap["placeholders"][("x_notebook_link", "concepts")] is None   # its own notebook
    assert "build.ipynb is a link" in snap["placeholders"][("x_notebook_link", "build")]


@pytest.mark.parametrize("grader", ["course autograde", "nbgrader autograde"])
def test_linked_students_score_0_for_what_is_linked_and_the_classmate_is_graded_as_usual(graded, grader):
    snap = graded[1][grader]
    book = snap["book"]
    assert sum(v for v in book["honest"].values() if v is not None) == 100.0
    assert snap["times"]["honest"] == datetime(2026, 11, 30, 10, 0)
    assert "Score: 70.0 / 70.0" in snap["honest_pages"]["build.html"]
    for sid in ("x_folder_link", "x_student_link"):
        assert sum(v or 0 for v in book[sid].values()) == 0.0, (grader, sid)
    mixed = {k: v for k, v in book["x_notebook_link"].items() if v}
    assert mixed and not any(k.startswith("B") for k in mixed), (grader, mixed)


def test_both_graders_agree_check_by_check(graded):
    snaps = graded[1]
    assert snaps["course autograde"]["book"] == snaps["nbgrader autograde"]["book"]


def test_on_a_cluster_links_are_refused_by_the_grader_that_reads_them(graded, course, dask_cluster, tmp_path):
    """`course autograde --scheduler`: the grader sends each worker the files as the one reader reads
    them; a refused notebook travels as its reason, so the cluster gives what a local run gives."""
    from autograder.grader_side import cluster

    local = graded[0]["students"]
    root = name_certificates(clone_course(course, tmp_path / "course"), dask_cluster)
    a = _class(root)
    files = cluster.submission_files(a, root / "submitted" / "x_folder_link")
    assert all(isinstance(v, str) for v in files.values()) and len(files) == 2, files
    remote = api.autograde(ASSIGNMENT, root / "submitted", timeout=20.0, repo=root,
                           scheduler=dask_cluster.address)["students"]
    for sid in ("honest", *LINKED):
        assert (remote[sid]["score"], remote[sid]["reason"]) == (local[sid]["score"], local[sid]["reason"]), sid

