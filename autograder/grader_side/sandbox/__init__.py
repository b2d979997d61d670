"""Process isolation for running untrusted notebooks.

The grading process never shares a process with student code. A :class:`Sandbox` starts one
warm *zygote* (``python -m sandbox.zygote`` inside bubblewrap, clean environment) that imports
the heavy modules (numpy, torch) and the request handler once. :meth:`Sandbox.open` asks the
zygote to fork a child for one notebook: the child shuts itself in, runs the code cells into a
fresh namespace, reports per-cell success in ``Session.load_report`` and then answers
:meth:`Session.request` calls by passing them to the handler. Every message is a
length-prefixed JSON header plus raw byte blobs (``frames.py``); nothing is ever pickled, and
the grader only parses replies as data, checked against size limits and the session's
wall-clock deadline.

One module per job:

* ``host.py``       the grader's side: Limits, Sandbox, Session (never runs student code)
* ``zygote.py``     the warm process that forks sessions and reports how they died
* ``view.py``       the file view: bubblewrap's allowlist for the zygote, each session's scratch
* ``lifecycle.py``  a session's processes: namespaces, limits, uid, filter; start and end
* ``seccomp.py``    the system-call filter, compiled once with libseccomp
* ``syscalls.py``   the system calls Python does not wrap
* ``cells.py``      running the notebook's cells, then serving requests
* ``frames.py``     the wire format between grader and child

Isolation (``Sandbox.isolation`` reports what was reached; every session must reach exactly
the plan the start-up probe found, or it refuses to run the notebook):

* **the zygote** runs under bubblewrap with an allowlisted view: ``/usr`` and the Python
  installation read-only with the course's own files cut out of site-packages, a few loader
  files of ``/etc``, a minimal ``/dev``, and ``/sandbox/lib`` holding only the packages given
  (by default ``student_side``). No host ``/run``, ``/var``, ``/tmp``, home, other copy of the
  course, or socket exists there. It has its own network, IPC and UTS namespaces.
* **each session** enters new mount, network, PID, IPC and UTS namespaces (it is PID 1 of its
  own PID namespace: when it dies everything it spawned dies too), gets a fresh ``/proc``, a
  private ``/tmp`` (``scratch_mb``) and ``/dev/shm`` (``shm_mb``), SysV IPC limits in its own
  IPC namespace, rlimits (address space = zygote + ``memory_mb`` minus the scratch and shared
  memory caps, CPU, NPROC, FSIZE, NOFILE 256, no core files, no POSIX message queues), then
  drops to a dedicated uid ``61000 + slot`` with no capabilities and ``no_new_privs``, and
  installs the seccomp filter (no keyring, ptrace, mount, new namespaces, bpf, perf, io_uring,
  or new sockets). Not root: the same, inside a user namespace, keeping the grader's uid.
* **without namespaces or bubblewrap** (a container under Docker's default seccomp profile, an
  unprivileged pod) the Sandbox refuses with a one-line reason, unless
  ``allow_weak_isolation=True``. Weak isolation is for ONE submission per throwaway environment
  (one container per submission, as Gradescope runs it; ``api.autograde`` refuses it for more):
  student code sees the machine's own files, and another copy of the course anywhere on it
  cannot be found to be hidden. Sessions then get the rlimits, the system-call filter (where the
  container lets a process install one), the wall-clock kill and a private working folder under
  the real ``/tmp``. As root, also a dedicated uid ``61000 + slot`` in one group of their own
  (``lifecycle.weak_group``: the gid of the Sandbox's first uid, so no two graders share it):

  - the grading Python must be readable to that uid, or the Sandbox stops with the reason (it
    never runs student code as root);
  - nothing a session starts outlives it: when it ends, and before its uid is used again, the
    zygote kills every process of the uid (``kill(-1)`` from a process that has become that uid,
    checked in ``/proc``; the zygote is also their subreaper), or refuses the next session;
  - for the whole run, before the first session, the sessions' group is denied by ACL the
    course, its references, the submissions and the grader's home, also what the grader creates
    in them during the run (``acl.Denial``: a folder holding the Python, such as the course with
    its ``.venv``, is search-only with a default ACL); the packages sessions import are a copy
    in the zygote's temporary home, not the checkout. It is all taken back at the end, once no
    process of a session's uid is left.

  Not root, sessions share the grader's uid: the zygote ends their process group and what they
  leave behind (it is their subreaper), and nothing of the machine's files is hidden.
  ``isolation`` says exactly what is in force: ``weak`` (why), ``uid``, ``files``,
  ``processes``, ``seccomp``, and "not isolated" for the namespaces it lacks.

On timeout or garbage the grader SIGKILLs the child's tree and raises :class:`ChildDied`. If
the zygote itself dies, the next ``open()`` restarts it once (noted in ``Sandbox.events``) and
otherwise raises :class:`SandboxError`.
"""

import contextlib
import gc
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from .host import ChildDied, Limits, Sandbox, SandboxError, Session
from .marks import mark

__all__ = ["PRELOAD", "PRELOAD_ONE", "ChildDied", "Limits", "Sandbox", "SandboxError", "Session", "grading_sandbox",
           "limits", "starting"]

REPO = Path(__file__).resolve().parents[3]   # the checkout: autograder/grader_side/sandbox/__init__.py
# Warm modules every child gets for free: numpy and torch, and pyplot for a student's scratch plots.
PRELOAD = ("numpy", "torch", "matplotlib.pyplot")
# One submission on its own (``course grade``, Gradescope, pytest --submission): the warm process's
# start is what the grader waits for, and pyplot is 0.7 s of it (3.5 s in all on a machine where
# importing torch takes 2.5 s); a student whose cell imports pyplot pays that once, in their session
# (about 1 s with matplotlib's font list, within the cell's time and the session's memory limits).
PRELOAD_ONE = ("numpy", "torch")


def grading_sandbox(timeout: float, hide: Sequence = (), allow_weak_isolation: bool = False,
                    preload: tuple[str, ...] = PRELOAD) -> Sandbox:
    """The sandbox submissions are graded in (``course autograde`` and ``nbgrader autograde`` alike),
    started: the package's checkout, the home directory and ``hide`` are hidden from it. Inside a
    ``starting`` block with the same arguments, the one that block started (waited for if it is
    still starting; what its start raised is raised here)."""
    key = _key(timeout, hide, allow_weak_isolation, preload)
    mark("sandbox-wanted")
    with _early_lock:
        early = _early.pop(key, None)
        if early is not None:
            early.taken = True
    if early is None:
        return _sandbox(key)
    early.collect_again()
    return early.result()


# What a grading sandbox is started with: (timeout, every path hidden, allow_weak_isolation, preload).
_Key = tuple[float, tuple[Path, ...], bool, tuple[str, ...]]


def _key(timeout: float, hide: Sequence, allow_weak_isolation: bool, preload: Sequence[str]) -> _Key:
    return float(timeout), tuple(sorted({REPO, Path.home(), *(Path(p).resolve() for p in hide)})), \
        bool(allow_weak_isolation), tuple(preload)


def _sandbox(key: _Key) -> Sandbox:
    timeout, paths, allow_weak_isolation, preload = key
    return Sandbox(limits(timeout), preload=preload, hide=list(paths), allow_weak_isolation=allow_weak_isolation)


class _Starting:
    """A grading sandbox starting in a thread of its own (``starting``): the thread only waits for
    the warm process, which works on another core. The thread then lives until the sandbox is
    closed: bubblewrap runs with --die-with-parent, whose parent is the thread that started it
    (the kernel's parent-death signal follows the thread, not the process)."""

    def __init__(self, key: _Key):
        self.key = key
        self.taken = False                  # a grading_sandbox call has it: closing it is the caller's
        self.sandbox: Sandbox | None = None
        self.error: BaseException | None = None
        self.started = threading.Event()    # the sandbox is ready, or its start failed
        self.collecting = gc.isenabled()    # this process's cyclic GC, off until the sandbox is taken
        gc.disable()
        self.thread = threading.Thread(target=self._start, name="sandbox-start", daemon=True)
        self.thread.start()

    def _start(self) -> None:
        try:
            self.sandbox = _sandbox(self.key)
        except BaseException as exc:        # raised again in the thread that takes it
            self.error = exc
        finally:
            self.started.set()
        if self.sandbox is not None:
            self.sandbox.ended.wait()

    def collect_again(self) -> None:
        """This process's cyclic GC as it was before the start (it is off meanwhile: ``starting``)."""
        if self.collecting:
            gc.enable()
            self.collecting = False

    def result(self) -> Sandbox:
        self.started.wait()
        if self.error is not None:
            raise self.error
        assert self.sandbox is not None     # _start either made it or kept what it raised
        return self.sandbox


_early: dict[_Key, _Starting] = {}          # started by a ``starting`` block, not yet taken
_early_lock = threading.Lock()


@contextlib.contextmanager
def starting(timeout: float, hide: Sequence = (), allow_weak_isolation: bool = False) -> Iterator[None]:
    """Start, now and in a background thread, the sandbox ``grading_sandbox(timeout, hide,
    allow_weak_isolation, PRELOAD_ONE)`` starts, for that call inside the block to take (what
    ``grade_students`` asks for when it grades one student). One submission is
    graded in a process of its own (``course grade``, Gradescope's run): its warm process imports
    torch and probes the isolation (seconds) on another core while this process loads the set
    (which imports torch too), instead of after it. Nothing changes in the sandbox itself: the
    same arguments make the same one, and no session opens before the call takes it.

    Until the call takes it, this process runs without its cyclic GC: what it does meanwhile is
    mostly importing (torch, the set), where the collector's passes walk the new modules' objects
    over and over, for about a third of the import time, and free almost nothing. It is on again
    once the sandbox is taken, or when the block ends.

    A sandbox no call took is closed when the block ends (once it has started: its start is not
    cut short). Inside a block already starting the same sandbox, nothing more is started."""
    key = _key(timeout, hide, allow_weak_isolation, PRELOAD_ONE)
    with _early_lock:
        early = None if key in _early else _early.setdefault(key, _Starting(key))
    try:
        yield
    finally:
        if early is not None:
            with _early_lock:
                if _early.get(key) is early:
                    del _early[key]
            early.collect_again()
            if not early.taken:
                early.started.wait()
                if early.sandbox is not None:   # a start that failed has nothing to close, and nobody asked
                    early.sandbox.close()


def limits(timeout: float) -> Limits:
    """The sandbox's limits for ``timeout`` seconds per notebook: a cell or check that runs past a
    third of it is interrupted on its own."""
    return Limits(timeout=timeout, step_timeout=min(10.0, timeout / 3))
