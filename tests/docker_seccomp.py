"""Docker's seccomp profiles without Docker: load one into a process with libseccomp, as Docker's
runtime does, then run a command under it (tests/test_image.py, tests/test_gradescope.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Loads a Docker seccomp profile into this process with libseccomp (as Docker's runtime does:
# rules equal to the default action are skipped; a name unknown here is ignored), then runs argv.
# With "docker-namespaces", the profile's allowances for the sandbox get Docker's default treatment
# without CAP_SYS_ADMIN instead: clone with a namespace flag, unshare, setns, mount, umount2 and
# pivot_root refused with EPERM, clone3 with ENOSYS.
LOADER = r'''
import ctypes, json, sys, os
lib = ctypes.CDLL("libseccomp.so.2")
class Cmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                       ctypes.POINTER(Cmp)]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
ALLOW = 0x7FFF0000
def errno(n): return 0x00050000 | n
def action(name, ret): return ALLOW if name == "SCMP_ACT_ALLOW" else errno(ret)
profile, mode = json.load(open(sys.argv[1])), sys.argv[2]
default = action(profile["defaultAction"], profile.get("defaultErrnoRet", 1))
ctx = lib.seccomp_init(default)
def add(name, act, *cmps):
    nr = lib.seccomp_syscall_resolve_name(name.encode())
    if nr < 0 or act == default:
        return
    array = (Cmp * max(1, len(cmps)))(*cmps)
    assert lib.seccomp_rule_add_array(ctx, act, nr, len(cmps), array) == 0, name
rules = profile["syscalls"]
if mode == "docker-namespaces":
    rules = [r for r in rules if r["action"] != "SCMP_ACT_ALLOW"]
    for name in ("unshare", "setns", "mount", "umount2", "pivot_root"):
        add(name, errno(1))
    add("clone3", errno(38))
    for bit in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        add("clone", errno(1), Cmp(0, 7, bit, bit))     # SCMP_CMP_MASKED_EQ: (flags & bit) == bit
for rule in rules:
    for name in rule["names"]:
        add(name, action(rule["action"], rule.get("errnoRet", 1)))
assert lib.seccomp_load(ctx) == 0
os.execv(sys.argv[3], sys.argv[3:])
'''



def run_under(profile: Path, mode: str, argv: list[str], folder: Path, wrapper=(),
              **kwargs) -> subprocess.CompletedProcess:
    """``argv`` run under ``profile`` (``mode``: "profile" as written, or "docker-namespaces"),
    inside ``wrapper`` (a command line that runs the rest, such as a bubblewrap view) if given."""
    loader = folder / "seccomp_loader.py"
    loader.write_text(LOADER)
    return subprocess.run([*wrapper, sys.executable, str(loader), str(profile), mode, *argv], **kwargs)
