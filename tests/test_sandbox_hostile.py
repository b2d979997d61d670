"""Attacks on the sandbox by a determined student, with real processes, files and sockets.

Each test runs the attack in a session and checks from the outside (the host's files, a
listener on 127.0.0.1 or a unix socket, a later student's session) that it got nowhere.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap

import pytest

from autograder.grader_side.sandbox import Limits, Sandbox, view

HERE = os.path.dirname(os.path.abspath(__file__))
HANDLER = "sandbox_echo_handler:serve"
PACKAGES = {"sandbox_echo_handler": os.path.join(HERE, "sandbox_echo_handler.py")}
LIMITS = Limits(timeout=10.0, memory_mb=512, cpu_seconds=20, max_procs=32, file_mb=4, output_mb=1,
                scratch_mb=32, shm_mb=8)

pytestmark = pytest.mark.skipif(not shutil.which("bwrap") or os.geteuid() != 0,
                                reason="needs bubblewrap and root (make sandbox; the grader runs as root)")


@pytest.fixture(scope="module")
def sb():
    with Sandbox(LIMITS, preload=("numpy", "torch"), handler=HANDLER, packages=PACKAGES) as box:
        yield box


def run(sb, code: str, slot: int = 0, name: str = "out"):
    """Run one cell in a fresh session; return the value it left in ``name``."""
    with sb.open([textwrap.dedent(code)], slot=slot) as s:
        assert s.load_report == [{"ok": True}], s.load_report
        return s.request({"get": name})[0]["result"]


def attempt(body: str) -> str:
    """A cell that sets ``out`` to "ok" or to the errno name of the OSError it raised."""
    return ("import errno, os\ntry:\n" + textwrap.indent(textwrap.dedent(body), "    ")
            + "\n    out = 'ok'\nexcept OSError as e:\n    out = errno.errorcode.get(e.errno, str(e))\n")


LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def syscall_errno(expr: str) -> str:
    """A cell that sets ``out`` to "ok" or the errno name after a raw libc call returning -1."""
    return (LIBC + f"rc = {expr}\nout = 'ok' if rc != -1 else errno.errorcode[ctypes.get_errno()]\n"
            ).replace("import ctypes", "import ctypes, errno")


# -- the file view: an allowlist ---------------------------------------------------------------

@pytest.fixture
def other_course_copy():
    """A second copy of the course elsewhere on disk (a backup), readable by everybody."""
    base = tempfile.mkdtemp(prefix="course-backup-", dir="/srv" if os.path.isdir("/srv") else None)
    os.chmod(base, 0o755)
    ref = os.path.join(base, "solutions", "reference")
    os.makedirs(ref)
    for d in (os.path.join(base, "solutions"), ref):
        os.chmod(d, 0o755)
        with open(os.path.join(d, "__init__.py"), "w") as f:
            f.write("")
    with open(os.path.join(ref, "block.py"), "w") as f:
        f.write("ANSWER = 'the hidden reference'\n")
    for root, _dirs, files in os.walk(base):
        for n in files:
            os.chmod(os.path.join(root, n), 0o644)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_another_copy_of_the_course_is_neither_readable_nor_importable(sb, other_course_copy):
    code = f"""
    import sys
    sys.path.insert(0, {other_course_copy!r})
    try:
        from solutions.reference.block import ANSWER as out
    except ImportError as e:
        out = type(e).__name__
    try:
        out2 = open({other_course_copy!r} + '/solutions/reference/block.py').read()
    except OSError as e:
        out2 = type(e).__name__
    out = [out, out2]
    """
    assert run(sb, code) == ["ModuleNotFoundError", "FileNotFoundError"]


def test_the_grader_code_is_not_importable(sb):
    code = """
    found = []
    for name in ('autograder', 'autograder.grader_side', 'solutions', 'grading', 'tests'):
        try:
            __import__(name)
            found.append(name)
        except ImportError:
            pass
    out = found
    """
    assert run(sb, code) == []


def test_an_installed_copy_of_the_course_is_cut_out_of_site_packages(tmp_path):
    """A regular (not editable) install puts the references into site-packages."""
    from autograder.grader_side.sandbox import view

    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for rel, text in {"autograder/__init__.py": "", "solutions/reference/norms.py": "ANSWER = 1\n",
                      "course_kit-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: course-kit\nVersion: 0.1\n",
                      "course_kit-0.1.dist-info/top_level.txt": "autograder\nsolutions\n",
                      "course_kit-0.1.dist-info/RECORD": "autograder/__init__.py,,\nsolutions/reference/norms.py,,\n"
                                                          "course_kit-0.1.dist-info/RECORD,,\n",
                      "numpy_like/__init__.py": ""}.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    assert str(site) in view.site_dirs([str(tmp_path)])
    assert view.course_files([str(site)]) == [str(site / n) for n in ("autograder", "course_kit-0.1.dist-info",
                                                                       "solutions")]
    args, seen = view.bwrap_args({}, [], [], privileged=True)
    assert seen["visible_read_only"][0] == "/usr" and "--tmpfs" in args


def test_the_view_is_an_allowlist(sb):
    code = """
    import os
    out = {p: os.path.exists(p) for p in ('/run', '/var', '/home', '/srv', '/opt', '/etc/shadow', '/etc/passwd',
                                          '/dev/fuse', '/dev/net/tun', '/sys', '/mnt', '/media')}
    out['dev'] = sorted(os.listdir('/dev'))
    out['pids'] = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
    out['tmp'] = sorted(os.listdir('/tmp'))
    out['writes'] = []
    for path in ('/usr/evil', '/sandbox/lib/evil.py', '/sandbox/lib/student_side_evil', '/etc/evil', '/evil'):
        try:
            open(path, 'w').close()
            out['writes'].append(path)
        except OSError:
            pass
    """
    out = run(sb, code)
    for path in ('/run', '/var', '/home', '/srv', '/opt', '/etc/shadow', '/etc/passwd', '/dev/fuse',
                 '/dev/net/tun', '/sys', '/mnt', '/media'):
        assert out[path] is False, path
    assert set(out["dev"]) <= {"null", "zero", "full", "random", "urandom", "tty", "console", "ptmx", "pts",
                               "shm", "fd", "stdin", "stdout", "stderr", "core", "mqueue"}
    assert out["pids"] == [1]           # its own /proc: nothing of the host or other sessions
    # A Python installed under /tmp (a checkout there) is bound back, read-only; nothing else shows.
    pythons = {path.split("/")[2] for path in view.python_paths() if path.startswith("/tmp/")}
    assert out["tmp"] == sorted({"work"} | pythons)
    assert out["writes"] == []
    assert not os.path.exists("/usr/evil")


def test_two_students_at_the_same_time_share_no_scratch(sb):
    writer = "import os\nfor d in ('/tmp', '/tmp/work', '/dev/shm'):\n    open(os.path.join(d, 'note'), 'w').write('a')"
    with sb.open([writer], slot=0) as first:
        assert first.load_report == [{"ok": True}]
        look = ("import os\n"
                "out = [d for d in ('/tmp', '/tmp/work', '/dev/shm') if os.path.exists(os.path.join(d, 'note'))]")
        assert run(sb, look, slot=1) == []


def test_run_lock_and_tmp_carry_nothing_between_students(sb):
    marker = "left-by-student-a"
    write = attempt(f"""
    for d in ('/run/lock', '/var/tmp', '/dev/shm', '/tmp'):
        try:
            with open(os.path.join(d, {marker!r}), 'w') as f:
                f.write('secret')
        except OSError:
            pass
    raise OSError(errno.EEXIST, 'done')
    """)
    before = set(os.listdir("/run/lock")) if os.path.isdir("/run/lock") else set()
    run(sb, write, slot=0)
    read = f"""
    import os
    out = [d for d in ('/run/lock', '/var/tmp', '/dev/shm', '/tmp') if os.path.exists(os.path.join(d, {marker!r}))]
    """
    assert run(sb, read, slot=1) == []
    after = set(os.listdir("/run/lock")) if os.path.isdir("/run/lock") else set()
    assert after == before
    assert not os.path.exists(os.path.join("/tmp", marker))


def test_scratch_is_capped(sb):
    code = """
    import os
    written = 0
    try:
        for i in range(100):
            with open(f'/tmp/work/fill{i}', 'wb') as f:
                f.write(b'x' * (3 << 20))
            written += 3
    except OSError as e:
        pass
    out = written
    """
    assert run(sb, code) < LIMITS.scratch_mb


# -- channels: keyring, sockets ----------------------------------------------------------------

def test_kernel_keyring_is_denied(sb):
    # add_key(type, description, payload, plen, KEY_SPEC_USER_KEYRING): would outlive the session
    add = syscall_errno("libc.syscall(248, b'user', b'grades', b'A+', 2, -4)")
    assert run(sb, add, slot=0) == "EPERM"
    # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)
    assert run(sb, syscall_errno("libc.syscall(250, 0, -4, 0)"), slot=1) == "EPERM"


def test_host_unix_socket_is_unreachable(sb, tmp_path):
    folder = tempfile.mkdtemp(prefix="grader-sock-", dir="/tmp")
    os.chmod(folder, 0o777)
    path = os.path.join(folder, "s")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    os.chmod(path, 0o777)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0autograder-test-" + str(os.getpid()))
    listener.listen(1)
    abstract.listen(1)
    listener.settimeout(0.5)
    abstract.settimeout(0.5)
    try:
        code = f"""
        import socket
        out = []
        for addr in ({path!r}, '\\0autograder-test-{os.getpid()}'):
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(addr)
                out.append('connected')
            except OSError as e:
                out.append(type(e).__name__)
        """
        assert "connected" not in run(sb, code)
        for sock in (listener, abstract):
            with pytest.raises(socket.timeout):
                sock.accept()
    finally:
        listener.close()
        abstract.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_tcp_on_loopback_is_unreachable(sb):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        out = run(sb, attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)"))
        assert out in ("EPERM", "ENETUNREACH")
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


@pytest.mark.parametrize("what, call", [
    ("ptrace", "libc.ptrace(16, 1, 0, 0)"),                         # PTRACE_ATTACH
    ("mount", "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)"),
    ("unshare", "libc.unshare(0x10000000)"),                        # a new user namespace
    ("bpf", "libc.syscall(321, 0, 0, 0)"),
    ("perf_event_open", "libc.syscall(298, 0, 0, -1, -1, 0)"),
    ("io_uring_setup", "libc.syscall(425, 1, 0)"),
    ("memfd_create", "libc.syscall(319, b'x', 0)"),                 # memory outside the caps
    ("socket", "libc.socket(2, 1, 0)"),                             # AF_INET
    ("socket unix", "libc.socket(1, 1, 0)"),
])
def test_system_calls_are_filtered(sb, what, call):
    assert run(sb, syscall_errno(call)) == "EPERM", what


def test_clone_into_a_new_namespace_is_denied(sb):
    # clone(CLONE_NEWUSER | SIGCHLD): the child would get every capability in its namespace
    assert run(sb, syscall_errno("libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)")) == "EPERM"
    # plain processes and threads still work
    code = """
    import os, subprocess, threading
    t = threading.Thread(target=lambda: None); t.start(); t.join()
    out = subprocess.run(['true']).returncode
    """
    assert run(sb, code) == 0


# -- memory outside the address space ----------------------------------------------------------

def test_sysv_shared_memory_is_capped(sb):
    cap = LIMITS.shm_mb << 20
    code = LIBC.replace("import ctypes", "import ctypes, errno") + f"""
IPC_CREAT = 0o1000
big = libc.shmget(0, {cap} + 4096, IPC_CREAT | 0o600)
got, ids = 0, []
while got < 4 * {cap}:
    i = libc.shmget(0, 1 << 20, IPC_CREAT | 0o600)
    if i == -1:
        break
    ids.append(i)
    got += 1 << 20
out = [big, got]
"""
    big, got = run(sb, code)
    assert big == -1
    assert got <= LIMITS.shm_mb << 20


def test_sysv_semaphores_and_message_queues_are_capped(sb):
    # Kernel memory, outside any address-space limit: 32000 sets of 32000 semaphores by default.
    code = LIBC.replace("import ctypes", "import ctypes, errno") + """
sems = 0
while sems < 100_000 and libc.semget(0, 250, 0o1000 | 0o600) != -1:
    sems += 250
queues = 0
while queues < 1000 and libc.msgget(0, 0o1000 | 0o600) != -1:
    queues += 1
out = [sems, queues]
"""
    sems, queues = run(sb, code)
    assert sems <= 2000 and queues <= 8


def test_dev_shm_is_capped(sb):
    code = """
    import os
    written = 0
    try:
        with open('/dev/shm/fill', 'wb') as f:
            for i in range(64):
                f.write(b'x' * (1 << 20))
                f.flush()
                written += 1
    except OSError:
        pass
    out = written
    """
    assert run(sb, code) <= LIMITS.shm_mb


# -- where namespaces are unavailable ----------------------------------------------------------

NO_NAMESPACES = """
import json, os, sys
from autograder.grader_side.sandbox import seccomp, syscalls
syscalls.load_seccomp(seccomp.build(deny_sysv_ipc=False))   # unshare, clone(CLONE_NEW*) and mount now fail
from autograder.grader_side.sandbox import Limits, Sandbox, SandboxError
weak = sys.argv[1] == "weak"
try:
    with Sandbox(Limits(timeout=10.0, memory_mb=512), preload=(), handler={handler!r}, packages={packages!r},
                 allow_weak_isolation=weak) as box:
        with box.open(["import os\\nf = lambda: os.getcwd()"]) as s:
            cwd = s.request({{"get": "f"}}) and s.request({{"call": "f"}})[0]["result"]
        print(json.dumps({{"isolation": box.isolation, "cwd": cwd}}))
except SandboxError as e:
    print(json.dumps({{"refused": str(e)}}))
"""


def _searchable_python() -> list[str]:
    """As root, weak isolation runs sessions as a dedicated uid, which must read the Python (or the
    grader stops): where it lives under a private home (/root here), a bubblewrap view in which it
    is searchable by anyone, as in a container image."""
    if os.geteuid() != 0 or not shutil.which("bwrap"):
        return []
    from test_isolation_modes import _python_view

    return ["bwrap", *_python_view(), "--"]


@pytest.mark.parametrize("mode", ["strict", "weak"])
def test_without_namespaces_the_sandbox_refuses_unless_weak_is_allowed(mode):
    script = NO_NAMESPACES.format(handler=HANDLER, packages=PACKAGES)
    out = subprocess.run([*_searchable_python(), sys.executable, "-c", script, mode], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    if mode == "strict":
        reason = doc["refused"]
        assert "\n" not in reason
        assert "cannot be isolated" in reason and "--allow-weak-isolation" in reason
    else:
        assert doc["isolation"]["weak"]
        assert doc["isolation"]["filesystem"].startswith("not isolated")
        assert doc["cwd"].startswith(tempfile.gettempdir())
