"""The processes of one session: how they start, shut themselves in, and end.

    zygote
      └─ P   setsid(), enters new mount, network, PID, IPC and UTS namespaces, forks G,
             then waits for G and exits the same way G did; if the grader's end of the
             session's socket closes first (the grader was killed), it ends the session.
           └─ G  PID 1 of the new PID namespace: takes its private view (view.enter), small
                 SysV IPC limits, rlimits, a dedicated uid, no capabilities, no_new_privs and
                 the seccomp filter; then runs the notebook (cells.serve).

Without namespaces (weak isolation) G is no PID 1 and what it starts may leave its process
group: as root, G runs as its dedicated uid in its Sandbox's group (``weak_group``), the grading Python must
be readable to it (``Refused`` otherwise: student code never runs as root), and ``sweep`` ends
every process of that uid when the session ends and before the uid is used again.

The same path runs once at zygote start-up as a probe: every step is tried, what worked
becomes the plan, and every later session must reach exactly that plan or refuse to run
student code. Everything here is imported by the zygote before it forks.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import sys
import sysconfig
import time
from collections.abc import Callable

from . import cells, syscalls, view

BASE_UID = 61000
SLOTS = 4000                   # slots 0..3999: session uids BASE_UID..BASE_UID + 3999 (host.claim_slot)
_SWEEPS = 200                  # rounds of kill(-1) before a uid's processes are given up on
_exit = os._exit


class SetupError(Exception):
    """An isolation step that the plan requires did not work."""


class Refused(SetupError):
    """This machine cannot isolate student code the way it must be: the grader stops (never falls
    back to something weaker)."""


def slot_uid(slot: int) -> int:
    """The uid of the sessions of machine-wide ``slot`` (one a Sandbox holds: host.claim_slot), and,
    numbered the same, the group of a weak Sandbox whose first slot it is (``weak_group``)."""
    if type(slot) is not int or not 0 <= slot < SLOTS:
        raise ValueError(f"slot must be an integer in [0, {SLOTS})")
    return BASE_UID + slot


def weak_group(first_slot: int) -> int:
    """Without namespaces, the one group of every session of a Sandbox: the gid numbered as the uid
    of its first slot, which it holds machine-wide for its whole life (host.claim_slot). Every file
    the run hides is denied to this group before any session starts (acl.py); two graders on one
    machine never share it, so one giving its ACLs back leaves the other's in force."""
    return slot_uid(first_slot)


def session_gid(uid: int, ctx: "Context") -> int:
    """The group a session runs in: its own with namespaces, its Sandbox's ``weak_group`` without."""
    return uid if ctx.namespaces else ctx.group


class Context:
    """Everything a session needs, prepared by the zygote before forking."""

    def __init__(self, limits: dict, handler: cells.Handler, stdlib: str, namespaces: bool, group: int):
        self.limits = limits
        self.handler = handler
        self.stdlib = stdlib
        self.namespaces = namespaces   # the zygote runs in bubblewrap's view; sessions add their own
        self.group = group             # without namespaces: the sessions' group (weak_group)
        self.seccomp: bytes | None = None
        self.plan: dict | None = None


def session_budget(limits: dict) -> int:
    """Bytes of address space a session may add to the zygote's: memory_mb minus what its
    scratch /tmp and shared memory (SysV and /dev/shm) may hold, so that all of it together
    stays within memory_mb."""
    return (limits["memory_mb"] - limits["scratch_mb"] - 2 * limits["shm_mb"]) << 20


# -- P: the intermediate process ------------------------------------------------------------

def intermediate(ctx: Context, slot: int, sock: socket.socket, report_fd: int, probe_fd: int,
                 workdir: str | None) -> None:
    """Body of P.  Never returns.

    P writes one JSON line to report_fd: {"pid1": ...} or {"error": ...}. probe_fd is -1 for a
    real session; for the start-up probe G writes its findings there.
    """
    code = 70
    try:
        _reset_signals()
        os.setsid()
        _close_fds_except({sock.fileno(), report_fd, probe_fd})
        _null_stdio()
        os.umask(0o022)
        if ctx.namespaces:
            try:
                syscalls.unshare(syscalls.SESSION_NAMESPACES)
            except OSError as e:
                report(report_fd, {"error": f"could not enter the session's namespaces ({e})"})
                _exit(70)
        me = os.getpid()
        pid1 = os.fork()
        if pid1 == 0:
            os.close(report_fd)
            _session_leader(ctx, slot, sock, probe_fd, workdir, me)
        if probe_fd >= 0:
            os.close(probe_fd)
        report(report_fd, {"pid1": pid1})
        os.close(report_fd)
        _end_with_the_grader(sock, pid1, ctx, slot)
        code = _wait_and_mirror(pid1)
    except BaseException:
        pass
    _exit(code)


def _end_with_the_grader(sock: socket.socket, pid1: int, ctx: Context, slot: int) -> None:
    """Wait until G ends or the grader's end of the session's socket closes; in the second case
    end the session.

    P outlives the zygote on purpose (a session in flight survives a zygote restart), so the
    zygote's death cannot end a session: the grader's can. Only the grader holds the other end of
    the socket, and the kernel closes it however the grader dies (SIGKILL, the out-of-memory
    killer), so P sees a hang-up there. P keeps its copy of G's end open only while it waits: it
    polls it for nothing but the hang-up, never reads it, and closes it before reaping G."""
    try:
        pidfd = os.pidfd_open(pid1)
    except OSError:
        sock.close()
        return
    watch = select.poll()
    watch.register(sock, 0)                 # POLLHUP and POLLERR are always reported
    watch.register(pidfd, select.POLLIN)    # G has ended
    try:
        while True:
            try:
                ready = dict(watch.poll())
            except InterruptedError:
                continue
            if pidfd in ready:
                return
            if sock.fileno() in ready:
                _end_session(pidfd, ctx, slot)
                return
    finally:
        sock.close()
        os.close(pidfd)


def _end_session(pidfd: int, ctx: Context, slot: int) -> None:
    """Kill G: in a PID namespace that ends every process of the session. Without one, end
    what G started too: every process of the session's uid when it has one, else P's group."""
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    if ctx.namespaces:
        return
    if ctx.plan and ctx.plan.get("dedicated"):
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            sweep(slot_uid(slot), session_gid(slot_uid(slot), ctx), parent=me)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    else:
        with contextlib.suppress(OSError):
            os.killpg(os.getpgrp(), signal.SIGKILL)   # P too: nobody is left to read its status


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


# -- G: PID 1 of the session -----------------------------------------------------------------

def _session_leader(ctx: Context, slot: int, sock: socket.socket, probe_fd: int, workdir: str | None,
                    parent_pid: int) -> None:
    probe = probe_fd >= 0
    try:
        syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)
        # Inside a new PID namespace the parent lives outside it and getppid() reports 0.
        if os.getppid() not in (parent_pid, 0):
            _exit(70)
        if ctx.namespaces:
            os.setsid()
        plan = dict(ctx.plan) if ctx.plan else {}
        err = None
        refused = False
        info: dict = {}
        try:
            info = isolate(ctx, plan, slot, probe, workdir)
        except SetupError as e:
            err, refused = str(e), isinstance(e, Refused)
        except Exception as e:
            err = f"{type(e).__name__}: {e}"
        if probe:
            report(probe_fd, {"plan": plan, "info": info, "error": err, "refused": refused})
            _exit(0)
        cells.serve(ctx.handler, sock, err)
    except BaseException:
        pass
    _exit(70)


def _step(probe: bool, what: str, fn: Callable[..., object], *args: object) -> bool:
    """Run an optional step.  In probe mode a failure returns False; in a session it is fatal."""
    try:
        fn(*args)
        return True
    except OSError as e:
        if probe:
            return False
        raise SetupError(f"{what} failed ({e})") from None


def isolate(ctx: Context, plan: dict, slot: int, probe: bool, workdir: str | None) -> dict:
    """Shut G in; in probe mode also decide the plan.  Returns facts for the probe report."""
    info: dict = {"problems": []}
    lim = ctx.limits
    uid = slot_uid(slot)
    root = os.geteuid() == 0
    if probe:
        plan.update(namespaces=ctx.namespaces, dedicated=root, ipc_limits=ctx.namespaces,
                    seccomp=ctx.seccomp is not None)
    vmsize = _vmsize_bytes()
    stdio = os.open(os.devnull, os.O_RDWR)
    if ctx.namespaces:
        try:
            view.enter(lim["scratch_mb"], lim["shm_mb"], uid if plan["dedicated"] else None)
        except OSError as e:
            raise SetupError(f"setting up the session's files failed ({e})") from None
        workdir = view.WORKDIR
        try:
            syscalls.sethostname(b"sandbox")
        except OSError:
            pass
        if plan["ipc_limits"]:
            plan["ipc_limits"] = _step(probe, "limiting SysV IPC", _ipc_limits, lim["shm_mb"])
        if probe:
            info["loopback"] = _loopback()
    gid = session_gid(uid, ctx)
    if probe and plan["dedicated"]:
        _check_python_readable(uid, gid, ctx.stdlib)
    _set_limits(lim, plan, vmsize)
    if plan["dedicated"]:
        try:
            syscalls.drop_uid(uid, gid)
        except OSError as e:
            raise Refused(f"switching to uid {uid}, which runs student code, failed ({e}): give the grader's "
                          f"container uids {BASE_UID}-{BASE_UID + SLOTS - 1} (its user namespace's uid map), or grade "
                          "where namespaces are allowed; the grader never runs student code as root") from None
        # The kernel forgets the parent-death signal when the uid changes: set it again, so G (and,
        # as PID 1, its whole namespace) still dies with P. (P itself outlives the zygote on purpose:
        # a session in flight survives a zygote restart.)
        syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)
    try:
        syscalls.drop_capabilities()
    except OSError as e:
        if root or ctx.namespaces:
            if not probe:
                raise SetupError(f"dropping capabilities failed ({e})") from None
            info["problems"].append(f"could not drop capabilities ({e})")
    syscalls.prctl(syscalls.PR_SET_NO_NEW_PRIVS, 1)
    syscalls.prctl(syscalls.PR_SET_DUMPABLE, 1)
    if plan["seccomp"]:
        plan["seccomp"] = _step(probe, "installing the system-call filter", syscalls.load_seccomp, ctx.seccomp)
    if probe:
        info["problems"] += _probe_checks(ctx, plan)
    else:
        os.chdir(workdir or "/")
        home = workdir or "/tmp"
        os.environ.update(HOME=home, TMPDIR=(home if not ctx.namespaces else "/tmp"), USER="student",
                          LOGNAME="student", MPLCONFIGDIR=os.path.join(home, ".matplotlib"),
                          XDG_CACHE_HOME=os.path.join(home, ".cache"), MPLBACKEND="Agg")
        for target in (0, 1, 2):
            os.dup2(stdio, target)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = cells.Discard(1)
        sys.stderr = cells.Discard(2)
    os.close(stdio)
    return info


def _ipc_limits(shm_mb: int) -> None:
    """Small SysV IPC limits in the session's own IPC namespace (they count against memory_mb)."""
    for name, value in (("shmmax", shm_mb << 20), ("shmall", (shm_mb << 20) // os.sysconf("SC_PAGE_SIZE")),
                        ("shmmni", 64), ("msgmni", 8), ("msgmnb", 16384), ("msgmax", 8192),
                        ("sem", "250 2000 32 16")):      # per set, in all, per call, sets
        with open(f"/proc/sys/kernel/{name}", "w") as f:
            f.write(str(value))


def _set_limits(limits: dict, plan: dict, vmsize: int) -> None:
    mib = 1 << 20
    if plan["dedicated"] or plan["namespaces"]:
        nproc = limits["max_procs"]
    else:
        # Same uid as the grader: the limit counts all of its processes.
        nproc = _count_tasks_of(os.getuid()) + limits["max_procs"]
    address_space = vmsize + session_budget(limits)
    wanted = [
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_NOFILE, 256, 256),
        (resource.RLIMIT_FSIZE, limits["file_mb"] * mib, limits["file_mb"] * mib),
        (resource.RLIMIT_NPROC, nproc, nproc),
        (resource.RLIMIT_MSGQUEUE, 0, 0),
        # As PID 1 of its namespace G would ignore the soft-limit SIGXCPU,
        # so the hard limit (SIGKILL) is the one that counts.
        (resource.RLIMIT_CPU, limits["cpu_seconds"], limits["cpu_seconds"]),
        (resource.RLIMIT_AS, address_space, address_space),
    ]
    for which, soft, hard in wanted:
        _, cur_hard = resource.getrlimit(which)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))


def _check_python_readable(uid: int, gid: int, stdlib: str) -> None:
    """The dedicated uid must read the grading Python (its standard library and site-packages):
    otherwise the grader stops. Running student code as root instead is never an option."""
    for path in (os.path.join(stdlib, "os.py"), sysconfig.get_paths()["purelib"]):
        if not _readable_as(uid, gid, path):
            raise Refused(f"uid {uid}, which runs student code here, cannot read the grading Python ({path}): "
                          "make every folder down to it searchable and its files readable by other users "
                          "(chmod o+rx), or grade with a Python installed outside a private home (e.g. /usr/local, "
                          "or a .venv made from one); the grader never runs student code as root")


def _readable_as(uid: int, gid: int, path: str) -> bool:
    os.setegid(gid)
    os.seteuid(uid)
    try:
        os.close(os.open(path, os.O_RDONLY))
        return True
    except OSError:
        return False
    finally:
        os.seteuid(0)
        os.setegid(0)


# -- the end of a session without a PID namespace ---------------------------------------------

def processes_of(uid: int, but: int = 0) -> list[int]:
    """Processes (zombies left out) whose real, effective or saved uid is ``uid``, except ``but``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == but:
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                fields = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
            uids = fields["Uid"].split()[:3]
            zombie = fields["State"].split()[0] in ("Z", "X")
        except (OSError, KeyError, IndexError):
            continue
        if str(uid) in uids and not zombie:
            found.append(int(name))
    return found


# Without a mount namespace these are the sessions' too; only folders anyone may write are searched
# below them (nowhere else can a session's uid create anything), at most _SHARED_ENTRIES entries.
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")
_SHARED_ENTRIES = 200_000


def remove_files_of(uid: int) -> None:
    """Remove what ``uid`` left in the machine's shared writable folders once none of its processes
    lives: a notebook must not find what an earlier one (the student's other notebook, run with
    hidden inputs) wrote there. No link is followed."""
    stack = [p for p in SHARED_WRITABLE if os.path.isdir(p) and not os.path.islink(p)]
    seen = 0
    while stack and seen < _SHARED_ENTRIES:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid == uid:
                if stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
            elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
                stack.append(entry.path)


def sweep(uid: int, gid: int, parent: int | None = None) -> None:
    """Body of a process forked to end every process of ``uid``. Never returns.

    It becomes ``uid`` entirely, so ``kill(-1, SIGKILL)`` reaches exactly that uid's processes,
    all at once under the kernel's task list lock (a process that keeps forking cannot slip
    between a listing and a kill), then checks /proc; bounded. Exit status 0: none is left.
    With ``parent`` (P's sweep when its grader died), it dies with that process: a living grader
    that ends P has its slot's sessions to start again, which a late sweep must not reach."""
    try:
        _reset_signals()
        syscalls.drop_uid(uid, gid)
        if parent is not None:      # after the uid change, which clears a parent-death signal
            syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:
                _exit(1)
        for _ in range(_SWEEPS):
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            if not processes_of(uid, but=os.getpid()):
                _exit(0)
            time.sleep(0.002)
    except BaseException:
        pass
    _exit(1)


def _loopback() -> str:
    s = socket.socket()
    try:
        s.settimeout(1)
        s.connect(("127.0.0.1", 9))
        return "up"
    except OSError as e:
        return "down" if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH) else "up"
    finally:
        s.close()


def _probe_checks(ctx: Context, plan: dict) -> list[str]:
    problems = []
    target = os.path.join(ctx.stdlib, "os.py")
    if not os.access(target, os.R_OK):
        problems.append(f"the sandboxed child cannot read the Python standard library ({target})")
    if plan["seccomp"]:
        try:
            socket.socket().close()
            problems.append("the system-call filter did not stop socket()")
        except OSError:
            pass
    elif ctx.namespaces:
        problems.append("the system-call filter could not be installed (seccomp)")
    return problems


# -- small helpers ---------------------------------------------------------------------------

def report(fd: int, obj: dict) -> None:
    data = (json.dumps(obj) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


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
