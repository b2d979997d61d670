"""The other files of a submission (``timestamp.txt`` among them), read by the course's one rule in
``nbgrader autograde`` as in ``course autograde`` (``grader_side.submitted``)."""
from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from autograder.grader_side import submitted
from autograder.nbgrader.context import student_folder


def submission_time(data: bytes) -> datetime | None:
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

    def get_existing_timestamp(self: CourseDirectory, dest_path: str) -> datetime | None:
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

    def init_assignment(self: BaseConverter, assignment_id: str, student_id: str) -> None:
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


def keep_own_files(coursedir: CourseDirectory, student: str, name: str, db_url: str) -> None:
    """Undo what ``nbgrader autograde`` took through a link for this student before any notebook
    is read: it copies every other file of submitted/<student>/<assignment>/ into autograded/
    following links (a linked folder is a classmate's), and takes the submission time from its
    timestamp.txt the same way. Each copy whose original breaks the one reader's rule is removed
    (unless the course's own file took its place), and such a time is forgotten."""
    source = coursedir.format_path(coursedir.submitted_directory, student, name)
    dest = Path(coursedir.format_path(coursedir.autograded_directory, student, name))
    folder = student_folder(coursedir, student)
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
