"""Step 1: find each notebook of the assignment in the student's folder.

Accepted layouts: ``<student>/<notebook>.ipynb`` and nbgrader's
``<student>/<assignment>/<notebook>.ipynb``. Links are never followed: a notebook, or a folder
on the way to it, that is a symbolic link (it could point at another student's work or at a
file only the grader may read), or anything but a regular file, gets a one-line reason instead.
"""
import os
import stat


def run(sub, env):
    a = env.assignment
    for notebook in a.notebooks:
        name, refused = f"{notebook}.ipynb", None
        for parts in ((name,), (a.name, name)):
            kind = what_is(sub.folder, parts)
            if kind == "notebook":
                sub.paths[notebook] = sub.folder.joinpath(*parts)
                break
            refused = refused or (kind and f"{'/'.join(parts)} {kind}")
        else:
            sub.problems[notebook] = refused or f"{name} is missing from the submission"


def what_is(folder, parts) -> str | None:
    """"notebook" for a regular file reached without links, None when missing, else why not."""
    path = str(folder)
    for i, part in enumerate(("", *parts)):
        path = os.path.join(path, part) if part else path
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return None
        last = i == len(parts)
        if stat.S_ISLNK(mode):
            return ("is a link; submit the notebook file itself" if last else
                    f"is inside a link ({os.path.basename(path) or path}); submit the folder itself")
        if not last and not stat.S_ISDIR(mode):
            return None
    return "notebook" if stat.S_ISREG(mode) else "is not a regular file; submit the notebook file itself"
