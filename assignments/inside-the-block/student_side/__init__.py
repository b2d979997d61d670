"""The code that runs beside student code, and nothing else.

It runs in the student's own kernel (the visible checks) and in the grader's sandbox child (the
request server), needs only numpy and torch, knows no answers, and is released to students
verbatim as ``assignments/<assignment>/student_side/``. Everything here uses relative imports, so
the same files work as ``autograder.student_side`` and as the released top-level ``student_side``.

In a notebook: ``from student_side import check, ready``.
"""
from .notebook import check, ready

__all__ = ["check", "ready"]
