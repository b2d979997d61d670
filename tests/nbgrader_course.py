"""Helpers the nbgrader tests share: an own copy of the session's course, reading the gradebook,
and a TA scoring C8 through a real Jupyter server's formgrader."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from nbgrader.api import Gradebook

ASSIGNMENT = "transformer-block"


def clone_course(course: Path, dest: Path) -> Path:
    """A private copy of the released course at ``dest``: sources, release, config, and a gradebook
    holding the assignment but no student (cheaper than releasing again)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("solutions", "assignments"):
        shutil.copytree(course / name, dest / name, symlinks=True)
    for name in ("nbgrader_config.py", "gradebook.db"):
        shutil.copy(course / name, dest / name)
    with Gradebook(f"sqlite:///{dest / 'gradebook.db'}") as gb:
        for student in list(gb.students):
            gb.remove_student(student.id)
    return dest


def gradebook_checks(course: Path, assignment: str = ASSIGNMENT) -> dict[str, dict[str, float | None]]:
    """student -> grade_id -> score nbgrader counts for it (manual if given, else auto)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student_id: {g.name: g.score for nb in s.notebooks for g in nb.grades}
                for s in gb.assignment_submissions(assignment)}


def course_checks(results: dict) -> dict[str, dict[str, float]]:
    """student -> check id -> points ``course autograde`` gave."""
    return {sid: {row["id"]: row["score"] for q in r.get("questions", {}).values() for row in q.get("checks", [])}
            for sid, r in results["students"].items()}


class Server:
    """`jupyter server` with nbgrader's formgrader, on 127.0.0.1 in the course folder."""

    def __init__(self, root: Path, tmp: Path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.token = secrets.token_hex(16)
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_DATA_DIR=str(tmp / "data"),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        self.log = open(tmp / "server.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "server", "--no-browser", "--allow-root", "--ip=127.0.0.1",
             f"--port={self.port}", f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={root}",
             f"--Exchange.root={tmp / 'exchange'}"],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                if self.get("/formgrader/api/status") == {"status": True}:
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Jupyter server did not start: see {tmp / 'server.log'}")
            time.sleep(0.5)

    def request(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as reply:
            return json.loads(reply.read())

    def get(self, path):
        return self.request("GET", path)

    def page(self, path: str) -> str:
        """A formgrader page, as the TA's browser receives it."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}",
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=60) as reply:
            return reply.read().decode()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def give_c8(root: Path, tmp: Path, scores: dict[str, float]) -> None:
    server = Server(root, tmp)
    try:
        notebooks = server.get(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/concepts")
        for entry in notebooks:
            if entry["student"] in scores:
                grades = server.get(f"/formgrader/api/grades?submission_id={entry['id']}")
                (c8,) = [g for g in grades if g["name"] == "C8_answer"]
                assert c8["needs_manual_grade"] and c8["manual_score"] is None
                saved = server.request("PUT", f"/formgrader/api/grade/{c8['id']}",
                                       {"manual_score": scores[entry["student"]]})
                assert saved["manual_score"] == scores[entry["student"]]
    finally:
        server.stop()
