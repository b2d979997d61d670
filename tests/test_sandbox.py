"""Tests for autograder.sandbox with real processes (no mocks).

Every hostile case must be reported as a failed cell or ChildDied with a
clear reason, and the sandbox must keep working afterwards.
"""

import os
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time

import pytest

from autograder.grader_side.analysis import as_python
from autograder.grader_side.sandbox import (
    ChildDied,
    Limits,
    Sandbox,
    SandboxError,
    frames,
)

HANDLER = "sandbox_echo_handler:serve"
# The children see only the packages they are given: the test handler, read-only.
PACKAGES = {"sandbox_echo_handler": os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_echo_handler.py")}
# Without bubblewrap these tests still run what they can (the isolation tests skip themselves);
# tests/test_sandbox_hostile.py needs it.
WEAK_OK = shutil.which("bwrap") is None
LIMITS = Limits(timeout=2.0, memory_mb=256, cpu_seconds=20, max_procs=32, file_mb=4, output_mb=1)
SECRET = "the answer is 42"


@pytest.fixture(scope="module")
def secret_dir():
    # Readable by everybody and outside the scratch dirs the sandbox always
    # replaces, so only the explicit hide= keeps it private.
    base = None
    for cand in ("/run", "/srv", os.path.expanduser("~")):
        if os.access(cand, os.W_OK) and os.stat(cand).st_mode & 0o001:
            base = cand
            break
    path = tempfile.mkdtemp(prefix="sandbox-secret-", dir=base)
    os.chmod(path, 0o755)
    with open(os.path.join(path, "solution.txt"), "w") as f:
        f.write(SECRET)
    os.chmod(os.path.join(path, "solution.txt"), 0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def sb(secret_dir):
    with Sandbox(LIMITS, preload=("numpy", "torch"), handler=HANDLER, packages=PACKAGES,
                 allow_weak_isolation=WEAK_OK, hide=[secret_dir]) as box:
        yield box


def namespaced(sb):
    return sb.isolation["pid"] == "namespace" and not sb.isolation["filesystem"].startswith("not isolated")


def check_alive(sb, slot=0):
    """A fresh session must still work normally."""
    with sb.open(["f = lambda x: x + 1"], slot=slot) as s:
        assert s.load_report == [{"ok": True}]
        assert s.request({"call": "f", "args": [41]}) == ({"result": 42}, [])


def processes_of(uid):
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/status") as f:
                    for line in f:
                        if line.startswith("Uid:") and int(line.split()[1]) == uid:
                            found.append(int(d))
            except OSError:
                pass
    return found


# -- the happy path ---------------------------------------------------------

def test_isolation_is_reported(sb):
    iso = sb.isolation
    for key in ("uid", "network", "filesystem", "pid"):
        assert key in iso
    if os.geteuid() == 0 and "weak" not in iso:
        assert iso["uid"] == "dedicated uid 61000+slot"
        assert iso["network"] == "namespace"
        assert iso["filesystem"] == "allowlist (bubblewrap) + private /tmp"
        assert iso["pid"] == "namespace"


def test_call_echo_and_handler_error(sb):
    with sb.open(["f = lambda x: x + 1", "g = lambda s: s.upper()"]) as s:
        assert s.load_report == [{"ok": True}, {"ok": True}]
        assert s.request({"call": "f", "args": [1]}) == ({"result": 2}, [])
        assert s.request({"call": "g", "args": ["ab"]}) == ({"result": "AB"}, [])
        header, blobs = s.request({"echo": True, "tag": "x"}, [b"abc", b"", bytes(range(256))])
        assert header == {"echo": True, "tag": "x"}
        assert blobs == [b"abc", b"", bytes(range(256))]
        header, _ = s.request({"nonsense": 1})
        assert header["error"].startswith("ValueError: unknown request")
        header, _ = s.request({"call": "missing"})
        assert header["error"].startswith("KeyError")


def test_session_timing(sb):
    cells = ["f = lambda x: x + 1"]
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        with sb.open(cells) as s:
            s.request({"call": "f", "args": [1]})
        best = min(best, time.perf_counter() - t)
    assert best < 0.1, f"open+load+request+close took {best:.3f} s"


def test_cell_errors_do_not_stop_later_cells(sb):
    cells = [
        "a = 1",
        "raise ValueError('x' * 1000)",
        "import sys; sys.exit(2)",
        "raise KeyboardInterrupt",
        "undefined_name",
        "def broken(:\n    pass",
        "b = a + 1",
    ]
    with sb.open(cells) as s:
        r = s.load_report
        assert [e["ok"] for e in r] == [True, False, False, False, False, False, True]
        assert r[1]["error"] == "ValueError: " + "x" * 300
        assert r[2]["error"].startswith("SystemExit")
        assert r[3]["error"].startswith("KeyboardInterrupt")
        assert r[4]["error"].startswith("NameError: name 'undefined_name'")
        assert r[5]["error"].startswith("SyntaxError")
        assert s.request({"get": "b"}) == ({"result": 2}, [])


def test_magics_and_ipython_stubs(sb):
    """IPython syntax, once the grader has made it plain Python, runs in the child (which has its own
    harmless get_ipython())."""
    cells = [
        "%matplotlib inline\n!pip install x\nimport math",
        "%%time\nthis would not parse",
        "if True:\n    !ls -la\n    v = 1",
        "%load_ext autoreload\nw = ('%d items'\n     % 3)",
        "display(v); get_ipython().run_line_magic('matplotlib', 'inline'); u = math.floor(2.5)",
        "import asyncio\nawait asyncio.sleep(0)\nz = 5",
    ]
    with sb.open([as_python(cell) for cell in cells]) as s:
        assert s.load_report == [{"ok": True}] * len(cells), s.load_report
        assert s.request({"get": "w"}) == ({"result": "3 items"}, [])
        assert s.request({"get": "u"}) == ({"result": 2}, [])
        assert s.request({"get": "z"}) == ({"result": 5}, [])


# -- filesystem and network -------------------------------------------------

def test_hidden_paths_and_imports(sb, secret_dir):
    if sb.isolation["filesystem"].startswith("not isolated"):
        pytest.skip("no private mount namespace here: " + str(sb.isolation))
    secret_file = os.path.join(secret_dir, "solution.txt")
    cells = [
        "import os, fractions, sqlite3, decimal\nok_imports = True",
        f"try:\n    leaked = open({secret_file!r}).read()\nexcept OSError as e:\n    leaked = type(e).__name__",
        f"try:\n    listing = os.listdir({secret_dir!r})\nexcept OSError as e:\n    listing = type(e).__name__",
        "open('scratch.txt', 'w').write('mine'); cwd = os.getcwd()",
        "tmp = sorted(os.listdir('/tmp'))",
        "import numpy, torch\nt = float(torch.ones(3).sum()) + float(numpy.ones(2).sum())",
    ]
    with sb.open(cells) as s:
        assert s.load_report == [{"ok": True}] * len(cells), s.load_report
        assert s.request({"get": "leaked"})[0]["result"] in ("FileNotFoundError", "PermissionError")
        # an empty tmpfs over it, or gone with a hidden/replaced parent
        assert s.request({"get": "listing"})[0]["result"] in ([], "FileNotFoundError")
        assert s.request({"get": "t"})[0]["result"] == 5.0
        assert s.request({"get": "cwd"})[0]["result"].startswith("/tmp")
        # a fresh /tmp: nothing of the host's shows through except the kept venv path
        tmp = s.request({"get": "tmp"})[0]["result"]
        assert "work" in tmp
        assert not any(name.startswith("sandbox-secret-") or name.startswith("pytest-") for name in tmp)


def test_hiding_a_directory_that_holds_the_venv(tmp_path):
    # The venv (and pyenv) live under hidden directories: they must stay importable.
    import sys
    venv_parent = os.path.dirname(os.path.realpath(sys.prefix))
    base_parent = os.path.dirname(os.path.realpath(sys.base_prefix))
    with Sandbox(LIMITS, preload=(), handler=HANDLER, packages=PACKAGES, allow_weak_isolation=WEAK_OK,
                 hide=[venv_parent, base_parent]) as box:
        if box.isolation["filesystem"].startswith("not isolated"):
            pytest.skip("no private mount namespace here")
        with box.open(["import json, fractions, numpy, sys\nok = numpy.arange(3).sum().item()"]) as s:
            assert s.load_report == [{"ok": True}], s.load_report
            assert s.request({"get": "ok"}) == ({"result": 3}, [])


def test_network_is_unreachable(sb):
    if sb.isolation["network"].startswith("not isolated"):
        pytest.skip("no network namespace here")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        cell = ("import socket\ntry:\n"
                f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
                "    net = 'connected'\nexcept OSError as e:\n    net = type(e).__name__")
        with sb.open([cell]) as s:
            assert s.request({"get": "net"})[0]["result"] != "connected"
    finally:
        listener.close()


# -- hostile notebooks ------------------------------------------------------

def test_infinite_loop_ignoring_signals_times_out(sb):
    cell = ("import signal\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "while True:\n    try:\n        pass\n    except KeyboardInterrupt:\n        pass")
    t = time.monotonic()
    with pytest.raises(ChildDied, match=r"^timed out after 2 s$"):
        sb.open([cell])
    assert time.monotonic() - t < 4
    check_alive(sb)


def test_memory_bombs_fail_their_cells(sb):
    cells = [
        "x = bytearray(10**11)",
        "import torch\ny = torch.empty(10**11)",
        "hog = []\nwhile True:\n    hog.append(bytearray(10**8))",
        "del hog\nf = lambda x: x + 1",
    ]
    with sb.open(cells) as s:
        r = s.load_report
        assert [e["ok"] for e in r] == [False, False, False, True], r
        assert r[0]["error"].startswith("MemoryError")
        assert "allocate" in r[1]["error"]
        assert r[2]["error"].startswith("MemoryError")
        assert s.request({"call": "f", "args": [1]}) == ({"result": 2}, [])
    check_alive(sb)


def test_fork_bomb_is_bounded_and_cleaned_up(sb):
    if "weak" in sb.isolation and not sb.isolation["uid"].startswith("dedicated"):
        pytest.skip("weak isolation with the grader's uid: the process limit counts all of its processes")
    cells = ["import os\nwhile True:\n    os.fork()", "f = lambda x: x + 1"]
    with sb.open(cells, slot=3) as s:
        r = s.load_report
        assert r[0]["ok"] is False and "Resource temporarily unavailable" in r[0]["error"], r
        assert r[1] == {"ok": True}
        assert s.request({"call": "f", "args": [1]}) == ({"result": 2}, [])
    if namespaced(sb) and sb.isolation["uid"].startswith("dedicated"):
        uid = sb.session_uid(3)
        deadline = time.monotonic() + 3
        while processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_of(uid) == []
    check_alive(sb)


def test_two_sandboxes_on_one_machine_never_give_their_sessions_one_uid(sb):
    """Two graders side by side, each using its slot 0: each session runs as a uid the other's never
    has (without namespaces a session's end kills every process of its uid)."""
    if not sb.isolation["uid"].startswith("dedicated"):
        pytest.skip("sessions keep the grader's uid here")
    with Sandbox(LIMITS, preload=(), handler=HANDLER, packages=PACKAGES, allow_weak_isolation=WEAK_OK) as other:
        uids = []
        for box in (sb, other):
            with box.open(["import os\nuid = lambda: os.getuid()"], slot=0) as s:
                uids.append(s.request({"call": "uid", "args": []})[0]["result"])
        assert uids == [sb.session_uid(0), other.session_uid(0)] and uids[0] != uids[1]


def test_exit_during_load(sb):
    with pytest.raises(ChildDied, match="exited with status 3 while running the notebook cells"):
        sb.open(["import os\nos._exit(3)"])
    check_alive(sb)


def test_a_notebook_that_breaks_the_code_running_it_is_told_so(sb):
    """A cell that replaces a builtin the session's own code uses ends the process with the
    session's own failure status, which the reason explains."""
    with pytest.raises(ChildDied, match="status 70 .*: the code that runs the notebook failed, as it does when the "
                                        "notebook replaces a builtin"):
        with sb.open(["import builtins\nbuiltins.isinstance = lambda *a: True"]) as s:
            s.request({"call": "len", "args": [[1]]})
    check_alive(sb)


@pytest.mark.parametrize("cell", [
    "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
    "import os, signal\ntry:\n    os.kill(1, signal.SIGKILL)\nexcept OSError:\n    pass",
    "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass",
])
def test_killing_parent_zygote_or_everything(sb, cell):
    if not namespaced(sb):
        pytest.skip("without a PID namespace this would hit the grader itself")
    zygote = sb.zygote_pid
    try:
        with sb.open([cell, "f = lambda x: x + 1"]) as s:
            s.request({"call": "f", "args": [1]})
    except ChildDied as e:
        assert "SIGKILL" in e.reason or "exited" in e.reason
    os.kill(zygote, 0)                  # the zygote is still there
    assert sb.zygote_pid == zygote
    check_alive(sb)


def test_output_flood_is_discarded(sb):
    cells = ["import os, sys\nfor _ in range(5):\n    print('x' * 10**8)\n"
             "os.write(1, b'y' * 10**7)\nsys.stderr.write('z' * 10**7)",
             "f = lambda x: x + 1"]
    with sb.open(cells) as s:
        assert s.load_report == [{"ok": True}, {"ok": True}]
        assert s.request({"call": "f", "args": [1]}) == ({"result": 2}, [])


def test_reply_larger_than_output_limit(sb):
    with sb.open(["f = lambda x: x + 1"]) as s:
        assert s.request({"big": 1000})[0] == {"size": 1000}
        # the limit, never the reply's size (code could set it from a hidden input)
        with pytest.raises(ChildDied, match=r"reply was not valid data: the reply is over the \d+ byte output limit$"):
            s.request({"big": 2 << 20})
        with pytest.raises(ChildDied, match="reply was not valid data"):
            s.request({"call": "f", "args": [1]})
    check_alive(sb)


def test_garbage_on_the_socket(sb):
    cell = ("import os, socket\n"
            "for fd in range(3, 64):\n"
            "    try:\n"
            "        s = socket.socket(fileno=os.dup(fd))\n"
            "    except OSError:\n"
            "        continue\n"
            "    if s.family == socket.AF_UNIX:\n"
            "        s.sendall(b'\\x00\\x00\\x00\\x04nope')\n")
    with pytest.raises(ChildDied, match="reply was not valid data: header is not UTF-8 JSON"):
        sb.open([cell])
    check_alive(sb)


def test_concurrent_sessions(sb):
    results = {}
    barrier = threading.Barrier(3)

    def good(slot):
        barrier.wait()
        try:
            with sb.open(["f = lambda x: x + 1"], slot=slot) as s:
                results[slot] = [s.request({"call": "f", "args": [i]})[0]["result"] for i in range(20)]
        except Exception as e:  # reported below
            results[slot] = e

    def hostile():
        barrier.wait()
        try:
            with sb.open(["def spin():\n    while True:\n        pass"], slot=2) as s:
                s.request({"call": "spin"})
            results[2] = "no error"
        except ChildDied as e:
            results[2] = e.reason

    threads = [threading.Thread(target=good, args=(0,)), threading.Thread(target=good, args=(1,)),
               threading.Thread(target=hostile)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results[0] == list(range(1, 21))
    assert results[1] == list(range(1, 21))
    assert results[2] == "timed out after 2 s"


# -- the zygote itself ------------------------------------------------------

def test_zygote_restart_keeps_sessions_running():
    with Sandbox(LIMITS, preload=(), handler=HANDLER, packages=PACKAGES, allow_weak_isolation=WEAK_OK) as box:
        old = box.zygote_pid
        with box.open(["f = lambda x: x + 1"]) as s:
            os.kill(old, signal.SIGKILL)
            time.sleep(0.1)
            # a session already in flight does not depend on the zygote
            assert s.request({"call": "f", "args": [1]}) == ({"result": 2}, [])
        check_alive(box)
        assert box.zygote_pid != old
        assert any("restarted" in e for e in box.events)


def test_bad_configuration_is_reported():
    with pytest.raises(SandboxError, match="could not load the handler"):
        Sandbox(LIMITS, preload=(), handler="tests.no_such_module:serve", allow_weak_isolation=WEAK_OK)
    with pytest.raises(SandboxError, match="could not import preload module"):
        Sandbox(LIMITS, preload=("no_such_module_xyz",), handler=HANDLER, packages=PACKAGES,
                allow_weak_isolation=WEAK_OK)


# -- framing ----------------------------------------------------------------

@pytest.mark.parametrize("raw, message", [
    (struct.pack(">I", 2 << 20), "larger than"),
    (struct.pack(">I", 3) + b"[1]", "not an object"),
    (struct.pack(">I", 4) + b"\xff\xfe{}", "not UTF-8 JSON"),
    (struct.pack(">I", 20000) + b"[" * 20000, "not UTF-8 JSON"),
    (struct.pack(">I", 15) + b'{"_blobs": [-1]}'[:15], "not UTF-8 JSON"),
    (struct.pack(">I", 16) + b'{"_blobs": [-1]}', "non-negative"),
    (struct.pack(">I", 18) + b'{"_blobs": [true]}', "non-negative"),
    (struct.pack(">I", 21) + b'{"_blobs": [9999999]}', "output limit"),
])
def test_recv_frame_rejects_bad_frames(raw, message):
    a, b = socket.socketpair()
    try:
        a.sendall(raw)
        with pytest.raises(frames.BadFrame, match=message):
            frames.recv_frame(b, max_blob_bytes=1 << 20, deadline=time.monotonic() + 2)
    finally:
        a.close()
        b.close()


def test_recv_frame_deadline_and_eof():
    a, b = socket.socketpair()
    a.sendall(struct.pack(">I", 10) + b"{")
    with pytest.raises(frames.FrameTimeout):
        frames.recv_frame(b, max_blob_bytes=0, deadline=time.monotonic() + 0.2)
    a.close()
    with pytest.raises(frames.FrameClosed):
        frames.recv_frame(b, max_blob_bytes=0, deadline=time.monotonic() + 0.2)
    b.close()
