"""The course kit's code, in rooms by who runs it:

- ``student_side``: runs beside student code (their kernel, the sandbox child); released verbatim.
- ``grader_side``: the contract, the hidden checks, the pipeline and the sandbox; only the grader runs it.
- ``nbgrader``: the grader plugged into nbgrader's commands and gradebook (preprocessors, plugins, recorder).
- ``reports``: what the grader's results become for people (feedback pages, the class report, CSV).
- ``tooling``: the course team's tools (release, sample class, Gradescope's package).

``cli`` parses the ``course`` command line and calls ``api``, as do ``demo``, ``mutants`` and
``run_autograder`` (what Gradescope's container runs); ``course`` is the course folder a command runs
in; ``escape`` makes text a submission controls safe to show.
"""
