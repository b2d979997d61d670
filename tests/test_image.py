"""The container image for TAs without Linux, tested where no container engine is.

The Dockerfile may only build through Makefile targets that exist and that `make test` runs
itself; the seccomp profile we ship must be Docker's default profile (deny by default) plus, each
with its reason, exactly what the sandbox needs. The profile is also loaded for real (its rules
chosen as Docker does for a container with Docker's default capabilities, then loaded through
libseccomp, as Docker's runtime does) around a grader: the full sandbox starts under it and grades
the reference to 100, and the same profile without its additions (Docker's default) makes the
sandbox refuse.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.compat import tomllib
from autograder.grader_side.assignment import REPO, Assignment
from autograder.tooling.sampleclass import write_submission
from docker_seccomp import DOCKER_DEFAULT, plan, run_under

DOCKERFILE = REPO / "Dockerfile"
PROFILE = REPO / "docs" / "seccomp-course.json"
ACTIONS = {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
           "SCMP_ACT_TRAP", "SCMP_ACT_TRACE", "SCMP_ACT_LOG"}
# What bubblewrap and each grading session call that Docker's default profile refuses without CAP_SYS_ADMIN
# (autograder/grader_side/sandbox/: view.py's bwrap options, lifecycle.py's unshare, view.enter's mounts):
# clone with namespace flags, and the rest outright.
SANDBOX_NEEDS = {"clone", "unshare", "mount", "umount2", "pivot_root", "sethostname"}
# What Docker's default profile refuses (a container without CAP_SYS_ADMIN) and no grading step needs:
# still refused. clone3 keeps Docker's ENOSYS (libc then uses clone, whose flags a filter can read). (Docker
# allows ptrace and process_vm_* on kernels from 4.8; the sandbox's own filter refuses them to student code.)
STILL_DENIED = {"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "kexec_load", "init_module",
                "finit_module", "delete_module", "kexec_file_load", "pidfd_getfd", "kcmp", "reboot",
                "swapon", "userfaultfd", "open_by_handle_at", "acct", "settimeofday", "setns", "umount",
                "fsopen", "fsmount", "move_mount", "open_tree", "mount_setattr", "syslog", "quotactl",
                "setdomainname", "lookup_dcookie", "fanotify_init"}


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions (keyword, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def make_dry_run(*targets: str) -> list[str]:
    """The commands ``make`` would run for ``targets``, with a venv that is never up to date."""
    proc = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(REPO), "VENV=/nonexistent/venv",
                           *targets], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


# ---- the Dockerfile -------------------------------------------------------------------------

def test_the_image_is_built_only_by_make_targets_that_exist_and_make_test_runs():
    steps = instructions()
    runs = [args for kind, args in steps if kind == "RUN"]
    targets = []
    for run in runs:
        for command in (c.strip() for c in run.split("&&")):
            words = shlex.split(command)
            if words[0] == "make":
                targets += words[1:]
    assert "image-deps" in targets
    assert not any("pip" in run for run in runs), "the environment is the Makefile's business"
    # every target exists (make -n fails on an unknown one) ...
    image = make_dry_run(*targets)
    # ... and `make test` and `make test-fast` run exactly the same steps first
    for suite in ("test", "test-fast"):
        assert make_dry_run(suite)[:len(image)] == image
    assert any("pip install" in line and "-e" in line for line in image)
    assert any("bubblewrap libseccomp2" in line for line in image)


def test_the_image_runs_the_python_the_kit_requires_and_copies_what_exists():
    base = next(args for kind, args in instructions() if kind == "FROM")
    version = re.match(r"python:(\d+)\.(\d+)-slim-bookworm$", base)
    assert version, base
    required = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert tuple(map(int, version.groups())) >= tuple(map(int, required.removeprefix(">=").split(".")))
    for kind, args in instructions():
        if kind == "COPY":
            *sources, _ = shlex.split(args)
            assert all((REPO / s).exists() for s in sources), args
    env = " ".join(args for kind, args in instructions() if kind == "ENV")
    assert "/opt/course/.venv/bin" in env
    assert next(args for kind, args in instructions() if kind == "USER") != "root"


def test_the_build_context_leaves_out_the_environment_git_and_student_data():
    ignored = {line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "tests", "submitted", "autograded", "feedback", "downloaded", "gradebook.db", "out",
            "results.json", "autograder.zip", "**/__pycache__"} <= ignored
    # and nothing the kit needs to install or grade
    assert not ignored & {"autograder", "solutions", "assignments", "pyproject.toml", "Makefile", "nbgrader_config.py"}


# ---- the seccomp profile ----------------------------------------------------------------------

def _libseccomp():
    try:
        lib = ctypes.CDLL("libseccomp.so.2")
    except OSError:
        pytest.skip("libseccomp2 is not installed (make sandbox)")
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    return lib


def _unconditional(planned: dict) -> dict[str, set[str]]:
    """Each name a plan's argument-free rules give an action, with every action they give it."""
    actions: dict[str, set[str]] = {}
    for rule in planned["rules"]:
        if not rule["args"]:
            allow = rule["action"] == "SCMP_ACT_ALLOW"
            actions.setdefault(rule["name"], set()).add("allow" if allow else f"{rule['action']}/{rule['errno']}")
    return actions


def test_the_seccomp_profile_is_a_docker_profile_allowing_what_the_sandbox_needs():
    profile = json.loads(PROFILE.read_text())
    # Docker's own default profile (tests/data/docker-default-seccomp.json: moby/profiles seccomp/default.json
    # at commit 3c28324314729dbade8287e868eef6338c42807a, as moby/moby vendors it at b985e2313a86).
    docker = json.loads(DOCKER_DEFAULT.read_text())
    lib = _libseccomp()
    for rule in profile["syscalls"]:
        assert set(rule) <= {"names", "action", "errnoRet", "args", "comment", "includes", "excludes"}
        assert rule["action"] in ACTIONS and rule["names"] and isinstance(rule.get("errnoRet", 1), int)
    # Deny by default, as Docker does, with Docker's architectures and every rule of Docker's, unchanged:
    # all Docker allows (some calls only with certain arguments, arches or capabilities) stays allowed.
    assert profile["defaultAction"] == docker["defaultAction"] == "SCMP_ACT_ERRNO"
    assert profile["defaultErrnoRet"] == docker["defaultErrnoRet"] and profile["archMap"] == docker["archMap"]
    assert [rule for rule in profile["syscalls"] if rule in docker["syscalls"]] == docker["syscalls"]
    # Beyond Docker's: allowances only, unconditional, each saying why; exactly what the sandbox needs.
    additions = [rule for rule in profile["syscalls"] if rule not in docker["syscalls"]]
    for rule in additions:
        assert rule["action"] == "SCMP_ACT_ALLOW" and not {"args", "includes", "excludes"} & set(rule), rule
        assert len(rule.get("comment", "")) > 40, f"{rule['names']}: say why the sandbox needs it"
        for name in rule["names"]:     # (Docker's own may be newer than this libseccomp: runc skips those)
            assert lib.seccomp_syscall_resolve_name(name.encode()) != -1, f"{name} is no system call"
    assert {name for rule in additions for name in rule["names"]} == SANDBOX_NEEDS
    # What a container with Docker's default capabilities gets (as Docker chooses the rules): the
    # sandbox's needs allowed whatever the arguments, the rest of Docker's refusals kept, and no call
    # given two actions (libseccomp would keep the first one silently).
    mine, dockers = _unconditional(plan(profile)), _unconditional(plan(docker))
    assert all(mine[name] == {"allow"} for name in SANDBOX_NEEDS)
    assert not STILL_DENIED & {name for name, actions in mine.items() if "allow" in actions}
    assert mine["clone3"] == dockers["clone3"] == {"SCMP_ACT_ERRNO/38"}
    assert all(len(actions) == 1 for actions in mine.values()), {n: a for n, a in mine.items() if len(a) > 1}
    guide = (REPO / "docs" / "where-to-grade.md").read_text()     # the image's commands, as TAs run them
    assert "--security-opt seccomp=docs/seccomp-course.json" in guide


GRADE = r'''
import json, sys
from pathlib import Path
from autograder import api
try:
    doc = api.autograde("transformer-block", Path(sys.argv[1]), workers=1)
except api.CourseError as exc:
    print(json.dumps({"refused": str(exc)}))
else:
    print(json.dumps({"isolation": doc["isolation"], "score": doc["students"]["ref"]["score"]}))
'''


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("class")
    write_submission(folder / "ref", Assignment("transformer-block", REPO), nested=False)
    return folder


def under_profile(mode: str, submissions: Path, tmp_path: Path) -> dict:
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed (make sandbox)")
    _libseccomp()
    proc = run_under(PROFILE, mode, [sys.executable, "-c", GRADE, str(submissions)], tmp_path,
                     capture_output=True, text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_full_sandbox_starts_and_grades_under_the_profile(reference, tmp_path):
    with_profile = under_profile("profile", reference, tmp_path)
    assert with_profile.get("score") == 100, with_profile
    isolation = with_profile["isolation"]
    assert "weak" not in isolation
    assert isolation["pid"] == "namespace" and isolation["network"] == "namespace"
    assert isolation["filesystem"].startswith("allowlist (bubblewrap)")


def test_without_the_profiles_namespace_allowances_the_sandbox_refuses(reference, tmp_path):
    docker_default = under_profile("docker-namespaces", reference, tmp_path)
    assert "cannot be isolated here" in docker_default.get("refused", ""), docker_default
