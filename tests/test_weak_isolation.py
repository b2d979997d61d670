"""Weak isolation grades one submission per throwaway environment: the attacks a student made on it.

Each run is a real `course autograde` as root, in a process whose seccomp filter refuses namespaces
as Docker's default profile does (``DENY_NAMESPACES``), with ``--allow-weak-isolation``, in a course
folder as a TA keeps it (readable by other users). The runs see the machine through a bubblewrap view
in which the Python installation is searchable by other users (on this machine it lives under
/root), as in a container image, except where the test is about a Python they cannot read.

- a notebook that forks, leaves its process group (setsid) and keeps running: nothing of its uid
  lives once the session ends, and it writes nothing after the run;
- a notebook that finds the course folder in the processes' command lines and walks it: it reads
  nothing of the course (not its gradebook, its references or its listing);
- a grading Python the session's uid cannot read: the grader stops with the reason, and no
  student code runs as root;
- a class of two with ``--allow-weak-isolation``: refused in one line naming the alternatives;
- a course folder holding the Python (the kit's checkout with its .venv): its sessions' group may
  only search it, and is denied every entry, also those the grader creates during the run
  (``acl.Denial``, checked as that uid), all of it taken back at the end;
- a grader that is not root (no uid to give a session): what a session leaves behind still ends
  with it, and ``isolation`` says what holds;
- a grader killed mid-notebook: nothing of the session's uid outlives it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.grader_side.assignment import REPO, Assignment
from autograder.grader_side.sandbox import acl
from autograder.tooling.sampleclass import write_submission
from nbgrader_course import clone_course
from test_isolation_modes import DENY_NAMESPACES, _python_view
from test_killed_grader import _descendants

pytestmark = pytest.mark.slow

FIRST_UID, LAST_UID = 61000, 65000      # the sandbox's dedicated uids (lifecycle.BASE_UID + slot)
OUTSIDER = 60500                        # a uid and group no sandbox uses: a session as the ACL tests see it

DAEMON = '''
import os as _os, time as _time
if _os.fork() == 0:
    _os.setsid()
    for _fd in range(3, 256):
        try:
            _os.close(_fd)
        except OSError:
            pass
    if _os.fork() == 0:
        for _i in range(3000):
            try:
                with open({beat!r}, "a") as _f:
                    _f.write(str(_os.getpid()) + " " + str(_i) + "\\n")
            except OSError:
                pass
            for _path in {secrets!r}:
                try:
                    with open(_path, "rb") as _f:
                        _data = _f.read()
                    with open({drop!r} + "/stolen-" + _os.path.basename(_path), "wb") as _f:
                        _f.write(_data)
                except OSError:
                    pass
            _time.sleep(0.1)
    _os._exit(0)
for _ in range(100):                        # the cell ends once the daemon has written
    if _os.path.exists({beat!r}):
        break
    _time.sleep(0.05)
'''

HUNTER = '''
import json as _json, os as _os


def _courses():
    found = set()
    for pid in _os.listdir("/proc"):
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                args = f.read().decode("utf-8", "replace").split("\\0")
        except OSError:
            continue
        for path in args:
            while path.startswith("/") and path != "/":
                if _os.path.exists(_os.path.join(path, "nbgrader_config.py")):
                    found.add(path)
                path = _os.path.dirname(path)
    return sorted(found)


def _reach(path, out, budget=[3000]):
    budget[0] -= 1
    if budget[0] < 0 or _os.path.basename(path) in (".venv", ".git"):
        return
    try:
        names = _os.listdir(path)
        out.append("listed " + path)
    except NotADirectoryError:
        try:
            with open(path, "rb") as f:
                f.read(1)
            out.append("read " + path)
        except OSError:
            pass
        return
    except OSError:
        names = []
    for name in sorted(set(names) | {{"nbgrader_config.py", "gradebook.db", "gradebook.db-journal", "autograded",
                                     "submitted", "source", "solutions", "results.json"}}):
        if _os.path.lexists(_os.path.join(path, name)) and not _os.path.islink(_os.path.join(path, name)):
            _reach(_os.path.join(path, name), out)


_found = []
_seen = _courses()
for _course in _seen:
    _reach(_course, _found)
with open({drop!r} + "/hunter.json", "w") as _f:
    _json.dump({{"courses": _seen, "found": _found}}, _f)
'''

RAN_AS = '''
import os as _os
open({drop!r} + "/ran-as-" + str(_os.getuid()), "w").close()
'''


def _uid_processes() -> list[tuple[int, int]]:
    """(pid, uid) of every process owned by a sandbox uid, zombies left out."""
    found = []
    for name in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields["Uid"].split()[0])
        if FIRST_UID <= uid < LAST_UID and not fields["State"].strip().startswith("Z"):
            found.append((int(name), uid))
    return found


def _readable_by_others(path: Path) -> None:
    for parent in path.parents:
        if parent != Path("/"):
            os.chmod(parent, os.stat(parent).st_mode | 0o001)
    for p in [path, *path.rglob("*")]:
        os.chmod(p, os.stat(p).st_mode | (0o005 if p.is_dir() else 0o004))


@pytest.fixture
def ta_course(course, tmp_path):
    """A private copy of the course, readable by other users as a TA's course folder is, a folder
    anyone may write (where the attacks leave what they got), and, at the end, any process the
    daemon left ended (by its pid) so that a failing run leaves nothing behind."""
    if not shutil.which("bwrap"):
        pytest.skip("needs bubblewrap")
    if os.geteuid() != 0:
        pytest.skip("grades as root: a dedicated uid per session needs it")
    root = clone_course(course, tmp_path / "course")
    drop = tmp_path / "drop"
    drop.mkdir()
    _readable_by_others(root)
    os.chmod(drop, 0o1777)
    yield root, drop
    beat = drop / "heartbeat"       # the daemon's processes, each line "pid count" (other tests' sessions run too)
    daemons = {int(line.split()[0]) for line in beat.read_text().splitlines()} if beat.exists() else set()
    for pid, _ in _uid_processes():
        if pid in daemons:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _autograde(course: Path, *flags: str, view: bool = True):
    """`course autograde --allow-weak-isolation` as root, in ``course``, where namespaces are refused."""
    out = course.parent / "results.json"
    command = [*(["bwrap", *_python_view(), "--"] if view else []), sys.executable, "-c", DENY_NAMESPACES,
               "autograde", "transformer-block", "--allow-weak-isolation", "--workers", "1", "--timeout", "60",
               "--out", str(out), *flags]
    done = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HOME": str(course.parent), "PYTHONDONTWRITEBYTECODE": "1"})
    return done, (json.loads(out.read_text()) if out.exists() else {})


def test_a_notebook_that_leaves_its_process_group_does_not_outlive_its_session(ta_course):
    course, drop = ta_course
    a = Assignment("transformer-block", course)
    beat = drop / "heartbeat"
    secrets = [str(course / "solutions" / a.name / "grading" / "reference" / "norms.py"), str(course / "gradebook.db")]
    assert Path(secrets[0]).is_file()
    write_submission(course / "submitted" / "daemon", a,
                     extra_cells=[DAEMON.format(beat=str(beat), secrets=secrets, drop=str(drop))])
    _readable_by_others(course)
    done, results = _autograde(course)
    assert done.returncode == 0, done.stderr[-2000:]
    assert beat.exists(), "the daemon never ran: the test proves nothing"
    daemons = {int(line.split()[0]) for line in beat.read_text().splitlines()}
    assert [p for p in _uid_processes() if p[0] in daemons] == []
    size = beat.stat().st_size
    time.sleep(1.0)
    assert beat.stat().st_size == size
    assert not list(drop.glob("stolen-*"))
    assert results["students"]["daemon"]["score"] == 100.0
    assert results["isolation"]["uid"] == "dedicated uid 61000+slot"
    assert results["isolation"]["processes"].startswith("every process of the session's uid killed")


STASH = """
import os as _os
for _folder in ("/tmp", "/var/tmp", "/dev/shm"):
    _path = _os.path.join(_folder, {name!r})
    with open(_path, "w") as _f:
        _f.write("what a hidden check handed me")
    _os.chmod(_path, 0o666)
    _os.makedirs(_path + "-dir/deeper", exist_ok=True)
"""


def test_what_a_notebook_leaves_in_the_shared_folders_is_gone_before_the_next(ta_course):
    """Without a mount namespace /tmp, /var/tmp and /dev/shm are the machine's: a notebook could leave
    there what a hidden check handed it, for the student's other notebook to show in a visible result.
    What its uid left there is removed when it ends."""
    course, _ = ta_course
    a = Assignment("transformer-block", course)
    name = f"stash-{os.getpid()}-{time.monotonic_ns()}"
    write_submission(course / "submitted" / "stasher", a, extra_cells=[STASH.format(name=name)])
    _readable_by_others(course)
    done, results = _autograde(course)
    assert done.returncode == 0, done.stderr[-2000:]
    assert results["students"]["stasher"]["score"] == 100.0
    left = [p for folder in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(folder).glob(name + "*")]
    assert left == [], left


def test_a_notebook_that_hunts_for_the_course_reads_none_of_it(ta_course):
    course, drop = ta_course
    a = Assignment("transformer-block", course)
    write_submission(course / "submitted" / "hunter", a, untouched=True,
                     extra_cells=[HUNTER.format(drop=str(drop))])
    _readable_by_others(course)
    done, results = _autograde(course)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (course / "autograded").is_dir()               # a first autograde: made during the run
    report = json.loads((drop / "hunter.json").read_text())
    kit = str(Path(sys.prefix).resolve().parent)           # the kit's checkout, a course folder holding .venv
    assert kit in report["courses"], report["courses"]
    ours = [f for f in report["found"] if f.split(" ", 1)[1].startswith((str(course), kit, str(REPO)))]
    assert ours == [], ours[:20]
    assert results["students"]["hunter"]["score"] == 0.0


def test_a_python_the_session_uid_cannot_read_stops_the_grader(ta_course):
    """On this machine the Python installation lives under /root: without the view that makes it
    searchable, the session's uid cannot read it, and the grader must not fall back to root."""
    course, drop = ta_course
    if all(os.stat(p).st_mode & 0o001 for p in Path(os.path.realpath(sys.base_prefix)).parents):
        pytest.skip("the Python installation is searchable by anyone here")
    write_submission(course / "submitted" / "only", Assignment("transformer-block", course),
                     extra_cells=[RAN_AS.format(drop=str(drop))])
    _readable_by_others(course)
    done, results = _autograde(course, view=False)
    assert done.returncode == 2 and not results, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert "cannot read the grading Python" in last and "never runs student code as root" in last, last
    assert not list(drop.glob("ran-as-*"))


def test_weak_isolation_grades_one_submission_and_refuses_a_class(ta_course):
    course, drop = ta_course
    a = Assignment("transformer-block", course)
    for sid in ("one", "two"):
        write_submission(course / "submitted" / sid, a, extra_cells=[RAN_AS.format(drop=str(drop))])
    _readable_by_others(course)
    done, results = _autograde(course)
    assert done.returncode == 2 and not results, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]      # the reason, in one line (after the progress bar)
    assert last.startswith("course autograde: --allow-weak-isolation grades one submission"), last
    for alternative in ("namespaces", "docs/seccomp-course.json", "one container per submission"):
        assert alternative in last, last
    assert not list(drop.glob("ran-as-*"))


def _as_session(*command: str, group: int = OUTSIDER) -> subprocess.CompletedProcess:
    """``command`` run as a session is without namespaces: its own uid, its sessions' ``group``, no other."""
    return subprocess.run(["setpriv", "--reuid", str(OUTSIDER), "--regid", str(group), "--clear-groups",
                           *command], capture_output=True, text=True, timeout=60)


def test_a_course_folder_holding_the_python_is_a_passage_denied_also_what_the_run_creates(tmp_path):
    """The course folder holds the .venv the sessions run in, so it cannot be denied as a whole:
    its group may only search it, every other entry is denied, and so is whatever the grader
    creates in it during the run (a default ACL); at the end nothing of it is left, not even on
    what was created."""
    course = _course_holding_the_python(tmp_path)
    modes = {p: os.stat(p).st_mode for p in [course, *course.rglob("*")]}
    denial = acl.Denial([str(course)], [str(course / ".venv")], OUTSIDER)
    assert denial.apply() is None
    assert denial.passages == [str(course)]
    (course / "autograded" / "student").mkdir(parents=True)        # what the grader makes during the run
    (course / "autograded" / "student" / "build.ipynb").write_text("{}")
    (course / "gradebook.db-journal").write_text("journal")
    assert _as_session("cat", str(course / ".venv" / "lib" / "os.py")).returncode == 0
    for path in ("solutions/reference.py", "nbgrader_config.py", "gradebook.db-journal",
                 "autograded/student/build.ipynb"):
        assert _as_session("cat", str(course / path)).returncode != 0, path
    assert _as_session("ls", str(course)).returncode != 0
    assert _as_session("ls", str(course / "autograded")).returncode != 0
    assert subprocess.run(["cat", str(course / "autograded" / "student" / "build.ipynb")]).returncode == 0
    denial.undo()
    _nothing_left(course, modes)
    assert os.stat(course / "autograded" / "student" / "build.ipynb").st_mode & 0o777 == 0o644


def _course_holding_the_python(tmp_path: Path) -> Path:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv")
    course = tmp_path / "course"
    (course / ".venv" / "lib").mkdir(parents=True)
    (course / ".venv" / "lib" / "os.py").write_text("# the Python\n")
    (course / "solutions").mkdir()
    (course / "solutions" / "reference.py").write_text("SECRET = 1\n")
    (course / "nbgrader_config.py").write_text("# config\n")
    _readable_by_others(course)
    return course


def _nothing_left(course: Path, modes: dict) -> None:
    """No ACL and no mark of one on anything in ``course``, and every mode as it was."""
    for path in [course, *course.rglob("*")]:
        for attribute in os.listxattr(path):
            assert not attribute.startswith(("system.posix_acl", "user.course_autograde")), (path, attribute)
        if path in modes:
            assert os.stat(path).st_mode == modes[path], path


@pytest.mark.parametrize("first_out", ["first in", "last in"])
def test_two_graders_deny_one_course_to_their_own_groups_and_each_takes_back_only_its_own(tmp_path, first_out):
    """Two graders on one machine hide the same folder (the kit's checkout) from their own sessions'
    groups: the first to finish leaves the other's denial whole, and the last leaves nothing."""
    course = _course_holding_the_python(tmp_path)
    modes = {p: os.stat(p).st_mode for p in [course, *course.rglob("*")]}
    one, two = (acl.Denial([str(course)], [str(course / ".venv")], gid) for gid in (OUTSIDER, OUTSIDER + 1))
    assert one.apply() is None and two.apply() is None
    (course / "autograded").mkdir()                     # made while both deny the course
    (course / "autograded" / "build.ipynb").write_text("{}")
    done, going_on = (one, two) if first_out == "first in" else (two, one)
    done.undo()
    for path in ("solutions/reference.py", "nbgrader_config.py", "autograded/build.ipynb"):
        assert _as_session("cat", str(course / path), group=going_on.gid).returncode != 0, path
        assert _as_session("cat", str(course / path), group=done.gid).returncode == 0, path
    assert _as_session("ls", str(course), group=going_on.gid).returncode != 0
    going_on.undo()
    _nothing_left(course, modes)


TWO_GRADERS = """
import json, subprocess, sys
from autograder.grader_side.sandbox import seccomp, syscalls
syscalls.load_seccomp(seccomp.build(False, seccomp.NAMESPACES))     # as Docker's default profile does
from autograder.grader_side.sandbox import Limits, Sandbox
course = sys.argv[1]
first, second = (Sandbox(Limits(timeout=10.0, memory_mb=512), preload=(), hide=[course], allow_weak_isolation=True)
                 for _ in range(2))
groups = [first.weak_group, second.weak_group]
files = [first.isolation["files"], second.isolation["files"]]
first.close()
read = subprocess.run(["setpriv", "--reuid", str({outsider}), "--regid", str(second.weak_group), "--clear-groups",
                       "cat", course + "/solutions/reference.py"], capture_output=True).returncode == 0
second.close()
print(json.dumps({{"groups": groups, "files": files, "second read it": read}}))
"""


def test_two_weak_graders_on_one_machine_run_their_sessions_in_groups_of_their_own(tmp_path):
    """Each weak Sandbox denies its own sessions' group (numbered by the first uid it holds): the
    first one to finish takes back only its own entries, and the other's sessions still read nothing."""
    if not shutil.which("bwrap"):
        pytest.skip("needs bubblewrap")
    course = _course_holding_the_python(tmp_path)
    modes = {p: os.stat(p).st_mode for p in [course, *course.rglob("*")]}
    done = subprocess.run(["bwrap", *_python_view(), "--", sys.executable, "-c", TWO_GRADERS.format(outsider=OUTSIDER),
                           str(course)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    first, second = seen["groups"]
    assert first != second and FIRST_UID <= min(first, second) and max(first, second) < LAST_UID
    assert f"sessions' group ({first})" in seen["files"][0] and f"sessions' group ({second})" in seen["files"][1]
    assert not seen["second read it"]
    _nothing_left(course, modes)


NOT_ROOT = """
import json, sys
from autograder.grader_side.sandbox import seccomp, syscalls
syscalls.load_seccomp(seccomp.build(False, seccomp.NAMESPACES))     # as Docker's default profile does
from autograder.grader_side.sandbox import Limits, Sandbox
with Sandbox(Limits(timeout=10.0, memory_mb=512), preload=(), handler="sandbox_echo_handler:serve",
             packages={{"sandbox_echo_handler": {handler!r}}}, allow_weak_isolation=True) as box:
    with box.open([{cell!r}]) as session:
        report = session.load_report
print(json.dumps(box.isolation))
print(json.dumps(report), file=sys.stderr)
"""


def test_without_root_what_a_session_leaves_behind_is_ended_with_it(tmp_path):
    """A grader that is not root has no uid to give a session: the zygote, their subreaper, ends
    whatever the session left behind (here a process that left its process group), and
    ``isolation`` says what holds."""
    if os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("bwrap"):
        pytest.skip("needs root (to become another user), setpriv and bubblewrap")
    drop = tmp_path / "drop"
    drop.mkdir()
    _readable_by_others(drop)
    os.chmod(drop, 0o1777)
    beat = drop / "heartbeat"
    cell = DAEMON.format(beat=str(beat), secrets=[], drop=str(drop))
    handler = str(Path(__file__).resolve().parent / "sandbox_echo_handler.py")
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    done = subprocess.run(["bwrap", *_python_view(), "--", *nobody, sys.executable, "-c",
                           NOT_ROOT.format(handler=handler, cell=cell)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert beat.exists(), "the daemon never ran: the test proves nothing " + done.stderr[-2000:]
    size = beat.stat().st_size
    time.sleep(1.0)
    assert beat.stat().st_size == size
    isolation = json.loads(done.stdout.strip().splitlines()[-1])
    assert isolation["weak"] and isolation["uid"].startswith("the grader's own uid 65534")
    assert isolation["processes"].startswith("the session's process group killed when it ends, then every process")


def test_a_grader_killed_mid_notebook_takes_the_sessions_uid_with_it(ta_course):
    """SIGKILL the grader while a notebook runs a daemon that left its process group: with no PID
    namespace to hold the session, every process of the session's uid is ended (by the zygote,
    which sees its control socket close, and by the session's waiting process, which sees the
    session's socket close). test_killed_grader.py is the same attack with namespaces."""
    course, drop = ta_course
    a = Assignment("transformer-block", course)
    beat = drop / "heartbeat"
    loop = "while True:\n    pass"
    write_submission(course / "submitted" / "daemon", a,
                     extra_cells=[DAEMON.format(beat=str(beat), secrets=[], drop=str(drop)), loop])
    _readable_by_others(course)
    command = ["bwrap", *_python_view(), "--", sys.executable, "-c", DENY_NAMESPACES, "autograde",
               "transformer-block", "--allow-weak-isolation", "--workers", "1", "--timeout", "120",
               "--out", str(course.parent / "results.json")]
    wrapper = subprocess.Popen(command, cwd=course, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "HOME": str(course.parent), "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not beat.exists():
            time.sleep(0.2)
        assert beat.exists(), "the daemon never ran: the test proves nothing"
        grader = min(p for p in _descendants(wrapper.pid)
                     if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[1:2] == [b"-c"])
        os.kill(grader, signal.SIGKILL)
        wrapper.wait(timeout=30)
        time.sleep(3)
        daemons = {int(line.split()[0]) for line in beat.read_text().splitlines()}
        assert daemons and not [p for p in _uid_processes() if p[0] in daemons]
        size = beat.stat().st_size
        time.sleep(1.0)
        assert beat.stat().st_size == size
    finally:
        if wrapper.poll() is None:
            wrapper.kill()
