"""Step 1: find each notebook of the assignment in the student's folder.

Accepted layouts: ``<student>/<notebook>.ipynb`` and nbgrader's
``<student>/<assignment>/<notebook>.ipynb`` (only the latter for ``nbgrader autograde``). The rule
is the one reader's (``grader_side.submitted``): a notebook, or a folder on the way to it (the
student's own included), that is a symbolic link (it could point at another student's work or at a
file only the grader may read), or anything but a regular file, gets a one-line reason instead.
"""
from autograder.grader_side import submitted
from autograder.grader_side.pipeline.submission import Env, Submission


def run(sub: Submission, env: Env) -> None:
    a = env.assignment
    for notebook in a.notebooks:
        if notebook in sub.problems:   # refused before it got here (the cluster's grader reads it)
            continue
        try:
            sub.paths[notebook] = submitted.find(
                sub.folder, submitted.layouts(a.name, f"{notebook}.ipynb", sub.nbgrader_only))
        except submitted.Refused as exc:
            sub.problems[notebook] = str(exc)
