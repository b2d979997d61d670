"""nbgrader's preprocessors as the course runs them, one per file, and the two ordered lists the
course's ``nbgrader_config.py`` gives ``Autograde``: the order of every step is written here only."""
from __future__ import annotations

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    ClearOutput,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
)

from autograder.nbgrader.preprocessors.check_cell_metadata import CheckCellMetadata
from autograder.nbgrader.preprocessors.execute import SandboxExecute
from autograder.nbgrader.preprocessors.forget_repeated_cells import ForgetRepeatedCells
from autograder.nbgrader.preprocessors.forget_unknown_cells import ForgetUnknownCells
from autograder.nbgrader.preprocessors.mark_for_review import MarkForReview
from autograder.nbgrader.preprocessors.overwrite_cells import OverwriteCells
from autograder.nbgrader.preprocessors.sanitize_html import SanitizeStudentHTML
from autograder.nbgrader.preprocessors.save_autogrades import SaveAutoGrades

# nbgrader's Autograde.sanitize_preprocessors, with made-up graded cells forgotten first (and known
# ones given back their kind), repeated cells left ordinary, and the student's HTML escaped.
SANITIZE = [ForgetUnknownCells, ClearOutput, ForgetRepeatedCells, OverwriteKernelspec, OverwriteCells,
            SanitizeStudentHTML, CheckCellMetadata]
# nbgrader's Autograde.autograde_preprocessors, with the sandbox in place of the student's kernel.
AUTOGRADE = [SandboxExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, MarkForReview,
             AssignLatePenalties, CheckCellMetadata]
# nbgrader's own lists: hidden tests run inside the student's kernel (for comparison only: bench/).
