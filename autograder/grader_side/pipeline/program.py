"""Step 4: the code to run for each notebook.

The student's code cells run in their order; read-only given cells run as the release has them
(put back at the top if deleted), except those that only show the student something; test cells
and retyped checks never run. The first cell makes
``from student_side import check, ready`` harmless, since checks run in the grader, not next to the code.
"""
from autograder.grader_side.pipeline.tamper import RETYPED

PRELUDE = ("import sys, types\n"
           "sys.modules['student_side'] = types.SimpleNamespace(check=lambda *a, **k: None, ready=lambda *a, **k: None)")


def run(sub, env):
    for notebook, cells in sub.cells.items():
        tests, given = env.assignment.tests(notebook), env.assignment.given(notebook)
        program, placed = [PRELUDE], set()
        for cell in cells:
            if cell.cell_type != "code" or cell.grade_id in tests or RETYPED.search(cell.source):
                continue
            if cell.grade_id in given:
                if cell.grade_id in placed:
                    continue
                placed.add(cell.grade_id)
                if not given[cell.grade_id].skip_when_grading:
                    program.append(given[cell.grade_id].source)
            else:
                program.append(cell.source)
        missing = [c.source for gid, c in given.items() if gid not in placed and not c.skip_when_grading]
        sub.programs[notebook] = program[:1] + missing + program[1:]
