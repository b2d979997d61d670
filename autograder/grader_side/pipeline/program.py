"""Step 4: the code to run for each notebook.

The student's code cells run in their order; read-only given cells run as the release has them
(put back at the top if deleted), except those that only show the student something; test cells
and retyped checks never run. IPython syntax in a student's cell (``files = !ls``,
``help?``, ``%time x = f()``) becomes plain Python here, by IPython's own input
transformer, before any code reaches the sandbox; the same request has the route judge read the
program. Both run in a helper process with a time and memory budget (``analysis.py``): a
notebook that exhausts it runs its cells as written, and its route questions go to a TA. The
first cell, the prelude, makes ``from student_side import check, ready`` harmless (checks run in
the grader, not next to the code) and defines the ``get_ipython()`` that transformed code calls.
"""
from typing import Any

from autograder.grader_side import analysis
from autograder.grader_side.pipeline.read import as_graded
from autograder.grader_side.pipeline.submission import Cell, Env, Submission
from autograder.grader_side.pipeline.tamper import retyped

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

def run(sub: Submission, env: Env) -> None:
    for notebook, cells in sub.cells.items():
        tests, given = env.assignment.tests(notebook), env.assignment.given(notebook)
        entries, placed, number = [], set(), 0      # (source, the student's, label, grade_id)
        for cell in as_graded(cells, env.assignment.cells(notebook, released=True)):
            if cell.cell_type != "code":
                continue
            number += 1
            if cell.grade_id in tests or retyped(cell.source, env.assignment):
                continue
            if cell.grade_id in given or _pasted_given(cell, given):
                if cell.grade_id in placed or not cell.grade_id:
                    continue
                placed.add(cell.grade_id)
                if not given[cell.grade_id].skip_when_grading:
                    entries.append((given[cell.grade_id].source, False, "a cell the course gives", cell.grade_id))
            else:
                entries.append((cell.source, True, f"cell {cell.grade_id[:40]}" if cell.grade_id
                                else f"code cell {number}", cell.grade_id))
        missing = [(c.source, False, "a cell the course gives", gid) for gid, c in given.items()
                   if gid not in placed and not c.skip_when_grading]
        entries = [(PRELUDE, False, "the grader's prelude", "")] + missing + entries
        a = env.assignment
        rules = {q: rule for q, rule in a.set.rules.items() if a.questions[q].notebook == notebook}
        reading = analysis.read([(source, mine, i > 0) for i, (source, mine, _, _) in enumerate(entries)],
                                rules, [label for _, _, label, _ in entries])
        sub.programs[notebook] = reading.program
        sub.program_ids[notebook] = [gid for _, _, _, gid in entries]
        sub.readings[notebook] = reading


def _pasted_given(cell: Cell, given: dict[str, Any]) -> bool:
    """Whether ``cell`` is an ordinary cell holding exactly a given cell's code (an earlier copy of a
    cell pasted twice): it is the course's code, run once where the course's cell is, not again."""
    return not cell.grade_id and any(cell.source.strip() == g.source.strip() for g in given.values())
