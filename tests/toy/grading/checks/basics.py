"""Hidden checks of the toy set."""
import torch

from autograder.student_side.checks import as_number, check, expect, expect_close

from ..reference import basics as ref


@check("T1", points=1, hidden=True, says="t1_answer is six times seven")
def test_T1_value(student):
    expect(as_number(student.value("t1_answer"), "t1_answer") == ref.ANSWER, "t1_answer is not six times seven")


@check("T2", points=2, hidden=True, says="double matches the reference on negative numbers and a tensor")
def test_T2_reference(student):
    for x in (-5, 0.25):
        expect(student.call("double", x) == ref.double(x), f"double({x}) is not twice {x}")
    x = torch.arange(4.0)
    expect_close(student.call("double", x), ref.double(x), "double on a tensor")
