"""C8, graded by hand, is listed for a TA in results.json and the CSV exactly when nbgrader's gradebook
lists it: an answer the student wrote, or one nbgrader puts back; not an answer cell left as released,
which nbgrader's SaveAutoGrades scores 0 on its own ("No response."), nor a notebook never handed in."""
import csv

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import api
from autograder.grader_side.assignment import Assignment
from autograder.reports import feedback, pages
from autograder.reports.exports import write_csv
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import ASSIGNMENT, clone_course, gradebook_checks

# student -> whether a TA grades C8 (nbgrader's needs_manual_grade). A deleted answer cell is put
# back (the course's OverwriteCells) under nbgrader's note that it was missing: a TA looks at it.
CLASS = {"blank": False, "answered": True, "all_but_c8": False, "no_concepts": False, "c8_deleted": True}


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    root = clone_course(course, tmp_path_factory.mktemp("hand-graded"))
    a = Assignment(ASSIGNMENT, root)
    submitted = root / "submitted"
    (released,) = [c.source for c in a.cells("concepts", released=True) if c.grade_id == "C8_answer"]
    write_submission(submitted / "blank", a, untouched=True)
    write_submission(submitted / "answered", a)
    write_submission(submitted / "all_but_c8", a, edits={"C8_answer": released})
    deleted = write_submission(submitted / "c8_deleted", a)
    nb = nbformat.read(deleted / "concepts.ipynb", as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "C8_answer"]
    nbformat.write(nb, deleted / "concepts.ipynb")
    write_submission(submitted / "no_concepts", a, only=("build",))
    alone = api.autograde(ASSIGNMENT, submitted, workers=2, repo=root, gradebook=False)
    results = api.autograde(ASSIGNMENT, submitted, workers=2, repo=root, gradebook=True)
    return root, alone, results


def c8_in_gradebook(root) -> dict[str, tuple[bool, float | None]]:
    """student -> (needs_manual_grade, score) of their C8 grade, as nbgrader's gradebook holds it."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student_id: next((g.needs_manual_grade, g.score) for nb in s.notebooks for g in nb.grades
                                   if g.name == "C8_answer")
                for s in gb.assignment_submissions(ASSIGNMENT)}


def c8_in_csv(results, tmp_path) -> dict[str, tuple[bool, str]]:
    write_csv(results, tmp_path / "course-grades.csv")
    with open(tmp_path / "course-grades.csv") as f:
        return {row["student"]: ("C8" in row["needs_manual_grade"].split(), row["C8"]) for row in csv.DictReader(f)}


def test_c8_waits_for_a_ta_in_the_csv_and_results_exactly_when_the_gradebook_says_so(graded, tmp_path):
    root, alone, results = graded
    book = c8_in_gradebook(root)
    assert {sid: waiting for sid, (waiting, _) in book.items() if sid in CLASS} == CLASS
    rows = c8_in_csv(results, tmp_path)
    for sid, (waiting, recorded) in book.items():
        for doc in (results, alone) if sid in CLASS else (results,):   # into the gradebook, or without it
            result = doc["students"][sid]
            assert ("C8" in result["needs_manual_grade"]) is waiting, (sid, result["needs_manual_grade"])
            score = result["questions"]["C8"]["score"]
            assert score is None if waiting else score == 0.0 == recorded, (sid, score, recorded)
        assert rows[sid] == (waiting, "" if waiting else "0.0"), sid


def test_an_answer_left_as_released_says_so_and_is_not_counted_for_hand_grading(graded):
    _, _, results = graded
    blank = results["students"]["blank"]
    assert blank["questions"]["C8"]["feedback"][0].startswith("no response: the answer cell is as it was released")
    assert pages.hand_graded(blank) == []
    page = feedback.page("blank", blank, "transformer-block")
    assert "graded by hand by a TA and not included" not in page and "C8: 0 of 4 points" in page
    missing = results["students"]["no_concepts"]["questions"]["C8"]["feedback"]
    assert missing == ["no response: concepts.ipynb could not be graded, so this answer scores 0 and is not listed "
                       "for grading by hand"]
    answered = results["students"]["answered"]
    assert pages.hand_graded(answered) == [{"question": "C8", "points": 4.0, "review": False}]


def test_a_manual_score_given_before_keeps_c8_listed_after_a_regrade(graded, tmp_path):
    """nbgrader lists a grade a TA already scored for another look when it is autograded again; so
    do the results, even for an answer left as released."""
    root, _, _ = graded
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        grade = gb.find_grade("C8_answer", "concepts", ASSIGNMENT, "blank")
        grade.manual_score = 1.0
        gb.db.commit()
    again = api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True, only=["blank"])
    assert c8_in_gradebook(root)["blank"] == (True, 1.0)
    result = again["students"]["blank"]
    assert "C8" in result["needs_manual_grade"] and result["questions"]["C8"]["score"] is None
    assert c8_in_csv(again, tmp_path)["blank"] == (True, "")


def test_a_deleted_answer_cell_costs_only_its_own_points(graded):
    """nbgrader's own step for missing cells stopped on a C8 deleted after its read-only TODO box
    and recorded the whole of concepts.ipynb as 0; the course's puts it back where it was."""
    root, alone, results = graded
    book = gradebook_checks(root)["c8_deleted"]
    assert sum(score for cid, score in book.items() if cid.startswith("C") and cid != "C8_answer") == 30.0
    assert results["students"]["c8_deleted"]["score"] == alone["students"]["c8_deleted"]["score"] == 100.0
    assert not any("could not process" in f for f in results["students"]["c8_deleted"]["flags"])
