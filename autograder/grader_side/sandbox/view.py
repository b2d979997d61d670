"""What the sandboxed processes see of the file system.

The zygote runs under bubblewrap (``bwrap``) with an allowlist built here: an empty root, the
system's ``/usr`` and the Python installation read-only (with the course's own files cut out
of its site-packages), a few files of ``/etc`` the dynamic loader needs, a minimal ``/dev``,
and ``LIB`` holding only the packages the sandbox was given (the request handler's, and this
package, which each session covers before running student code). Nothing else of the host
exists there: no ``/run``, ``/var``, ``/home``, host ``/tmp`` or sockets, no other copy of the
course. Each session then adds, in its own mount namespace, a fresh ``/proc``, a private
``/tmp`` and ``/dev/shm`` with a size cap.
"""

from __future__ import annotations

import glob
import importlib.metadata
import os
import shutil
import site
import sys
import sysconfig

from . import syscalls

LIB = "/sandbox/lib"          # where the allowed packages appear
RUNTIME = "sandbox"           # this package's name under LIB
WORKDIR = "/tmp/work"         # the session's working directory (and HOME)
STASH = "/sandbox/python"     # a second view of Python directories under /tmp, which a session's own /tmp covers
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime")
SYSTEM = ("/usr",)
MERGED_USR = {"/bin": "usr/bin", "/sbin": "usr/sbin", "/lib": "usr/lib", "/lib64": "usr/lib64"}
COURSE_PACKAGES = ("autograder", "solutions")   # what the course installs; never in the view


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def python_paths() -> list[str]:
    """Directories of the Python installation the sessions need, outermost only."""
    paths = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sysconfig.get_paths().values() if p)
    try:
        paths.update(site.getsitepackages())
    except AttributeError:
        pass
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})
    return [p for p in real if not any(q != p and _within(p, q) for q in real)]


def course_files(site_dirs: list[str]) -> list[str]:
    """Files and folders the course's own distribution put into these site-packages folders.

    An installed copy of the course (editable or not) must not be importable next to student
    code: a regular install carries the references.
    """
    names = set(COURSE_PACKAGES)
    for dist in importlib.metadata.distributions(path=site_dirs):
        try:
            top = set((dist.read_text("top_level.txt") or "").split())
        except OSError:
            continue
        if top & names:
            names |= top | {str(f).split("/")[0] for f in (dist.files or ())}
    names -= {"..", "__pycache__"}
    return sorted(os.path.join(d, n) for d in site_dirs for n in names if os.path.lexists(os.path.join(d, n)))


def site_dirs(prefixes: list[str]) -> list[str]:
    """Every site-packages or dist-packages folder of these installations, and of sys.path."""
    found = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    for prefix in prefixes:
        for pattern in ("lib*/python3*/*-packages", "local/lib*/python3*/*-packages"):
            found += glob.glob(os.path.join(prefix, pattern))
    return sorted({os.path.realpath(p) for p in found if os.path.isdir(p)})


def bwrap_args(packages: dict[str, str], hide: list[str], keep: list[str], privileged: bool) -> tuple[list[str], dict]:
    """bwrap's options for the zygote, and what the view shows (for Sandbox.isolation)."""
    pythons = python_paths()
    shown = pythons + list(SYSTEM) + [os.path.realpath(k) for k in keep]
    covered = [p for p in course_files(site_dirs(pythons + list(SYSTEM))) + hide if any(_within(p, q) for q in shown)]
    args = ["--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox",
            "--die-with-parent", "--tmpfs", "/", "--tmpfs", "/tmp"]
    if privileged:
        # The zygote stays root in the host's user namespace so that each session can get a
        # dedicated uid; it keeps only what setting up a session needs.
        for cap in ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_KILL"):
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-user", "--cap-add", "CAP_SYS_ADMIN"]
    made: set[str] = {"/", "/tmp"}

    def parents(path: str) -> None:
        parts = path.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:i])
            if d not in made:
                made.add(d)
                args.extend(["--perms", "0755", "--dir", d])

    for p in SYSTEM:
        if os.path.isdir(p):
            args += ["--ro-bind", p, p]
    for link, target in MERGED_USR.items():
        if os.path.islink(link):
            args += ["--symlink", target, link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    for f in ETC_FILES:
        if os.path.exists(f):
            parents(f)
            args += ["--ro-bind", f, f]
    visible = []
    for p in sorted(set(pythons + [os.path.realpath(k) for k in keep if os.path.exists(k)])):
        if any(_within(p, s) for s in SYSTEM):
            continue
        parents(p)
        made.add(p)
        args += ["--ro-bind", p, p]
        visible.append(p)
        if _within(p, "/tmp"):   # each session mounts its own /tmp: it binds this one back from STASH
            parents(STASH + p)
            args += ["--ro-bind", p, STASH + p]
    stashed = [STASH + p for p in covered if _within(p, "/tmp") and any(_within(p, v) for v in visible)]
    for p in sorted(set(covered)) + sorted(stashed):
        if os.path.isdir(p.removeprefix(STASH)) and not os.path.islink(p.removeprefix(STASH)):
            args += ["--perms", "0555", "--tmpfs", p, "--remount-ro", p]
        elif os.path.lexists(p.removeprefix(STASH)):
            args += ["--ro-bind", "/dev/null", p]
    parents(LIB + "/x")
    for name, src in sorted(packages.items()):
        dest = f"{LIB}/{name}" if os.path.isdir(src) else f"{LIB}/{name}.py"
        args += ["--ro-bind", src, dest]
    args += ["--dev", "/dev", "--proc", "/proc", "--dir", "/dev/shm", "--remount-ro", "/",
             "--chdir", "/"]
    return args, {"visible_read_only": ["/usr", *visible], "cut_out": sorted(set(covered))}


def weak_lib(folder: str, packages: dict[str, str]) -> str:
    """Without bubblewrap: a COPY of the same packages, importable by name, readable by the
    sessions' uids. A copy, not links: the packages live in the kit's checkout (often the course
    folder), which the sessions are denied for the whole run (acl.py)."""
    lib = os.path.join(folder, "lib")
    os.makedirs(lib, 0o755, exist_ok=True)
    os.chmod(lib, 0o755)
    for name, src in packages.items():
        dest = os.path.join(lib, name if os.path.isdir(src) else name + ".py")
        if os.path.isdir(src):
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copyfile(src, dest)
    for root, dirs, files in os.walk(lib):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return lib


def _locked_flags(path: str) -> int:
    """The flags of the mount at ``path`` a remount must keep: inside a user namespace (a grader
    that is not root) nosuid, nodev and noexec of the mount it came from are locked, and a remount
    that drops them is refused."""
    have = os.statvfs(path).f_flag
    return ((syscalls.MS_NOSUID if have & os.ST_NOSUID else 0) | (syscalls.MS_NODEV if have & os.ST_NODEV else 0)
            | (syscalls.MS_NOEXEC if have & os.ST_NOEXEC else 0))


# -- inside a session (its own mount namespace; still privileged) -----------------------------

def enter(scratch_mb: int, shm_mb: int, owner: int | None) -> None:
    """Give this session its own /proc, a private capped /tmp and /dev/shm, and hide LIB/RUNTIME."""
    syscalls.mount(None, "/", None, syscalls.MS_REC | syscalls.MS_PRIVATE)
    syscalls.mount("proc", "/proc", "proc", syscalls.MS_NOSUID | syscalls.MS_NODEV | syscalls.MS_NOEXEC)
    flags = syscalls.MS_NOSUID | syscalls.MS_NODEV
    under_tmp = [p for p in python_paths() if _within(p, "/tmp")]   # a Python in a checkout under /tmp
    syscalls.mount("tmpfs", "/tmp", "tmpfs", flags, f"mode=1777,size={scratch_mb}m,nr_inodes=16384")
    for python in under_tmp:   # bound back read-only over the session's own /tmp
        if os.path.isdir(STASH + python):
            os.makedirs(python, 0o755, exist_ok=True)
            syscalls.mount(STASH + python, python, None, syscalls.MS_BIND | syscalls.MS_REC)
            syscalls.mount(None, python, None, syscalls.MS_REMOUNT | syscalls.MS_BIND | syscalls.MS_RDONLY
                           | syscalls.MS_REC | _locked_flags(python))
    syscalls.mount("tmpfs", "/dev/shm", "tmpfs", flags, f"mode=1777,size={shm_mb}m,nr_inodes=1024")
    runtime = os.path.join(LIB, RUNTIME)
    if os.path.isdir(runtime):
        # Covered rather than unmounted: inside a user namespace the bind mount is locked.
        syscalls.mount("tmpfs", runtime, "tmpfs", syscalls.MS_RDONLY | flags, "size=4k,nr_inodes=4,mode=555")
    os.mkdir(WORKDIR, 0o700)
    if owner is not None:
        os.chown(WORKDIR, owner, owner)
