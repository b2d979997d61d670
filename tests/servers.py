"""Real servers for the tests, started on 127.0.0.1 in a temporary folder and stopped by the fixture:
a PostgreSQL server (Debian's ``postgresql`` package, run as an unprivileged user) and a
dask.distributed scheduler with worker processes."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, log: Path, seconds: float = 120.0) -> None:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode}:\n{log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {seconds:g} s:\n{log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---- PostgreSQL ------------------------------------------------------------------------------

def postgres_bin() -> Path | None:
    """The folder holding Debian's initdb and pg_ctl (not on PATH there), newest version first."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if os.access(f"{folder}/initdb", os.X_OK):
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class Postgres:
    """A PostgreSQL server in ``root``, listening on 127.0.0.1 only, with trust authentication for
    the user ``course`` (nothing else can reach it)."""

    def __init__(self, root: Path, bindir: Path):
        self.root, self.bin, self.port = root, bindir, free_port()
        # initdb refuses to run as root: the server runs as the postgres user Debian creates.
        self.run_as = {}
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            self.run_as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
            os.chown(root, user.pw_uid, user.pw_gid)

    def _run(self, *args: str) -> None:
        done = subprocess.run([str(self.bin / args[0]), *args[1:]], cwd=self.root, capture_output=True,
                              text=True, timeout=120, **self.run_as)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip()[-2000:]}")

    def start(self) -> None:
        self._run("initdb", "-D", str(self.root / "data"), "-U", "course", "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        self._run("pg_ctl", "-D", str(self.root / "data"), "-l", str(self.root / "server.log"), "-w",
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.root} -F", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def createdb(self, name: str) -> str:
        """A new empty database; its URL."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "course", name)
        return self.url(name)

    def url(self, name: str) -> str:
        return f"postgresql://course@127.0.0.1:{self.port}/{name}"


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the session, stopped at its end."""
    bindir = postgres_bin()
    if bindir is None:
        if os.geteuid() == 0:
            pytest.fail("PostgreSQL is not installed: run `make postgresql` (or `make test`, which installs it)")
        pytest.skip("PostgreSQL is not installed and this user cannot install it: "
                    "ask for Debian's postgresql package (`apt-get install postgresql`)")
    # Not under pytest's tmp_path: the server's user must be able to reach the folder.
    root = Path(tempfile.mkdtemp(prefix="course-postgres-"))
    server = Postgres(root, bindir)
    try:
        server.start()
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


# ---- dask.distributed ------------------------------------------------------------------------

def make_certificates(folder: Path) -> dict[str, Path]:
    """A certificate authority and one certificate signed by it (server and client use), made with
    the openssl commands docs/scaling.md gives: {"ca", "cert", "key"} -> PEM file."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command: apt-get install -y openssl")
    folder.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True, timeout=120)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=course cluster CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", "ca.key", "-out", "ca.pem")
    (folder / "node.ext").write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                                     "extendedKeyUsage=serverAuth,clientAuth\n"
                                     "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=course cluster", "-keyout", "node.key",
        "-out", "node.csr")
    run("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "node.ext", "-out", "node.pem")
    for name in ("ca.key", "node.key"):
        os.chmod(folder / name, 0o600)
    return {"ca": folder / "ca.pem", "cert": folder / "node.pem", "key": folder / "node.key"}


class DaskCluster:
    """``dask scheduler`` and ``dask worker`` processes (one thread each, no nanny, so killing a
    worker's process loses it for good); over TLS with ``tls`` (``make_certificates``' files)."""

    def __init__(self, root: Path, tls: dict[str, Path] | None = None):
        self.root, self.port, self.tls = root, free_port(), tls
        self.address = f"{'tls' if tls else 'tcp'}://127.0.0.1:{self.port}"
        self.scheduler: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")

    def _tls_args(self) -> list[str]:
        if not self.tls:
            return []
        return ["--tls-ca-file", str(self.tls["ca"]), "--tls-cert", str(self.tls["cert"]),
                "--tls-key", str(self.tls["key"])]

    def security(self):
        """What a client of this cluster needs (``None`` without TLS)."""
        if not self.tls:
            return None
        from distributed.security import Security

        return Security(tls_ca_file=str(self.tls["ca"]), tls_client_cert=str(self.tls["cert"]),
                        tls_client_key=str(self.tls["key"]), require_encryption=True)

    def _spawn(self, name: str, *args: str) -> tuple[subprocess.Popen, Path]:
        log = self.root / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(BIN / "dask"), *args], cwd=self.root, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        return proc, log

    def start(self, workers: int) -> None:
        self.scheduler, log = self._spawn("scheduler", "scheduler", "--host", "127.0.0.1", "--port",
                                          str(self.port), "--no-dashboard", *self._tls_args(),
                                          *(["--protocol", "tls"] if self.tls else []))
        wait_for_port(self.port, self.scheduler, log)
        for i in range(workers):
            self.add_worker(f"w{i}")

    def add_worker(self, name: str) -> None:
        (self.root / name).mkdir()
        # Its temporary files (a killed worker cannot remove them) stay in the test's folder.
        self.env["TMPDIR"] = str(self.root / name)
        self.workers[name], _ = self._spawn(name, "worker", self.address, "--name", name, "--nthreads", "1",
                                            "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                            "--local-directory", str(self.root / name), *self._tls_args())

    def log(self, name: str) -> str:
        path = self.root / f"{name}.log"
        return path.read_text(errors="replace") if path.is_file() else ""

    def kill(self, name: str) -> None:
        self.workers[name].kill()
        self.workers[name].wait()

    def alive(self) -> list[str]:
        return [name for name, proc in self.workers.items() if proc.poll() is None]

    def stop(self) -> None:
        for proc in self.workers.values():
            stop(proc)
        if self.scheduler is not None:
            stop(self.scheduler)


def name_certificates(course: Path, cluster: "DaskCluster") -> Path:
    """Copy the cluster's certificate files into ``course``/cluster and name them in its
    nbgrader_config.py (relative to the course folder, as docs/scaling.md shows)."""
    (course / "cluster").mkdir(exist_ok=True)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write("\n# The course's dask cluster (docs/scaling.md).\n")
        for trait, name in (("tls_ca_file", "ca"), ("tls_cert_file", "cert"), ("tls_key_file", "key")):
            shutil.copy(cluster.tls[name], course / "cluster" / cluster.tls[name].name)
            f.write(f"c.CourseAutograde.{trait} = {'cluster/' + cluster.tls[name].name!r}\n")
    return course


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A scheduler and two single-thread worker processes on 127.0.0.1 for a test module (a test
    may kill workers), over TLS with certificates made for it (``dask_cluster.tls``), stopped at
    its end."""
    root = tmp_path_factory.mktemp("dask")
    cluster = DaskCluster(root, tls=make_certificates(root / "certificates"))
    try:
        cluster.start(workers=2)
        yield cluster
    finally:
        cluster.stop()
