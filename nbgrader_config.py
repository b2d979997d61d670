"""nbgrader configuration of the course; nbgrader reads it when run from this folder.

`nbgrader autograde` grades through the course's sandbox: the student's cells run in an isolated
child process, every check runs in the grader, and each test cell gets the check's verdict as its
output (see autograder/nbgrader/preprocessors/execute.py). nbgrader's own in-kernel `Execute` is kept
configured below only for comparisons (bench/).

The problem sets are authored in solutions/<assignment>/ (nbgrader's source directory; one folder
per set, see docs/problem-sets.md) and released to assignments/<assignment>/; student data (submitted/, autograded/, feedback/,
gradebook.db) lives next to this file and is git-ignored.
"""
c = get_config()  # noqa: F821  (nbgrader provides get_config)

# Every line any nbgrader command run here logs (autograde, collect, zip_collect, export,
# generate_feedback...) may carry text a submission controls (a cell id, a file name, an error's
# text, a student id): it reaches the terminal without escape sequences or control characters.
from autograder.nbgrader.files import submission_files_by_the_rule  # noqa: E402
from autograder.nbgrader.log import clean_log_records  # noqa: E402

clean_log_records()
# A submission's other files (timestamp.txt among them) read by the course's one rule, as in `course autograde`.
submission_files_by_the_rule()

c.CourseDirectory.course_id = "transformer-block"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
# The text form of each notebook, each set's grading/ folder (hidden checks, references, catalogue,
# contract) and the grader's caches stay out of the release.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.pct.py", "grading"]

# The release gets the course's runtime (autograder/student_side) next to the set's visible checks.
from nbgrader.converters.generate_assignment import GenerateAssignment  # noqa: E402

from autograder.tooling.release import ShipRuntime  # noqa: E402

c.GenerateAssignment.preprocessors = [*GenerateAssignment.class_traits()["preprocessors"].default(), ShipRuntime]

# Feedback leaves out what lies between BEGIN and END MARK SCHEME (C8's rubric and anchor answers,
# which autograde put back in the graded copy for formgrader): the TAs' material, reused next year.
from nbgrader.converters.generate_feedback import GenerateFeedback  # noqa: E402
from nbgrader.preprocessors import ClearMarkScheme  # noqa: E402

c.GenerateFeedback.preprocessors = [ClearMarkScheme, *GenerateFeedback.class_traits()["preprocessors"].default()]

# A test cell deleted from a submission is put back from the source, and so still graded.
c.OverwriteCells.add_missing_cells = True

# nbgrader autograde: the sandbox instead of the student's kernel; at most a minute per notebook.
# A graded cell a submission made up is forgotten before nbgrader reads the notebook.
# nbgrader's gradebook trips SQLAlchemy's autoflush notes on every new submission: harmless, and
# a screen of them per student in the TA's terminal.
import warnings  # noqa: E402

from sqlalchemy.exc import SAWarning  # noqa: E402

from autograder.nbgrader.exporter import SubmittedNotebookExporter  # noqa: E402
from autograder.nbgrader.preprocessors import AUTOGRADE, SANITIZE  # noqa: E402

warnings.filterwarnings("ignore", category=SAWarning, module="nbgrader")

c.Autograde.sanitize_preprocessors = SANITIZE
c.Autograde.autograde_preprocessors = AUTOGRADE
c.SandboxExecute.timeout = 60.0
# The submitted notebook is read by the course's one rule (no link at any depth below submitted/, a
# regular file of at most 20 MiB, at most 3,000 cells, 10,000 outputs and 64,000 characters of
# markdown, 16,000 in a cell, cell ids nbformat accepts): a refused one is graded 0 and autograded/ gets the course's own
# cells with the reason, never what a link points at (autograder/grader_side/submitted.py).
c.Autograde.exporter_class = SubmittedNotebookExporter

# Late work, the same in `nbgrader autograde` and `course autograde` (both run nbgrader's
# AssignLatePenalties with this plugin): the due date is course/schedule.toml's, written into the
# gradebook by `course release`; each notebook of a late submission loses a share of its score per
# started day late, up to a cap, and scores 0 past a cut-off; extensions.toml beside gradebook.db
# gives a student extra days (autograder/nbgrader/plugins/late.py). The defaults:
from autograder.nbgrader.plugins.late import CourseLatePenalty  # noqa: E402

c.AssignLatePenalties.plugin_class = CourseLatePenalty
# c.CourseLatePenalty.percent_per_day = 10.0        # percent of the notebook's score per started day late
# c.CourseLatePenalty.max_percent = 50.0            # the most it loses before the cut-off
# c.CourseLatePenalty.zero_after_days = 7.0         # more days late than this: 0 (0: any lateness; None: never)
# c.CourseLatePenalty.extensions_file = "extensions.toml"

# nbgrader export: the same CSV, with names and ids that look like spreadsheet formulas made harmless.
from autograder.nbgrader.plugins.export import NbgraderCsvExport  # noqa: E402

c.ExportApp.plugin_class = NbgraderCsvExport

# An LMS download for `nbgrader zip_collect`: files named <student>_<notebook>.ipynb, in
# downloaded/<assignment>/archive/ (zip archives are unpacked first). A student id may hold
# underscores (j_smith_build.ipynb is j_smith's build.ipynb); notebook names hold none.
c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/]+)_(?P<file_id>[^/_]+\.ipynb)$"
# What an LMS download holds is not trusted: the course's extractor caps what comes out of an archive
# (20 MiB a file; each student's upload the assignment's notebooks times that and 100 members; 16 GiB
# in all) and skips unsafe paths and links; an archive whose name gives no student is the LMS's
# download (its members go by their own names, a student's zip in it is opened as hers), one named
# after a student gives files only to her (a build.ipynb in alice_upload.zip is alice's). Student ids
# such as "..", or holding "/" or a control character, are refused. Each file left out gets a warning
# and the rest of the class is collected (autograder/nbgrader/plugins/zip_collect.py). Canvas's download:
#   nbgrader zip_collect <assignment> --collector=autograder.nbgrader.plugins.zip_collect.CanvasCollector
# An archive named like a student that is the LMS's download after all: name it here.
# c.CourseExtractor.lms_archives = ["submissions.zip"]
from autograder.nbgrader.plugins.zip_collect import CourseCollector, CourseExtractor  # noqa: E402

c.ZipCollectApp.extractor_plugin = CourseExtractor
c.ZipCollectApp.collector_plugin = CourseCollector

# nbgrader's own Execute (hidden tests in the student's kernel), for comparisons only: at most two
# minutes per cell.
c.Execute.kernel_name = "python3"
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True

# A harmless warning on stderr must not fail a correct cell: drop warning lines before grading.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?m)^\S+:\d+: \w*Warning: "

# What students see where a solution was removed.
c.ClearSolutions.code_stub = {
    "python": 'raise NotImplementedError("write this part: see the TODO box above this cell")'
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# C8's rubric is the read-only cell C8_rubric, right after the answer, between nbgrader's
# "BEGIN MARK SCHEME" and "END MARK SCHEME" lines: generate_assignment keeps the whole cell in the
# gradebook and leaves the rubric out of the release, and autograde (nbgrader's or course
# autograde) puts it back into autograded/, the notebook formgrader shows. nbgrader accepts a mark
# scheme only in a "manually graded task" cell unless told otherwise; such a cell would be a
# second graded item next to C8_answer, so the rubric's cell stays read-only.
c.ClearMarkScheme.enforce_metadata = False
