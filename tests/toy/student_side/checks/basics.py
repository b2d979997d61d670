"""Visible checks of the toy set: T1 (a number) and T2 (a function)."""
from . import as_number, check, expect

FORMS = {"t1_answer": lambda v: as_number(v, "t1_answer")}


@check("T1", points=1, hidden=False, says="t1_answer is a number")
def test_T1_is_a_number(student):
    as_number(student.value("t1_answer"), "t1_answer")


@check("T2", points=1, hidden=False, says="double(3) is 6")
def test_T2_small(student):
    expect(student.call("double", 3) == 6, "double(3) should be 6")
