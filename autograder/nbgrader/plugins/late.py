"""Due dates and late work, the same under ``nbgrader autograde`` and ``course autograde``.

- The due date is ``course/schedule.toml``'s: the end of the ``due`` day in the schedule's
  ``timezone`` (the midnight that ends it), stored in nbgrader's gradebook as nbgrader stores
  times, naive UTC. ``course release`` and ``make_course`` write it there (:func:`record_due_date`)
  right after ``nbgrader generate_assignment``.
- The penalty is :class:`CourseLatePenalty`, an nbgrader late-submission plugin that the course's
  ``nbgrader_config.py`` names in ``c.AssignLatePenalties.plugin_class``. nbgrader's own
  ``AssignLatePenalties`` calls it for each notebook of a late submission, in ``nbgrader
  autograde`` and, with the same configuration, when ``course autograde`` records a student
  (``nbgrader.recorder``): the same plugin, the same student id, notebook score and seconds late.
- An extension is extra days in ``extensions.toml`` beside the gradebook (student data, like the
  gradebook: git-ignored), read by the plugin in both graders: per assignment, a student id and
  a number of days added to that student's due date. nbgrader 0.9 has an extension column
  (``SubmittedAssignment.extension``, set only through its Python API ``Gradebook.grant_extension``,
  and only once the submission is in the gradebook; no command or formgrader page sets it); one set
  that way is already inside nbgrader's seconds late, and an ``extensions.toml`` entry adds to it.
"""
from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float, TraitError, Unicode, validate
from traitlets.utils.bunch import Bunch

from autograder.compat import tomllib
from autograder.course import CourseError

SCHEDULE = Path("course") / "schedule.toml"
EXTENSIONS = "extensions.toml"
DAY = 86400.0


# ---- the due date ------------------------------------------------------------------------------

def end_of_day(day: dt.date, timezone: str) -> dt.datetime:
    """The midnight that ends ``day`` in ``timezone``, as nbgrader stores times: naive UTC."""
    zone = _zone(timezone)
    local = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=zone)
    return local.astimezone(dt.timezone.utc).replace(tzinfo=None)


def due_date(assignment: str, repo: Path) -> dt.datetime | None:
    """When ``assignment`` is due by ``repo``'s ``course/schedule.toml`` (naive UTC), or None when
    the schedule does not list it (or there is no schedule). ``due`` is a date (due at the end of
    that day) or a local date and time (due then), both in the schedule's ``timezone``."""
    path = Path(repo) / SCHEDULE
    if not path.is_file():
        return None
    try:
        schedule = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(f"cannot read the schedule {path}: {exc}") from None
    dues = {entry.get("due") for entry in schedule.get("weeks", []) if entry.get("assignment") == assignment}
    dues.discard(None)
    if not dues:
        return None
    if len(dues) > 1:
        raise CourseError(f"{path.name} gives {assignment} more than one due date: "
                          + ", ".join(sorted(map(str, dues))))
    (due,) = dues
    timezone = schedule.get("timezone")
    if not isinstance(timezone, str) or not timezone:
        raise CourseError(f"{path.name} gives due dates but no course time zone: add a top-level line such "
                          'as timezone = "America/New_York"')
    if isinstance(due, dt.datetime):
        if due.tzinfo is None:
            due = due.replace(tzinfo=_zone(timezone))
        return due.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(due, dt.date):
        return end_of_day(due, timezone)
    raise CourseError(f"{path.name}: the due date of {assignment} is not a date (YYYY-MM-DD): {due!r}")


def record_due_date(assignment: str, root: Path, schedule_repo: Path | None = None) -> dt.datetime | None:
    """Write ``assignment``'s due date by the schedule of ``schedule_repo`` (default: the course
    folder ``root`` itself) into the gradebook of the course at ``root``, as ``nbgrader db
    assignment add --duedate`` would. A set the schedule does not list keeps the gradebook's
    due date. Returns the date written, or None."""
    due = due_date(assignment, Path(schedule_repo or root))
    if due is None:
        return None
    from nbgrader.api import Gradebook

    from autograder.course import Course

    course = Course(Path(root))
    with Gradebook(course.db_url, course.coursedir.course_id) as gb:
        gb.update_or_create_assignment(assignment, duedate=due)
    return due


def _zone(name: str) -> dt.tzinfo:
    from dateutil import tz  # nbgrader's own: system time zones, else the copy dateutil ships

    zone = tz.gettz(name)
    if zone is None:
        raise CourseError(f"unknown time zone {name!r} in {SCHEDULE.name}: give an IANA name such as "
                          "America/New_York")
    return zone


# ---- extensions ----------------------------------------------------------------------------------

class ExtensionsError(ValueError):
    """extensions.toml cannot be read or does not say days."""


def read_extensions(path: Path) -> dict[str, dict[str, float]]:
    """assignment -> student id -> extra days, from an ``extensions.toml`` such as::

        [<assignment>]
        alice = 2        # two more days
        "j.smith" = 0.5  # twelve more hours

    No file means no extensions."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ExtensionsError(f"cannot read {path}: {exc}") from None
    found: dict[str, dict[str, float]] = {}
    for assignment, table in doc.items():
        if not isinstance(table, dict):
            raise ExtensionsError(f"{path}: {assignment!r} is not a table: write [{assignment}] and then "
                                  "one line per student, student = days")
        for student, days in table.items():
            if isinstance(days, bool) or not isinstance(days, (int, float)) or not math.isfinite(days) or days < 0:
                raise ExtensionsError(f"{path}: [{assignment}] {student} = {days!r} is not a number of days "
                                      "(0 or more)")
            found.setdefault(assignment, {})[student] = float(days)
    return found


# ---- the penalty -----------------------------------------------------------------------------------

class CourseLatePenalty(LateSubmissionPlugin):
    """The course's late policy, per notebook of a late submission (nbgrader's unit): after the
    student's extension, each started day late costs ``percent_per_day`` percent of the notebook's
    score, at most ``max_percent`` (a late notebook keeps at least the rest), and more than
    ``zero_after_days`` days late the notebook scores 0. nbgrader's ``penalty_method`` is not used."""

    percent_per_day = Float(10.0, help="Percent of a notebook's score lost per started day late.").tag(config=True)
    max_percent = Float(50.0, help="The most a late notebook loses, in percent, before the cut-off.").tag(config=True)
    zero_after_days = Float(7.0, allow_none=True,
                            help="A notebook more than this many days late scores 0 (0: any late notebook; "
                                 "None: never).").tag(config=True)
    extensions_file = Unicode(EXTENSIONS, help="Extra days per student per assignment (TOML); a relative path "
                                               "is relative to the folder of the course's SQLite gradebook, "
                                               "else to the folder nbgrader runs in.").tag(config=True)

    @validate("percent_per_day", "max_percent", "zero_after_days")
    def _not_negative(self, proposal: Bunch) -> float | None:
        if proposal["value"] is not None and not proposal["value"] >= 0:
            raise TraitError(f"{proposal['trait'].name} must be 0 or more, not {proposal['value']!r}")
        return proposal["value"]

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        assignment = getattr(self.parent, "assignment_id", None)
        try:
            extensions = read_extensions(self.extensions_path())
        except ExtensionsError as exc:
            self.log.error("%s; no late penalty recorded for %s's %s: fix the file and grade again",
                           exc, student_id, assignment)
            return None
        extra = (extensions.get(assignment, {}) if assignment is not None else {}).get(student_id, 0.0)
        late = max(0.0, total_seconds_late - extra * DAY)
        if extra:
            self.log.info("%s has a %g-day extension on %s: %.0f s late after it", student_id, extra, assignment, late)
        return self.penalty(score, late)

    def penalty(self, score: float, seconds_late: float) -> float | None:
        """The points a notebook that scored ``score`` loses when ``seconds_late`` late (None: on time)."""
        if seconds_late <= 0:
            return None
        if self.zero_after_days is not None and seconds_late > self.zero_after_days * DAY:
            return score
        percent = min(self.percent_per_day * math.ceil(seconds_late / DAY), self.max_percent, 100.0)
        return round(score * percent / 100.0, 6)

    def extensions_path(self) -> Path:
        path = Path(self.extensions_file).expanduser()
        if path.is_absolute():
            return path
        db_url = getattr(self.parent, "db_url", None) or ""
        if db_url.startswith("sqlite:///"):
            return Path(db_url[len("sqlite:///"):]).parent / path
        return Path.cwd() / path
