"""Grader-side half of the sandbox: Limits, Sandbox and Session.

Nothing in this module runs student code or trusts what a child says: replies
are parsed as JSON plus raw bytes (see frames.py) and checked against limits.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, NoReturn

from . import acl, frames, lifecycle, memory, view
from .marks import mark

log = logging.getLogger("autograder.grader_side.sandbox")

_CONTROL_TIMEOUT = 15.0     # seconds to wait for the zygote to answer one control message
_STATUS_WAIT = 1.0          # seconds to wait for a dead child's exit status
# A slot is a session's uid (lifecycle.slot_uid) when the grader is root. Each Sandbox holds the slots
# its sessions use by a locked file each, machine-wide, so two graders on one machine never give
# their sessions one uid: without namespaces, a session's end kills every process of its uid.
SLOT_LOCKS = Path("/run/course-autograde") if os.geteuid() == 0 else \
    Path(tempfile.gettempdir()) / "course-autograde-slots"


def claim_slot() -> tuple[int, IO]:
    """A slot no other Sandbox on this machine holds, and the open locked file that holds it (the
    lock goes with the file, or with the process)."""
    SLOT_LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
    for slot in range(lifecycle.SLOTS):
        f = open(SLOT_LOCKS / str(slot), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        return slot, f
    raise SandboxError(f"every sandbox slot in {SLOT_LOCKS} is taken: stop other graders on this machine")


class SandboxError(Exception):
    """The sandbox machinery failed (not the student's code); the message says what to do."""


class ChildDied(Exception):
    """The student's process died, timed out, or sent something that is not valid data."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    timeout: float = 60.0        # wall-clock seconds for the whole session (all requests)
    memory_mb: int = 2048        # above the warm zygote: address space (RLIMIT_AS) + scratch + shared memory
    cpu_seconds: int = 120       # RLIMIT_CPU
    max_procs: int = 32          # RLIMIT_NPROC (counts only the session with a dedicated uid or user namespace)
    file_mb: int = 16            # RLIMIT_FSIZE
    output_mb: int = 16          # cap on the blob bytes one reply may carry
    step_timeout: float = 10.0   # seconds one cell or one request may run before it is interrupted
    scratch_mb: int = 64         # size of the session's private /tmp (counted inside memory_mb)
    shm_mb: int = 16             # SysV shared memory, and /dev/shm, each (counted inside memory_mb)

    def __post_init__(self) -> None:
        if self.memory_mb - self.scratch_mb - 2 * self.shm_mb < 64:
            raise ValueError(f"memory_mb={self.memory_mb} leaves less than 64 MiB once scratch_mb and twice "
                             "shm_mb are taken out: raise memory_mb or lower those")


def _student_side() -> str:
    """The package that answers grader requests next to student code."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "student_side")


def _bwrap() -> str | None:
    return shutil.which("bwrap") or shutil.which("bwrap", path="/usr/bin:/bin")


# What bubblewrap says when the kernel lets an unprivileged user create a user namespace but not map
# its uid in it: AppArmor's restriction (Ubuntu 23.10 and later, GitHub's ubuntu-24.04 runners). Not
# "No permissions to create new namespace": that is a refused clone (a seccomp filter such as
# Docker's, or a kernel without unprivileged user namespaces), which bubblewrap's own words explain.
_USERNS_DENIED = ("setting up uid map: Permission denied",)
_APPARMOR_SYSCTL = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


def _userns_hint(said: str, sysctl: str = _APPARMOR_SYSCTL) -> str:
    """For bubblewrap's refusal ``said``: what lifts AppArmor's restriction of user namespaces, when
    that is the cause ("" otherwise), in words that fit one line."""
    if not any(words in said for words in _USERNS_DENIED):
        return ""
    try:
        restricted = Path(sysctl).read_text().strip() == "1"
    except OSError:
        restricted = False
    why = "AppArmor restricts unprivileged user namespaces here" if restricted else \
        "user namespaces are restricted for this user (Ubuntu 23.10 and later do it through AppArmor)"
    return (f"; {why}: give bubblewrap an AppArmor profile that allows them (docs/security.md), or run "
            "`sysctl kernel.apparmor_restrict_unprivileged_userns=0` as root, or grade as root")


def _zygote_env(home: str, lib: str) -> dict:
    one = "1"
    return {
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": lib,
        "PYTHONDONTWRITEBYTECODE": one,
        "PYTHONNOUSERSITE": one,
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": os.path.join(home, ".matplotlib"),
        "OMP_NUM_THREADS": one,
        "OPENBLAS_NUM_THREADS": one,
        "MKL_NUM_THREADS": one,
        "NUMEXPR_NUM_THREADS": one,
        "VECLIB_MAXIMUM_THREADS": one,
        "TOKENIZERS_PARALLELISM": "false",
        "CUDA_VISIBLE_DEVICES": "",
    }


class _NoIsolation(SandboxError):
    """Namespaces (or bubblewrap) are not available here; the message says why, in one line."""


class _ZygoteGone(Exception):
    pass


def _shutdown_zygote(state: dict, release: bool = False) -> None:
    """Stop a zygote process; also used as the Sandbox finalizer (``release``: and give its slots back)."""
    ctl, proc = state.pop("ctl", None), state.pop("proc", None)
    if ctl is not None:
        try:
            ctl.close()          # the zygote kills its sessions when this end closes
        except OSError:
            pass
    if proc is not None:
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if release:
        for f in state.pop("slots", {}).values():
            f.close()


class Sandbox:
    """One warm zygote process, inside bubblewrap's allowlisted view, that forks an isolated
    child per session.

    handler: "module:function" answering requests in the child; module must be importable
          from ``packages``.
    packages: {import name: folder or .py file} visible read-only to the children (default:
          the course's student_side package). Nothing else of the course is importable there.
    hide: paths to cut out of what the children see even inside the Python installation.
    keep: extra paths the children see read-only, at the same place.
    allow_weak_isolation: without namespaces or bubblewrap, run anyway (for one submission per
          throwaway environment: see the package docstring) with rlimits, the system-call filter,
          a private working folder and, as root, a dedicated uid whose processes all end with
          the session and whose group is denied ``hide`` by ACL; say so in ``isolation``. By
          default the Sandbox refuses with a one-line reason (SandboxError).
    """

    def __init__(self, limits: Limits = Limits(), preload: tuple[str, ...] = ("numpy", "torch"),
                 handler: str = "student_side.server:serve", packages: dict | None = None,
                 hide: Sequence[str | os.PathLike] = (), keep: Sequence[str | os.PathLike] = (),
                 allow_weak_isolation: bool = False, startup_timeout: float = 120.0):
        if not isinstance(limits, Limits):
            raise TypeError("limits must be a Limits instance")
        if isinstance(hide, str) or isinstance(keep, str):
            raise TypeError("hide and keep must be lists of paths, not a single string")
        if packages is None:
            packages = {"student_side": _student_side()} if os.path.isdir(_student_side()) else {}
        self.packages = {str(k): os.path.realpath(os.fspath(v)) for k, v in packages.items()}
        for name, src in self.packages.items():
            if not name.isidentifier() or name == view.RUNTIME or not os.path.exists(src):
                raise ValueError(f"packages[{name!r}] must name an existing folder or .py file by an import name "
                                 f"other than {view.RUNTIME!r}")
        self.packages[view.RUNTIME] = os.path.dirname(os.path.abspath(__file__))
        self.limits = limits
        self.preload = tuple(preload)
        self.handler = handler
        self.hide = [os.path.abspath(os.fspath(p)) for p in hide]
        self.keep = [os.path.abspath(os.fspath(p)) for p in keep]
        self.allow_weak_isolation = allow_weak_isolation
        self.startup_timeout = startup_timeout
        self.isolation: dict = {}
        self.events: list[str] = []          # notable things, e.g. zygote restarts
        self.zygote_pid: int | None = None
        self._weak: str | None = None        # once decided: "" (strong), or why isolation is weak
        self._denial: acl.Denial | None = None   # weak, with dedicated uids: what their group is denied
        self._uids: set[int] = set()         # weak, with dedicated uids: every uid a session has had
        self._view: tuple | None = None      # bubblewrap's options and what they show
        self._lock = threading.Lock()
        self._sessions: weakref.WeakSet = weakref.WeakSet()
        self._sessions_lock = threading.Lock()
        self._closed = False
        self.ended = threading.Event()       # set once close() has stopped the zygote
        self._home = tempfile.mkdtemp(prefix="autograder-zygote-")
        self._state: dict = {}
        self._state["slots"] = {}            # physical slot -> its locked file (claim_slot)
        self._slots: dict[int, int] = {}     # the caller's slot -> the physical slot its sessions use
        self._finalizer = weakref.finalize(self, _shutdown_zygote, self._state, True)
        self._opened = False                 # a session has been asked for (the first one is marked)
        mark("sandbox-start")
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        mark("sandbox-ready")

    # -- zygote management ------------------------------------------------

    def _start(self) -> None:
        """Start the zygote in bubblewrap; without it, refuse or (if allowed) start it weakly."""
        if self._weak is None:
            bwrap = _bwrap()
            try:
                if bwrap is None:
                    raise _NoIsolation("bubblewrap is not installed (as root: apt-get install bubblewrap, "
                                       "or `make sandbox`)")
                self._launch(bwrap)
                self._weak = ""              # decided: strong, also for restarts
                return
            except _NoIsolation as e:
                if not self.allow_weak_isolation:
                    raise SandboxError(f"student code cannot be isolated here: {e}; fix that, or grade with "
                                       "weak isolation (--allow-weak-isolation), which the results record") from None
                self._weak = str(e)
        if self._weak:
            self._launch(None)
            self.isolation["weak"] = self._weak
            if self._denial is None:         # once: a restart keeps what the first start denied
                self._protect_files()
        elif _bwrap() is None:
            raise SandboxError("bubblewrap is gone since the sandbox started: reinstall it (make sandbox)")
        else:
            self._launch(_bwrap())

    def _protect_files(self) -> None:
        """Weak isolation sees the machine's files: with a dedicated uid per session, deny the
        sessions' group the hidden folders (the course, its references, the submissions, the
        grader's home) by ACL for the whole run, also what is created in them during it
        (``acl.Denial``); with the grader's own uid there is nothing to deny it, and ``isolation``
        says so."""
        if not self.isolation.get("uid", "").startswith("dedicated"):
            self.isolation["files"] = "the grader's own: student code can read whatever the grader can"
            return
        self._denial = acl.Denial(self.hide, [*view.python_paths(), self._home], self.weak_group)
        refused = self._denial.apply()
        if refused:
            raise SandboxError(f"student code could read {refused} here (its file system keeps no ACLs): make the "
                               "course, the submissions and the grader's home unreadable to other users "
                               f"(chmod -R o-rwx {refused}), or grade where namespaces are allowed")
        passages = "".join(f", {p} searchable only" for p in self._denial.passages)
        self.isolation["files"] = (
            f"the machine's own, except the course, its references, the submissions and the grader's home, denied "
            f"to the sessions' group ({self.weak_group}) by ACL for the whole run ({len(self._denial.denied)} paths"
            f"{passages}, "
            "and whatever is created in those during the run); the kit's packages come from a copy")

    def _launch(self, bwrap: str | None) -> None:
        from autograder.compat import python_command  # here: this package also runs as the sessions' own

        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        logpath = os.path.join(self._home, "zygote.log")
        zygote = [*python_command(module=f"{view.RUNTIME}.zygote", flags=("-s",)), str(child_end.fileno())]
        if bwrap:
            if self._view is None:      # computed once: a restart shows the same view
                self._view = view.bwrap_args(self.packages, self.hide, self.keep, privileged=os.geteuid() == 0)
            args, seen = self._view
            command, env = [bwrap, *args, "--", *zygote], _zygote_env("/tmp", view.LIB)
        else:
            lib = os.path.join(self._home, "lib")
            if not os.path.isdir(lib):
                os.chmod(self._home, 0o711)      # sessions' uids reach lib/, and cannot list the rest
                view.weak_lib(self._home, self.packages)
            command, env, seen = zygote, _zygote_env(self._home, lib), {}
        with open(os.open(logpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as errlog:
            try:
                proc = subprocess.Popen(command, pass_fds=[child_end.fileno()], env=env, cwd=self._home,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errlog,
                                        start_new_session=True)
            except OSError as e:
                parent_end.close()
                raise SandboxError(f"could not start the zygote with {command[0]} ({e})") from None
            finally:
                child_end.close()
        self._state.update(ctl=parent_end, proc=proc)
        config = {"preload": list(self.preload), "handler": self.handler, "namespaces": bool(bwrap),
                  "limits": asdict(self.limits), "probe_slot": self._physical(0)}
        try:
            parent_end.settimeout(self.startup_timeout)
            parent_end.send(json.dumps(config).encode())
            msg = parent_end.recv(1 << 20)
        except socket.timeout:
            self._stop_zygote()
            raise SandboxError(f"the zygote did not become ready within {self.startup_timeout:g} s; "
                               "check that the preload modules import quickly, or raise startup_timeout") from None
        except OSError:
            msg = b""
        if not msg:
            self._stop_zygote()
            tail = self._log_tail(logpath)
            if bwrap and tail.startswith("bwrap:"):
                raise _NoIsolation(tail + _userns_hint(tail))
            raise SandboxError("the zygote exited during start-up: " + tail)
        reply = json.loads(msg)
        if "error" in reply:
            self._stop_zygote()
            if reply.get("isolation"):
                raise _NoIsolation(str(reply["error"]))
            raise SandboxError(f"the sandbox could not start: {reply['error']}")
        self.isolation = {**reply["isolation"], **seen}
        self.zygote_pid = reply["pid"]
        self._fit_memory(parent_end, reply["pid"])

    def _fit_memory(self, ctl: socket.socket, zygote: int) -> None:
        """Sessions' memory within the memory limit of the container the grader runs in, if any
        (memory.py): the zygote is told the lower ``memory_mb``; a container too small for any
        notebook stops the start with what to give it."""
        found = memory.container()
        if found is None:
            return
        limit, held = found
        anonymous = memory.anonymous(zygote)
        configured = self.limits.memory_mb
        fitted = memory.fit(configured, limit, held, anonymous)
        floor = self.limits.scratch_mb + 2 * self.limits.shm_mb + 64
        if fitted < floor:
            self._stop_zygote()
            raise SandboxError(
                f"the container's memory limit ({limit >> 20} MiB) leaves a notebook {fitted} MiB once the grader "
                f"and its warm process ({held >> 20} MiB) are counted, and a notebook needs {floor} MiB: give the "
                f"container at least {memory.needed(held, anonymous, floor)} MiB")
        if fitted < configured:
            try:
                ctl.send(json.dumps({"op": "memory", "memory_mb": fitted}).encode())
                answer = json.loads(ctl.recv(1 << 16) or b'{"error": "it exited"}')
            except (OSError, ValueError) as exc:
                answer = {"error": str(exc)}
            if "error" in answer:
                self._stop_zygote()
                raise SandboxError(f"the zygote did not take the container's memory limit ({answer['error']})")
            budget = lifecycle.session_budget({**asdict(self.limits), "memory_mb": fitted}) >> 20
            self.isolation["rlimits"] = re.sub(r"AS=zygote\+\d+ MiB", f"AS=zygote+{budget} MiB",
                                               self.isolation.get("rlimits", ""))
        self.isolation["memory"] = (f"the container's limit, {limit >> 20} MiB: a notebook may use {fitted} MiB "
                                    f"(configured {configured}); the grader and its warm process held {held >> 20} "
                                    f"MiB, {anonymous >> 20} MiB of it the warm process's own")

    @staticmethod
    def _log_tail(path: str) -> str:
        try:
            with open(path, "rb") as f:
                lines = f.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
        except OSError:
            lines = []
        return lines[-1] if lines else "no error output (see the grader's Python environment)"

    def _stop_zygote(self) -> None:
        proc = self._state.get("proc")
        if proc is not None and proc.poll() is None:
            proc.kill()
        _shutdown_zygote(self._state)

    def _ask(self, msg: dict, *, want_fds: bool, restart: bool) -> tuple[dict, list[int]]:
        with self._lock:
            for attempt in (0, 1):
                if self._closed:
                    raise SandboxError("the sandbox is closed; create a new Sandbox")
                try:
                    ctl = self._state.get("ctl")
                    if ctl is None:
                        raise _ZygoteGone("it is not running")
                    ctl.settimeout(_CONTROL_TIMEOUT)
                    ctl.send(json.dumps(msg).encode())
                    if want_fds:
                        data, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 4)
                    else:
                        data, fds = ctl.recv(1 << 16), []
                    if not data:
                        raise _ZygoteGone("it exited")
                    try:
                        return json.loads(data), fds
                    except ValueError:
                        for fd in fds:
                            os.close(fd)
                        raise _ZygoteGone("it sent an unreadable reply") from None
                except socket.timeout:
                    reason = f"it did not answer within {_CONTROL_TIMEOUT:g} s"
                except (OSError, _ZygoteGone) as e:
                    reason = str(e) if isinstance(e, _ZygoteGone) else f"control socket error: {e}"
                self._stop_zygote()
                if not restart:
                    raise SandboxError(f"the zygote is not available ({reason})")
                if attempt == 1:
                    raise SandboxError(f"the zygote failed again right after a restart ({reason}); "
                                       "see Sandbox.events and the grader's environment")
                note = f"zygote stopped ({reason}); restarted it"
                self.events.append(note)
                log.warning("sandbox: %s", note)
                self._start()
        raise AssertionError("unreachable")

    def _status(self, pid: int) -> str:
        try:
            reply, _ = self._ask({"op": "status", "pid": pid}, want_fds=False, restart=False)
        except SandboxError:
            return "unknown"
        return str(reply.get("status", "unknown"))

    # -- sessions ---------------------------------------------------------

    def open(self, cells: list[str], slot: int = 0) -> "Session":
        """Fork a fresh child, run the notebook cells in it, return the session.

        Raises ChildDied if the child dies or times out while running the
        cells, SandboxError if the sandbox itself cannot start a child.
        """
        if not isinstance(cells, (list, tuple)) or not all(isinstance(c, str) for c in cells):
            raise TypeError("cells must be a list of strings (the code cells' sources)")
        if type(slot) is not int or not 0 <= slot < lifecycle.SLOTS:
            raise ValueError(f"slot must be an integer in [0, {lifecycle.SLOTS})")
        slot = self._physical(slot)
        if not self._opened:
            self._opened = True
            mark("first-session")
        if self._denial is not None:
            with self._lock:
                self._uids.add(lifecycle.slot_uid(slot))
        reply, fds = self._ask({"op": "open", "slot": slot}, want_fds=True, restart=True)
        deadline = time.monotonic() + self.limits.timeout     # a zygote restart is not the student's time
        names = reply.get("fds") or []
        if "error" in reply or len(names) != len(fds) or "socket" not in names:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"could not start a session: {reply.get('error', 'bad reply from the zygote')}")
        got = dict(zip(names, fds, strict=True))
        session = Session(self, socket.socket(fileno=got["socket"]), reply["pid"], reply["pid1"],
                          got.get("pidfd"), got.get("pid1fd"), deadline,
                          pid_namespace=self.isolation.get("pid") == "namespace",
                          workdir=reply.get("workdir"))
        with self._sessions_lock:
            self._sessions.add(session)
        try:
            session._load(list(cells))
        except BaseException:
            session.close()
            raise
        return session

    def session_uid(self, slot: int = 0) -> int:
        """The uid the sessions of ``slot`` run as: a dedicated one held by this Sandbox alone on
        the machine when the grader is root, else the grader's own."""
        if self.isolation.get("uid", "").startswith("dedicated"):
            return lifecycle.slot_uid(self._physical(slot))
        return os.getuid()

    @property
    def weak_group(self) -> int:
        """Without namespaces, as root: the group of every session of this Sandbox, and the one its
        ACLs deny (``lifecycle.weak_group``: numbered by its first slot, which it alone holds)."""
        return lifecycle.weak_group(self._physical(0))

    def _physical(self, slot: int) -> int:
        """The slot (uid) the sessions of the caller's ``slot`` use: claimed machine-wide on first use."""
        with self._sessions_lock:
            if slot not in self._slots:
                physical, f = claim_slot()
                self._state["slots"][physical] = f
                self._slots[slot] = physical
            return self._slots[slot]

    def _forget(self, session: "Session") -> None:
        with self._sessions_lock:
            self._sessions.discard(session)

    def close(self) -> None:
        """Kill every open session and stop the zygote.  Idempotent."""
        self._closed = True
        with self._sessions_lock:
            sessions = list(self._sessions)
        for s in sessions:
            s.close()
        with self._lock:
            self._finalizer.detach()
            _shutdown_zygote(self._state)   # the zygote ends every process of its sessions' uids on its way out
            if self._give_files_back():     # a uid with a process left is not given back to other graders
                _shutdown_zygote(self._state, release=True)
        shutil.rmtree(self._home, ignore_errors=True)
        self.ended.set()
        mark("sandbox-closed")

    def _give_files_back(self) -> bool:
        """Take the ACLs back, only once no process of a session's uid is left: one that outlived
        its session would read everything the moment they are gone (then they stay, with a warning,
        and so do the slots: False)."""
        if self._denial is None:
            return True
        left = {uid: pids for uid in sorted(self._uids) if (pids := _end_processes_of(uid, self.weak_group))}
        if left:
            note = (f"processes of the sessions' uids are still running ({left}): the course stays denied to "
                    f"group {self.weak_group} by ACL; end them (kill -9 -1 as each uid), then remove the "
                    f"entries (setfacl -R -x g:{self.weak_group})")
            self.events.append(note)
            log.warning("sandbox: %s", note)
            return False
        self._denial.undo()
        self._denial = None
        return True

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _end_processes_of(uid: int, gid: int) -> list[int]:
    """What is left of ``uid``'s processes after ``kill -KILL -1`` run as that uid (the zygote ends
    them on its way out; this covers a zygote that was killed instead)."""
    kill = shutil.which("kill", path="/usr/bin:/bin")
    for _ in range(20):
        left = lifecycle.processes_of(uid)
        if not left or kill is None:
            return left
        try:
            subprocess.run([kill, "-KILL", "--", "-1"], user=uid, group=gid, extra_groups=[],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            return left
        time.sleep(0.01)
    return lifecycle.processes_of(uid)


def _describe_status(status: str, during: str, limits: Limits) -> str:
    kind, _, value = status.partition(" ")
    if kind == "exit" and value == "70":   # what the session's own code exits with when it fails
        return (f"the notebook process exited with status 70 {during}: the code that runs the notebook "
                "failed, as it does when the notebook replaces a builtin or a module that code relies on")
    if kind == "exit" and value.lstrip("-").isdigit():
        return f"the notebook process exited with status {value} {during}"
    if kind == "signal" and value.isdigit():
        sig = int(value)
        if sig == signal.SIGXCPU:
            return f"the notebook process used up its CPU time limit ({limits.cpu_seconds} s) {during}"
        if sig == signal.SIGKILL:
            return (f"the notebook process was killed by SIGKILL {during} "
                    f"(the {limits.cpu_seconds} s CPU limit, or it killed itself)")
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"the notebook process was killed by {name} {during}"
    if kind == "running":
        return f"the notebook process closed its connection {during}"
    return f"the notebook process ended {during}"


class Session:
    """One forked child holding one notebook's namespace.  Not for use by several threads at once."""

    def __init__(self, sandbox: Sandbox, sock: socket.socket, pid: int, pid1: int,
                 pidfd: int | None, pid1fd: int | None, deadline: float, *, pid_namespace: bool,
                 workdir: str | None = None):
        self.pid = pid                # the session leader (intermediate process)
        self.pid1 = pid1              # the process running the notebook
        self.load_report: list[dict] = []
        self._sandbox = sandbox
        self._limits = sandbox.limits
        self._sock = sock
        self._pidfd = pidfd
        self._pid1fd = pid1fd
        self._deadline = deadline
        self._pid_namespace = pid_namespace
        self._workdir = workdir       # only without a mount namespace: a directory under the real /tmp
        self._dead: str | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._close_lock = threading.Lock()

    def _fail(self, reason: str) -> NoReturn:
        self._dead = reason
        self.close()
        raise ChildDied(reason)

    def _exchange(self, parts: Sequence[frames.Buffer], during: str) -> tuple[dict, list[bytes | bytearray]]:
        try:
            frames.send_parts(self._sock, parts, self._deadline)
            return frames.recv_frame(self._sock, max_blob_bytes=self._limits.output_mb << 20,
                                     deadline=self._deadline)
        except frames.FrameTimeout:
            self._fail(f"timed out after {self._limits.timeout:g} s")
        except frames.FrameClosed:
            self._fail(self._death_reason(during))
        except frames.BadFrame as e:
            self._fail(f"reply was not valid data: {e}")
        raise AssertionError("unreachable")

    def _death_reason(self, during: str) -> str:
        give_up = time.monotonic() + _STATUS_WAIT
        while True:
            status = self._sandbox._status(self.pid)
            if status != "running" or time.monotonic() > give_up:
                break
            time.sleep(0.01)
        return _describe_status(status, during, self._limits)

    def _load(self, cells: list[str]) -> None:
        parts = frames.encode({"cells": cells, "step_timeout": self._limits.step_timeout})
        with self._lock:
            header, _ = self._exchange(parts, "while running the notebook cells")
        if "setup_error" in header:
            self._fail(f"sandbox setup failed: {str(header['setup_error'])[:500]}")
        report = header.get("load_report")
        if not isinstance(report, list) or len(report) != len(cells) or \
                not all(isinstance(e, dict) for e in report):
            self._fail("reply was not valid data: the load report does not match the cells")
        clean: list[dict[str, bool | str]] = []
        for entry in report:
            if entry.get("ok") is True:
                clean.append({"ok": True})
            else:
                clean.append({"ok": False, "error": str(entry.get("error", "unknown error"))[:1000]})
        self.load_report = clean

    def request(self, header: dict, blobs: Sequence[bytes] = ()) -> tuple[dict, list[bytes | bytearray]]:
        """Send one request to the handler in the child and return its reply.

        Raises ChildDied if the child died, timed out, or replied with
        something that is not valid data or is too large.
        """
        parts = frames.encode(header, list(blobs))
        with self._lock:
            if self._dead is not None:
                raise ChildDied(self._dead)
            if self._closed:
                raise ChildDied("the session was already closed")
            return self._exchange(parts, "while handling a request")

    def close(self) -> None:
        """Kill the child's whole process tree.  Idempotent; call it on every path."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        # Kill the notebook process (PID 1 of its namespace, so everything it
        # started goes with it).  The leader then reaps it and exits on its
        # own; killing the leader at the same time would orphan the notebook
        # process and leave its zombie to whoever adopts it.
        killed = False
        if self._pid1fd is not None:
            try:
                signal.pidfd_send_signal(self._pid1fd, signal.SIGKILL)
                killed = True
            except OSError:
                pass
        leader_alive = False
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, 0 if killed and self._pid_namespace else signal.SIGKILL)
                leader_alive = True
            except OSError:
                pass
        if leader_alive and not self._pid_namespace:
            # No PID namespace: the notebook's children share the leader's
            # group, whose id stays reserved while the leader is unreaped.
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        for fd in (self._pidfd, self._pid1fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._pidfd = self._pid1fd = None
        if self._workdir:
            # The zygote removes it too when it reaps the session; this covers
            # a zygote that died in the meantime.
            shutil.rmtree(self._workdir, ignore_errors=True)
        self._sandbox._forget(self)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
