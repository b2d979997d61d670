"""Process isolation for running untrusted notebooks.

The grading process never shares a process with student code.  A
:class:`Sandbox` starts one warm *zygote* (``python -m autograder.grader_side.sandbox.zygote``,
clean environment) that imports the heavy modules (numpy, torch) and the
request handler once.  :meth:`Sandbox.open` asks the zygote to fork a child for
one notebook: the child isolates itself, runs the code cells into a fresh
namespace, reports per-cell success in ``Session.load_report`` and then
answers :meth:`Session.request` calls by passing them to the handler.  Every
message is a length-prefixed JSON header plus raw byte blobs (``frames.py``);
nothing is ever pickled, and the grader only parses replies as data, checked
against size limits and the session's wall-clock deadline.

Isolation levels
----------------
At start-up the zygote runs every isolation step once in a throw-away child
and records what the kernel allowed; ``Sandbox.isolation`` reports it and
each session must then reach exactly that level or it refuses to run the
notebook.  From strongest to weakest:

* **root grader** (the intended setup): each child calls ``setsid()``, enters
  new mount, network, PID, IPC and UTS namespaces and forks once more so the
  notebook runs as PID 1 of its own PID namespace: when it dies, everything it
  spawned dies too, and it cannot see or signal the grader or other sessions.
  Its mount namespace gets a fresh ``/proc``, fresh private tmpfs on ``/tmp``,
  ``/var/tmp`` and ``/dev/shm``, and an empty read-only tmpfs over every path
  in ``hide=[...]`` and over ``/run/user`` (the grader user's sockets).  The Python installation and its site-packages stay
  visible read-only even when they live inside a hidden directory (for
  example a ``.venv`` inside the repository, or a pyenv under ``/root``).
  The network namespace has only a downed loopback, so even ``127.0.0.1`` is
  unreachable.  The child then drops to a dedicated uid ``61000 + slot``
  with no supplementary groups, no capabilities and ``no_new_privs``.
  ``isolation["uid"] == "dedicated uid 61000+slot"``.

* **non-root grader with unprivileged user namespaces**: the same
  namespaces, created inside a new user namespace in which the grader's uid
  maps to itself.  The child keeps the grader's uid (``"same uid (not
  root)"``, ``user_namespace: "yes"``) but drops every capability before
  running student code, so it cannot undo the mounts; being in its own PID
  namespace it still cannot signal the grader.

* **fallback** (not root and user namespaces denied, or no namespaces at
  all): ``network``, ``filesystem`` and ``pid`` are reported as ``"none"``.
  The child only gets ``setsid()``, the rlimits and a private working
  directory under the real ``/tmp``; the hidden paths are *not* hidden,
  ``RLIMIT_NPROC`` counts all of the uid's processes (it is set to the
  current count plus ``max_procs``), and student code running as the
  grader's uid could signal or read the grader.  Check ``isolation`` and
  refuse to grade untrusted work in this mode if that matters.

In every mode the child has rlimits from :class:`Limits` (address space =
zygote size + ``memory_mb``, CPU, NPROC, FSIZE, NOFILE 256, no core
files), stdin/stdout/stderr on ``/dev/null`` with ``print`` output dropped,
and a whole-session wall-clock deadline; on timeout or garbage the grader
SIGKILLs the child's tree and raises :class:`ChildDied`.  If the zygote
itself dies, the next ``open()`` restarts it once (noted in
``Sandbox.events``) and otherwise raises :class:`SandboxError`.

Things the sessions must import later than the zygote (modules not in
``preload`` and not imported by the handler) have to be importable from the
kept paths: the Python installation, its site-packages, or ``keep=[...]``.
"""

from .host import ChildDied, Limits, Sandbox, SandboxError, Session

__all__ = ["ChildDied", "Limits", "Sandbox", "SandboxError", "Session"]
