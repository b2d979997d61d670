"""Step 4: the code to run for each notebook.

The student's code cells run in their order; read-only given cells run as the release has them
(put back at the top if deleted), except those that only show the student something; test cells
and retyped checks never run. IPython syntax in a student's cell (``files = !ls``,
``layer_norm?``, ``%time x = f()``) becomes plain Python here, by IPython's own input
transformer, before any code reaches the sandbox. The first cell, the prelude, makes
``from student_side import check, ready`` harmless (checks run in the grader, not next to the
code) and defines the ``get_ipython()`` that transformed code calls.
"""
from IPython.core.inputtransformer2 import TransformerManager

from autograder.grader_side.pipeline.tamper import RETYPED

PRELUDE = '''\
import sys, types
sys.modules['student_side'] = types.SimpleNamespace(check=lambda *a, **k: None, ready=lambda *a, **k: None)


class _Shell:
    """get_ipython() while grading: shell commands, help and magics do nothing, except that
    %time and %%time still run the code they time."""

    def system(self, cmd):
        return None

    def getoutput(self, cmd, split=True, depth=0):
        return []

    def run_line_magic(self, name, line, _stack_depth=1):
        if name == "time":
            exec(compile(line, "<%time>", "exec"), sys._getframe(1).f_globals)

    def run_cell_magic(self, name, line, cell):
        if name == "time":
            exec(compile(cell, "<%%time>", "exec"), sys._getframe(1).f_globals)

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


_shell = _Shell()


def get_ipython():
    return _shell
'''

# Longer cells are passed on as they are (IPython's transformer is meant for what a person types).
MAX_TRANSFORMED = 200_000


def as_python(source: str) -> str:
    """``source`` with IPython's shell, help and magic syntax turned into plain Python calls of
    ``get_ipython()``; plain Python comes back unchanged."""
    if len(source) > MAX_TRANSFORMED or not any(mark in source for mark in "!%?"):
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:   # left as it was: the cell then fails (or not) on its own
        return source


def run(sub, env):
    for notebook, cells in sub.cells.items():
        tests, given = env.assignment.tests(notebook), env.assignment.given(notebook)
        program, ids, placed = [PRELUDE], [""], set()
        for cell in cells:
            if cell.cell_type != "code" or cell.grade_id in tests or RETYPED.search(cell.source):
                continue
            if cell.grade_id in given:
                if cell.grade_id in placed:
                    continue
                placed.add(cell.grade_id)
                if not given[cell.grade_id].skip_when_grading:
                    program.append(given[cell.grade_id].source)
                    ids.append(cell.grade_id)
            else:
                program.append(as_python(cell.source))
                ids.append(cell.grade_id)
        missing = {gid: c.source for gid, c in given.items() if gid not in placed and not c.skip_when_grading}
        sub.programs[notebook] = program[:1] + list(missing.values()) + program[1:]
        sub.program_ids[notebook] = ids[:1] + list(missing) + ids[1:]
