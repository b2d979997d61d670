"""Code only the grader runs: never importable beside student code.

``contract`` (the questions), ``assignment`` (the trusted source notebooks), ``checks`` (every
check, hidden ones included), ``misconceptions`` (the catalogue), ``pipeline`` (grading one
submission, step by step) and ``sandbox`` (the isolated processes student code runs in).
"""
from autograder.compat import find_moved_modules

# A course folder's nbgrader_config.py written for an earlier kit imports its nbgrader plugins from
# here (``nbgrader_execute``, ``late``, ``collect``): they live in ``autograder.nbgrader`` now.
find_moved_modules()
