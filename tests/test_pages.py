"""Feedback pages and the class report, from a class really graded, rendered in a real browser.

A small class (the reference solution, the untouched release, catalogued wrong answers, an
unreadable submission and a student whose id is HTML) is graded by ``api.autograde``; its results
become one feedback page per student and the class report, which headless Chromium renders to a
screenshot and a DOM dump.

nbgrader 0.9.6's own ``nbgrader generate_feedback`` copies every graded cell into the student's
feedback HTML, hidden tests included (their ``### BEGIN HIDDEN TESTS`` code and probe values).
Ours must not: a page is made from the results document only, and these tests check that no line
of a hidden check's source and no line of the reference solutions appears in any page.

The screenshots are kept in ``tests/artifacts/`` (git-ignored) to look at.
"""
from __future__ import annotations

import html
import inspect
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side import checks, contract, misconceptions
from autograder.grader_side.assignment import REPO
from autograder.reports import feedback, report
from autograder.tooling.sampleclass import write_submission

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# An id that is HTML when not escaped (an <img> whose onerror would run), with a quote and an ampersand.
INJECTED = "<img src=x onerror=alert(1)> o'neil & co"
WRONG = {"sample_variance": ("B1-sample-variance", "C5-sample-std"), INJECTED: ("B1-eps-outside-sqrt",)}
MIN_LINE = 24   # shorter source lines are too generic to mean anything when found


def _wrong(assignment, entry_ids) -> dict[str, str]:
    """Edits that put the catalogued wrong answers ``entry_ids`` (on different cells) in a submission."""
    entries = {e.id: e for e in misconceptions.catalogue()}
    edits = {}
    for entry_id in entry_ids:
        entry = entries[entry_id]
        notebook = contract.QUESTIONS[entry.question].notebook
        source = {c.grade_id: c.source for c in assignment.cells(notebook)}
        edits.update(misconceptions.edits(entry, source[entry.cell]))
    return edits


@pytest.fixture(scope="module")
def graded(tmp_path_factory, course, assignment):
    """(results, feedback pages by student, report path) for a small class graded for real."""
    root = tmp_path_factory.mktemp("pages")
    submissions = root / "submitted"
    write_submission(submissions / "reference", assignment)
    write_submission(submissions / "untouched", assignment, untouched=True)
    for sid, entry_ids in WRONG.items():
        write_submission(submissions / sid, assignment, edits=_wrong(assignment, entry_ids))
    (submissions / "unreadable").mkdir()
    (submissions / "unreadable" / "concepts.ipynb").write_text("{not json")
    results = api.autograde("transformer-block", submissions, timeout=30.0, repo=course)
    pages = dict(zip(results["students"], feedback.write_pages(results, root / "feedback")))
    path = report.write_report(results, root / "report", nbgrader_seconds=42.0)
    return results, pages, path


@pytest.fixture(scope="module")
def rendered(graded, tmp_path_factory):
    """name -> (screenshot path, DOM) for the injected student's feedback page and the report."""
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set CHROMIUM=/path/to/it)")
    _, pages, report_path = graded
    out = tmp_path_factory.mktemp("shots")
    ARTIFACTS.mkdir(exist_ok=True)
    shown = {}
    for name, page in (("feedback", pages[INJECTED]), ("report", report_path)):
        shot, dom = _render(page, out / f"{name}.png", height=1600 if name == "feedback" else 2400)
        shutil.copy(shot, ARTIFACTS / f"{name}.png")
        shown[name] = (shot, dom)
    return shown


def _render(page: Path, shot: Path, height: int) -> tuple[Path, str]:
    """Screenshot and DOM of ``page`` as headless Chromium renders it (fresh profile, no network)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={shot}",
             f"--window-size=1200,{height}", "--dump-dom", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return shot, done.stdout


def _text(markup: str) -> str:
    """The visible text of HTML: tags removed, entities decoded, whitespace collapsed."""
    markup = re.sub(r"<(style|script)\b.*?</\1>", " ", markup, flags=re.S | re.I)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def _lines(source: str, skip_literals: bool) -> set[str]:
    """The source's lines long enough to be distinctive, whitespace collapsed."""
    found = set()
    for line in source.splitlines():
        line = " ".join(line.split())
        if len(line) < MIN_LINE:
            continue
        if skip_literals and re.match(r"^[rbf]?[\"']", line):
            continue    # a string literal on its own is a message written for the student
        found.add(line)
    return found


def _secret_lines() -> dict[str, str]:
    """line -> where it comes from, for every hidden check's source and every reference solution."""
    secret = {}
    hidden = [c for c in checks.all_checks() if c.hidden]
    assert hidden, "no hidden check to test against"
    for c in hidden:
        for line in _lines(inspect.getsource(c.run), skip_literals=True):
            secret[line] = f"hidden check {c.id}"
    references = sorted((REPO / "solutions" / "reference").glob("*.py"))
    assert references, "no reference solution found"
    for path in references:
        for line in _lines(path.read_text(), skip_literals=False):
            secret[line] = f"solutions/reference/{path.name}"
    return secret


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


# ---- the class behaves as its tests expect ---------------------------------------------------------

def test_the_class_covers_every_kind_of_page(graded):
    results, pages, _ = graded
    students = results["students"]
    assert set(students) == {"reference", "untouched", "sample_variance", "unreadable", INJECTED}
    assert students["reference"]["score"] == students["reference"]["max_score"]
    assert students["unreadable"]["status"] == "failed" and students["unreadable"]["reason"]
    assert students["sample_variance"]["questions"]["B1"]["misconception"]["id"] == "B1-sample-variance"
    assert students[INJECTED]["questions"]["B1"]["misconception"]["id"] == "B1-eps-outside-sqrt"
    assert students[INJECTED]["score"] < students[INJECTED]["max_score"]


# ---- pages as files -------------------------------------------------------------------------------

def test_a_page_per_student_inside_the_folder(graded):
    results, pages, _ = graded
    assert set(pages) == set(results["students"])
    folders = {path.parent for path in pages.values()}
    assert len(folders) == 1 and len(set(pages.values())) == len(pages)
    assert all(path.is_file() and path.suffix == ".html" for path in pages.values())
    assert pages["reference"].name == "reference.html"
    assert "<" not in pages[INJECTED].name and "'" not in pages[INJECTED].name
    failed = _text(pages["unreadable"].read_text())
    assert "We could not grade this submission" in failed
    assert all(part in failed for part in results["students"]["unreadable"]["reason"].split("; "))
    assert "Full marks on every autograded question" in _text(pages["reference"].read_text())


def test_ids_that_are_paths_stay_in_the_folder(tmp_path):
    results = {"assignment": "transformer-block", "students": {
        sid: {"status": "failed", "reason": "x", "score": 0.0, "max_score": 100.0, "questions": {}, "flags": []}
        for sid in ("../escape", "/etc/passwd", "..", ".hidden", "a/b", "a_b", "report", "")}}
    folder = tmp_path / "pages"
    written = feedback.write_pages(results, folder)
    assert len(written) == len(set(written)) == len(results["students"])
    for path in written:
        assert path.resolve().parent == folder.resolve() and not path.name.startswith(".")
    assert not (tmp_path / "escape.html").exists()
    assert "report.html" not in {p.name for p in written}


def test_everything_from_the_results_is_escaped():
    evil = "<script>alert(1)</script>"
    result = {"status": "graded", "reason": evil, "score": 1.0, "max_score": 8.0,
              "flags": [evil], "load_errors": {"build": [evil]}, "needs_manual_grade": ["C8"],
              "questions": {"B1": {"score": 1.0, "max_score": 8.0, "misconception": {"id": evil, "description": evil, "hint": evil},
                                   "feedback": [f"This looks like a known mistake: {evil} Hint: {evil}"],
                                   "checks": [{"id": evil, "score": 0.0, "max_score": 7.0, "hidden": True,
                                               "passed": False, "message": f"`{evil}` {evil}"}]},
                            "C8": {"score": None, "max_score": 4.0, "manual": True, "misconception": None,
                                   "feedback": ["graded by hand by a TA"]}}}
    page = feedback.page(evil, result, assignment=evil)
    assert "<script" not in page.lower()
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8
    results = {"assignment": evil, "isolation": {evil: [evil]}, "workers": 1, "seconds": 1.0,
               "students": {evil: {**result, "disagreements": [evil]}}}
    with tempfile.TemporaryDirectory() as tmp:
        text = report.write_report(results, Path(tmp)).read_text()
    assert "<script" not in text.lower() and "&lt;script&gt;" in text


# ---- in the browser ------------------------------------------------------------------------------

def test_feedback_page_renders_with_its_total_and_what_went_wrong(graded, rendered):
    results, _, _ = graded
    mine = results["students"][INJECTED]
    shot, dom = rendered["feedback"]
    assert shot.stat().st_size > 20_000 and _png_size(shot) == (1200, 1600)
    text = _text(dom)
    assert f"{mine['score']:g} / {mine['max_score']:g} autograded points" in text
    assert "C8 (4 points) is graded by hand" in text
    entry = next(e for e in misconceptions.catalogue() if e.id == "B1-eps-outside-sqrt")
    assert entry.description in text and entry.hint in text
    failing = [row for row in mine["questions"]["B1"]["checks"] if not row["passed"]]
    assert failing and all(row["message"] in text for row in failing)
    # the id shows as text, never as markup: no <img> element and no script in the rendered page
    assert INJECTED in text
    assert html.escape(INJECTED, quote=False) in dom
    assert "<img" not in dom.lower() and "<script" not in dom.lower()


def test_report_renders_with_its_figures_and_tables(graded, rendered):
    results, _, report_path = graded
    shot, dom = rendered["report"]
    assert shot.stat().st_size > 50_000 and _png_size(shot) == (1200, 2400)
    text = _text(dom)
    assert "transformer-block: 5 submissions" in text
    assert "4 graded, 1 failed" in text
    assert f"{results['seconds']:g} s" in text and "nbgrader time" in text and "42.0 s" in text
    for mistake in ("B1-sample-variance", "C5-sample-std", "B1-eps-outside-sqrt"):
        assert mistake in text
    assert results["students"]["unreadable"]["reason"] in text
    assert "C8 (4 points): 5 submissions to grade by hand" in text
    for key in results["isolation"]:
        assert key.replace("_", " ") in text
    # exactly the three embedded figures, and the injected id only as text
    assert dom.count("<img") == 3 and dom.count('src="data:image/png;base64,') == 3
    assert INJECTED in text and html.escape(INJECTED, quote=False) in dom


def test_no_hidden_check_or_reference_code_in_any_page(graded, rendered):
    _, pages, report_path = graded
    texts = {str(path.name): _text(path.read_text()) for path in [*pages.values(), report_path]}
    texts.update({f"rendered {name}": _text(dom) for name, (_, dom) in rendered.items()})
    secret = _secret_lines()
    assert len(secret) > 100
    leaks = [f"{where} in {page}: {line}" for page, text in texts.items() for line, where in secret.items()
             if line in text]
    assert not leaks, "\n".join(leaks[:20])


# ---- the report's files ----------------------------------------------------------------------------

def test_report_figures_and_determinism(graded, tmp_path):
    results, _, report_path = graded
    for name in report.FIGURES:
        path = report_path.parent / name
        width, height = _png_size(path)
        assert path.stat().st_size > 10_000 and width >= 800 and height >= 300
    again = report.write_report(results, tmp_path, nbgrader_seconds=42.0)
    assert again.read_bytes() == report_path.read_bytes()
    for name in report.FIGURES:
        assert (tmp_path / name).read_bytes() == (report_path.parent / name).read_bytes(), name
