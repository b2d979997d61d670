"""Code only the grader runs: never importable beside student code.

``contract`` (the questions), ``assignment`` (the trusted source notebooks), ``checks`` (every
check, hidden ones included), ``misconceptions`` (the catalogue), ``pipeline`` (grading one
submission, step by step) and ``sandbox`` (the isolated processes student code runs in).
"""
