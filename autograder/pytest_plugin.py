"""Grading with pytest: one test item per check, scored exactly as ``course autograde`` scores it.

Run in the course folder (the one holding ``nbgrader_config.py``)::

    course pytest --submission=submitted/alice/<assignment>            # one student
    course pytest --submissions=submitted/ --junitxml=grades.xml        # a whole class

The submissions are graded once, at collection, by ``course autograde``'s own pipeline (the same
sandbox, grader-side comparisons and route verdicts); each check then becomes an item
``<student>::<question>::<check>`` that passes, fails with the check's message for the student,
or is skipped while its points wait for a TA (a question graded by hand, an answer or a route the
grader left to a TA). Every item carries its points as JUnit XML properties (``points``,
``score``, ``question``, ``hidden``, ``student``), pytest's own ``-k``, ``-x``, ``-q``/``-v``,
``-ra`` and ``--junitxml`` work as usual, and the summary gives each student's total.

Why ``course pytest`` and never a bare ``pytest`` on a submission: pytest decides its root folder,
reads that folder's ``pytest.ini``/``pyproject.toml``/``setup.cfg``/``tox.ini`` (whose ``addopts =
-p mod`` and ``pythonpath = .`` import a module of the folder) and its ``conftest.py`` (and the
``__init__.py`` of its package) from the paths on its command line and the current directory,
before any plugin runs. A student's folder on that command line is code run in the TA's pytest,
and no plugin can stop it. ``course pytest`` (``run`` here) therefore fixes all of it: the kit's
own ``pytest_grading.ini`` as the only configuration (``-c``), the course folder as the root
(``--rootdir``), no conftest (``--noconftest``), no plugin but pytest's own and this one (loaded
explicitly, ``--disable-plugin-autoload``), no cache (``-p no:cacheprovider``: every run grades the
whole submission at collection anyway, so ``--lf``/``--ff`` would save nothing; they are not
available), no path for pytest to collect but the course folder, whose collector (``Graded``) is the
graded checks and reads nothing in it, no entry of ``sys.path`` inside a submission, and the
submission handed over by absolute path through this plugin's option; it checks pytest kept all of
that before any conftest could load. It runs the same from any current directory, a student's
folder included.

Given ``--submission``/``--submissions`` in a pytest that ``course pytest`` did not start, the
plugin refuses (a usage error naming ``course pytest``) rather than grade with what the student's
folder may already have loaded. Without those options the plugin does nothing.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.compat import chdir
from autograder.escape import for_id, for_terminal, for_terminal_lines
from autograder.grader_side.results import CheckResult, QuestionResult, Results, StudentResult

KIT_INI = Path(__file__).resolve().with_name("pytest_grading.ini")   # the only configuration pytest reads
REFUSAL = ("pytest was given a submission directly, so it may already have read the student's folder as its "
           "configuration (pytest.ini, conftest.py, ...) and run its code: grade with `course pytest "
           "--submission=FOLDER` (or --submissions=DIR), which fixes pytest's root and configuration")


def run(*, submission: Path | None, submissions: Path | None, course: Path | None, assignment: str | None,
        timeout: float, workers: int, pytest_args: list[str], allow_weak_isolation: bool = False) -> int:
    """``course pytest``: pytest with the kit's configuration, the course folder as its root and the
    submission(s) given to this plugin by absolute path; ``pytest_args`` are pytest's own options.
    Returns pytest's exit status."""
    from autograder import api

    if bool(submission) == bool(submissions):
        raise api.CourseError("give --submission=FOLDER (one student) or --submissions=DIR (a class)")
    pinned = [a for a in pytest_args if a.split("=", 1)[0] in PINNED or any(a.startswith(o) for o in ("-c", "-o"))]
    if pinned:
        named = ", ".join(sorted({a.split("=", 1)[0][:16] for a in pinned}))
        raise api.CourseError(f"{named}: where pytest reads its configuration and what it collects are set by "
                              "course pytest itself (the kit's configuration, the course folder): leave it out")
    root = api.course_root(course)
    folder = Path(submission or submissions).resolve()   # type: ignore[arg-type]
    if root == folder or folder in root.parents:
        raise api.CourseError(f"the course folder {for_terminal(root)} lies inside the submission "
                              f"{for_terminal(folder)}: run `course pytest` in the course folder (or give --course)")
    option = "--course-submission" if submission else "--course-submissions"
    # The plugin by name (-p), not as an object: xdist's workers (``-p xdist -n N``) start from these
    # arguments and load it the same way.
    # --assert=plain: no module collected here has asserts to rewrite (and this one is imported already).
    args = [f"--config-file={KIT_INI}", f"--rootdir={root}", f"--confcutdir={root}", "--noconftest",
            "--disable-plugin-autoload",
            "--assert=plain", "-p", "no:cacheprovider", "-p", __name__, f"{option}={folder}", f"--course-folder={root}",
            f"--course-grading-timeout={timeout}", f"--course-grading-workers={workers}",
            *([f"--course-assignment={assignment}"] if assignment else []),
            *(["--course-allow-weak-isolation"] if allow_weak_isolation else []), *pytest_args,
            str(root)]   # what pytest collects: the course folder, whose collector is the graded checks (Graded)
    sys.path[:] = [entry for entry in sys.path if not _inside(entry, folder)]
    return int(pytest.main(args, plugins=[Launcher(root)]))


# What ``run`` sets so that no file of a submission is configuration or code to pytest: a pytest
# option that would change it is refused before pytest starts.
PINNED = ("--config-file", "--rootdir", "--confcutdir", "--override-ini", "--pyargs")


def _inside(entry: str, folder: Path) -> bool:
    """Whether a ``sys.path`` entry ('' is the current directory) is ``folder`` or inside it."""
    where = Path(entry or os.getcwd()).resolve()
    return where == folder or folder in where.parents


class Launcher:
    """Registered by ``course pytest`` alone: what lets the plugin grade, once it has checked that
    pytest kept the root and configuration ``run`` gave it."""

    def __init__(self, root: Path):
        self.root = root

    def check(self, config) -> None:
        """A usage error unless pytest reads nothing but the kit's configuration and collects nothing."""
        ns = config.known_args_namespace
        given = [str(a) for a in config.invocation_params.args]
        paths = [p for p in ns.file_or_dir or [] if p != str(self.root)]   # run gives the course folder
        if paths and not config.pluginmanager.has_plugin("xdist") and any(
                a in ("-n", "--numprocesses") or a.startswith("--numprocesses=") or a[:2] == "-n" and a[2:].isdigit()
                for a in given):
            raise pytest.UsageError("course pytest: -n is xdist's option, and xdist is loaded only when asked: "
                                    "add -p xdist (course pytest ... -p xdist -n 2)")
        problems = [
            *([f"its configuration is {config.inipath}, not the kit's {KIT_INI}"] if config.inipath != KIT_INI else []),
            *([f"its root is {config.rootpath}, not the course folder {self.root}"] if config.rootpath != self.root
              else []),
            *([f"its conftest cut-off is {ns.confcutdir}, not the course folder"]
              if ns.confcutdir is None or Path(ns.confcutdir).resolve() != self.root else []),
            *(["it would read conftest.py files"] if not ns.noconftest else []),
            *([f"it was given paths to collect ({', '.join(paths)}): give the submission as "
               "--submission=FOLDER or --submissions=DIR"] if paths else []),
            *(["--pyargs would import modules by name"] if ns.pyargs else []),
        ]
        if problems:
            raise pytest.UsageError(for_terminal("course pytest: " + "; ".join(problems)))


def _launcher(config) -> Launcher | None:
    return next((p for p in config.pluginmanager.get_plugins() if isinstance(p, Launcher)), None)


def pytest_addoption(parser):
    # Every name starts with --course-: the plugin is installed for every pytest of the environment, and
    # a bare --course or --submission would clash with other plugins. The old names stay as aliases
    # for one release.
    group = parser.getgroup("course", "grading submissions with the course's checks (set by `course pytest`)")
    group.addoption("--course-submission", "--submission", dest="submission", type=Path, default=None,
                    metavar="FOLDER",
                    help="grade one student's folder, <student>/<assignment>/ or <student>/ holding the notebooks; "
                         "only through `course pytest --submission=FOLDER` (a bare pytest refuses it)")
    group.addoption("--course-submissions", "--submissions", dest="submissions", type=Path, default=None,
                    metavar="DIR", help="grade every student folder in DIR, as `course autograde --submissions=DIR`; "
                                        "only through `course pytest --submissions=DIR`")
    group.addoption("--course-assignment", "--assignment", dest="assignment", default=None,
                    help="the problem set (default: the one the submission folders are named after, or the "
                         "course's only set)")
    group.addoption("--course-folder", "--course", dest="course", type=Path, default=None,
                    help="the course folder (default: the current one)")
    group.addoption("--course-grading-timeout", "--grading-timeout", dest="grading_timeout", type=float,
                    default=60.0, help="wall-clock seconds per notebook")
    group.addoption("--course-grading-workers", "--grading-workers", dest="grading_workers", type=int, default=0,
                    help="parallel submissions (0: one per core)")
    group.addoption("--course-allow-weak-isolation", dest="allow_weak_isolation", action="store_true",
                    help="grade one submission without namespaces where they are denied (recorded)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config):
    """Before any conftest loads: a submission only under ``course pytest``, and only as it set pytest up."""
    ns = early_config.known_args_namespace
    launcher = _launcher(early_config)
    if launcher is None and os.environ.get("PYTEST_XDIST_WORKER") and getattr(ns, "course", None):
        # An xdist worker of `course pytest`: started from the controller's arguments, which its Launcher
        # checked; it holds this worker to the same root and configuration.
        launcher = Launcher(Path(ns.course))
        early_config.pluginmanager.register(launcher, "course-pytest-worker-launcher")
    if launcher is not None:
        launcher.check(early_config)
    elif getattr(ns, "submission", None) or getattr(ns, "submissions", None):
        raise pytest.UsageError(REFUSAL)


def pytest_configure(config):
    if config.getoption("submission") or config.getoption("submissions"):
        if _launcher(config) is None:      # in case a pytest skipped the earlier hook
            raise pytest.UsageError(REFUSAL)
        config.pluginmanager.register(Grading(config), "course-grading-session")


class Grading:
    """The plugin once a submission is given: grades at collection, reports totals at the end.

    Under xdist (``course pytest ... -p xdist -n N``) the controller grades every submission once,
    at session start, and hands the results to its workers in a private file: each worker builds
    the same items from them and grades nothing again."""

    def __init__(self, config):
        self.config = config
        self.results: Results | None = None
        self.shared: Path | None = None      # the controller's results file for its workers

    def _controller(self) -> bool:
        return self.config.pluginmanager.has_plugin("dsession")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session):
        if self._controller():               # before xdist starts its workers (its hook runs last)
            self.results = self._graded()
            folder = Path(tempfile.mkdtemp(prefix="course-pytest-"))     # mode 0700
            self.shared = folder / "results.json"
            self.shared.write_text(json.dumps(self.results.to_dict()))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        node.workerinput["course_results"] = str(self.shared)

    def pytest_unconfigure(self, config):
        if self.shared is not None:
            shutil.rmtree(self.shared.parent, ignore_errors=True)

    def _graded(self) -> Results:
        from autograder import api

        config = self.config
        shared = getattr(config, "workerinput", {}).get("course_results")
        if shared:
            return Results.from_dict(json.loads(Path(shared).read_text()))
        try:
            with chdir(api.course_root(config.getoption("course"))):   # no child starts in a submission
                return _grade(config)
        except api.CourseError as exc:
            raise pytest.UsageError(for_terminal(exc)) from None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        """Grade as collection starts (a worker under xdist reads the controller's results): a usage
        error stops the run as one; then pytest collects the graded checks (``Graded``)."""
        if not self._controller() and self.results is None:
            self.results = self._graded()

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path, parent):
        """What pytest collects is the course's graded checks: the run's directory becomes their
        collector (``Graded``), whatever folder it is, and nothing in it is read."""
        if isinstance(parent, pytest.Session) and path == self.config.rootpath:
            return Graded.from_parent(parent, path=path, grading=self)
        return Nothing.from_parent(parent, path=path)   # no other folder is ever walked or read

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """A skip is located at its item (``alice::C8::C8_manual``), not at this file's line."""
        report = yield
        if isinstance(item, Check) and report.skipped and isinstance(report.longrepr, tuple):
            report.longrepr = (item.nodeid, None, report.longrepr[2])
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        """Each student's total as a property of the JUnit suite, where CI systems read one."""
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is None or hasattr(self.config, "workerinput"):
            return
        if self.results is None:
            return
        for sid, result in self.results.students.items():
            xml.add_global_property(f"total {for_id(sid)}", for_terminal(_total(result)))
        if _weak(self.results):
            xml.add_global_property("isolation", for_terminal(_weak(self.results)))

    def pytest_terminal_summary(self, terminalreporter):
        if self.results is None:
            return
        for sid, result in self.results.students.items():
            terminalreporter.write_line(f"{for_id(sid)}: " + for_terminal(_total(result)))
        if _weak(self.results):
            terminalreporter.write_line(for_terminal(_weak(self.results)))


def _weak(results: Results) -> str:
    """The line saying the run graded without namespaces, and why ("" when it had them)."""
    weak = results.isolation.get("weak")
    return f"graded with weak isolation (--allow-weak-isolation): {weak}" if weak else ""


def _total(result: StudentResult) -> str:
    """A student's total for the summary (raw: the caller escapes it)."""
    line = f"{result.score:g} / {result.max_score:g} points (the whole submission)"
    waiting = result.needs_manual_grade
    if waiting:
        line += f"; waiting for a TA: {', '.join(waiting)}"
    if result.reason:
        line += f"; {result.reason}"
    return line


def _grade(config) -> Results:
    """The results document of the submissions the options name."""
    from autograder import api

    one, many = config.getoption("submission"), config.getoption("submissions")
    if one and many:
        raise api.CourseError("give --submission=FOLDER or --submissions=DIR, not both")
    return api.grade_class(config.getoption("assignment"), Path(one or many), config.getoption("grading_workers"),
                           config.getoption("grading_timeout"), repo=config.getoption("course"), student=bool(one),
                           allow_weak_isolation=bool(config.getoption("allow_weak_isolation")))


class Graded(pytest.Directory):
    """The checks of every submission the options name, graded as collection starts (under xdist, by
    the controller, before its workers start): a student, their questions, each question's checks.
    Every name a submission controls is made terminal-safe."""

    def __init__(self, *, grading: Grading, **kwargs):
        super().__init__(**kwargs)
        self.grading = grading

    def collect(self):
        results = self.grading.results
        for sid, result in (results.students if results is not None else {}).items():
            safe = for_id(sid).replace(":", "%3A")   # a folder named "alice::C1" must not pass for alice's C1
            yield Student.from_parent(self, name=safe, nodeid=safe, sid=sid, result=result)


class Nothing(pytest.Directory):
    """Any folder but the course folder, should pytest be asked for one: it collects nothing."""

    def collect(self):
        return []


class Student(pytest.Collector):
    """One student: their questions, or one failed item saying why nothing could be graded."""

    def __init__(self, *, sid: str, result: StudentResult, **kwargs):
        super().__init__(**kwargs)
        self.sid, self.result = sid, result

    def collect(self):
        result, sid = self.result, self.sid
        questions = result.questions
        if not any(q.checks for q in questions.values()):
            yield Check.from_parent(self, name="submission", sid=sid, qid="", row=None,
                                    why=result.reason or "nothing could be graded")
            return
        for qid, q in questions.items():
            yield Question.from_parent(self, name=qid, nodeid=f"{self.nodeid}::{qid}", sid=sid, qid=qid, question=q,
                                       waiting=qid in result.needs_manual_grade)


class Question(pytest.Collector):
    """One question of a student: its checks, and an item skipped while a TA grades it by hand."""

    def __init__(self, *, sid: str, qid: str, question: QuestionResult, waiting: bool, **kwargs):
        super().__init__(**kwargs)
        self.sid, self.qid, self.question, self.waiting = sid, qid, question, waiting

    def collect(self):
        q, sid, qid = self.question, self.sid, self.qid
        if q.manual:
            why = ("graded by hand by a TA" if self.waiting
                   else (q.feedback or ["not graded by hand: it scores 0"])[0])
            yield Check.from_parent(self, name=f"{qid}_manual", sid=sid, qid=qid, row=None, why=why, skip=True,
                                    points=q.max_score)
        for row in q.checks:
            yield Check.from_parent(self, name=row.id, sid=sid, qid=qid, row=row)


class CheckFailed(Exception):
    """A check the submission did not pass: its message for the student."""


class Check(pytest.Item):
    """One check of one student, already scored. Its texts (the student's id, the check's message, a
    skip's reason) come from the submission: each is escaped before pytest shows or writes it."""

    def __init__(self, *, sid: str, qid: str, row: CheckResult | None, why: str = "", skip: bool = False,
                 points: float | None = None, **kwargs):
        super().__init__(**kwargs)
        self.row, self.why, self.skip_it = row, why, skip
        self.user_properties += [("student", for_id(sid)), ("question", for_terminal(qid))]
        if row is not None:
            self.user_properties += [("points", row.max_score), ("score", row.score), ("hidden", row.hidden)]
        elif points is not None:
            self.user_properties += [("points", points), ("score", "manual")]

    def runtest(self):
        row = self.row
        if row is None:
            if self.skip_it:
                pytest.skip(for_terminal(self.why))
            raise CheckFailed(self.why)
        if row.passed:
            return
        if row.review:
            message = row.message
            pytest.skip(for_terminal(message if message.startswith("awaiting")
                                     else f"awaiting a TA's review: {message}"))
        raise CheckFailed(row.message)

    def repr_failure(self, excinfo, style=None):
        if excinfo.errisinstance(CheckFailed):
            return for_terminal_lines(excinfo.value)
        return for_terminal_lines(super().repr_failure(excinfo, style))

    def reportinfo(self):
        return self.path, None, self.nodeid
