"""nbgrader's own way, for comparisons only (bench/, cross-checks): hidden tests run inside the
student's kernel."""
from __future__ import annotations

from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader import preprocessors as nbgrader_preprocessors
from nbgrader.preprocessors import (
    AssignLatePenalties,
    ClearOutput,
    DeduplicateIds,
    Execute,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
)

# nbgrader's own lists: hidden tests run inside the student's kernel.
STOCK_SANITIZE = [ClearOutput, DeduplicateIds, OverwriteKernelspec, nbgrader_preprocessors.OverwriteCells,
                  nbgrader_preprocessors.CheckCellMetadata]
STOCK = [Execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, nbgrader_preprocessors.SaveAutoGrades,
         AssignLatePenalties, nbgrader_preprocessors.CheckCellMetadata]


STOCK_CONFIG = """
# Stock nbgrader for a comparison: hidden tests run inside the student's kernel. nbgrader copies the
# set's folder into autograded/, not the runtime its cells import (student_side: check, ready), which
# ships with the release only: it is shipped into each autograded folder as into the release.
from autograder.tooling.stock import STOCK, STOCK_SANITIZE  # noqa: E402
from autograder.tooling.release import ShipRuntime  # noqa: E402
c.Autograde.sanitize_preprocessors = STOCK_SANITIZE
c.Autograde.autograde_preprocessors = [ShipRuntime, *STOCK]
"""


def use_stock_nbgrader(root: Path) -> None:
    """Make ``nbgrader autograde`` in the (throwaway) course at ``root`` run nbgrader's own ``Execute``:
    the student's kernel runs the hidden tests. Only for comparing the two (bench/, cross-checks)."""
    with open(Path(root) / "nbgrader_config.py", "a") as f:
        f.write(STOCK_CONFIG)
