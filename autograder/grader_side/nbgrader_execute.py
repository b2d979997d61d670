"""``nbgrader autograde`` through the sandbox: the preprocessor that takes the place of nbgrader's ``Execute``.

The course's ``nbgrader_config.py`` sets ``Autograde.autograde_preprocessors`` to ``AUTOGRADE``:
nbgrader's own list with :class:`SandboxExecute` where ``Execute`` was. For each notebook nbgrader
hands it, ``SandboxExecute`` grades the student's submitted file with the pipeline of ``course
autograde`` (the student's cells run in a sandboxed child, every check runs in this process, no
test cell ever runs beside the student's code) and writes each test cell's output: a pass line, or
the student message as an ``error`` output. nbgrader's own ``SaveAutoGrades`` reads those outputs,
so the gradebook gets, check by check, the scores ``course autograde`` gives. Test cells keep the
source the students were given (the hidden-test lines are dropped), so feedback shows no hidden
test source.

A check whose outcome needs a TA (``Outcome.review``) scores 0 here; :class:`MarkForReview`, right
after ``SaveAutoGrades``, marks its grade ``needs_manual_grade`` so formgrader lists it.

One warm sandbox serves the whole nbgrader process: started for the first notebook, closed at exit.

nbgrader's log carries text a submission controls (a made-up cell's id, a file name, an error's
text, a student id): ``clean_log_records``, installed by the course's ``nbgrader_config.py``, makes
every record of every nbgrader command run in the course folder harmless for the TA's terminal.
"""
from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import re
import threading
from logging import WARNING
from pathlib import Path
from types import SimpleNamespace

import bleach
import jsonschema
import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbconvert.preprocessors import sanitize as nbconvert_sanitize
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.notebooknode import NotebookNode
from nbgrader import preprocessors as nbgrader_preprocessors
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import common as nbgrader_format
from nbgrader.preprocessors import (
    AssignLatePenalties,
    ClearOutput,
    DeduplicateIds,
    Execute,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteKernelspec,
)
from traitlets import Bool, Float

from autograder.grader_side import markup, submitted
from autograder.grader_side.lent_gradebook import one_transaction
from autograder.reports.escape import for_terminal, for_terminal_lines

# The ``ename`` of a test cell's error output (nbgrader scores any error output 0).
FAILED = "CheckFailed"


# ---- nbgrader's log: no escape sequence a submission wrote reaches the TA's terminal -----------

def clean_log_records() -> None:
    """Make every log record this process creates from now on carry its message, traceback and
    stack without escape sequences or control characters (``escape.for_terminal_lines``; line
    breaks kept). Installed as logging's record factory, not on a handler: nbgrader's applications
    build their handlers anew whenever the log level or format is configured (traitlets), and their
    preprocessors and plugins (nbgrader's own, the late plugin, the collectors) log through loggers
    of their own; every record, whichever logger and handler it goes through, is made here.
    Installing it twice is harmless."""
    make = logging.getLogRecordFactory()
    if getattr(make, "cleans_text", False):
        return

    def cleaned(*args, **kwargs) -> logging.LogRecord:
        return _cleaned(make(*args, **kwargs))

    cleaned.cleans_text = True   # type: ignore[attr-defined]
    logging.setLogRecordFactory(cleaned)


def submission_time(data: bytes):
    """The time a ``timestamp.txt`` states, as nbgrader's collect writes it, or None (it may come from
    the student's side of the exchange: anything that is not a time is no time). Both graders read
    it here."""
    text = data.decode("utf-8", errors="replace").strip()
    try:
        return utils.parse_utc(text) if text else None
    except Exception:
        return None


def submission_files_by_the_rule() -> None:
    """``nbgrader autograde`` reads a submission's other files by the course's one rule
    (``submitted.py``: no link at any depth, regular files only, a size cap), as ``course
    autograde`` does. nbgrader 0.9 copies every file of the student's folder into ``autograded/``
    with ``shutil.copy`` (a link to ``/dev/zero`` fills the disk and never ends the run; a link to
    a file of the machine puts it in ``autograded/``) and reads ``timestamp.txt`` whole, following
    links, into a parser that slows with the square of its length. Here a file the rule refuses
    is not copied (a warning names it and why), and ``timestamp.txt`` is read within its 1,000
    bytes; one that is not a time gives the submission no time (no late penalty), as
    ``gradebook._timestamp`` records it, where nbgrader would stop that student (it calls a
    ``fail`` its CourseDirectory does not have). Installing it twice is harmless."""
    from nbgrader.converters.autograde import Autograde
    from nbgrader.converters.base import BaseConverter

    if getattr(CourseDirectory.get_existing_timestamp, "by_the_rule", False):
        return
    copy_all = BaseConverter.init_assignment

    def get_existing_timestamp(self, dest_path: str):
        try:
            text = submitted.read(Path(dest_path), ("timestamp.txt",), submitted.BOOKKEEPING_BYTES - 1)
        except submitted.Missing:
            return None
        except submitted.Refused as exc:
            self.log.warning("%s: timestamp.txt not read (%s): no submission time, so no late penalty", dest_path, exc)
            return None
        when = submission_time(text)
        if when is None:
            self.log.warning("%s: timestamp.txt is not a time: recorded without a submission time, so no late "
                             "penalty", dest_path)
        return when

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        if not isinstance(self, Autograde):      # generate_assignment, feedback: the course's own files
            return copy_all(self, assignment_id, student_id)
        source = Path(self._format_source(assignment_id, student_id))
        dest = self._format_dest(assignment_id, student_id)
        for filename in utils.find_all_files(str(source), self.coursedir.ignore + ["*.ipynb"]):
            rel = os.path.relpath(filename, source)
            try:
                data = submitted.read(source, Path(rel).parts)
            except submitted.Refused as exc:
                self.log.warning("%s: %s not copied to autograded/: %s", student_id, rel, exc)
                continue
            path = Path(dest, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            self.log.info("Copying %s -> %s", filename, path)
            path.write_bytes(data)

    get_existing_timestamp.by_the_rule = True   # type: ignore[attr-defined]
    CourseDirectory.get_existing_timestamp = get_existing_timestamp   # type: ignore[method-assign]
    BaseConverter.init_assignment = init_assignment   # type: ignore[method-assign]


def _cleaned(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with its message formatted and cleaned (its arguments then dropped), and its
    exception's traceback and stack formatted and cleaned too."""
    try:
        message = record.getMessage()
    except Exception:   # arguments that do not fit the message: logging reports that itself
        return record
    record.msg, record.args = for_terminal_lines(message), None
    if record.exc_info and record.exc_info[0] is not None:
        record.exc_text = for_terminal_lines(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = for_terminal_lines(record.stack_info)
    return record


class SandboxExecute(NbGraderPreprocessor):
    """Grade the submitted notebook in the sandbox; write each test cell's outcome as its output."""

    timeout = Float(60.0, help="Wall-clock seconds one notebook may run in its sandbox").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = _coursedir(self)
        root = Path(coursedir.root)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, ".", "."))
        folder = _student_folder(coursedir, info["student"])
        outcomes, flags, to_review = grade_notebook(info["student"], folder, info["assignment"], info["notebook"],
                                                    root, self.timeout, hide=(submitted,), nbgrader_only=True)
        for flag in flags:   # one line each: a line break in a flag could pass for a log line of nbgrader's
            self.log.warning("%s: %s", for_terminal(info["student"]), for_terminal(flag))
        review = write_outcomes(nb, outcomes, _assignment(info["assignment"], root), info["notebook"])
        look = _checks_of(_assignment(info["assignment"], root), to_review, outcomes)
        resources.setdefault("course", {}).update(review=review, look=look)
        return nb, resources


class ForgetUnknownCells(NbGraderPreprocessor):
    """First of all: a cell whose nbgrader metadata names no cell of the course's notebook (one a
    submission made up, with points of its own), or is not nbgrader metadata at all (null, a list,
    an id that is not text), becomes an ordinary cell, so no step of nbgrader's grades it, counts
    it or trips on it; a cell that names one of the course's gets that cell's nbgrader metadata
    back whole (``course_metadata``: graded or not, its points, solution, task, read-only, the
    schema version, the type it was released as, the checksum), whatever the submission's
    metadata claims. nbgrader's own steps stopped the whole notebook, recorded as 0, on a solution
    cell turned into a graded one worth 1000 points, a schema version edited or deleted, a key
    nbgrader's schema does not know, or a cell's metadata that is not a mapping."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with one_transaction(resources), Gradebook(info["db_url"]) as gb:
            source = gb.source.cells(info["notebook"])
        for cell in nb.cells:
            if not isinstance(cell.get("metadata"), dict):
                cell["metadata"] = NotebookNode()
            if "nbgrader" not in cell.metadata:
                continue
            meta = cell.metadata["nbgrader"]
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in source:
                del cell.metadata["nbgrader"]
                continue
            cell.metadata["nbgrader"] = course_metadata(source[grade_id])
        return nb, resources


def course_metadata(cell) -> NotebookNode:
    """The nbgrader metadata the release gives the course's cell ``cell`` (a gradebook source cell,
    as ``lent_gradebook.Source`` reads it), in nbgrader's current schema."""
    meta = NotebookNode(grade_id=cell.name, grade=hasattr(cell, "max_score"), solution=bool(cell.solution),
                        task=bool(cell.task), locked=bool(cell.locked), schema_version=3)
    if cell.cell_type in ("code", "markdown", "raw"):
        meta["cell_type"] = cell.cell_type
    if isinstance(cell.checksum, str) and len(cell.checksum) == 32:
        meta["checksum"] = cell.checksum
    if hasattr(cell, "max_score"):
        meta["points"] = cell.max_score
    elif cell.task:
        meta["points"] = cell.task_points
    return meta


class MarkForReview(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: mark each check the grader left to a TA (``review``: its points wait)
    or wants a TA to look at (``look``: its score stands) as ``needs_manual_grade``."""

    def preprocess(self, nb, resources):
        course = resources.get("course", {})
        marked = [*(course.get("review") or {}), *(course.get("look") or [])]
        if marked:
            info = resources["nbgrader"]
            with Gradebook(info["db_url"]) as gb:
                for grade_id in marked:
                    grade = gb.find_grade(grade_id, info["notebook"], info["assignment"], info["student"])
                    grade.needs_manual_grade = True
                gb.db.commit()
        return nb, resources


class OverwriteCells(nbgrader_preprocessors.OverwriteCells):
    """nbgrader's, with the notebook's source cells read once, not one query per cell (``lent_gradebook``),
    and without its "checksum has changed" warning for a read-only cell left as it was released (the
    source's checksum counts what the release leaves out: a test cell's hidden tests, C8's rubric):
    the warnings left are about cells a student edited."""

    def preprocess(self, nb, resources):
        self.as_released = self._as_released(nb, resources["nbgrader"]) if self.log.isEnabledFor(WARNING) else set()
        with one_transaction(resources):
            return super().preprocess(nb, resources)

    def _as_released(self, nb, info) -> set[str]:
        try:
            cells = _assignment(info["assignment"], Path(_coursedir(self).root)).cells(info["notebook"], released=True)
        except Exception:   # it only quiets warnings: never a reason to fail a notebook
            return set()
        released = {c.grade_id: c for c in cells if c.grade_id and c.locked}
        ids = [cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in nb.cells]
        return {gid for gid, cell in zip(ids, nb.cells, strict=True)
                if gid in released and cell.get("source") == released[gid].source}

    def report_change(self, name, attr, old, new):
        if not (attr == "checksum" and name in self.as_released):
            super().report_change(name, attr, old, new)

    def add_missing_task_cells(self, nb, resources):
        """nbgrader's, reading each cell's ``grade_id`` with ``get``: ``DeduplicateIds`` leaves a
        repeated cell's nbgrader metadata empty, and nbgrader's own version then stopped the whole
        notebook with a KeyError (a check cell pasted twice scored the notebook 0)."""
        source = self.gradebook.source.cells(self.notebook_id)
        present = {(cell.metadata.get("nbgrader") or {}).get("grade_id") for cell in nb.cells}
        for task in source.values():
            if task.task and task.name not in present:
                nb.cells.append(self.missing_cell_transform(task, task.task_points, is_task=True))
        return nb, resources

    def add_missing_grade_cells(self, nb, resources):
        """nbgrader's, putting a deleted graded cell back after the nearest earlier cell of the
        source that the submission still has. (nbgrader's own looks only at graded and solution
        cells, so a deleted answer right after a read-only cell, such as C8's after its TODO box,
        stopped the whole notebook with a KeyError, and it was recorded as 0.)"""
        source = self.gradebook.source.cells(self.notebook_id)
        names = list(source)
        present = {(cell.metadata.get("nbgrader") or {}).get("grade_id"): i for i, cell in enumerate(nb.cells)}
        for graded in [cell for cell in source.values() if hasattr(cell, "max_score")]:
            if graded.name in present:
                continue
            self.log.warning(f"Missing grade cell {graded.name} encountered, adding to notebook")
            k = names.index(graded.name)
            cell = nbformat.from_dict(self.missing_cell_transform(graded, graded.max_score,
                                                                  is_solution=graded.solution))
            cell.id = re.sub(r"[^A-Za-z0-9_-]", "-", f"restored-{graded.name}")[:64]   # nbformat 4.5 wants one
            nb.cells.insert(next((present[n] + 1 for n in reversed(names[:k]) if n in present), 0), cell)
            present = {(c.metadata.get("nbgrader") or {}).get("grade_id"): i for i, c in enumerate(nb.cells)}
        return nb, resources


class ForgetRepeatedCells(DeduplicateIds):
    """nbgrader's ``DeduplicateIds`` (of several cells with one id, the last is the course's), which
    leaves each earlier copy an ordinary cell: nbgrader's own leaves it an empty nbgrader metadata,
    which its metadata check then reads as an old format and stops the notebook (a check cell pasted
    twice scored the notebook 0)."""

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if cell.get("metadata", {}).get("nbgrader") == {}:
            del cell.metadata["nbgrader"]
        return cell, resources


class SaveAutoGrades(nbgrader_preprocessors.SaveAutoGrades):
    """nbgrader's, writing the notebook's grades in one transaction, not one per cell (``lent_gradebook``)."""

    def preprocess(self, nb, resources):
        with one_transaction(resources):
            return super().preprocess(nb, resources)


class SanitizeStudentHTML(SanitizeHTML):
    """After ``OverwriteCells``: HTML a student wrote (a markdown answer, a raw cell, a rich output)
    is escaped in the autograded notebook, which formgrader shows in the TA's Jupyter session and
    ``generate_feedback`` turns into pages, and a markdown link, image or autolink whose target is
    not http, https, mailto or relative is shown as text (``markup.safe_markdown``); the course's own
    locked cells keep their markup."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        self.budget = markup.Budget()    # per notebook: see markup.MAX_WORK
        self.cleaner = None
        return super().preprocess(nb, resources)

    def sanitize_html_tags(self, html_str):
        """nbconvert's, through one bleach ``Cleaner`` per notebook: ``bleach.clean``, which nbconvert
        calls, builds a new one (its HTML parser included) for every cell, a tenth of a millisecond
        each, seconds of the gradebook recorder's time for a notebook of thousands of cells."""
        cleaner = getattr(self, "cleaner", None)
        if cleaner is None:
            cleaner = self.cleaner = bleach.Cleaner(**self._bleach_options())
        return cleaner.clean(html_str)

    def _bleach_options(self) -> dict:
        """What nbconvert's ``sanitize_html_tags`` passes to ``bleach.clean``."""
        options = {"tags": self.tags, "attributes": self.attributes, "strip": self.strip,
                   "strip_comments": self.strip_comments}
        if nbconvert_sanitize._USE_BLEACH_CSS_SANITIZER:
            options["css_sanitizer"] = nbconvert_sanitize.CSSSanitizer(allowed_css_properties=self.styles)
        elif nbconvert_sanitize._USE_BLEACH_STYLES:
            options["styles"] = self.styles
        return options

    def preprocess_cell(self, cell, resources, index):
        if utils.is_locked(cell):
            return cell, resources
        cell, resources = super().preprocess_cell(cell, resources, index)
        budget = getattr(self, "budget", None) or markup.Budget()
        if cell.cell_type == "markdown":
            cell.source = markup.safe_markdown(cell.source, budget)
        elif cell.cell_type == "code":
            for output in cell.outputs:
                data = output.get("data", {})
                if isinstance(data.get("text/markdown"), str):
                    data["text/markdown"] = markup.safe_markdown(data["text/markdown"], budget)
        return cell, resources


class CheckCellMetadata(nbgrader_preprocessors.CheckCellMetadata):
    """nbgrader's check of the cells' nbgrader metadata, with its JSON schema checked and compiled
    once per process (``jsonschema.validate``, which nbgrader calls for every cell, does both again
    each time: a quarter of the grader's time in ``nbgrader autograde``)."""

    def preprocess(self, nb, resources):
        original = nbgrader_format.jsonschema
        nbgrader_format.jsonschema = SimpleNamespace(validate=_validate)
        try:
            return super().preprocess(nb, resources)
        finally:
            nbgrader_format.jsonschema = original


@functools.lru_cache(maxsize=4)
def _compiled(schema_json: str):
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


# Metadata found valid, per schema: (schema as JSON, metadata as JSON). Every student's copy of a
# cell has the same metadata, so each is checked once per process; what fails is checked each time.
_VALID: set[tuple[str, str]] = set()
_SCHEMAS: dict[int, tuple[dict, str]] = {}   # id(schema) -> (schema, as JSON): nbgrader's few schemas


def _validate(instance, schema) -> None:
    known = _SCHEMAS.get(id(schema))
    if known is None or known[0] is not schema:
        known = _SCHEMAS[id(schema)] = (schema, json.dumps(schema, sort_keys=True))
    key = (known[1], json.dumps(instance, sort_keys=True, default=repr))
    if key in _VALID:
        return
    _compiled(known[1]).validate(instance)
    if len(key[1]) < 4096 and len(_VALID) < 100_000:
        _VALID.add(key)


# nbgrader's Autograde.sanitize_preprocessors, with made-up graded cells forgotten first (and known
# ones given back their kind), repeated cells left ordinary, and the student's HTML escaped.
SANITIZE = [ForgetUnknownCells, ClearOutput, ForgetRepeatedCells, OverwriteKernelspec, OverwriteCells,
            SanitizeStudentHTML, CheckCellMetadata]
# nbgrader's Autograde.autograde_preprocessors, with the sandbox in place of the student's kernel.
AUTOGRADE = [SandboxExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, MarkForReview,
             AssignLatePenalties, CheckCellMetadata]
# nbgrader's own lists: hidden tests run inside the student's kernel (for comparison only: bench/).
STOCK_SANITIZE = [ClearOutput, DeduplicateIds, OverwriteKernelspec, nbgrader_preprocessors.OverwriteCells,
                  nbgrader_preprocessors.CheckCellMetadata]
STOCK = [Execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, nbgrader_preprocessors.SaveAutoGrades,
         AssignLatePenalties, nbgrader_preprocessors.CheckCellMetadata]


def write_outcomes(nb, outcomes: dict, assignment, notebook: str) -> dict[str, str]:
    """Write each test cell's outcome as its output (in place); return {grade_id: answer a TA must review}.

    A grade cell the course does not know (one a submission made up) gets an error, so it can never
    earn a point; test cells get back the source the students were given."""
    released = assignment.tests(notebook)
    review = {}
    for cell in nb.cells:
        if not (utils.is_grade(cell) and cell.cell_type == "code"):
            continue
        grade_id = cell.metadata.nbgrader.get("grade_id", "")
        outcome = outcomes.get(grade_id)
        if grade_id in released:
            cell.source = released[grade_id].source
        cell.execution_count = None
        if outcome is None:
            cell.outputs = [_error(f"{grade_id} is not a check of this course: no points")]
        elif outcome.review:
            review[grade_id] = outcome.review
            # nbgrader scores an error output 0 and shows that score beside this text until a TA's
            # manual score replaces it: say so, rather than that the points are not lost.
            cell.outputs = [_error(f"{grade_id} is awaiting review: not scored yet, a TA decides (until then "
                                   f"nbgrader shows 0): {outcome.review}")]
        elif outcome.passed:
            check = assignment.check(grade_id)
            text = f"passed {grade_id} ({check.points:g} point{'s' * (check.points != 1)}): {check.says}\n"
            cell.outputs = [NotebookNode(output_type="stream", name="stdout", text=text)]
        else:
            cell.outputs = [_error(f"{grade_id} failed: {outcome.message}")]
    return review


def _error(message: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=FAILED, evalue=message, traceback=[f"{FAILED}: {message}"])


@functools.lru_cache(maxsize=8)
def _assignment(name: str, root: Path):
    """The course's assignment, its notebooks read once per process (not once per graded notebook)."""
    from autograder.grader_side.assignment import Assignment

    return Assignment(name, root)


def _coursedir(pp) -> CourseDirectory:
    """The converter's course directory (preprocessor -> exporter -> converter), else one from the config."""
    converter = getattr(getattr(pp, "parent", None), "parent", None)
    found = getattr(converter, "coursedir", None)
    return found if isinstance(found, CourseDirectory) else CourseDirectory(config=pp.config)


# ---- what nbgrader reads of a submission: the one reader's rule ------------------------------

class SubmittedNotebookExporter(NotebookExporter):
    """``nbgrader autograde``'s exporter (``Autograde.exporter_class``). In its sanitizing pass, where
    nbgrader reads the submitted file, the notebook is read by the one reader's rule
    (``grader_side.submitted``: no link at any depth below submitted/, a regular file of at most
    20 MiB, within the caps on cells, outputs and markdown that ``course autograde`` applies too);
    one it refuses becomes the course's released notebook with the reason on top, so a linked
    classmate's notebook never reaches this student's autograded/ copy or feedback, and a notebook
    of 150,000 cells never reaches nbgrader's preprocessors. And what
    nbgrader itself took through a link before that (the other files of the assignment folder it
    copies into autograded/, the submission time in timestamp.txt) is taken back."""

    def from_filename(self, filename, resources=None, **kw):
        converter = self.parent
        info = (resources or {}).get("nbgrader")
        coursedir = getattr(converter, "coursedir", None)
        if not (info and getattr(converter, "_sanitizing", False) and isinstance(coursedir, CourseDirectory)):
            return super().from_filename(filename, resources, **kw)   # nbgrader's own autograded/ copy
        student, name, notebook = info["student"], info["assignment"], info["notebook"]
        folder = _student_folder(coursedir, student)
        keep_own_files(coursedir, student, name, info["db_url"])
        try:
            data = submitted.notebook(folder, name, notebook, nbgrader_only=True)
        except submitted.Refused as exc:
            self.log.warning("%s: %s: graded 0, with the course's own cells in autograded/", for_terminal(student),
                             for_terminal(exc))
            nb = placeholder(_assignment(name, Path(coursedir.root)), notebook, str(exc))
        else:
            nb = read_submitted(data)
        resources.setdefault("metadata", {}).update(name=notebook, path=os.path.dirname(filename))
        return self.from_notebook_node(nb, resources, **kw)


def read_submitted(data: bytes) -> nbformat.NotebookNode:
    """A submitted notebook's bytes as nbformat 4, for nbgrader's steps (both graders read it here).
    One with version-4 cells under another version number (an edited header) is read as the
    version-4 notebook it is, as ``course autograde`` reads it (nbformat would try to upgrade it
    from version 3 and stop); a cell whose metadata is not a mapping gets empty metadata (nbformat
    stops on it; ``course autograde`` grades the cell, its metadata deciding nothing)."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raw = None
    if not (isinstance(raw, dict) and isinstance(raw.get("cells"), list)):
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    odd = [cell for cell in raw["cells"] if isinstance(cell, dict) and not isinstance(cell.get("metadata", {}), dict)]
    for cell in odd:
        cell["metadata"] = {}
    if raw.get("nbformat") != 4:
        ids = all(isinstance(cell, dict) and "id" in cell for cell in raw["cells"])
        raw.update(nbformat=4, nbformat_minor=5 if ids else 4)     # cell ids came with 4.5
    elif not odd:
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    return nbformat.reads(json.dumps(raw), as_version=4)


def keep_own_files(coursedir: CourseDirectory, student: str, name: str, db_url: str) -> None:
    """Undo what ``nbgrader autograde`` took through a link for this student before any notebook
    is read: it copies every other file of submitted/<student>/<assignment>/ into autograded/
    following links (a linked folder is a classmate's), and takes the submission time from its
    timestamp.txt the same way. Each copy whose original breaks the one reader's rule is removed
    (unless the course's own file took its place), and such a time is forgotten."""
    source = coursedir.format_path(coursedir.submitted_directory, student, name)
    dest = Path(coursedir.format_path(coursedir.autograded_directory, student, name))
    folder = _student_folder(coursedir, student)
    course = coursedir.format_path(coursedir.source_directory, ".", name)
    ignore = list(coursedir.ignore) + ["*.ipynb"]
    ours = {os.path.relpath(f, course) for f in utils.find_all_files(course, ignore)}
    for path in utils.find_all_files(source, ignore):
        rel = os.path.relpath(path, source)
        if rel not in ours and not submitted.within_rule(folder, (name, *Path(rel).parts)):
            copy = dest / rel
            if copy.is_file() or copy.is_symlink():
                copy.unlink()
    for here, dirs, files in os.walk(dest, topdown=False):
        if here != str(dest) and not dirs and not files:
            os.rmdir(here)
    if os.path.lexists(os.path.join(source, "timestamp.txt")) and \
            not submitted.within_rule(folder, (name, "timestamp.txt")):
        with Gradebook(db_url) as gb:
            submission = gb.find_submission(name, student)
            if submission.timestamp is not None:
                submission.timestamp = None
                gb.db.commit()


def placeholder(a, notebook: str, reason: str) -> NotebookNode:
    """What autograded/ gets for a submitted notebook the grader refused to read: the course's
    released notebook (the cells the student was given), the reason in a cell on top."""
    nb = nbformat.read(a.release_dir / f"{notebook}.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"**Not graded:** {_markdown_text(reason)}"))
    return nb


def _markdown_text(text: str) -> str:
    """``text`` shown as itself in markdown: control characters replaced, markup characters escaped."""
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]", "?", text)
    return re.sub(r"([\\`*_{}\[\]()#+\-!<>|~&])", r"\\\1", text)


def _student_folder(coursedir: CourseDirectory, student: str) -> Path:
    """submitted/<student>: where the one reader's rule starts (nbgrader's default layout)."""
    return Path(coursedir.format_path(coursedir.submitted_directory, student, "."))


# ---- grading one notebook, in one warm sandbox per process -------------------------------------

_lock = threading.Lock()
_shared: dict = {}
# The one slot of this process's sandbox (the Sandbox holds a machine-wide slot for it, so two nbgrader
# runs side by side, or beside `course autograde`, never give their sessions one uid).
SLOT = 0


def grade_notebook(student: str, folder: Path, assignment: str, notebook: str, root: Path, timeout: float,
                   hide=(), nbgrader_only: bool = False) -> tuple[dict, list[str], dict]:
    """(check id -> Outcome, flags, question id -> why a TA should look) for one notebook of the submission in
    ``folder`` (the student's folder; with ``nbgrader_only``, its notebooks are in nbgrader's ``<assignment>/``): the
    pipeline's steps up to and including the judging of forbidden routes, on an assignment of that one notebook."""
    from autograder.grader_side import pipeline
    from autograder.grader_side.assignment import Assignment
    from autograder.grader_side.pipeline import routes

    env = pipeline.Env(Assignment(assignment, root, (notebook,)), _sandbox(root, timeout, hide), 0)
    env.slots.put(SLOT)
    sub = pipeline.Submission(student, folder, nbgrader_only=nbgrader_only)
    for step in pipeline.STEPS[: pipeline.STEPS.index(routes.run) + 1]:
        step(sub, env)
    return sub.outcomes, sub.flags, sub.to_review


def _checks_of(assignment, questions, outcomes) -> list[str]:
    """The checks (among ``outcomes``) of the given questions: their grades are listed for a TA."""
    return [c.id for c in assignment.checks if c.question in questions and c.id in outcomes]


def _sandbox(root: Path, timeout: float, hide):
    """This process's sandbox, started on first use and closed when the process exits."""
    from autograder.grader_side.sandbox import grading_sandbox

    with _lock:
        if "sandbox" not in _shared:
            import torch

            torch.set_num_threads(1)   # the checks' tensors are tiny: more threads only spin (see api.autograde)
            sandbox = grading_sandbox(timeout, hide=(root, *hide))
            sandbox.__enter__()
            atexit.register(sandbox.__exit__, None, None, None)
            _shared["sandbox"] = sandbox
        return _shared["sandbox"]


# ---- nbgrader's own way, for comparisons -------------------------------------------------------

STOCK_CONFIG = """
# Stock nbgrader for a comparison: hidden tests run inside the student's kernel. nbgrader copies the
# set's folder into autograded/, not the runtime its cells import (student_side: check, ready), which
# ships with the release only: it is shipped into each autograded folder as into the release.
from autograder.grader_side.nbgrader_execute import STOCK, STOCK_SANITIZE  # noqa: E402
from autograder.tooling.release import ShipRuntime  # noqa: E402
c.Autograde.sanitize_preprocessors = STOCK_SANITIZE
c.Autograde.autograde_preprocessors = [ShipRuntime, *STOCK]
"""


def use_stock_nbgrader(root: Path) -> None:
    """Make ``nbgrader autograde`` in the (throwaway) course at ``root`` run nbgrader's own ``Execute``:
    the student's kernel runs the hidden tests. Only for comparing the two (bench/, cross-checks)."""
    with open(Path(root) / "nbgrader_config.py", "a") as f:
        f.write(STOCK_CONFIG)
