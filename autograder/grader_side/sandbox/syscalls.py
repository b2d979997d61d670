"""System calls the standard library does not wrap: unshare, mount, prctl, capset, sethostname.

Each wrapper raises OSError with the call's name and the kernel's reason.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWTIME = 0x00000080
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# What every session gets on top of the zygote's view.
SESSION_NAMESPACES = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
ALL_NAMESPACES = SESSION_NAMESPACES | CLONE_NEWTIME | CLONE_NEWCGROUP | CLONE_NEWUSER

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.unshare.argtypes = [ctypes.c_int]
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class SockFprog(ctypes.Structure):
    """struct sock_fprog: a classic BPF program for PR_SET_SECCOMP."""
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _fail(what: str) -> OSError:
    e = ctypes.get_errno()
    return OSError(e, f"{what}: {os.strerror(e)}")


def unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        raise _fail("unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return None if s is None else os.fsencode(s)

    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise _fail(f"mount {target}")


def prctl(option: int, arg: int = 0, arg2: int = 0) -> None:
    if _libc.prctl(option, arg, arg2, 0, 0) != 0:
        raise _fail(f"prctl({option})")


def sethostname(name: bytes) -> None:
    if _libc.sethostname(name, len(name)) != 0:
        raise _fail("sethostname")


def drop_capabilities() -> None:
    head = _CapHeader(0x20080522, 0)           # _LINUX_CAPABILITY_VERSION_3
    data = (ctypes.c_uint32 * 6)()
    if _libc.capset(ctypes.byref(head), ctypes.byref(data)) != 0:
        raise _fail("capset")


def drop_uid(uid: int, gid: int | None = None) -> None:
    """Become ``uid`` (and ``gid``, by default the same number) entirely: real, effective and saved."""
    gid = uid if gid is None else gid
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def load_seccomp(bpf: bytes) -> None:
    """Install a compiled filter on this thread (and every thread or process it starts)."""
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = SockFprog(len(bpf) // 8, ctypes.addressof(buf))
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
        raise _fail("seccomp")


MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
_HUGE = 2 << 20


def collapse_anonymous_memory() -> int:
    """Back this process's private anonymous memory with huge pages where the kernel can
    (MADV_COLLAPSE, Linux 6.1+), and return how many MiB it moved. A fork then copies one
    page-table entry per 2 MiB instead of 512, and an exit frees as few."""
    moved = 0
    try:
        with open("/proc/self/maps") as maps:
            regions = [line.split() for line in maps]
    except OSError:
        return 0
    for fields in regions:
        perms, path = fields[1], fields[5] if len(fields) > 5 else ""
        if not perms.startswith("rw") or perms[3] != "p" or path not in ("", "[heap]"):
            continue
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        start, end = -(-lo // _HUGE) * _HUGE, hi // _HUGE * _HUGE
        if end > start and _libc.madvise(start, end - start, MADV_HUGEPAGE) == 0 \
                and _libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
            moved += (end - start) >> 20
    return moved
