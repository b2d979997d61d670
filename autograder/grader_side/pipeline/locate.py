"""Step 1: find each notebook of the assignment in the student's folder.

Accepted layouts: ``<student>/<notebook>.ipynb`` and nbgrader's
``<student>/<assignment>/<notebook>.ipynb``.
"""


def run(sub, env):
    a = env.assignment
    for notebook in a.notebooks:
        for candidate in (sub.folder / f"{notebook}.ipynb", sub.folder / a.name / f"{notebook}.ipynb"):
            if candidate.is_file():
                sub.paths[notebook] = candidate
                break
        else:
            sub.problems[notebook] = f"{notebook}.ipynb is missing from the submission"
