"""The course kit's code, in four rooms by who runs it:

- ``student_side``: runs beside student code (their kernel, the sandbox child); released verbatim.
- ``grader_side``: the contract, the hidden checks, the pipeline and the sandbox; only the grader runs it.
- ``reports``: what the grader's results become for people (feedback pages, the class report, CSV).
- ``tooling``: the course team's tools (release, demo, sample class, mutation report).

``cli`` parses the ``course`` command line and calls ``api``.
"""
