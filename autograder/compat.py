"""What the kit takes from Python 3.11 and newer, on Python 3.10 too (Ubuntu 22.04's own Python,
which Gradescope's base image grades with): ``tomllib`` (its backport ``tomli`` there),
``contextlib.chdir`` and ``-P`` (no working folder on ``sys.path``: ``python_command``); and the
import paths a course folder's ``nbgrader_config.py`` written for an earlier kit may hold (``MOVED``)."""
import importlib
import importlib.abc
import importlib.machinery
import logging
import sys
import types

if sys.version_info >= (3, 11):
    from contextlib import chdir

    import tomllib
else:   # Python 3.10
    import contextlib
    import os

    import tomli as tomllib

    @contextlib.contextmanager
    def chdir(path):
        """``contextlib.chdir``: run the block in ``path``, then go back."""
        before = os.getcwd()
        os.chdir(path)
        try:
            yield
        finally:
            os.chdir(before)


def python_command(*, module: str | None = None, code: str | None = None, flags: tuple[str, ...] = ()) -> list[str]:
    """The start of a command line that runs ``module`` (``-m``) or ``code`` (``-c``) in this
    interpreter without the working folder on ``sys.path`` (a file of a submission's folder must never
    shadow a module the grader imports): ``-P`` from Python 3.11; on 3.10, the same by hand."""
    if module is not None and code is None:
        chosen = ["-m", module]
        run = f"import runpy\nrunpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
    elif code is not None and module is None:
        chosen, run = ["-c", code], code
    else:
        raise ValueError("give module or code")
    if sys.version_info >= (3, 11):
        return [sys.executable, *flags, "-P", *chosen]
    unsafe = "import sys\nif sys.path and sys.path[0] == '':\n    del sys.path[0]\n"
    return [sys.executable, *flags, "-c", unsafe + run]


# What an nbgrader_config.py written for an earlier kit imports, and where each name lives now:
# {old module: {name: its module now, or "module:name" where it was renamed}}. nbgrader only logs a
# config file that fails to load and goes on with its own in-kernel Execute, so an old import path
# must keep working.
_PREPROCESSORS = "autograder.nbgrader.preprocessors"
_COLLECT = "autograder.nbgrader.plugins.zip_collect"
_EXPORT = "autograder.nbgrader.plugins.export"
MOVED = {
    "autograder.grader_side.nbgrader_execute": {
        "clean_log_records": "autograder.nbgrader.log", "submission_files_by_the_rule": "autograder.nbgrader.files",
        # an earlier kit's timestamp reader, which the one rule for a submission's files took over
        "tolerate_unreadable_timestamps": "autograder.nbgrader.files:submission_files_by_the_rule",
        "SandboxExecute": "autograder.nbgrader.preprocessors.execute", "use_stock_nbgrader": "autograder.tooling.stock",
        "SanitizeStudentHTML": "autograder.nbgrader.preprocessors.sanitize_html",
        "AUTOGRADE": _PREPROCESSORS, "SANITIZE": _PREPROCESSORS,
        "SubmittedNotebookExporter": "autograder.nbgrader.exporter",
        "STOCK": "autograder.tooling.stock", "STOCK_SANITIZE": "autograder.tooling.stock"},
    "autograder.grader_side.late": {"CourseLatePenalty": "autograder.nbgrader.plugins.late"},
    "autograder.grader_side.collect": {"CourseCollector": _COLLECT, "CourseExtractor": _COLLECT,
                                       "CanvasCollector": _COLLECT},
    "autograder.reports.exports": {"NbgraderCsvExport": _EXPORT},
    "autograder.reports.lms": {"NbgraderCsvExport": _EXPORT, "CanvasExport": _EXPORT},
}


def moved(module: str, name: str):
    """``module``'s ``name`` from where it lives now, with a warning saying which import to change;
    an AttributeError for a name that never lived there (a module's ``__getattr__``)."""
    new = MOVED.get(module, {}).get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    where, _, now = new.partition(":")
    if (module, name) not in _WARNED:   # once a process: nbgrader loads its configuration more than once
        _WARNED.add((module, name))
        logging.getLogger("autograder").warning(
            "nbgrader_config.py imports %s from %s, which moved: write `from %s import %s` instead (as the kit's "
            "nbgrader_config.py does)", name, module, where, now or name)
    return getattr(importlib.import_module(where), now or name)


_WARNED: set[tuple[str, str]] = set()


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the modules of ``MOVED`` that no longer exist as files: each gives its names from
    where they live now (``moved``). Last on ``sys.meta_path``: a module that exists is found first."""

    def find_spec(self, fullname, path=None, target=None):
        return importlib.machinery.ModuleSpec(fullname, self) if fullname in MOVED else None

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__getattr__ = lambda name: moved(module.__name__, name)   # type: ignore[method-assign]


def find_moved_modules() -> None:
    """Let ``import`` find the modules of ``MOVED`` (installed once, by ``grader_side``'s package)."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())


__all__ = ["MOVED", "chdir", "find_moved_modules", "moved", "python_command", "tomllib"]
