"""`course pytest --submission(s)=...`: the course's checks as pytest items, run as a TA or a CI system would.

pytest runs as its own process in a course folder: the reference solution passes every item with
the full total, the untouched release fails every item with its reason, JUnit XML carries each
check's points, and on a class of the whole misconception catalogue every item agrees with
`course autograde`'s score for that check.

A submission is never pytest's configuration or code: a folder holding pytest.ini, pyproject.toml,
setup.cfg or tox.ini (each loading the student's own plugin), conftest.py, __init__.py, a .pth file
or a package named like the course's plugin is graded like any other no-code submission (0 points,
every check failed), given by a relative or an absolute path or with the TA's shell inside it, and
none of its code runs. A bare `pytest --submission...` refuses to grade. Text a submission controls
(its folder name, its error messages) reaches the terminal and JUnit XML without control characters.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side.assignment import REPO, Assignment, solved
from autograder.grader_side.misconceptions import edits
from autograder.tooling.sampleclass import write_submission
from hostile_text import PAYLOAD, assert_clean
from week4 import catalogue

pytestmark = pytest.mark.slow

COURSE = Path(sys.executable).with_name("course")   # the venv's `course` command, as a TA runs it


def _course_pytest(cwd, *args):
    """``course pytest ARGS`` in ``cwd``, as a TA types it."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([str(COURSE), "pytest", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=900)


def _cases(xml_path):
    """(student, check) -> (outcome, message, properties) from pytest's JUnit XML."""
    cases = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        failure, skipped = case.find("failure"), case.find("skipped")
        outcome = "failed" if failure is not None else "skipped" if skipped is not None else "passed"
        message = (failure.get("message") if failure is not None else
                   skipped.get("message") if skipped is not None else "")
        cases[(props["student"], case.get("name"))] = (outcome, message or "", props)
    return cases


@pytest.fixture(scope="module")
def two(course, assignment, tmp_path_factory):
    root = tmp_path_factory.mktemp("pytest-two")
    write_submission(root / "alice", assignment)
    write_submission(root / "bob", assignment, untouched=True)
    out = root / "junit.xml"
    done = _course_pytest(course, f"--submissions={root}", f"--junitxml={out}")
    one = _course_pytest(course, "--submission", root / "alice" / assignment.name, f"--junitxml={root / 'one.xml'}")
    return done, _cases(out), one, _cases(root / "one.xml"), root


def test_the_solution_passes_every_item_with_the_full_total(two, assignment):
    done, cases, one, alone, _ = two
    assert "alice: 100 / 100 points (the whole submission); waiting for a TA: C8" in done.stdout, done.stdout[-2000:]
    per_student = len(assignment.set.checks) + sum(q.manual for q in assignment.set.questions.values())
    assert f"collected {2 * per_student} items" in done.stdout       # every check, and C8, of two students
    alice = {check: outcome for (sid, check), (outcome, _, _) in cases.items() if sid == "alice"}
    assert alice.pop("C8_manual") == "skipped" and set(alice.values()) == {"passed"}
    assert {k[1]: v[0] for k, v in alone.items()} == {**alice, "C8_manual": "skipped"}   # --submission alone
    assert "alice: 100 / 100 points" in one.stdout and one.returncode == 0


def test_the_untouched_release_fails_every_item_with_its_reason(two):
    done, cases, one, alone, _ = two
    assert done.returncode == 1 and "bob: 0 / 100 points" in done.stdout
    bob = {check: (outcome, message) for (sid, check), (outcome, message, _) in cases.items() if sid == "bob"}
    assert bob.pop("C8_manual")[0] == "skipped"
    assert all(outcome == "failed" and message for outcome, message in bob.values()), bob


def test_junit_xml_carries_each_checks_points(two):
    done, cases, one, alone, _ = two
    points = {check: float(props["points"]) for (sid, check), (_, _, props) in cases.items()
              if sid == "alice" and check != "C8_manual"}
    assert sum(points.values()) == 100.0
    assert all(props["question"] == check[:2] for (sid, check), (_, _, props) in cases.items() if sid == "alice")
    assert {props["hidden"] for (_, _, props) in cases.values() if "hidden" in props} == {"True", "False"}


def test_under_xdist_each_student_is_graded_once_with_the_same_items_and_totals(course, assignment, two):
    """``course pytest -p xdist -n 2``: the controller grades the class once and its workers run the
    items from those results (before, every worker stopped at its arguments and no test ran). Every
    item, outcome, score and total is the ``-n 0`` run's, and the totals are properties of the JUnit
    suite, where CI systems read them."""
    done, cases, _, _, root = two
    xml = root / "xdist.xml"
    spread = _course_pytest(course, f"--submissions={root}", f"--junitxml={xml}", "-p", "xdist", "-n", "2", "-rs")
    assert "2 workers [" in spread.stdout and "node down" not in spread.stdout, spread.stdout[-3000:]
    assert spread.returncode == done.returncode == 1
    assert _cases(xml) == cases
    for sid in ("alice", "bob"):
        line = next(line for line in done.stdout.splitlines() if line.startswith(f"{sid}: "))
        assert line in spread.stdout
    suite = ET.parse(xml).getroot().find("testsuite")
    totals = {p.get("name"): p.get("value") for p in suite.find("properties").iter("property")}
    assert totals["total alice"].startswith("100 / 100 points") and totals["total bob"].startswith("0 / 100 points")
    assert "pytest_plugin.py" not in spread.stdout                     # skips are located at their item
    assert "SKIPPED [1] alice::C8::C8_manual: graded by hand by a TA" in spread.stdout


def test_the_junit_file_declares_the_schema_its_case_properties_belong_to(two):
    """Each check's points are properties of its test case: the xunit1 schema's, so the file says
    xunit1 (pytest's default, xunit2, has no properties on a test case)."""
    _, _, _, _, root = two
    suite = ET.parse(root / "junit.xml").getroot().find("testsuite")
    assert suite.find("testcase").find("properties") is not None
    assert suite.find("properties") is not None                        # the totals, on the suite


def test_k_selects_checks_and_the_failure_text_is_the_students_message(course, assignment, two):
    done = _course_pytest(course, f"--submission={two[4] / 'bob' / assignment.name}", "-k", "B1_", "-rf", "-x")
    summary = done.stdout.split("short test summary info")[-1]
    assert "bob::B1::B1_worked_example" in summary and "B2_" not in summary, done.stdout[-2000:]
    assert "still the release's stub" in done.stdout
    assert "stopping after 1 failures" in done.stdout         # -x: pytest's own options pass through


def test_every_catalogue_entry_agrees_with_course_autograde(course, assignment, tmp_path):
    source = {c.grade_id: c.source for n in assignment.notebooks for c in assignment.cells(n)}
    for entry in catalogue():
        write_submission(tmp_path / "class" / entry.id, assignment, edits=edits(entry, source[entry.cell]))
    done = _course_pytest(course, f"--submissions={tmp_path / 'class'}", f"--junitxml={tmp_path / 'all.xml'}", "-q")
    cases = _cases(tmp_path / "all.xml")
    ours = api.autograde(assignment.name, tmp_path / "class", workers=2, repo=course)
    for sid, result in ours["students"].items():
        for q in result["questions"].values():
            for row in q["checks"]:
                outcome, message, props = cases[(sid, row["id"])]
                expected = "passed" if row["passed"] else "skipped" if row["review"] else "failed"
                assert outcome == expected and float(props["score"]) == row["score"], \
                    (sid, row["id"], outcome, message, row["message"])
                if expected == "failed":
                    assert message.startswith(row["message"][:60].split("\n")[0][:40]), (message, row["message"])
    assert len(cases) == sum(len(q["checks"]) + bool(q.get("manual")) for r in ours["students"].values()
                             for q in r["questions"].values()), done.stdout[-1000:]


# ---- a submission that tries to be pytest's configuration or code ----------------------------------

# Each configuration file pytest reads, loading the student's own plugin from the student's folder.
INI_FILES = {
    "pytest.ini": "[pytest]\naddopts = -p evil_pytest_ini\npythonpath = .\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p evil_pyproject_toml"\npythonpath = ["."]\n',
    "setup.cfg": "[tool:pytest]\naddopts = -p evil_setup_cfg\npythonpath = .\n",
    "tox.ini": "[pytest]\naddopts = -p evil_tox_ini\npythonpath = .\n",
}
# Every attack class: the file whose code must never run.
ATTACKS = [*INI_FILES, "conftest.py", "__init__.py", ".pth", "plugin-named module"]
# How the TA names the folder: relative to the course, absolute, or from inside the student's folder.
FORMS = ("relative", "absolute", "cwd inside")
# What the student's code does once it runs in the TA's pytest: every item passes.
PASS_EVERYTHING = """
def pytest_collection_modifyitems(items):
    for item in items:
        item.runtest = lambda: None
"""


def _student_code(attack: str, marks: Path) -> str:
    """Python that leaves a mark (a line in ``marks``, a line on stdout) wherever it runs."""
    return (f"import pathlib\npathlib.Path({str(marks)!r}).open('a').write({attack!r} + '\\n')\n"
            f"print('STUDENT CODE RAN: ' + {attack!r})\n")


def _hostile_folder(folder: Path, ini: str | None, marks: Path) -> None:
    """The release, untouched (no solution code), plus every file that would make it pytest's own."""
    if ini:
        (folder / ini).write_text(INI_FILES[ini])
        module = "evil_" + ini.replace(".", "_")
        (folder / f"{module}.py").write_text(_student_code(ini, marks) + PASS_EVERYTHING)
    (folder / "conftest.py").write_text(_student_code("conftest.py", marks) + PASS_EVERYTHING)
    (folder / "__init__.py").write_text(_student_code("__init__.py", marks))
    (folder / "evil.pth").write_text(f"import pathlib; pathlib.Path({str(marks)!r}).open('a').write('.pth\\n')\n")
    (folder / "autograder").mkdir()        # named like the course's plugin package
    for name in ("__init__.py", "pytest_plugin.py"):
        (folder / "autograder" / name).write_text(_student_code("plugin-named module", marks) + PASS_EVERYTHING)


@pytest.fixture(scope="module")
def hostile_runs(course, assignment, tmp_path_factory):
    """Five no-code submissions (one per configuration file, and one with none), each graded as a TA
    would name it in every form: (folder, form) -> (completed process, JUnit cases); and the marks file."""
    root = tmp_path_factory.mktemp("pytest-hostile")
    marks = root / "student-code-ran.txt"
    runs = {}
    for ini in (*INI_FILES, None):
        sid = (ini or "no_ini").replace(".", "_")
        # Without a configuration file, <student>/ holding the notebooks, named as a Python package.
        folder = write_submission(root / "class" / sid, assignment, untouched=True, nested=bool(ini))
        _hostile_folder(folder, ini, marks)
        for form in FORMS:
            xml = root / f"{sid}-{form.replace(' ', '-')}.xml"
            if form == "relative":
                done = _course_pytest(course, "--submission", os.path.relpath(folder, course), f"--junitxml={xml}")
            elif form == "absolute":
                done = _course_pytest(course, "--submission", folder, f"--junitxml={xml}")
            else:
                done = _course_pytest(folder, "--course", course, "--submission", ".", f"--junitxml={xml}")
            runs[(sid, form)] = done, (_cases(xml) if xml.exists() else {})
    return runs, marks


def _scored_nothing(sid, done, cases):
    """Graded as the no-code submission it is: 0 points, every check failed, the TA's item skipped."""
    assert f"{sid}: 0 / 100 points" in done.stdout and done.returncode == 1, (done.stdout[-3000:], done.stderr[-3000:])
    outcomes = {check: outcome for (_, check), (outcome, _, _) in cases.items()}
    every_check = len(Assignment("transformer-block", REPO).set.checks)
    assert outcomes.pop("C8_manual") == "skipped" and len(outcomes) == every_check, outcomes
    assert set(outcomes.values()) == {"failed"}, outcomes


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_file_of_a_submission_is_code_or_configuration_to_pytest(hostile_runs, attack):
    runs, marks = hostile_runs
    ran = marks.read_text().split("\n") if marks.exists() else []
    assert attack not in ran, f"the student's {attack} ran in the TA's pytest"
    for (sid, form), (done, cases) in runs.items():
        if attack in INI_FILES and sid != attack.replace(".", "_"):
            continue
        assert f"STUDENT CODE RAN: {attack}" not in done.stdout + done.stderr, (sid, form, done.stdout[-2000:])
        _scored_nothing(sid, done, cases)


def test_a_bare_pytest_on_a_submission_refuses_and_names_course_pytest(course, assignment, two):
    """pytest reads a folder named on its command line before any plugin: the plugin refuses to grade."""
    folder = two[4] / "alice" / assignment.name
    for args in (["--submission", folder], [f"--submission={folder}"], [f"--submissions={two[4]}"]):
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *map(str, args)],
                              cwd=course, capture_output=True, text=True, timeout=300)
        assert done.returncode == 4 and "course pytest" in done.stderr, (args, done.stdout[-2000:], done.stderr)
        assert "passed" not in done.stdout and "points" not in done.stdout


def test_course_pytest_takes_no_path_for_pytest_and_shows_none(course, two):
    """A path given to pytest itself would be collected and its conftest read: refused, and never shown."""
    done = _course_pytest(course, "--submission", two[4] / "bob" / "transformer-block", two[4] / "bob")
    assert done.returncode == 4 and "course pytest" in done.stderr and "points" not in done.stdout, done.stderr
    shown = _course_pytest(course, "--help").stdout
    assert "course pytest --submission=submitted/alice/transformer-block" in shown, shown
    assert "-k EXPR" in shown and "--junitxml=FILE" in shown and "pytest --submission " not in shown


# ---- the door: text a submission controls ------------------------------------------------------------

def test_pytest_output_and_junit_xml_carry_no_control_characters(course, assignment, tmp_path):
    """A student named with escape sequences whose answer raises them: the TA's terminal and XML stay text."""
    build = next(c.source for c in assignment.cells("build") if c.grade_id == "B1_code")
    raising = solved(build) + f"\n\ndef layer_norm(*args, **kwargs):\n    raise ValueError({PAYLOAD!r})\n"
    sid = "x" + PAYLOAD.replace("/", "").replace("\x00", "")      # what a folder name can hold
    write_submission(tmp_path / "class" / sid, assignment, edits={"B1_code": raising})
    xml = tmp_path / "out.xml"
    done = _course_pytest(course, f"--submissions={tmp_path / 'class'}", "-ra", "-v", f"--junitxml={xml}")
    assert "raised ValueError: hostile" in done.stdout and "92 / 100 points" in done.stdout, done.stdout[-3000:]
    assert "xhostile" in done.stdout and "FAILED" in done.stdout
    assert_clean(done.stdout, "pytest's terminal output")
    assert_clean(done.stderr, "pytest's standard error")
    assert_clean(xml.read_text(), "JUnit XML")
    assert any(message.startswith("`layer_norm` raised ValueError: hostile") for _, message, _ in _cases(xml).values())


# ---- where user namespaces are restricted (Ubuntu 24.04's AppArmor) -----------------------------------

STAND_IN_BWRAP = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"


def test_where_apparmor_denies_namespaces_course_pytest_says_what_lifts_it_and_grades_one_weakly(
        course, assignment, two, tmp_path):
    """A bubblewrap that fails as it does on Ubuntu 24.04 for a non-root user (AppArmor's restriction
    of user namespaces): ``course pytest`` stops with one line naming the restriction, what lifts it,
    and ``--allow-weak-isolation``, which ``course pytest`` now takes for one submission (before: "no
    tests ran" and an option pytest rejected). With it, the submission is graded as usual and the run
    says, in its summary and its JUnit suite, that it had weak isolation."""
    if not shutil.which("bwrap"):
        pytest.skip("needs bubblewrap (make sandbox) for the grader's own view as root")
    stand_in = tmp_path / "bin"
    stand_in.mkdir()
    (stand_in / "bwrap").write_text(STAND_IN_BWRAP)
    (stand_in / "bwrap").chmod(0o755)
    alice = two[4] / "alice" / assignment.name
    env = {**os.environ, "PATH": f"{stand_in}{os.pathsep}{os.environ['PATH']}", "PYTHONDONTWRITEBYTECODE": "1"}

    def course_pytest(*args, view=()):
        return subprocess.run([*view, str(COURSE), "pytest", *map(str, args)], cwd=course, capture_output=True,
                              text=True, env=env, timeout=900)

    refused = course_pytest(f"--submission={alice}")
    said = refused.stdout + refused.stderr
    assert refused.returncode == 4 and "no tests ran" in said, said[-2000:]
    line = next(line for line in said.splitlines() if "cannot be isolated here" in line)
    assert "setting up uid map: Permission denied" in line and "AppArmor" in line
    assert "apparmor_restrict_unprivileged_userns=0" in line and "--allow-weak-isolation" in line

    # As root the session's uid must read the Python: here it lives under /root, so the grader runs in a
    # view where it is searchable by anyone (the stand-in still answers for bwrap inside it).
    from test_isolation_modes import _python_view

    view = ["/usr/bin/env", f"PATH={env['PATH']}", shutil.which("bwrap"), *_python_view(), "--"] \
        if os.geteuid() == 0 else []
    xml = tmp_path / "weak.xml"
    weak = course_pytest(f"--submission={alice}", "--allow-weak-isolation", f"--junitxml={xml}", view=view)
    assert weak.returncode == 0, (weak.stdout + weak.stderr)[-3000:]
    assert "alice: 100 / 100 points" in weak.stdout
    assert "graded with weak isolation (--allow-weak-isolation): bwrap: setting up uid map" in weak.stdout
    suite = ET.parse(xml).getroot().find("testsuite")
    assert any(p.get("name") == "isolation" for p in suite.find("properties").iter("property"))
    many = course_pytest(f"--submissions={two[4]}", "--allow-weak-isolation")
    assert many.returncode == 4 and "grades one submission per throwaway environment" in many.stdout + many.stderr


def test_the_apparmor_hint_is_given_for_apparmors_refusal_only(tmp_path):
    """A refused clone (Docker's seccomp profile, a kernel without unprivileged user namespaces) is not
    AppArmor's doing: bubblewrap's own words explain it, and no AppArmor fix is suggested."""
    from autograder.grader_side.sandbox.host import _userns_hint

    restricted = tmp_path / "apparmor_restrict_unprivileged_userns"
    restricted.write_text("1\n")
    assert "AppArmor restricts" in _userns_hint("bwrap: setting up uid map: Permission denied", str(restricted))
    assert "Ubuntu 23.10" in _userns_hint("bwrap: setting up uid map: Permission denied", str(tmp_path / "none"))
    docker = ("bwrap: No permissions to create new namespace, likely because the kernel does not allow "
              "non-privileged user namespaces.")
    assert _userns_hint(docker, str(restricted)) == ""


def test_xdists_n_without_its_plugin_says_to_load_it(course, two):
    """`course pytest ... -n 2` without `-p xdist`: pytest would read "2" as a path to collect; the
    refusal says what to add instead."""
    done = _course_pytest(course, f"--submissions={two[4]}", "-n", "2")
    assert done.returncode == 4 and "add -p xdist" in done.stdout + done.stderr, (done.stdout + done.stderr)[-1500:]


def test_options_that_would_move_pytests_configuration_or_collection_are_refused(course, assignment, two, tmp_path):
    """--confcutdir above the course folder once let pytest walk into a submission and import its test
    file; -c, -o, --rootdir and the like would read a submission's configuration: each is refused before
    pytest starts, and nothing of the submission runs."""
    folder = two[4] / "alice" / assignment.name
    mark = tmp_path / "ran"
    (folder / "test_evil.py").write_text(f"open({str(mark)!r}, 'a').write('imported')\ndef test_x():\n    pass\n")
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p evilplug\n")
    try:
        for extra in ([f"--confcutdir={tmp_path.anchor}"], ["--confcutdir", str(course.parent)],
                      ["-c", folder / "pytest.ini"], [f"--config-file={folder / 'pytest.ini'}"],
                      ["-o", "addopts=-p evilplug"], [f"--rootdir={folder}"]):
            done = _course_pytest(course, f"--submission={folder}", "-q", *extra)
            said = done.stderr
            assert done.returncode == 2 and "set by course pytest itself" in said and "leave it out" in said, \
                (extra, done.stdout[-1500:], said[-1500:])
            assert "passed" not in done.stdout
        assert not mark.exists()
    finally:
        (folder / "test_evil.py").unlink()
        (folder / "pytest.ini").unlink()
