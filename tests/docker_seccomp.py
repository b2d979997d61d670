"""Docker's seccomp profiles without Docker: choose a profile's rules as Docker does for a container
with Docker's default capabilities, load them into a process with libseccomp, as Docker's runtime
(runc) does, then run a command under them (tests/test_image.py, tests/test_gradescope.py)."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

# Docker's own default profile, vendored unchanged: moby/profiles seccomp/default.json at commit
# 3c28324314729dbade8287e868eef6338c42807a (2026-05-06), the copy moby/moby vendors at
# b985e2313a8676e18072b442911fc8f64f17d440 (vendor/github.com/moby/profiles/seccomp/default.json).
DOCKER_DEFAULT = Path(__file__).parent / "data" / "docker-default-seccomp.json"

# The capabilities Docker gives a container unless told otherwise (moby's oci/caps DefaultCapabilities):
# no CAP_SYS_ADMIN, so the profile's rules that include it are skipped and those that exclude it apply.
DOCKER_CAPS = frozenset({
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID",
    "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
    "CAP_AUDIT_WRITE"})

# Go's names for this machine's architecture, as the profile's includes/excludes "arches" spell them.
GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "i686": "386", "ppc64le": "ppc64le",
          "s390x": "s390x", "riscv64": "riscv64", "mips64": "mips64", "loongarch64": "loong64"}

# libseccomp's comparison operators, numbered as in seccomp.h's enum scmp_compare.
OPERATORS = {"SCMP_CMP_NE": 1, "SCMP_CMP_LT": 2, "SCMP_CMP_LE": 3, "SCMP_CMP_EQ": 4, "SCMP_CMP_GE": 5,
             "SCMP_CMP_GT": 6, "SCMP_CMP_MASKED_EQ": 7}


def _kernel() -> tuple[int, int]:
    """This kernel's major and minor version, for a rule's includes.minKernel."""
    major, minor = os.uname().release.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def applies(rule: dict, caps=DOCKER_CAPS, arch: str | None = None, kernel: tuple[int, int] | None = None) -> bool:
    """Whether Docker uses ``rule`` for a container with ``caps`` on ``arch`` (Go's name; this machine's
    by default) and ``kernel``: every included arch, cap and the minimum kernel match, no excluded one
    does (moby/profiles seccomp_linux.go, setupSeccomp)."""
    arch = arch or GOARCH.get(platform.machine(), platform.machine())
    includes, excludes = rule.get("includes") or {}, rule.get("excludes") or {}
    if includes.get("arches") and arch not in includes["arches"]:
        return False
    if not set(includes.get("caps") or ()) <= set(caps):
        return False
    if includes.get("minKernel"):
        wanted = tuple(int(part) for part in includes["minKernel"].split(".")[:2])
        if (kernel or _kernel()) < wanted:
            return False
    return arch not in (excludes.get("arches") or ()) and not set(excludes.get("caps") or ()) & set(caps)


def _action(name: str, errno_ret: int | None) -> dict:
    """A profile action with the errno runc gives it (EPERM when the profile names none)."""
    return {"action": name, "errno": 1 if errno_ret is None else errno_ret}


def plan(profile: dict, caps=DOCKER_CAPS) -> dict:
    """What runc hands libseccomp for ``profile`` in a container with ``caps``: the default action,
    the architectures (this machine's and its archMap sub-architectures) and, in the profile's order,
    one entry per applicable rule and name (conditions on one argument repeated: one rule each)."""
    rules = []
    for rule in profile["syscalls"]:
        if not applies(rule, caps):
            continue
        conditions = [[a["index"], OPERATORS[a["op"]], a["value"], a.get("valueTwo", 0)]
                      for a in rule.get("args") or ()]
        indexes = [c[0] for c in conditions]
        groups = [[c] for c in conditions] if len(set(indexes)) < len(indexes) else [conditions]
        for name in rule["names"]:
            for group in groups:
                rules.append({"name": name, **_action(rule["action"], rule.get("errnoRet")), "args": group})
    return {"default": _action(profile["defaultAction"], profile.get("defaultErrnoRet")),
            "arch_map": profile.get("archMap") or [], "rules": rules}


def without_additions(profile: dict, docker_default: dict) -> dict:
    """``profile`` with only the rules it shares with ``docker_default``: its additions removed."""
    return {**profile, "syscalls": [rule for rule in profile["syscalls"] if rule in docker_default["syscalls"]]}


# Loads a plan (see ``plan``) into this process with libseccomp as runc does: the native architecture
# and its archMap sub-architectures; rules whose action is the default's skipped; a name this libseccomp
# does not know ignored; then runs argv.
LOADER = r'''
import ctypes, json, sys, os
lib = ctypes.CDLL("libseccomp.so.2")
class Cmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_arch_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
lib.seccomp_arch_native.restype = ctypes.c_uint32
lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                       ctypes.POINTER(Cmp)]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
def action(a): return 0x7FFF0000 if a["action"] == "SCMP_ACT_ALLOW" else 0x00050000 | a["errno"]
def arch(name): return lib.seccomp_arch_resolve_name(name.removeprefix("SCMP_ARCH_").lower().encode())
plan = json.load(open(sys.argv[1]))
default = action(plan["default"])
ctx = lib.seccomp_init(default)
for entry in plan["arch_map"]:
    if arch(entry["architecture"]) == lib.seccomp_arch_native():
        for sub in entry.get("subArchitectures") or ():
            assert lib.seccomp_arch_add(ctx, arch(sub)) in (0, -17), sub    # -EEXIST: already there
for rule in plan["rules"]:
    nr = lib.seccomp_syscall_resolve_name(rule["name"].encode())
    if nr == -1 or action(rule) == default:
        continue
    cmps = [Cmp(*c) for c in rule["args"]]
    array = (Cmp * max(1, len(cmps)))(*cmps)
    assert lib.seccomp_rule_add_array(ctx, action(rule), nr, len(cmps), array) == 0, rule
assert lib.seccomp_load(ctx) == 0
os.execv(sys.argv[2], sys.argv[2:])
'''


def run_under(profile: Path, mode: str, argv: list[str], folder: Path, wrapper=(),
              **kwargs) -> subprocess.CompletedProcess:
    """``argv`` run under ``profile`` as Docker applies it to a container with Docker's default
    capabilities, inside ``wrapper`` (a command line that runs the rest, such as a bubblewrap view)
    if given. ``mode``: "profile", as written; or "docker-namespaces", the profile without its
    additions to Docker's default profile, as a container started without it (Gradescope's) has."""
    doc = json.loads(profile.read_text())
    if mode == "docker-namespaces":
        doc = without_additions(doc, json.loads(DOCKER_DEFAULT.read_text()))
    elif mode != "profile":
        raise ValueError(f"mode is 'profile' or 'docker-namespaces', not {mode!r}")
    loader, planned = folder / "seccomp_loader.py", folder / "seccomp_plan.json"
    loader.write_text(LOADER)
    planned.write_text(json.dumps(plan(doc)))
    return subprocess.run([*wrapper, sys.executable, str(loader), str(planned), *argv], **kwargs)
