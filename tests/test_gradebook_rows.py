"""A student recorded for the first time gets exactly the gradebook rows nbgrader's own
``add_submission`` makes (the recorder writes them as multi-row inserts): the same tables, rows,
order and defaults, in two private copies of the course's gradebook."""
import sqlite3

import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc

from autograder.nbgrader.recorder import _NewSubmission
from nbgrader_course import ASSIGNMENT, clone_course

TABLES = ("submitted_assignment", "submitted_notebook", "grade", "comment")


def rows(root) -> dict[str, list[tuple]]:
    """Each table's rows in the order they were written, the ids a new submission draws at random
    replaced by what they stand for (a grade's or comment's own id left out)."""
    with sqlite3.connect(root / "gradebook.db") as db:
        names = {}
        for (sid,) in db.execute("SELECT id FROM submitted_assignment"):
            names[sid] = "the submission"
        for nid, notebook in db.execute("SELECT id, notebook_id FROM submitted_notebook"):
            names[nid] = f"the submitted copy of notebook {notebook}"
        found = {}
        for table in TABLES:
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY rowid")   # noqa: S608 (fixed names)
            found[table] = [tuple(names.get(v, v) for v in row[table in ("grade", "comment"):]) for row in cursor]
        return found


# nbgrader's own add_submission trips SQLAlchemy's autoflush notes (the recorder silences them too)
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_new_submission_gets_the_rows_nbgraders_add_submission_makes(course, tmp_path):
    when = parse_utc("2027-02-10 12:00:00")
    ours, theirs = clone_course(course, tmp_path / "ours"), clone_course(course, tmp_path / "theirs")
    for root, add in ((ours, lambda gb: _NewSubmission(gb, ASSIGNMENT).add(gb, "s1", when)),
                      (theirs, lambda gb: gb.add_submission(ASSIGNMENT, "s1", timestamp=when))):
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            gb.add_student("s1")
            add(gb)
            gb.db.commit()
    mine, nbgraders = rows(ours), rows(theirs)
    assert len(nbgraders["submitted_notebook"]) == 2 and len(nbgraders["grade"]) > 40
    assert mine == nbgraders
    with Gradebook(f"sqlite:///{ours / 'gradebook.db'}") as gb:   # and nbgrader reads them as its own
        submission = gb.find_submission(ASSIGNMENT, "s1")
        assert submission.timestamp == when and submission.score == 0
        assert submission.max_score == gb.find_assignment(ASSIGNMENT).max_score
