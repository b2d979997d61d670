"""Gradescope's autograder: the package ``course gradescope-package`` builds.

``build`` writes ``autograder.zip``: ``setup.sh`` and ``run_autograder`` at its root (Gradescope's
"Autograder Specifications") and what grading needs: the kit (``autograder/``, ``pyproject.toml``)
and the set's folder ``solutions/<set>/`` (its hidden checks and references and nbgrader's source notebooks), its
release under ``assignments/`` and ``nbgrader_config.py``. Never tests, ``.git``, ``.venv``, caches
or student data: only those folders are read.

``setup.sh`` (run once, as root, when Gradescope builds the image) makes a virtual environment
(``COURSE_VENV``, default ``/opt/course-venv``) with a Python the kit runs on (``PYTHONS``: the
image's own, else the newest its package archive has; an image with neither, or a C library older
than torch's wheels need, stops it before anything is installed, in one line naming what to
choose), torch's CPU build from ``COURSE_TORCH_INDEX_URL`` (default ``TORCH_CPU_INDEX``; empty for
PyPI's), and the kit with the pins of ``pyproject.toml``; an extra package index is whatever
``COURSE_EXTRA_INDEX_URL`` names. Both are read when the package is built or when setup.sh runs.
It ends by printing the time it took and the environment's size.

``run_autograder`` (run once per submission, as root) makes the course's files, the upload and the
results readable by the grading user only, then runs ``python -m autograder.run_autograder``
(``autograder/run_autograder.py``: what a submission goes through in the container); if that fails
without writing ``results/results.json``, run_autograder writes a score-0 one with the reason. The
root is ``AUTOGRADER_ROOT`` (default ``/autograder``), the Python ``COURSE_PYTHON`` (default the venv's).
"""
from __future__ import annotations

import os
import shlex
import stat
import zipfile
from pathlib import Path

from autograder.compat import tomllib
from autograder.course import Course, CourseError
from autograder.grader_side.assignment import REPO, Assignment

DEFAULT_VENV = "/opt/course-venv"
# What the package holds: the kit's code (from the checkout it runs from) and the course's
# content (from the course folder; {a}: the assignment). Everything else stays out.
KIT = ("pyproject.toml", "autograder")
COURSE = ("nbgrader_config.py", "solutions/{a}", "assignments/{a}")
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis", ".mypy_cache", ".git", ".venv"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".egg-info", ".DS_Store")
# Deterministic entries: the same course gives the same zip.
STAMP = (2020, 1, 1, 0, 0, 0)

# The Pythons the kit runs on, newest first: torch 2.13.0 has wheels for 3.10 to 3.14 (PyPI's files for
# it: cp310 to cp314, manylinux_2_28); 3.10 to 3.13 are tested (3.14 waits for an interpreter to test
# on). pyproject.toml's requires-python names the oldest.
PYTHONS = ("3.13", "3.12", "3.11", "3.10")
GLIBC = "2.28"                                        # manylinux_2_28: torch's Linux wheels need it
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"   # torch's CPU build: 183 MiB, not CUDA's 2.5 GB

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (written by
# `course gradescope-package`): a virtual environment with the course kit, pinned as in its
# pyproject.toml, and the system packages the sandbox uses. Everything is decided before anything
# is installed: on an image it cannot serve it stops at once, in one line naming what to choose.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="${COURSE_VENV:-/opt/course-venv}"
EXTRA_INDEX_URL="${COURSE_EXTRA_INDEX_URL-@EXTRA_INDEX_URL@}"
TORCH_INDEX_URL="${COURSE_TORCH_INDEX_URL-@TORCH_INDEX_URL@}"   # empty: PyPI's torch (the CUDA build)
OS_RELEASE="${COURSE_OS_RELEASE:-/etc/os-release}"

IMAGE=$( (. "$OS_RELEASE" && echo "${PRETTY_NAME:-${ID:-?} ${VERSION_ID:-}}") 2>/dev/null || echo "this image")
stop() {
  echo "setup.sh: $IMAGE $1: choose Gradescope's Ubuntu 22.04 base image" \
       "(or any with @PYTHON_RANGE@ and glibc @GLIBC@ or newer)" >&2
  exit 1
}

# bubblewrap (namespaces, where the container allows them) and libseccomp (the system-call filter)
if command -v apt-get >/dev/null; then PM=apt; PACKAGES=(bubblewrap libseccomp2)
elif command -v dnf >/dev/null; then PM=dnf; PACKAGES=(bubblewrap libseccomp)
elif command -v yum >/dev/null; then PM=yum; PACKAGES=(bubblewrap libseccomp)
else stop "has no apt-get, dnf or yum to install the sandbox's packages with"
fi

GLIBC_HERE=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}' || true)
if [ -z "$GLIBC_HERE" ]; then
  stop "has no GNU C library (torch 2.13.0's wheels need glibc @GLIBC@ or newer)"
elif [ "$(printf '%s\n' @GLIBC@ "$GLIBC_HERE" | sort -V | head -n 1)" != @GLIBC@ ]; then
  stop "has glibc $GLIBC_HERE, older than the @GLIBC@ torch 2.13.0's wheels need"
fi

# A Python the kit runs on: the image's own, else the newest its package archive has.
version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true; }
PYTHON=""
for candidate in python3 @CANDIDATES@; do
  if command -v "$candidate" >/dev/null; then
    case "$(version "$candidate")" in @VERSIONS@) PYTHON="$candidate"; break ;; esac
  fi
done
if [ "$PM" = apt ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
fi
EXTRA=()
if [ -z "$PYTHON" ]; then
  for v in @NEWEST_FIRST@; do
    if [ "$PM" = apt ]; then
      if apt-cache show "python$v-venv" >/dev/null 2>&1; then
        PYTHON="python$v"; EXTRA=("python$v" "python$v-venv"); break
      fi
    elif "$PM" -q list --available "python$v" >/dev/null 2>&1; then
      PYTHON="python$v"; EXTRA=("python$v"); break
    fi
  done
  if [ -z "$PYTHON" ]; then
    OWN=$(version python3)
    stop "has no @PYTHON_RANGE@ (its python3 is ${OWN:-missing}), nor one in its package archive"
  fi
elif [ "$PM" = apt ] && ! "$PYTHON" -c 'import ensurepip' >/dev/null 2>&1; then
  EXTRA=("python$(version "$PYTHON")-venv")   # Debian and Ubuntu keep venv's pip apart
fi

echo "setup.sh: $IMAGE, $PM, glibc $GLIBC_HERE: the kit's environment in $VENV with $PYTHON"
if [ "$PM" = apt ]; then
  apt-get install -y -qq "${PACKAGES[@]}" ${EXTRA[@]+"${EXTRA[@]}"} >/dev/null
else
  "$PM" install -y -q "${PACKAGES[@]}" ${EXTRA[@]+"${EXTRA[@]}"} >/dev/null
fi
"$PYTHON" -m venv "$VENV"

PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
if [ -n "$EXTRA_INDEX_URL" ]; then
  PIP+=(--extra-index-url "$EXTRA_INDEX_URL")
fi
"${PIP[@]}" --upgrade pip
if [ -n "$TORCH_INDEX_URL" ]; then   # torch from its own index first: the CPU build, not PyPI's CUDA one
  "${PIP[@]}" --index-url "$TORCH_INDEX_URL" @TORCH_PIN@
fi
# The kit's dependencies exactly as pyproject.toml pins them, then the kit itself (editable: the
# hidden references stay in $SOURCE, which only root may read).
"${PIP[@]}" @PINS@
"${PIP[@]}" -e "$SOURCE"

# The course's files for the grading user only; the environment readable by the student's uid.
chmod -R go-rwx "$SOURCE"
chmod -R go-w,a+rX "$VENV"
"$VENV/bin/python" -c "import torch, nbformat, autograder.run_autograder"
echo "setup.sh: installed in ${SECONDS} s: $(du -sh "$VENV" | cut -f1) in $VENV"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this once per submission, as root, in a fresh container (written by
# `course gradescope-package`): it grades $ROOT/submission into $ROOT/results/results.json and
# leaves a results.json there whatever the upload is.
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${COURSE_PYTHON:-${COURSE_VENV:-/opt/course-venv}/bin/python}"
SOURCE="$ROOT/source"
RESULTS="$ROOT/results/results.json"

mkdir -p "$ROOT/results"
rm -f "$RESULTS"
# Only the grading user may read the course's files (the hidden references), the upload and the
# results; student code runs as another uid where the grader is root.
chmod go-rwx "$ROOT"
chmod -R go-rwx "$SOURCE" "$ROOT/submission" "$ROOT/results" 2>/dev/null
cd "$ROOT" 2>/dev/null || cd /
# This shell is the supervisor: the grader and everything it starts are the out-of-memory killer's
# first choice (raising one's own score needs no privilege), this shell its last, so a grader killed
# for the container's memory still leaves a results.json.
(echo 1000 > /proc/self/oom_score_adj 2>/dev/null || true
 PYTHONPATH="$SOURCE" exec "$PYTHON" -m autograder.run_autograder @ASSIGNMENT@ --root "$ROOT")
status=$?
if [ ! -s "$RESULTS" ]; then
  if [ "$status" -eq 137 ]; then
    why="the grader was killed (signal 9), most likely by the container's memory limit: tell the course staff"
  elif [ "$status" -gt 128 ]; then
    why="the grader was stopped by signal $((status - 128)): tell the course staff"
  else
    why="the autograder failed before grading (exit status $status): tell the course staff"
  fi
  printf '{"score": 0.0, "execution_time": %d, "output": "%s", "tests": [], "visibility": "visible", '\
'"stdout_visibility": "hidden"}\n' "$SECONDS" "$why" > "$RESULTS"
fi
exit 0
"""


# ---- the package ---------------------------------------------------------------------------

def pins() -> list[str]:
    """The kit's dependencies as its pyproject.toml pins them (the one ``KIT`` packs, from the kit's
    checkout: a course folder need not have one)."""
    return list(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"])


def scripts(assignment: str, extra_index_url: str = "", torch_index_url: str = TORCH_CPU_INDEX) -> dict[str, str]:
    """setup.sh and run_autograder for ``assignment``, filled in."""
    for text in (assignment, extra_index_url, torch_index_url):
        if any(c in text for c in "\"'`$\\\n"):
            raise CourseError(f"{text!r} cannot be written into a shell script: use plain characters")
    pinned = pins()
    torch = [p for p in pinned if p.replace(" ", "").startswith("torch==")]
    fill = {"@PINS@": " ".join(shlex.quote(p) for p in pinned), "@EXTRA_INDEX_URL@": extra_index_url,
            "@TORCH_INDEX_URL@": torch_index_url, "@TORCH_PIN@": " ".join(shlex.quote(p) for p in torch),
            "@CANDIDATES@": " ".join(f"python{v}" for v in PYTHONS), "@VERSIONS@": "|".join(PYTHONS),
            "@NEWEST_FIRST@": " ".join(PYTHONS), "@GLIBC@": GLIBC,
            "@PYTHON_RANGE@": f"Python {PYTHONS[-1]} to {PYTHONS[0]}"}
    setup = SETUP_SH
    for mark, text in fill.items():
        setup = setup.replace(mark, text)
    return {"setup.sh": setup, "run_autograder": RUN_AUTOGRADER.replace("@ASSIGNMENT@", shlex.quote(assignment))}


def course_files(assignment: str, course: Course | Path | None = None) -> dict[str, Path]:
    """Archive name -> file, for every file the package holds: ``KIT`` from the kit's checkout,
    ``COURSE`` from ``course`` (default: the course folder this runs in). A link inside its folder
    is stored as what it points at; a link out of it is an error."""
    files: dict[str, Path] = {}

    def add(name: str, path: Path, top: Path) -> None:
        if path.is_symlink():
            target = path.resolve()
            if not target.is_relative_to(top):
                raise CourseError(f"{path} links out of {top} ({target}): the package cannot hold it")
            path = target
        if path.is_dir():
            for child in sorted(path.iterdir()):
                if not (child.name in SKIP_DIRS and child.is_dir()) and not child.name.endswith(SKIP_SUFFIXES):
                    add(f"{name}/{child.name}", child, top)
        elif path.is_file():
            files[name] = path

    for top, entries in ((REPO.resolve(), KIT), (Course.of(course).root, COURSE)):
        for entry in entries:
            name = entry.format(a=assignment)
            if not (top / name).exists():
                raise CourseError(f"{top / name} is missing: the package needs it (run `course release {assignment}`)")
            add(name, top / name, top)
    return files


def build(assignment: str, out: Path, course: Course | Path | None = None) -> Path:
    """Write Gradescope's autograder package for ``assignment`` of ``course`` (default: the course
    folder this runs in) to ``out``: the kit's runtime from its checkout, the set from the course."""
    course = Course.of(course)
    a = Assignment(assignment, course.root)
    for notebook in a.notebooks:
        a.cells(notebook)           # the source notebooks exist
        a.cells(notebook, released=True)
    extra = os.environ.get("COURSE_EXTRA_INDEX_URL", "")
    torch_index = os.environ.get("COURSE_TORCH_INDEX_URL", TORCH_CPU_INDEX)
    entries = {name: text.encode() for name, text in scripts(assignment, extra, torch_index).items()}
    files = course_files(assignment, course)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(_entry(name, 0o755), data)
        for name, path in sorted(files.items()):
            mode = 0o755 if os.stat(path).st_mode & stat.S_IXUSR else 0o644
            z.writestr(_entry(name, mode), path.read_bytes())
    partial.replace(out)
    return out


def _entry(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, STAMP)
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info
