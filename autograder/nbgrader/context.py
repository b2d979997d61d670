"""What an nbgrader step knows of the course: its assignment (read once per process), nbgrader's
course directory, and where a student's submitted folder is."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Configurable

if TYPE_CHECKING:
    from autograder.grader_side.assignment import Assignment


@functools.lru_cache(maxsize=8)
def assignment_of(name: str, root: Path) -> Assignment:
    """The course's assignment, its notebooks read once per process (not once per graded notebook)."""
    from autograder.grader_side.assignment import Assignment

    return Assignment(name, root)


def coursedir_of(pp: Configurable) -> CourseDirectory:
    """The converter's course directory (preprocessor -> exporter -> converter), else one from the config."""
    converter = getattr(getattr(pp, "parent", None), "parent", None)
    found = getattr(converter, "coursedir", None)
    return found if isinstance(found, CourseDirectory) else CourseDirectory(config=pp.config)



def student_folder(coursedir: CourseDirectory, student: str) -> Path:
    """submitted/<student>: where the one reader's rule starts (nbgrader's default layout)."""
    return Path(coursedir.format_path(coursedir.submitted_directory, student, "."))
