"""The system-call filter every session runs under, compiled once by the zygote with libseccomp.

Everything is allowed except what could reach outside the session, carry data between
sessions or hold memory outside its limits: the kernel keyring (shared by every process of a
uid), tracing other processes, mounts and new namespaces, BPF and perf, io_uring (its requests
bypass this filter), kernel modules, anonymous memory files (``memfd_create``), and opening
sockets (the grader's socket is already open; ``socketpair`` stays allowed: it reaches
nobody). A denied call fails with EPERM, so student code sees an ordinary OSError. System
calls of another architecture (32-bit entry points) kill the process.
"""

from __future__ import annotations

import ctypes
import errno
import os

from .syscalls import ALL_NAMESPACES

DENIED = (
    "keyctl", "add_key", "request_key",                                   # the uid's keyrings
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init",
    "memfd_create",                                                       # memory outside every cap
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "socket",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "quotactl", "swapon", "swapoff", "reboot", "acct", "syslog", "iopl", "ioperm",
)
# Denied as well when the session's own IPC namespace cannot be given small SysV limits.
SYSV_IPC = ("shmget", "msgget", "semget")

_ALLOW = 0x7FFF0000
_CMP_MASKED_EQ = 7


def _errno(e: int) -> int:
    return 0x00050000 | (e & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


def _library() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        raise OSError(errno.ENOENT, "libseccomp.so.2 is missing: install the Debian package libseccomp2") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


# What Docker's default profile (and many unprivileged pods) refuse: new namespaces and mounts.
NAMESPACES = ("mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount", "unshare", "setns")


def build(deny_sysv_ipc: bool, denied: tuple[str, ...] = DENIED) -> bytes:
    """The filter as a classic BPF program (bytes of struct sock_filter), ready for load_seccomp:
    ``denied`` (and clone with namespace flags) fail with EPERM. ``NAMESPACES`` instead of
    ``DENIED`` gives the filter of a container that refuses namespaces, to test the sandbox there."""
    lib = _library()
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        raise OSError(errno.ENOMEM, "seccomp_init failed")
    try:
        def rule(name: str, action: int, *cmps: _ArgCmp) -> None:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                return                  # not a system call on this architecture
            args = (_ArgCmp * len(cmps))(*cmps) if cmps else None
            rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), args)
            if rc != 0:
                raise OSError(-rc, f"seccomp rule for {name}: {os.strerror(-rc)}")

        for name in denied + (SYSV_IPC if deny_sysv_ipc else ()):
            rule(name, _errno(errno.EPERM))
        # clone() may start threads and processes, never namespaces; clone3() hides its flags
        # in memory a filter cannot read, so it reports "not implemented" and libc uses clone().
        bit = 1
        while bit <= ALL_NAMESPACES:
            if bit & ALL_NAMESPACES:
                rule("clone", _errno(errno.EPERM), _ArgCmp(0, _CMP_MASKED_EQ, bit, bit))
            bit <<= 1
        rule("clone3", _errno(errno.ENOSYS))
        fd = os.memfd_create("seccomp", os.MFD_CLOEXEC)
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
            if rc != 0:
                raise OSError(-rc, f"seccomp_export_bpf: {os.strerror(-rc)}")
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)
