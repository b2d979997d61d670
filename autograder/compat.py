"""What the kit takes from Python 3.11 and newer, on Python 3.10 too (Ubuntu 22.04's own Python,
which Gradescope's base image grades with): ``tomllib`` (its backport ``tomli`` there),
``contextlib.chdir`` and ``-P`` (no working folder on ``sys.path``: ``python_command``)."""
import sys

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

__all__ = ["chdir", "python_command", "tomllib"]
