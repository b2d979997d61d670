"""The ``course`` command: parse arguments, call ``autograder.api``, print a summary.

Like nbgrader, ``release``, ``autograde`` and ``grade`` work on the course folder they are run in
(the one holding ``nbgrader_config.py``), not on the checkout the package was installed from.

Exit status: 0 when the command itself worked (even if submissions failed: each failure has
its reason in the results), 2 for a usage or setup error.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autograder import api
from autograder.escape import for_id, for_terminal
from autograder.grader_side.assignment import REPO
from autograder.grader_side.results import Results, as_results


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of workers: give 1 or more (0 means one per core)")
    return count


def build_parser() -> argparse.ArgumentParser:
    """The ``course`` command's parser, built without running anything (the docs' test parses every
    command the README and docs/ show with it)."""
    parser = argparse.ArgumentParser(prog="course", description="Release, grade and report the course's problem sets.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("release", help="build the source notebooks and regenerate assignments/")
    p.add_argument("assignment", nargs="?", default=None, help="a folder of solutions/ (or give --week)")
    p.add_argument("--week", type=int, default=None, help="release what course/schedule.toml lists for this week")

    p = sub.add_parser("autograde", help="grade a whole class, isolated and in parallel, into nbgrader's gradebook")
    p.add_argument("assignment")
    p.add_argument("--submissions", type=Path, default=None,
                   help="folder of <student>/<notebook>.ipynb or <student>/<assignment>/<notebook>.ipynb "
                        "(default: the course's submitted/)")
    p.add_argument("--gradebook", action=argparse.BooleanOptionalAction, default=None,
                   help="also write nbgrader's gradebook and autograded/ (default: yes when grading the "
                        "course's submitted/, no for another --submissions folder)")
    p.add_argument("--out", type=Path, default=Path("results.json"))
    p.add_argument("--csv", type=Path, default=None)
    p.add_argument("--workers", type=_workers, default=0, help="parallel submissions (default, or 0: one per core)")
    p.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per notebook")
    p.add_argument("--allow-weak-isolation", action="store_true",
                   help="grade even where student code cannot be isolated (recorded in the results)")
    p.add_argument("--scheduler", default=None, metavar="tls://HOST:PORT",
                   help="grade on this dask.distributed cluster, a task per submission, over TLS with the "
                        "certificate files nbgrader_config.py names (see docs/scaling.md)")
    p.add_argument("--insecure-cluster", action="store_true",
                   help="allow a plain tcp:// --scheduler, without TLS: only on a private network")
    p.add_argument("--compare-nbgrader", nargs="?", type=Path, const=Path("gradebook.db"), default=None,
                   metavar="GRADEBOOK", help="flag every check where nbgrader's autograde scored differently "
                                             "(default gradebook: the course's gradebook.db)")

    p = sub.add_parser("grade", help="grade one submission given as notebook files")
    p.add_argument("notebooks", nargs="+", type=Path,
                   help="the student's notebook files (each notebook of the set, e.g. concepts.ipynb build.ipynb)")
    p.add_argument("--assignment", default=None,
                   help="the problem set (a folder of solutions/; default: the one the notebooks' folder is named "
                        "after, or the only set with notebooks of these names)")
    p.add_argument("--gradescope", type=Path, default=None, help="also write Gradescope's results.json here")
    p.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per notebook")

    p = sub.add_parser("gradescope-package",
                       help="build Gradescope's autograder.zip (setup.sh, run_autograder, the kit and the course)")
    p.add_argument("assignment")
    p.add_argument("--out", type=Path, default=Path("autograder.zip"))

    p = sub.add_parser("demo", help="grade a generated sample class on every scheduled set, end to end, and write "
                                    "every output")
    p.add_argument("--out", type=Path, default=REPO / "out" / "demo")

    p = sub.add_parser("mutants", help="mutation score of the checks on the misconception catalogue, per grader")
    p.add_argument("assignment", nargs="*", help="problem sets (default: every set in solutions/)")
    p.add_argument("--grader", choices=("course", "nbgrader", "both"), default="both")

    p = sub.add_parser("checks", help="list every check of a set with its question, points and visibility")
    p.add_argument("assignment")

    p = sub.add_parser("pytest", help="grade submissions as pytest items, one per check (CI, JUnit XML)",
                       description=PYTEST_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
                       allow_abbrev=False)
    p.add_argument("--submission", type=Path, default=None, metavar="FOLDER",
                   help="one student's folder: <student>/<assignment>/ or <student>/ holding the notebooks")
    p.add_argument("--submissions", type=Path, default=None, metavar="DIR",
                   help="every student folder in DIR, as `course autograde --submissions=DIR`")
    p.add_argument("--assignment", default=None, help="the problem set (default: the one the submission folders "
                                                      "are named after, or the course's only set)")
    p.add_argument("--course", type=Path, default=None, help="the course folder (default: the current one)")
    p.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds per notebook")
    p.add_argument("--workers", type=_workers, default=0, help="parallel submissions (default, or 0: one per core)")
    p.add_argument("--allow-weak-isolation", action="store_true",
                   help="where namespaces are denied, grade one --submission anyway, without them (the results "
                        "and the JUnit file record it); refused for --submissions")

    p = sub.add_parser("export", help="the gradebook (manual grades and late penalties counted) as Canvas's or "
                                      "Moodle's grade import CSV, or a plain table")
    p.add_argument("assignment")
    p.add_argument("--lms", choices=("canvas", "moodle", "csv"), required=True)
    p.add_argument("--course", type=Path, default=None, help="the course folder (default: the current one)")
    p.add_argument("--out", type=Path, default=None, help="the CSV to write (default: <lms>-<assignment>.csv)")
    p.add_argument("--per-question", action="store_true",
                   help="a column per graded cell too (moodle and csv; before the late penalty)")

    p = sub.add_parser("similarity", help="pairs of submissions that are alike (code and free text), for a TA to "
                                          "read; changes no grade")
    p.add_argument("assignment")
    p.add_argument("--course", type=Path, default=None, help="the course folder (default: the current one)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="list pairs whose score (shared fingerprints over the smaller submission's) is at least this")
    p.add_argument("--out", type=Path, default=Path("similarity"),
                   help="folder for similarity.html and similarity.csv")

    return parser


def _similarity(args) -> int:
    from autograder.reports import similarity

    if not 0 < args.threshold <= 1:
        raise api.CourseError(f"--threshold {args.threshold:g} is not a score: give a number above 0 and at most 1")
    found = similarity.run(args.assignment, api.course_root(args.course), args.threshold)
    page = similarity.write_page(found, args.out)
    print(f"{found.assignment}: {found.students} submissions compared, {len(found.pairs)} pair(s) at or over "
          f"{found.threshold:g} (a reason to read both, never a grade)")
    if found.pairs:
        print(_table(similarity.table_rows(found)))
    for sid, why in sorted(found.unreadable.items()):
        print(f"not compared: {for_id(sid)}: {for_terminal(why)}")
    print(f"side by side: {page}\ncsv: {page.with_suffix('.csv')}")
    return 0


def parse_args(argv=None) -> argparse.Namespace:
    """``argv`` as the ``course`` command reads it; a usage error exits 2 with argparse's message.
    Every option `course pytest` does not know is pytest's own (-k, -x, -ra, --junitxml=...)."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "pytest":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.pytest_args = rest
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except api.CourseError as exc:
        print(f"course {args.command}: {for_terminal(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kept = " (a student already written into the gradebook stays there)" if args.command == "autograde" else ""
        print(f"course {args.command}: interrupted: no results file was written{kept}; run the command again",
              file=sys.stderr)
        return 130
    except OSError as exc:
        if exc.filename is None:        # not a file the command was told to read or write: a bug, in full
            raise
        print(f"course {args.command}: {for_terminal(exc.strerror)}: {for_terminal(exc.filename)} (check the "
              "paths given, --out among them)", file=sys.stderr)
        return 2
    finally:
        if argv is None:    # the command itself: only the interpreter's exit is left, which would walk
            gc.freeze()     # every object torch made (0.5 to 2 s); atexit and finalizers still run


def _release(args) -> int:
    root = api.course_root()   # the schedule, the sets and the release all of this course folder
    if args.week is not None and args.assignment:
        raise api.CourseError("give an assignment or --week, not both")
    if args.week is None and not args.assignment:
        raise api.CourseError(f"name the problem set to release ({', '.join(api.problem_sets(root))}) or give "
                              "--week N")
    assignment = api.scheduled(args.week, root) if args.week is not None else args.assignment
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = api.release(assignment, root)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    from autograder.nbgrader.plugins.late import due_date

    due = due_date(assignment, root)
    print(f"released {assignment}: {len(files)} files in {root / 'assignments' / assignment}; " +
          (f"due {due:%Y-%m-%d %H:%M} UTC, written into the gradebook (course/schedule.toml)" if due else
           "no due date (course/schedule.toml does not list it): nbgrader takes no late penalty"))
    return 0


def _autograde(args) -> int:
    from tqdm import tqdm

    root = api.course_root()
    submitted = api.submitted_folder(root)   # nbgrader's submitted/<student>/<assignment>/
    submissions = args.submissions or submitted
    if args.gradebook is None:
        args.gradebook = submissions.resolve() == submitted.resolve()
    api.Assignment(args.assignment, root).check_loads()   # an unknown or broken set is named before anything is shown
    students = api.find_submissions(submissions, args.assignment, root)
    if not students:     # a set nobody handed in, or another folder meant: nothing is written over
        layout = "<student>/" + args.assignment + "/" if args.gradebook else "<student>/"
        raise api.CourseError(f"no submission of {args.assignment} in {submissions} (each is a folder {layout} "
                              f"there); {args.out} and the gradebook are left as they were")
    left = sorted(set(api.find_submissions(submissions)) - set(students))
    if left:   # not graded, as nbgrader's autograde grades none of them either: said, so a TA can look
        print(f"note: {len(left)} folder(s) of {for_terminal(submissions)} hold no {args.assignment}/ submission and "
              f"are not graded: {', '.join(for_id(sid) for sid in left[:10])}{' ...' if len(left) > 10 else ''}",
              file=sys.stderr)
    if args.scheduler:   # a scheduler that is refused is refused before anything is read or shown
        from autograder.grader_side import cluster

        cluster.security(args.scheduler, root, args.insecure_cluster)
    # Compared with nbgrader's grades first, the gradebook is written after the comparison.
    record_now = args.gradebook and not args.compare_nbgrader
    with tqdm(total=len(students), desc="grading", unit="submission", file=sys.stderr) as bar:
        results = api.grade_class(args.assignment, submissions, args.workers, args.timeout,
                                progress=lambda sid: bar.update(1), repo=root, gradebook=record_now,
                                allow_weak_isolation=args.allow_weak_isolation, scheduler=args.scheduler,
                                insecure_cluster=args.insecure_cluster)
    if results.isolation.get("weak"):
        print(f"warning: weak isolation: {for_terminal(results.isolation.get('weak'))}", file=sys.stderr)
    disagreements = api.compare_nbgrader(results, args.compare_nbgrader) if args.compare_nbgrader else {}
    if args.gradebook and not record_now:
        api.record_gradebook(results, submissions, root)
    api.write_json(results, args.out)
    if args.csv:
        api.write_csv(results, args.csv)
    print(summary(results))
    print(f"results: {args.out}" + (f", grades: {args.csv}" if args.csv else "")
          + (f"; nbgrader's gradebook and {api.autograded_folder(root)} updated" if args.gradebook else ""))
    if args.compare_nbgrader:
        print(f"nbgrader cross-check: {len(disagreements)} submission(s) scored differently"
              + "".join(f"\n  {for_id(sid)}: " + for_terminal("; ".join(lines))
                        for sid, lines in disagreements.items()))
    return 0


def grade_assignment(notebooks: list[Path], root: Path) -> str:
    """The set `course grade` grades when no --assignment is given: the one the notebooks' folder is
    named after (``submitted/<student>/<set>/``, ``assignments/<set>/``), else the only set of the
    course whose source has notebooks of all these names. Anything else is a guess, so it is refused
    with the sets to choose from."""
    sets = api.problem_sets(root)
    folders = {Path(nb).absolute().parent.name for nb in notebooks}
    if len(folders) == 1 and (folder := folders.pop()) in sets:
        return folder
    names = {Path(nb).name for nb in notebooks}
    fits = [s for s in sets if all((root / "solutions" / s / name).is_file() for name in names)]
    if len(fits) == 1:
        return fits[0]
    why = f"{len(fits)} sets have notebooks named {', '.join(sorted(names))}" if fits else \
        f"no set has notebooks named {', '.join(sorted(names))}"
    raise api.CourseError(f"cannot tell which problem set to grade these notebooks as (their folder is named "
                          f"after no set, and {why}): pass --assignment, one of: {', '.join(sets)}")


def _grade(args) -> int:
    root = api.course_root()
    folders = [str(p) for p in args.notebooks if p.is_dir()]
    if folders:
        raise api.CourseError(f"{folders[0]} is a folder: give the notebook files in it (course grade "
                          f"{folders[0]}/*.ipynb)")
    assignment = args.assignment or grade_assignment(args.notebooks, root)
    doc = api.grade_submission(args.notebooks, assignment, args.timeout, course=root)
    result = doc.students["student"]
    for qid, q in result.questions.items():
        score = "manual" if q.score is None else f"{q.score:g}/{q.max_score:g}"
        lost = q.score != q.max_score
        print(f"{qid:4} {score:>8}  " + (for_terminal("; ".join(q.feedback)) if lost else ""))
    print(f"total {result.score:g}/{result.max_score:g} ({result.status})"
          + (f": {for_terminal(result.reason)}" if result.reason else ""))
    if args.gradescope:
        api.write_json(api.gradescope(result, doc.seconds, doc.isolation), args.gradescope)
    return 0


def _gradescope_package(args) -> int:
    out = api.gradescope_package(args.assignment, args.out, api.course_root())
    from autograder.tooling.gradescope import TORCH_CPU_INDEX

    torch_index = os.environ.get("COURSE_TORCH_INDEX_URL", TORCH_CPU_INDEX)
    print(f"wrote {out}: upload it as the autograder of a Gradescope programming assignment, on the Ubuntu 22.04 "
          "base image; its setup.sh installs torch " + (f"from {torch_index}" if torch_index else
                                                       "from PyPI (the CUDA build: set COURSE_TORCH_INDEX_URL for "
                                                       "the CPU one)") + " and prints the time and size it took")
    return 0


PYTEST_HELP = """Grade submissions with the course's checks as pytest items: one item per check, passed,
failed with the student's message or skipped while a TA grades it, with its points in JUnit XML.

examples (in the course folder):
  course pytest --submission=submitted/alice/transformer-block
  course pytest --submissions=submitted/ --junitxml=grades.xml -ra
  course pytest --submission=submitted/bob/transformer-block -k B1_ -x -v

Any other option is pytest's own and is passed on: -k EXPR, -x, -q, -v, -ra, --junitxml=FILE, ...
pytest runs with the kit's own configuration and the course folder as its root, reads no file of a
submission or of the current directory, and is given no path to collect (a path is refused, and so
are -c, --config-file, -o, --override-ini, --rootdir, --confcutdir and --pyargs, which course pytest
sets itself); there is no cache, so --lf and --ff are not available (each run grades the whole
submission anyway)."""


def _pytest(args) -> int:
    from autograder import pytest_plugin

    return pytest_plugin.run(submission=args.submission, submissions=args.submissions, course=args.course,
                             assignment=args.assignment, timeout=args.timeout, workers=args.workers,
                             allow_weak_isolation=args.allow_weak_isolation, pytest_args=args.pytest_args)


def _checks(args) -> int:
    for c in api.Assignment(args.assignment, api.course_root()).checks:
        print(f"{c.id:28} {c.points:>4g}  {'hidden ' if c.hidden else 'visible'}  {c.says}")
    return 0


def _demo(args) -> int:
    from tqdm import tqdm

    from autograder import demo

    bar = None
    where = args.out

    def progress(event, value):
        nonlocal bar
        if event == "class":
            print(f"sample class: {value} submissions written to {where / 'course' / 'submitted'}")
            bar = tqdm(total=value, desc="course autograde", unit="submission", file=sys.stderr)
        elif event == "done":
            if bar is not None:
                bar.close()
            print(f"graded in {value.seconds} s; now the same class with nbgrader autograde (a few minutes)")
        elif bar is not None:   # a student graded (demo.run reports the class first)
            bar.update(1)

    for assignment in demo.sets():
        where = args.out / assignment
        print(f"{assignment}: releasing the problem set, then writing and grading a sample class")
        results, written = demo.run(args.out / assignment, assignment, progress)
        print(summary(results))
        ratio = (results.nbgrader_seconds or 0.0) / max(results.seconds, 1e-9)
        print(f"nbgrader autograde on the same class: {results.nbgrader_seconds} s ({ratio:.0f}x slower); "
              f"{sum(1 for r in results.students.values() if r.disagreements)} submission(s) "
              "where the two graders disagree")
        for name in ("results", "grades", "gradescope", "feedback", "report"):
            print(f"{name:>10}: {written[name]}")
    return 0


def _mutants(args) -> int:
    from autograder import mutants

    graders = mutants.GRADERS if args.grader == "both" else (args.grader,)
    perfect = True
    for assignment in args.assignment or api.problem_sets(api.course_root()):
        report = mutants.run(assignment, graders)
        print(f"{assignment}:")
        print(_table(report.table()))
        for grader in graders:
            for kind, ids in (("wrong answers that kept full marks", report.survivors(grader)),
                              ("correct answers that lost points", report.false_rejects(grader))):
                if ids:
                    print(f"{grader}: {kind}: {', '.join(ids)}")
        print(f"{len(report.entries)} misconceptions, {len(report.variants)} correct variants: "
              + ("every grader kills every misconception and keeps every variant" if report.perfect
                 else "NOT PERFECT") + "\n")
        perfect &= report.perfect
    return 0 if perfect else 1


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) if i else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
                     for row in rows)


def summary(results: Results | Mapping[str, Any]) -> str:
    """A fixed-width table: one row per student, one column per question, the total before the late
    penalty and the penalty recorded in the gradebook ("-": none worked out). ``results``: a
    ``Results``, or the results document ``api.autograde`` returns."""
    results = as_results(results)
    manual = {qid for r in results.students.values() for qid, q in r.questions.items() if q.manual}
    qids = [q for q in results.question_order() if q not in manual]
    rows = [["student", *qids, "before late penalty", "late penalty", "status"]]
    for sid, r in results.students.items():
        q = r.questions
        penalty = "-" if r.late_penalty is None else f"{r.late_penalty:g}"
        rows.append([for_id(sid), *[f"{q[x].score:g}" if x in q else "-" for x in qids], f"{r.score:g}",
                     penalty, for_terminal(r.status) + (" *" if r.flags else "")])
    lines = [_table(rows)]
    lines.append(f"{len(results.students)} submissions in {results.seconds} s with {results.workers} workers; "
                 "* = flagged for the TA (see results)")
    return "\n".join(lines)


def _export(args) -> int:
    from autograder.reports import lms

    root = api.course_root(args.course)
    out = args.out or Path(f"{args.lms}-{args.assignment}.csv")
    if args.per_question and args.lms == "canvas":
        raise api.CourseError("--per-question is for --lms moodle or csv: Canvas imports a column per assignment")
    written = lms.export(root, args.assignment, args.lms, out if out.is_absolute() else Path.cwd() / out,
                         args.per_question)
    for sid in written.missing:
        print(f"warning: no usable {lms.MATCHED_BY[args.lms]} for student {for_id(sid)} (none, or one the LMS "
              f"cannot match as written): not in {out}", file=sys.stderr)
    print(lms.summary(written, args.lms))
    return 0


COMMANDS = {"release": _release, "autograde": _autograde, "grade": _grade, "gradescope-package": _gradescope_package,
            "demo": _demo, "mutants": _mutants, "checks": _checks, "pytest": _pytest, "export": _export,
            "similarity": _similarity}

if __name__ == "__main__":
    sys.exit(main())
