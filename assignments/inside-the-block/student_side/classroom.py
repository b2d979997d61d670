"""Instant feedback where a course runs on GitHub Classroom: the steps of the release's
``.github/workflows/classroom.yml``, runnable by hand too, from the folder of the notebooks.

    python -m student_side.classroom run       # run every notebook top to bottom; note each visible check
    python -m student_side.classroom B1        # B1's visible checks: exit 0 when every one passed

Only the *visible* checks run here: the hidden ones and their references are not in a student's
repository (anything there, the student and the Actions log can read), so the course grades them
itself, from the same notebooks. A check passed when its cell ran without an error.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = ".classroom-results.json"
HIDDEN = "hidden, runs when your notebook is graded"
CELL_SECONDS = 600


def visible_check_cells(nb) -> list:
    """The notebook's visible check cells: graded code cells that run a check here."""
    return [cell for cell in nb.cells if cell.cell_type == "code"
            and cell.get("metadata", {}).get("nbgrader", {}).get("grade") and HIDDEN not in cell.source]


def run(folder: Path) -> dict:
    """Run each notebook of ``folder`` in a fresh kernel; check id -> {"passed", "says"} for every
    visible check cell, written to ``RESULTS``."""
    import nbformat
    from nbclient import NotebookClient

    results: dict = {}
    for path in sorted(folder.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        cells = visible_check_cells(nb)
        if not cells:
            continue
        why = ""
        try:
            NotebookClient(nb, timeout=CELL_SECONDS, allow_errors=True, kernel_name="python3",
                           resources={"metadata": {"path": str(folder)}}).execute()
        except Exception as exc:   # the kernel died or a cell ran out of time: every check not reached fails
            why = f"{path.name} did not run to the end ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"
        for cell in cells:
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            ran = any(o for o in cell.get("outputs", [])) or cell.get("execution_count") is not None
            says = (f"{errors[0].get('ename')}: {errors[0].get('evalue', '')}" if errors else
                    "" if ran else why or "the cell did not run")
            results[cell.metadata["nbgrader"]["grade_id"]] = {"passed": ran and not errors, "says": says}
    (folder / RESULTS).write_text(json.dumps(results, indent=1))
    return results


def question(folder: Path, qid: str) -> int:
    """Print how ``qid``'s visible checks went (from ``RESULTS``); 0 when every one passed."""
    try:
        results = json.loads((folder / RESULTS).read_text())
    except (OSError, ValueError):
        print(f"no results in {RESULTS}: run `python -m student_side.classroom run` first")
        return 1
    mine = {cid: r for cid, r in results.items() if cid.startswith(qid + "_")}
    if not mine:
        print(f"{qid} has no visible checks in these notebooks")
        return 1
    for cid, r in mine.items():
        print(f"passed {cid}" if r["passed"] else f"failed {cid}: {r['says']}")
    return 0 if all(r["passed"] for r in mine.values()) else 1


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    folder = Path.cwd()
    if argv[0] == "run":
        results = run(folder)
        print(f"{sum(r['passed'] for r in results.values())} of {len(results)} visible checks passed")
        return 0   # each question's step says how it went
    return question(folder, argv[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
