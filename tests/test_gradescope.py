"""Gradescope's autograder package, built by the real command and run in Gradescope's folder layout.

`course gradescope-package` packages a copy of the course folder littered with what must stay out
(.git, tests, student data, caches). Each case unzips the package into a scratch root laid out
like Gradescope's (`<root>/source/`, `<root>/submission/`, `<root>/results/`) and runs the
package's own `run_autograder` with AUTOGRADER_ROOT=<root> and this test's Python (setup.sh needs
the network, so it is only checked: syntax and pins). Every results.json is validated against the
fields of Gradescope's "Autograder Specifications".
"""
from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import nbformat
import pytest
from packaging.requirements import Requirement

import week4
from autograder.compat import tomllib
from autograder.escape import for_terminal
from autograder.grader_side.assignment import REPO, Assignment
from autograder.grader_side.sandbox.marks import ENV as MARKS
from autograder.tooling import gradescope
from autograder.tooling.sampleclass import write_submission
from docker_seccomp import run_under
from hostile_text import HOSTILE, PAYLOAD, assert_clean
from week4 import all_checks, catalogue

PROFILE = REPO / "docs" / "seccomp-course.json"

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
# Gradescope's results.json: the documented fields only, with the ones this kit promises required.
TEST = {
    "type": "object",
    "required": ["name", "number", "score", "max_score", "output", "visibility"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "number": {"type": "string", "pattern": r"^[A-Z]\d+\.\d+$"},
        "score": {"type": "number", "minimum": 0},
        "max_score": {"type": "number", "minimum": 0},
        "status": {"enum": ["passed", "failed"]},
        "output": {"type": "string"},
        "visibility": VISIBILITY,
        "name_format": FORMAT, "output_format": FORMAT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra_data": {"type": "object"},
    },
    "additionalProperties": False,
}
RESULTS = {
    "type": "object",
    "required": ["score", "execution_time", "output", "visibility", "stdout_visibility", "tests"],
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": FORMAT, "test_output_format": FORMAT, "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array"},
    },
    "additionalProperties": False,
}

# What a course folder holds that must never reach the package.
LITTER = (".git/HEAD", ".venv/bin/python", "tests/test_secret.py", "submitted/alice/transformer-block/build.ipynb",
          "autograded/alice/transformer-block/build.ipynb", "feedback/alice/transformer-block/build.html",
          "downloaded/transformer-block/archive/alice_build.ipynb", "gradebook.db", "results.json",
          "course-grades.csv", "out/demo/results.json",
          "solutions/transformer-block/grading/reference/__pycache__/norms.cpython-311.pyc",
          "solutions/transformer-block/.ipynb_checkpoints/build-checkpoint.ipynb", ".pytest_cache/README.md")


@pytest.fixture(scope="module")
def course_folder(tmp_path_factory) -> Path:
    """A copy of the course folder with everything that must stay out of the package in it."""
    folder = tmp_path_factory.mktemp("course") / "course"
    shutil.copytree(REPO, folder, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "out", "submitted"))
    for name in LITTER:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("student data or a cache\n")
    return folder


@pytest.fixture(scope="module")
def package(course_folder, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("package") / "autograder.zip"
    env = {k: v for k, v in os.environ.items() if k != "COURSE_EXTRA_INDEX_URL"}
    course = Path(sys.executable).with_name("course")
    proc = subprocess.run([str(course), "gradescope-package", "transformer-block", "--out", str(out)],
                          cwd=course_folder, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert str(out) in proc.stdout
    return out


def unpack(package: Path, target: Path) -> None:
    """Unzip keeping each entry's mode, as Gradescope's unzip does."""
    with zipfile.ZipFile(package) as z:
        for info in z.infolist():
            path = z.extract(info, target)
            mode = info.external_attr >> 16
            if mode:
                os.chmod(path, stat.S_IMODE(mode))


def run_autograder_streams(package: Path, root: Path, upload: dict[str, bytes] | None = None, python=sys.executable,
                           build=None, namespaces_refused: bool = False,
                           marks: Path | None = None) -> tuple[dict, subprocess.CompletedProcess]:
    """Gradescope's layout at ``root``, the upload in submission/, run_autograder run as Gradescope
    runs it (copied to <root>/run_autograder, working folder <root>); returns results.json and the
    finished process (its stdout and stderr are what Gradescope records as the autograder's stdout).
    ``namespaces_refused``: under Docker's default treatment of namespaces, as in Gradescope's
    containers (tests/docker_seccomp.py). ``marks``: the file the sandbox's time marks go to."""
    for part in ("source", "submission", "results"):
        (root / part).mkdir(parents=True)
    unpack(package, root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    for name, data in (upload or {}).items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_bytes(data)
    if build:
        build(root / "submission")
    # No PYTHONPATH: run_autograder must import the package's own copy of the kit.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(AUTOGRADER_ROOT=str(root), COURSE_PYTHON=str(python))
    if marks is not None:
        env[MARKS] = str(marks)
    command = [str(root / "run_autograder")]
    if namespaces_refused:
        # As root, the session's uid must read the Python (else weak isolation stops; it never grades as
        # root): where it lives under /root, as here, the run sees it searchable by anyone, as in an image.
        from test_isolation_modes import _python_view

        view = ["bwrap", *_python_view(), "--"] if os.geteuid() == 0 and shutil.which("bwrap") else []
        proc = run_under(PROFILE, "docker-namespaces", command, root.parent, wrapper=view, cwd=root, env=env,
                         capture_output=True, text=True, timeout=600)
    else:
        proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(doc, RESULTS)
    if doc["tests"]:
        assert doc["score"] == pytest.approx(sum(t["score"] for t in doc["tests"]))
    return doc, proc


def run_autograder(package: Path, root: Path, upload: dict[str, bytes] | None = None, **kwargs) -> dict:
    """``run_autograder_streams``'s results.json alone."""
    return run_autograder_streams(package, root, upload, **kwargs)[0]


def notebooks(folder: Path, **kwargs) -> dict[str, bytes]:
    """A submission's two notebooks as bytes, from the course's own material."""
    written = write_submission(folder, Assignment("transformer-block", REPO), nested=False, **kwargs)
    return {p.name: p.read_bytes() for p in sorted(written.glob("*.ipynb"))}


def assert_isolation_stated(doc: dict, stdout: str | None = None) -> None:
    """What held, field by field, for staff: in ``extra_data`` (stored, shown to no student) without the
    grading machine's folders, and whole in the runner's stdout (instructors only). The output a
    student reads names none of it."""
    for word in ("isolation", "allow_weak_isolation", "seccomp", "namespace"):
        assert word not in doc["output"], word
    kept = doc["extra_data"]["isolation"]
    assert "seccomp" in kept and "rlimits" in kept     # what the sandbox reported, field by field
    for where in ("/usr", "/root", str(REPO), sys.prefix, "visible_read_only", "cut_out"):
        assert where not in kept, where
    if stdout is not None:
        staff = next(x for x in stdout.splitlines() if x.startswith("instructor only: isolation, whole: "))
        assert ("visible_read_only: /usr" in staff or "files: " in staff) and "seccomp" in staff, staff
        assert any(x.startswith("instructor only: one submission in this container, graded with "
                                "allow_weak_isolation=True") for x in stdout.splitlines())


# ---- what a student sees before grades are published ------------------------------------------

NOT_YET = ("hidden", "after_published")   # a test with one of these is not shown before publication


def before_publication(doc: dict, stdout: str = "") -> dict:
    """What a student sees of ``doc`` (a results.json) before grades are published, by the rules of
    Gradescope's "Autograder Specifications" (Controlling Test Case Visibility, Controlling
    standard output visibility, Output String Formatting), read the way that shows the most:

    - the top-level ``output`` and its format fields (``output_format``, ``test_output_format``,
      ``test_name_format``): always (no visibility setting covers them);
    - a test, every field of it: unless its visibility (its own, else the top level's, else
      Gradescope's default ``visible``) is ``hidden`` (never shown) or ``after_published`` (shown
      once the assignment is published). ``after_due_date`` counts as shown: the due date can pass
      before grades are published;
    - the total ``score``: "If test cases are hidden, students will not be able to see their total
      score" (tests set to ``hidden`` do not count: they carry no points), so it is shown unless a
      test is ``after_published``;
    - ``leaderboard``: always;
    - the autograder's stdout (``stdout``): when ``stdout_visibility`` is ``visible`` or ``after_due_date``.

    Left out: ``extra_data`` ("extra data to be stored", not documented as shown; this kit keeps the
    isolation record there, for staff), ``execution_time`` (a wall-clock figure for the instructor,
    which differs from run to run) and ``stdout_visibility``/``visibility`` themselves."""
    default = doc.get("visibility", "visible")
    tests = [t for t in doc.get("tests", []) if t.get("visibility", default) not in NOT_YET]
    seen = {key: doc[key] for key in ("output", "output_format", "test_output_format", "test_name_format",
                                      "leaderboard") if key in doc}
    seen["tests"] = tests
    if not any(t.get("visibility", default) == "after_published" for t in doc.get("tests", [])):
        seen["score"] = doc.get("score")
    if doc.get("stdout_visibility", "hidden") not in ("hidden", "after_published"):
        seen["stdout"] = stdout
    return seen


def visible_bytes(doc: dict, stdout: str = "") -> bytes:
    """``before_publication`` as bytes, to compare two uploads byte for byte."""
    return json.dumps(before_publication(doc, stdout), sort_keys=True, indent=1).encode()


def strings(value):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


# ---- the package itself ----------------------------------------------------------------------

def test_the_package_holds_the_kit_and_none_of_the_course_folders_litter(package):
    names = zipfile.ZipFile(package).namelist()
    assert {"setup.sh", "run_autograder", "pyproject.toml", "nbgrader_config.py"} <= set(names)
    for must in ("solutions/transformer-block/grading/reference/norms.py", "solutions/transformer-block/build.ipynb",
                 "solutions/transformer-block/concepts.ipynb", "assignments/transformer-block/build.ipynb",
                 "autograder/run_autograder.py", "autograder/student_side/server.py"):
        assert must in names
    for name in names:
        assert not name.startswith(("tests/", ".git", ".venv/", "submitted/", "autograded/", "feedback/",
                                    "downloaded/", "out/")), name
        assert "__pycache__" not in name and ".ipynb_checkpoints" not in name and not name.endswith(".pyc")
        assert name not in ("gradebook.db", "results.json", "course-grades.csv")
    modes = {i.filename: i.external_attr >> 16 for i in zipfile.ZipFile(package).infolist()}
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111


def test_setup_pins_the_environment_as_pyproject_does(package):
    setup = zipfile.ZipFile(package).read("setup.sh").decode()
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = {Requirement(d).name: Requirement(d) for d in deps}
    assert str(pinned["torch"].specifier) == "==2.13.0"
    assert "0.9.5" in pinned["nbgrader"].specifier and "0.10.0" not in pinned["nbgrader"].specifier
    pip_line = next(line for line in setup.splitlines() if line.startswith('"${PIP[@]}" ') and "nbgrader" in line)
    assert shlex.split(pip_line)[1:] == deps          # every pin, exactly as pyproject.toml writes it
    assert '-e "$SOURCE"' in setup and 'chmod -R go-rwx "$SOURCE"' in setup
    # no index is named but torch's CPU build's, unless COURSE_EXTRA_INDEX_URL or COURSE_TORCH_INDEX_URL says so
    torch_index = f'TORCH_INDEX_URL="${{COURSE_TORCH_INDEX_URL-{gradescope.TORCH_CPU_INDEX}}}"'
    assert setup.count("://") == 1 and torch_index in setup


def test_an_extra_index_is_whatever_the_environment_names(course_folder, tmp_path):
    out = tmp_path / "autograder.zip"
    env = dict(os.environ, COURSE_EXTRA_INDEX_URL="file:///srv/wheels")
    subprocess.run([sys.executable, "-m", "autograder.cli", "gradescope-package", "transformer-block",
                    "--out", str(out)],
                   cwd=course_folder, env=env, check=True, capture_output=True, timeout=300)
    setup = zipfile.ZipFile(out).read("setup.sh").decode()
    assert 'EXTRA_INDEX_URL="${COURSE_EXTRA_INDEX_URL-file:///srv/wheels}"' in setup


@pytest.mark.parametrize("script", ["setup.sh", "run_autograder"])
def test_bash_accepts_the_scripts(package, tmp_path, script):
    path = tmp_path / script
    path.write_bytes(zipfile.ZipFile(package).read(script))
    proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# ---- grading in Gradescope's layout ----------------------------------------------------------

# Files an upload may carry beside its notebooks that Python, pytest or nbgrader would run or read as
# configuration if the grader ever worked in the upload's folder: each writes a mark if it runs.
BESIDE = ("pytest.ini", "conftest.py", "nbgrader_config.py", "sitecustomize.py", "usercustomize.py", "setup.cfg",
          "course.pth")


def beside(marks: Path) -> dict[str, bytes]:
    code = {name: f"open({str(marks)!r}, 'a').write({name + chr(10)!r})\n" for name in BESIDE}
    code["pytest.ini"] = code["setup.cfg"] = "[pytest]\naddopts = -p conftest\n[tool:pytest]\naddopts = -p conftest\n"
    code["course.pth"] = f"import os; os.system('echo course.pth >> {marks}')\n"
    return {name: text.encode() for name, text in code.items()}


def test_the_reference_in_a_folder_scores_full_marks(package, tmp_path):
    """In a folder, with configuration and code of the upload's own beside the notebooks, and the set's
    folder inside a folder of the set's name: the notebooks alone are read."""
    upload = {f"transformer-block/transformer-block/{k}": v for k, v in notebooks(tmp_path / "nb").items()}
    upload |= {f"transformer-block/transformer-block/{k}": v for k, v in beside(tmp_path / "ran").items()}
    upload |= {k: v for k, v in beside(tmp_path / "ran").items()}
    doc, done = run_autograder_streams(package, tmp_path / "root", upload, marks=tmp_path / "marks")
    assert not (tmp_path / "ran").exists(), (tmp_path / "ran").read_text()
    assert doc["score"] == 100 and sum(t["max_score"] for t in doc["tests"]) == 100
    started = [line.split()[0] for line in (tmp_path / "marks").read_text().splitlines()]
    assert started.count("sandbox-start") == 1, started   # the one started beside loading the set
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in doc["tests"])
    checks = {c.id: c for c in all_checks()}
    for t in doc["tests"]:
        assert t["visibility"] == ("after_published" if checks[t["name"]].hidden else "visible")
        assert t["number"].split(".")[0] == t["name"].split("_")[0]
    assert len({t["number"] for t in doc["tests"]}) == len(doc["tests"])
    assert "graded by hand later, not in this score: C8 (4 points)" in doc["output"]
    assert_isolation_stated(doc, done.stdout)
    # only the grading user reads the course's files, the upload and the results
    for path in (tmp_path / "root",
                 tmp_path / "root" / "source" / "solutions" / "transformer-block" / "grading" / "reference"
                 / "norms.py",
                 tmp_path / "root" / "submission" / "transformer-block" / "transformer-block" / "build.ipynb",
                 tmp_path / "root" / "results" / "results.json"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_the_reference_in_an_uploaded_zip_scores_full_marks(package, tmp_path):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for name, data in notebooks(tmp_path / "nb").items():
            z.writestr(f"my work/{name}", data)
        z.writestr("__MACOSX/my work/._build.ipynb", b"resource fork")
    doc = run_autograder(package, tmp_path / "root", {"transformer-block.zip": archive.getvalue()})
    assert doc["score"] == 100
    assert "from transformer-block.zip:my work/build.ipynb" in doc["output"]


def test_where_namespaces_are_refused_it_grades_with_weak_isolation_and_says_so(package, tmp_path):
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed (make sandbox)")
    doc, done = run_autograder_streams(package, tmp_path / "root", notebooks(tmp_path / "nb"), namespaces_refused=True)
    assert doc["score"] == 100
    assert "namespaces were refused here, so the isolation is weak" in done.stdout
    assert doc["extra_data"]["isolation"].startswith("weak: ")     # why, first
    assert_isolation_stated(doc, done.stdout)


def test_the_untouched_release_scores_zero(package, tmp_path):
    doc = run_autograder(package, tmp_path / "root", notebooks(tmp_path / "nb", untouched=True))
    assert doc["score"] == 0 and len(doc["tests"]) > 40
    assert "graded by hand later" not in doc["output"]       # as course grade says: no response, no TA
    assert "C8: no response: the answer cell is as it was released" in doc["output"], doc["output"]
    assert all(t["status"] == "failed" for t in doc["tests"])
    assert_isolation_stated(doc)


def test_files_that_are_not_notebooks_score_zero_with_the_reason(package, tmp_path):
    doc = run_autograder(package, tmp_path / "root", {"concepts.ipynb": b"%PDF-1.4 not a notebook",
                                                       "build.ipynb": b"\x00\x01"})
    assert doc["score"] == 0
    assert doc["output"].splitlines()[0].startswith("could not be graded: ")
    assert "concepts.ipynb could not be read" in doc["output"] and "build.ipynb could not be read" in doc["output"]


def test_an_upload_without_the_notebooks_scores_zero_with_one_line_saying_so(package, tmp_path):
    doc = run_autograder(package, tmp_path / "root", {"report.pdf": b"%PDF-1.4"})
    assert doc["score"] == 0 and doc["tests"] == []
    assert doc["output"] == ("could not be graded: no concepts.ipynb or build.ipynb in the upload (found: report.pdf): "
                             "upload the notebooks, named concepts.ipynb and build.ipynb, or a zip archive of them")


def test_a_broken_autograder_still_leaves_a_results_json(package, tmp_path):
    doc = run_autograder(package, tmp_path / "root", {"report.pdf": b"%PDF"}, python=tmp_path / "no-python")
    assert doc["score"] == 0 and doc["tests"] == []
    assert "the autograder failed before grading" in doc["output"]


def test_a_grader_killed_for_memory_still_leaves_a_results_json_saying_so(package, tmp_path):
    """run_autograder is the supervisor: the grader runs as the out-of-memory killer's first choice
    (1000), the supervisor as it was, and a grader killed by signal 9 is reported as the memory limit."""
    seen = tmp_path / "oom_score_adj"
    killed = tmp_path / "killed-python"
    killed.write_text(f"#!/bin/bash\necho \"$(cat /proc/$$/oom_score_adj) $(cat /proc/$PPID/oom_score_adj)\" > {seen}\n"
                      "kill -9 $$\n")
    killed.chmod(0o755)
    doc = run_autograder(package, tmp_path / "root", {"report.pdf": b"%PDF"}, python=killed)
    grader, supervisor = map(int, seen.read_text().split())
    assert grader == 1000 and supervisor < 1000
    assert doc["score"] == 0 and doc["tests"] == []
    assert doc["output"].startswith("the grader was killed (signal 9), most likely by the container's memory limit")


def test_a_notebook_over_the_size_limit_is_refused_without_being_read(package, tmp_path):
    def huge(folder: Path) -> None:
        with open(folder / "build.ipynb", "wb") as f:
            f.truncate(64 * 2**20)       # sparse: 64 MiB that cost nothing
    nb = notebooks(tmp_path / "nb")
    doc = run_autograder(package, tmp_path / "root", {"concepts.ipynb": nb["concepts.ipynb"]}, build=huge)
    assert "build.ipynb could not be read: it is 64 MiB, over the 20 MiB limit" in doc["output"]
    concepts = sum(t["score"] for t in doc["tests"] if t["name"].startswith("C"))
    assert concepts == sum(t["max_score"] for t in doc["tests"] if t["name"].startswith("C")) > 0
    assert nbformat.reads(nb["concepts.ipynb"].decode(), as_version=4).cells


def test_course_grade_writes_the_same_format_for_one_submission(tmp_path):
    """`course grade ... --gradescope` and the package share one function, so one format."""
    upload = notebooks(tmp_path / "nb")
    course = Path(sys.executable).with_name("course")
    proc = subprocess.run([str(course), "grade", *(str(tmp_path / "nb" / name) for name in upload),
                           "--assignment", "transformer-block", "--gradescope", str(tmp_path / "results.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(doc, RESULTS)
    assert doc["score"] == 100 and "seccomp" in doc["extra_data"]["isolation"]



def test_a_named_misconception_tags_its_questions_failed_hidden_tests_only(tmp_path):
    """The misconception the grader names for a question is a Gradescope tag of that question's failed
    hidden tests (shown once grades are published, as their messages are), never of a visible test,
    which a student sees before publication and which no hidden check decided."""
    from autograder import api
    from autograder.grader_side.misconceptions import edits

    a = Assignment("transformer-block", REPO)
    source = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n)}
    entry = next(e for e in catalogue() if e.id == "B1-sample-variance")
    folder = tmp_path / "nb"
    notebooks(folder, edits=edits(entry, source[entry.cell]))
    doc_all = api.grade_one(sorted(folder.glob("*.ipynb")), a.name)
    result = doc_all["students"]["student"]
    named = result["questions"]["B1"]["misconception"]["id"]
    doc = api.gradescope(result, 1.0, doc_all["isolation"])
    jsonschema.validate(doc, RESULTS)
    tagged = [t for t in doc["tests"] if "tags" in t]
    assert tagged and all(t["tags"] == [named] and t["status"] == "failed" and t["visibility"] == "after_published"
                          and t["number"].startswith("B1.") for t in tagged)
    assert not any("tags" in t for t in doc["tests"] if t["visibility"] == "visible")


# ---- nothing a hidden check decided shows before grades are published -----------------------

def test_the_answers_hidden_free_text_checks_get_change_nothing_a_student_sees_before_publication(package, tmp_path):
    """Two uploads that differ only in what the hidden free-text checks of C2 and C3 make of their
    answers: C2 right and C3 one the matcher cannot place (a TA reads it), or C2 one it cannot place
    and C3 a wrong option. Everything shown before publication is the same, byte for byte."""
    first, out_first = run_autograder_streams(package, tmp_path / "first", notebooks(
        tmp_path / "nb1", edits={"C3_code": 'q3_most_weights = "the residual stream"\n'}))
    second, out_second = run_autograder_streams(package, tmp_path / "second", notebooks(
        tmp_path / "nb2", edits={"C2_code": 'q2_residual_cousin = "the GRU"\n',
                                 "C3_code": 'q3_most_weights = "attention"\n'}))
    hidden = {doc_id: {t["name"]: t for t in doc["tests"]} for doc_id, doc in (("first", first), ("second", second))}
    # The hidden checks did decide differently...
    assert hidden["first"]["C2_answer"]["status"] == "passed" and hidden["second"]["C2_answer"]["status"] == "failed"
    assert "awaiting review" in hidden["first"]["C3_answer"]["output"]
    assert "'the residual stream'" in hidden["first"]["C3_answer"]["output"]
    assert "awaiting review" in hidden["second"]["C2_answer"]["output"]
    assert "awaiting review" not in hidden["second"]["C3_answer"]["output"]
    for name in ("C2_answer", "C3_answer"):
        assert hidden["first"][name]["visibility"] == hidden["second"][name]["visibility"] == "after_published"
    # ... and nothing shown before publication says so.
    assert visible_bytes(first, out_first.stdout) == visible_bytes(second, out_second.stdout)
    seen = before_publication(first, out_first.stdout)
    assert "score" not in seen and "stdout" not in seen
    assert "C2" not in seen["output"] and "C3" not in seen["output"]
    # What is shown still says what is graded by hand and which files were graded; the isolation is staff's.
    assert "graded by hand later, not in this score: C8 (4 points)" in seen["output"]
    assert "graded concepts.ipynb (from concepts.ipynb), build.ipynb (from build.ipynb)" in seen["output"]
    assert_isolation_stated(first)
    assert len(seen["tests"]) == sum(not c.hidden for c in all_checks())
    # The instructor reads which answers wait for a TA in the runner's stdout, shown to instructors only.
    assert first["stdout_visibility"] == "hidden"
    staff = "instructor only: {} (hidden check) awaits a TA's review: {}"
    assert staff.format("C3 C3_answer", "'the residual stream'") in out_first.stdout
    assert staff.format("C2 C2_answer", "'the GRU'") in out_second.stdout



def test_a_visible_test_never_shows_what_the_code_was_given_by_a_hidden_check(package, tmp_path):
    """A notebook's visible and hidden checks run in one process, so code can keep what a hidden
    check handed it and put it in a later visible check's error (or crash on hidden inputs until
    later checks are not run). Visible checks run first: a visible test shows none of it."""
    upload = notebooks(tmp_path / "nb", edits={
        "B1_code": "SEEN = []\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n    SEEN.append(tuple(x.shape))\n"
                   "    sigma2, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)\n"
                   "    return gamma * (x - mu) / torch.sqrt(sigma2 + eps) + beta\n",
        "B2_code": "def rms_norm(x, gamma, eps=1e-6):\n    raise ValueError(f'layer_norm saw {SEEN}')\n"})
    doc = run_autograder(package, tmp_path / "root", upload)
    tests = {t["name"]: t for t in doc["tests"]}
    assert tests["B1_worked_example"]["status"] == "passed" and tests["B2_worked_example"]["visibility"] == "visible"
    shown = tests["B2_worked_example"]["output"]
    assert "layer_norm saw [(2, 3, 8), (1, 8), (1, 8)]" in shown   # what B1's visible checks gave it, nothing more
    for shape in [*week4.hidden("norms").SHAPES, (3, 12), (2, 4, 9)]:   # B1's hidden checks' inputs
        assert str(shape) not in shown

# ---- the door: text a submission controls leaves clean ----------------------------------------

def test_text_a_submission_controls_reaches_results_json_and_the_runners_output_clean(package, tmp_path):
    """Error texts, an answer a TA must read, a folder and a link name carrying ``PAYLOAD``:
    every string of results.json, and what run_autograder prints, without a control character."""
    raising = f"raise ValueError({PAYLOAD!r})"
    upload = notebooks(tmp_path / "nb", edits={
        "C2_code": f"q2_residual_cousin = {PAYLOAD!r}\n",
        "B1_code": f"def layer_norm(x, *args, **kwargs):\n    {raising}\n",
        "B2_code": f"import os\nprint({PAYLOAD!r})\nos.write(1, {PAYLOAD.encode()!r})\n"
                   f"os.write(2, {PAYLOAD.encode()!r})\n{raising}\ndef rms_norm(x, g, eps=1e-6):\n    return x\n"})
    folder = "".join(h for h in HOSTILE if "/" not in h and "\x00" not in h)   # a name a folder can have

    def link(submission: Path) -> None:
        (submission / f"notes {folder}.ipynb").symlink_to("/etc/hostname")

    doc, proc = run_autograder_streams(package, tmp_path / "root", {f"{folder}/{k}": v for k, v in upload.items()},
                                       build=link)
    everything = list(strings(doc))
    for text in everything:
        assert_clean(text, "results.json")
    assert_clean(proc.stdout, "run_autograder's stdout")
    assert_clean(proc.stderr, "run_autograder's stderr")
    # the payload did reach them, made harmless
    assert any("hostile" in t and "evil" in t and " end" in t for t in everything)
    assert f"notes {for_terminal(folder)}.ipynb is a link and was not read" in doc["output"]
    assert f"(from {for_terminal(folder)}/build.ipynb)" in doc["output"]
    assert doc["output_format"] == doc["test_output_format"] == doc["test_name_format"] == "text"
