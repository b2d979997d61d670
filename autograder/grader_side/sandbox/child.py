"""Code that runs in the processes the zygote forks for one session.

Process layout of a session (pids as the grader sees them):

    zygote
      └─ P   "intermediate": setsid(), creates the namespaces, forks G,
             then only waits for G and exits the same way G did.
           └─ G  PID 1 of the new PID namespace: finishes isolating itself
                 (mounts, uid, capabilities, rlimits), runs the notebook
                 cells, then answers requests until the socket closes.

The same code path is used once at zygote start-up in "probe" mode: every
isolation step is tried, what worked becomes the plan, and every later
session must achieve exactly that plan or refuse to run student code.

Everything in this module is imported by the zygote before it forks, so
G never has to import from the (possibly hidden) source tree.
"""

from __future__ import annotations

import ast
import ctypes
import errno
import inspect
import io
import json
import os
import resource
import signal
import socket
import stat
import sys
import tokenize

from . import frames

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NS_FLAGS = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

BASE_UID = 61000
WORKDIR = "/tmp/work"
# Scratch areas that get a fresh, private tmpfs in every session so that
# sessions cannot leave files for each other.
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
# Always hidden: per-user runtime dirs hold the grader user's sockets
# (session bus, agents), reachable by path even without a network.
ALWAYS_HIDDEN = ("/run/user",)

# Limits on what G accepts from the (trusted) grader.
_IN_HEADER = 1 << 30
_IN_BLOBS = 1 << 40

_libc = ctypes.CDLL(None, use_errno=True)
_libc.unshare.argtypes = [ctypes.c_int]
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

# Bound now so that student code replacing os.getpid cannot fool the
# check that stops forked copies of G from talking on the socket.
_getpid = os.getpid
_exit = os._exit


class SetupError(Exception):
    """An isolation step that the plan requires did not work."""


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class Context:
    """Everything a session needs, prepared by the zygote before forking."""

    def __init__(self, limits: dict, hide: list[str], keep: list[str], handler, stdlib: str):
        self.limits = limits
        self.hide = hide          # real paths to cover with an empty read-only tmpfs
        self.keep = keep          # real paths that must stay visible (read-only)
        self.handler = handler
        self.stdlib = stdlib
        self.plan: dict | None = None


# --------------------------------------------------------------------------
# small system-call wrappers

def _fail(what: str) -> OSError:
    e = ctypes.get_errno()
    return OSError(e, f"{what}: {os.strerror(e)}")


def _unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        raise _fail("unshare")


def _mount(source, target, fstype, flags, data=None) -> None:
    enc = (lambda s: None if s is None else os.fsencode(s))
    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise _fail(f"mount {target}")


def _prctl(option: int, arg: int = 0) -> None:
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        raise _fail(f"prctl({option})")


def _drop_capabilities() -> None:
    head = _CapHeader(0x20080522, 0)           # _LINUX_CAPABILITY_VERSION_3
    data = (ctypes.c_uint32 * 6)()
    if _libc.capset(ctypes.byref(head), ctypes.byref(data)) != 0:
        raise _fail("capset")


def _drop_uid(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _write_id_maps() -> None:
    uid, gid = os.getuid(), os.getgid()
    try:
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
    except FileNotFoundError:
        pass
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1\n")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1\n")


def _close_fds_except(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _null_stdio() -> None:
    fd = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(fd, target)
    if fd > 2:
        os.close(fd)


def _reset_signals() -> None:
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:
        pass
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _report(fd: int, obj: dict) -> None:
    data = (json.dumps(obj) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _vmsize_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise SetupError("could not read VmSize from /proc/self/status")


def _count_tasks_of(uid: int) -> int:
    """Threads currently owned by uid (they all count against RLIMIT_NPROC)."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status") as f:
                text = f.read()
        except OSError:
            continue
        real_uid = threads = None
        for line in text.splitlines():
            if line.startswith("Uid:"):
                real_uid = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
        if real_uid == uid and threads:
            n += threads
    return n


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return


# --------------------------------------------------------------------------
# P: the intermediate process

def intermediate(ctx: Context, slot: int, sock: socket.socket, report_fd: int, probe_fd: int,
                 workdir: str | None) -> None:
    """Body of P.  Never returns.

    P writes one JSON line to report_fd: {"pid1": ...} or {"error": ...}.
    probe_fd is -1 for a real session; for the start-up probe G writes its
    findings there.
    """
    code = 70
    probe = probe_fd >= 0
    try:
        _reset_signals()
        os.setsid()
        # The zygote is not dumpable, which would leave /proc/self owned by
        # root and the user-namespace id maps unwritable for a non-root P.
        _prctl(PR_SET_DUMPABLE, 1)
        _close_fds_except({sock.fileno(), report_fd, probe_fd})
        _null_stdio()
        os.umask(0o022)
        uid = BASE_UID + slot
        if probe:
            plan = _probe_namespaces(uid)
        else:
            plan = dict(ctx.plan)
            try:
                if plan["early_uid"]:
                    _drop_uid(uid)
                if plan["flags"]:
                    _unshare(plan["flags"])
                    if plan["userns"]:
                        _write_id_maps()
            except OSError as e:
                _report(report_fd, {"error": f"could not enter the sandbox namespaces ({e})"})
                _exit(70)
        me = os.getpid()
        pid1 = os.fork()
        if pid1 == 0:
            os.close(report_fd)
            _grandchild(ctx, plan, slot, sock, probe_fd, workdir, me)
        sock.close()
        if probe:
            os.close(probe_fd)
        _report(report_fd, {"pid1": pid1})
        os.close(report_fd)
        code = _wait_and_mirror(pid1)
    except BaseException:
        pass
    _exit(code)


def _probe_namespaces(uid: int) -> dict:
    plan = {"flags": 0, "userns": False, "early_uid": False, "dedicated": False,
            "mounts": False, "proc": False, "notes": []}
    if os.geteuid() == 0:
        try:
            _unshare(NS_FLAGS)
            plan.update(flags=NS_FLAGS, dedicated=True)
            return plan
        except OSError as e:
            plan["notes"].append(f"namespaces as root: {e}")
        try:
            _drop_uid(uid)
            plan.update(early_uid=True, dedicated=True)
        except OSError as e:
            plan["notes"].append(f"switching to uid {uid}: {e}")
    try:
        _unshare(NS_FLAGS | CLONE_NEWUSER)
    except OSError as e:
        plan["notes"].append(f"user namespace: {e}")
        return plan
    try:
        _write_id_maps()
    except OSError as e:
        # Stuck in a user namespace without an id map: this probe can tell no
        # more, and sessions will not try namespaces at all.
        plan["notes"].append(f"user namespace id map: {e}")
        plan["broken"] = True
        return plan
    plan.update(flags=NS_FLAGS | CLONE_NEWUSER, userns=True)
    return plan


def _wait_and_mirror(pid: int) -> int:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            return 70
    if os.WIFSIGNALED(status):
        # Die the same way, so the zygote can tell what happened to G.
        sig = os.WTERMSIG(status)
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if sig not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        return 128 + sig
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 70


# --------------------------------------------------------------------------
# G: PID 1 of the session

def _grandchild(ctx, plan, slot, sock, probe_fd, workdir, parent_pid) -> None:
    code = 70
    probe = probe_fd >= 0
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        # Inside a new PID namespace the parent lives outside it and
        # getppid() reports 0.
        if os.getppid() not in (parent_pid, 0):
            _exit(70)
        if plan["flags"] & CLONE_NEWPID:
            os.setsid()
        err = None
        info: dict = {}
        try:
            info = _enter(ctx, plan, slot, probe, workdir)
        except SetupError as e:
            err = str(e)
        except Exception as e:
            err = f"{type(e).__name__}: {e}"
        if probe:
            _report(probe_fd, {"plan": plan, "info": info, "error": err})
            _exit(0)
        _serve_session(ctx, sock, err)
    except BaseException:
        pass
    _exit(code)


def _required(probe: bool, what: str, fn, *args) -> bool:
    """Run one isolation step.  In probe mode a failure just returns False."""
    try:
        fn(*args)
        return True
    except OSError as e:
        if probe:
            return False
        raise SetupError(f"{what} failed ({e})") from None


def _enter(ctx: Context, plan: dict, slot: int, probe: bool, workdir: str | None) -> dict:
    """Finish isolating G.  Returns facts for the probe report."""
    info: dict = {"problems": [], "hidden": [], "kept_visible": []}
    uid = BASE_UID + slot
    vmsize = _vmsize_bytes()
    late_uid = plan["dedicated"] and not plan["early_uid"]
    if plan["flags"] & CLONE_NEWNS and not plan.get("broken"):
        if probe:
            plan["mounts"] = _required(True, "", _mount, None, "/", None, MS_REC | MS_PRIVATE)
        elif plan["mounts"]:
            _required(False, "making / private", _mount, None, "/", None, MS_REC | MS_PRIVATE)
        if plan["mounts"]:
            try:
                hidden, kept = _hide_and_keep(ctx, plan["dedicated"])
            except OSError as e:
                raise SetupError(f"hiding directories failed ({e})") from None
            info["hidden"], info["kept_visible"] = hidden, kept
            os.mkdir(WORKDIR, 0o700)
            if late_uid:
                os.chown(WORKDIR, uid, uid)
            workdir = WORKDIR
        if plan["flags"] & CLONE_NEWPID:
            if probe:
                plan["proc"] = _required(True, "", _mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            elif plan["proc"]:
                _required(False, "mounting /proc", _mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        if plan["flags"] & CLONE_NEWUTS:
            _libc.sethostname(b"sandbox", 7)
    stdio = os.open(os.devnull, os.O_RDWR)
    if late_uid:
        _required(probe, f"switching to uid {uid}", _drop_uid, uid)
        if probe and os.getuid() != uid:
            plan["dedicated"] = False
            info["problems"].append(f"could not switch to uid {uid}")
    try:
        _drop_capabilities()
    except OSError as e:
        if os.geteuid() != 0 and not plan["userns"]:
            pass                      # nothing to drop
        elif probe:
            info["problems"].append(f"could not drop capabilities ({e})")
        else:
            raise SetupError(f"dropping capabilities failed ({e})") from None
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_DUMPABLE, 1)
    _set_limits(ctx.limits, plan, vmsize)
    if probe:
        checks = _probe_checks(ctx, plan)
        info["problems"] += checks["problems"]
        info["loopback"] = checks["loopback"]
    else:
        os.chdir(workdir or "/")
        home = workdir or "/tmp"
        os.environ.update(HOME=home, TMPDIR=("/tmp" if plan["mounts"] else home),
                          MPLCONFIGDIR=os.path.join(home, ".matplotlib"),
                          XDG_CACHE_HOME=os.path.join(home, ".cache"), MPLBACKEND="Agg")
        for target in (0, 1, 2):
            os.dup2(stdio, target)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = _Discard(1)
        sys.stderr = _Discard(2)
    os.close(stdio)
    return info


def _set_limits(limits: dict, plan: dict, vmsize: int) -> None:
    mib = 1 << 20
    if plan["dedicated"] or plan["userns"]:
        nproc = limits["max_procs"]
    else:
        # Same uid as the grader: the limit counts all of its processes.
        nproc = _count_tasks_of(os.getuid()) + limits["max_procs"]
    wanted = [
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_NOFILE, 256, 256),
        (resource.RLIMIT_FSIZE, limits["file_mb"] * mib, limits["file_mb"] * mib),
        (resource.RLIMIT_NPROC, nproc, nproc),
        # As PID 1 of its namespace G would ignore the soft-limit SIGXCPU,
        # so the hard limit (SIGKILL) is the one that counts.
        (resource.RLIMIT_CPU, limits["cpu_seconds"], limits["cpu_seconds"]),
        (resource.RLIMIT_AS, vmsize + limits["memory_mb"] * mib, vmsize + limits["memory_mb"] * mib),
    ]
    for which, soft, hard in wanted:
        _, cur_hard = resource.getrlimit(which)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))


def _probe_checks(ctx: Context, plan: dict) -> dict:
    problems = []
    target = os.path.join(ctx.stdlib, "os.py")
    if not os.access(target, os.R_OK):
        problems.append(f"the sandboxed child cannot read the Python standard library ({target})")
    for k in ctx.keep:
        if os.path.isdir(k) and not os.access(k, os.R_OK | os.X_OK):
            problems.append(f"the sandboxed child cannot read {k}")
    loopback = "not checked"
    if plan["flags"] & CLONE_NEWNET:
        s = socket.socket()
        try:
            s.settimeout(1)
            s.connect(("127.0.0.1", 9))
            loopback = "up"
        except OSError as e:
            loopback = "down" if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH) else "up"
        finally:
            s.close()
    return {"problems": problems, "loopback": loopback}


# --------------------------------------------------------------------------
# mount namespace layout

def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _locked_flags(path: str) -> int:
    """Mount flags of the mount at path that a remount must repeat."""
    f = os.statvfs(path).f_flag
    flags = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                   (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                   (os.ST_RELATIME, MS_RELATIME)):
        if f & st:
            flags |= ms
    if not f & (os.ST_NOATIME | os.ST_RELATIME):
        flags |= MS_STRICTATIME
    return flags


def layout(hide: list[str], keep: list[str], dedicated: bool) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """Decide the mounts: ([(path, "rw" | "ro" | "keep"), ...], hidden, kept_visible).

    Parents come before children.  A cover inside an applied cover is
    redundant; a kept path only needs binding back when its nearest applied
    ancestor is a cover.
    """
    covers: dict[str, str] = {}
    for p in SCRATCH_DIRS:
        rp = os.path.realpath(p)
        if os.path.isdir(rp):
            covers.setdefault(rp, "rw")
    for h in [*hide, *ALWAYS_HIDDEN]:
        if os.path.lexists(h) and h != "/":
            covers.setdefault(h, "ro")
    keeps = [k for k in keep if os.path.exists(k)]
    if dedicated:
        # A different uid must be able to walk down to the kept paths; an
        # ancestor it could not enter is covered (it could not read it
        # anyway) so the kept path can be bound back inside a 0755 tmpfs.
        for k in keeps:
            parts = k.strip("/").split("/")
            for i in range(1, len(parts)):
                anc = "/" + "/".join(parts[:i])
                try:
                    if not os.stat(anc).st_mode & stat.S_IXOTH:
                        covers.setdefault(anc, "ro")
                except OSError:
                    pass
    for k in keeps:
        covers.pop(k, None)
    ops = sorted([(p, kind) for p, kind in covers.items()] + [(k, "keep") for k in keeps],
                 key=lambda item: item[0].rstrip("/").split("/"))
    applied: list[tuple[str, str]] = []
    for path, kind in ops:
        enclosing = None
        for ap, ak in applied:
            if _within(path, ap) and (enclosing is None or len(ap) > len(enclosing[0])):
                enclosing = (ap, ak)
        if kind == "keep":
            if enclosing is None or enclosing[1] == "keep":
                continue
        elif enclosing is not None and enclosing[1] != "keep":
            continue
        applied.append((path, kind))
    hidden = []
    for h in hide:
        if not os.path.lexists(h):
            continue
        nearest = None
        for ap, ak in applied:
            if _within(h, ap) and (nearest is None or len(ap) > len(nearest[0])):
                nearest = (ap, ak)
        if nearest is not None and nearest[1] != "keep":
            hidden.append(h)
    kept = [p for p, kind in applied if kind == "keep"]
    return applied, hidden, kept


def _hide_and_keep(ctx: Context, dedicated: bool) -> tuple[list[str], list[str]]:
    applied, hidden, kept = layout(ctx.hide, ctx.keep, dedicated)
    # Handles on the kept paths, taken before anything covers them: a bind
    # mount from /proc/self/fd/N reaches the original directory even after
    # its path has been hidden.
    handles = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for p, kind in applied if kind == "keep"}
    file_mb = max(64, 4 * ctx.limits["file_mb"])
    ro_covers = []
    for path, kind in applied:
        if kind == "keep":
            if os.path.isdir(f"/proc/self/fd/{handles[path]}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
            src = f"/proc/self/fd/{handles[path]}"
            try:
                _mount(src, path, None, MS_BIND)
            except OSError as e:
                if e.errno != errno.EINVAL:
                    raise
                _mount(src, path, None, MS_BIND | MS_REC)
            try:
                _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _locked_flags(path))
            except OSError:
                pass  # still visible; only file permissions protect it then
            os.close(handles[path])
        elif os.path.isdir(path) and not os.path.islink(path):
            if kind == "rw":
                data = f"mode=1777,size={file_mb}m,nr_inodes=16384"
            else:
                data = "mode=755,size=1m,nr_inodes=1024"
                ro_covers.append((path, data))
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, data)
        else:
            _mount("/dev/null", path, None, MS_BIND)     # a hidden file reads as empty
            try:
                _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _locked_flags(path))
            except OSError:
                pass
    for path, data in ro_covers:
        _mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, data)
    return hidden, kept


# --------------------------------------------------------------------------
# the notebook

class _Discard(io.TextIOBase):
    """Stand-in for sys.stdout/sys.stderr that drops everything."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, fd: int):
        self._fd = fd

    def write(self, s):
        return len(s)

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def flush(self):
        pass


class _NoIPython:
    """What get_ipython() returns: every method accepts anything and does nothing."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None


def _display(*args, **kwargs):
    return None


_NO_IPYTHON = _NoIPython()


def describe(e: BaseException) -> str:
    name = type(e).__name__
    try:
        msg = str(e)
    except BaseException:
        msg = "(the message could not be turned into text)"
    return f"{name}: {msg[:300]}" if msg else name


def _logical_line_starts(src: str, nlines: int) -> set[int]:
    starts = {1}
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.OP:
                if tok.string in ("(", "[", "{"):
                    depth += 1
                elif tok.string in (")", "]", "}"):
                    depth = max(0, depth - 1)
            elif tok.type == tokenize.NEWLINE or (tok.type == tokenize.NL and depth == 0):
                starts.add(tok.end[0] + 1)
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, nlines + 1))
    return starts


def strip_magics(src: str) -> str:
    """Turn IPython magics and shell escapes into `pass` (keeping indentation).

    A cell starting with %% is dropped entirely.  Only lines that begin a
    logical line count, so a continuation line starting with the `%`
    operator is left alone.
    """
    if src.lstrip().startswith("%%"):
        return ""
    lines = src.splitlines(keepends=True)
    starts = _logical_line_starts(src, len(lines))
    out = []
    for i, line in enumerate(lines, 1):
        s = line.lstrip()
        if s[:1] in ("%", "!") and i in starts:
            out.append(line[: len(line) - len(s)] + "pass\n")
        else:
            out.append(line)
    return "".join(out)


def _compile_cell(src: str, name: str):
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    if src.lstrip().startswith("%%"):
        src = ""
    try:
        return compile(src, name, "exec", flags=flags, dont_inherit=True)
    except SyntaxError:
        stripped = strip_magics(src)
        if stripped == src:
            raise
        return compile(stripped, name, "exec", flags=flags, dont_inherit=True)


class StepTimeout(BaseException):
    """A cell or a request ran past its time: raised inside it by a timer (not an Exception, so a
    plain ``except Exception`` in student code does not swallow it)."""


class _time_limit:
    """Interrupt the code run inside after ``seconds`` (0: no limit). Code that ignores or
    replaces SIGALRM escapes this, and then only the session's wall-clock deadline stops it."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def _ring(self, signum, frame):
        raise StepTimeout(f"did not finish within {self.seconds:g} s")

    def __enter__(self):
        if self.seconds > 0:
            signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        if self.seconds > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return False


def run_cells(cells: list, my_pid: int, step_timeout: float = 0) -> tuple[dict, list[dict]]:
    ns: dict = {"__name__": "__main__", "display": _display, "get_ipython": lambda: _NO_IPYTHON}
    report = []
    loop = None
    for i, src in enumerate(cells, 1):
        try:
            if not isinstance(src, str):
                raise TypeError("cell source is not text")
            code = _compile_cell(src, f"<cell {i}>")
            with _time_limit(step_timeout):
                if code.co_flags & inspect.CO_COROUTINE:
                    import asyncio
                    if loop is None:
                        loop = asyncio.new_event_loop()
                    loop.run_until_complete(eval(code, ns))
                else:
                    exec(code, ns)
            entry = {"ok": True}
        except BaseException as e:
            entry = {"ok": False, "error": describe(e)}
        if _getpid() != my_pid:
            _exit(0)          # a forked copy of the notebook must not reach the socket
        _reap()
        report.append(entry)
    return ns, report


def _serve_session(ctx: Context, sock: socket.socket, setup_error: str | None) -> None:
    my_pid = _getpid()
    try:
        header, _ = frames.recv_frame(sock, max_blob_bytes=_IN_BLOBS, max_header=_IN_HEADER)
    except frames.FrameError:
        _exit(0)
    if setup_error is not None:
        try:
            frames.send_frame(sock, {"setup_error": setup_error})
        except frames.FrameError:
            pass
        _exit(71)
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.set_num_threads(1)
        except Exception:
            pass
    cells = header.get("cells") or []
    step_timeout = header.get("step_timeout")
    step_timeout = float(step_timeout) if isinstance(step_timeout, (int, float)) and step_timeout > 0 else 0.0
    ns, report = run_cells(cells, my_pid, step_timeout)
    try:
        frames.send_frame(sock, {"load_report": report})
    except frames.FrameError:
        _exit(0)
    handler = ctx.handler
    while True:
        try:
            header, blobs = frames.recv_frame(sock, max_blob_bytes=_IN_BLOBS, max_header=_IN_HEADER)
        except frames.FrameError:
            _exit(0)
        _reap()
        try:
            with _time_limit(step_timeout):
                reply_header, reply_blobs = handler(ns, header, blobs)
            parts = frames.encode(reply_header, list(reply_blobs or ()))
        except BaseException as e:
            parts = frames.encode({"error": describe(e)}, [])
        if _getpid() != my_pid:
            _exit(0)
        try:
            frames.send_parts(sock, parts)
        except frames.FrameError:
            _exit(0)
