"""Feedback pages and the class report, from a class really graded, rendered in a real browser.

A small class (the reference solution, the untouched release, catalogued wrong answers, an
unreadable submission and a student whose id is HTML) is graded by ``api.autograde``; its results
become one feedback page per student and the class report, which headless Chromium renders to a
screenshot and a DOM dump.

nbgrader 0.9.6's own ``nbgrader generate_feedback`` copies every graded cell into the student's
feedback HTML, hidden tests included (their ``### BEGIN HIDDEN TESTS`` code and probe values).
Ours must not: a page is made from the results document only, and these tests check that no line
of a hidden check's source and no line of the reference solutions appears in any page.

The pages come from Jinja2 templates with autoescaping (``autograder/reports/templates``); a
results document full of markup (a student id, a message, a misconception, a TA review) renders as
text in both pages. No Python file writes HTML, and a wheel ships the templates and the CSS.

The screenshots are kept in ``tests/artifacts/`` (git-ignored) to look at.
"""
from __future__ import annotations

import copy
import html
import inspect
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import jinja2
import pytest

import week4
import week4 as checks
import week4 as contract
from autograder import api
from autograder.grader_side import misconceptions
from autograder.grader_side.assignment import REPO
from autograder.reports import feedback, pages, report
from autograder.tooling.sampleclass import write_submission

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# An id that is HTML when not escaped (an <img> whose onerror would run), with a quote and an ampersand.
INJECTED = "<img src=x onerror=alert(1)> o'neil & co"
# Markup that, if it ever became markup, would leave data-ran="1" on the page's root element.
HOSTILE = ('<script>document.documentElement.dataset.ran = 1</script>'
           '<img src=x onerror="document.documentElement.dataset.ran = 1"> & \'')
WRONG = {"sample_variance": ("B1-sample-variance", "C5-sample-std"), INJECTED: ("B1-eps-outside-sqrt",)}
MIN_LINE = 24   # shorter source lines are too generic to mean anything when found


def _wrong(assignment, entry_ids) -> dict[str, str]:
    """Edits that put the catalogued wrong answers ``entry_ids`` (on different cells) in a submission."""
    entries = {e.id: e for e in week4.catalogue()}
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
    by_student = dict(zip(results["students"], feedback.write_pages(results, root / "feedback"), strict=True))
    path = report.write_report(results, root / "report", nbgrader_seconds=42.0)
    return results, by_student, path


@pytest.fixture(scope="module")
def rendered(graded, tmp_path_factory):
    """name -> (screenshot path, DOM) for the injected student's feedback page and the report."""
    _need_chromium()
    _, by_student, report_path = graded
    out = tmp_path_factory.mktemp("shots")
    ARTIFACTS.mkdir(exist_ok=True)
    shown = {}
    for name, page in (("feedback", by_student[INJECTED]), ("report", report_path)):
        shot, dom = _render(page, out / f"{name}.png", height=1600 if name == "feedback" else 2400)
        shutil.copy(shot, ARTIFACTS / f"{name}.png")
        shown[name] = (shot, dom)
    return shown


def _need_chromium() -> None:
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set CHROMIUM=/path/to/it)")


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
    references = sorted((week4.SET.folder / "grading" / "reference").glob("*.py"))
    assert references, "no reference solution found"
    for path in references:
        for line in _lines(path.read_text(), skip_literals=False):
            secret[line] = path.relative_to(REPO).as_posix()
    return secret


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


# ---- the class behaves as its tests expect ---------------------------------------------------------

def test_the_class_covers_every_kind_of_page(graded):
    results, by_student, _ = graded
    students = results["students"]
    assert set(students) == {"reference", "untouched", "sample_variance", "unreadable", INJECTED}
    assert students["reference"]["score"] == students["reference"]["max_score"]
    assert students["unreadable"]["status"] == "failed" and students["unreadable"]["reason"]
    assert students["sample_variance"]["questions"]["B1"]["misconception"]["id"] == "B1-sample-variance"
    assert students[INJECTED]["questions"]["B1"]["misconception"]["id"] == "B1-eps-outside-sqrt"
    assert students[INJECTED]["score"] < students[INJECTED]["max_score"]


# ---- pages as files -------------------------------------------------------------------------------

def test_a_page_per_student_inside_the_folder(graded):
    results, by_student, _ = graded
    assert set(by_student) == set(results["students"])
    folders = {path.parent for path in by_student.values()}
    assert len(folders) == 1 and len(set(by_student.values())) == len(by_student)
    assert all(path.is_file() and path.suffix == ".html" for path in by_student.values())
    assert by_student["reference"].name == "reference.html"
    assert "<" not in by_student[INJECTED].name and "'" not in by_student[INJECTED].name
    failed = _text(by_student["unreadable"].read_text())
    assert "We could not grade this submission" in failed
    assert all(part in failed for part in results["students"]["unreadable"]["reason"].split("; "))
    assert "Full marks on every autograded question" in _text(by_student["reference"].read_text())


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


def _hostile_results() -> dict:
    """A results document with markup in every field that is shown: id, reason, messages, mistake, review."""
    evil = HOSTILE
    checks = [{"id": evil, "score": 0.0, "max_score": 7.0, "hidden": True, "passed": False,
               "message": f"`{evil}` {evil}", "review": None}]
    review = [{"id": "C2_answer", "score": 0.0, "max_score": 2.0, "hidden": True, "passed": False,
               "message": evil, "review": evil}]
    result = {"status": "graded", "reason": evil, "score": 1.0, "max_score": 14.0, "flags": [evil],
              "load_errors": {"build": [evil]}, "needs_manual_grade": ["C8", "C2"], "disagreements": [evil],
              "questions": {
                  "C2": {"score": 0.0, "max_score": 2.0, "feedback": [evil], "checks": review,
                         "misconception": None, "manual": False},
                  "B1": {"score": 1.0, "max_score": 8.0, "feedback": [evil, evil], "checks": checks,
                         "misconception": {"id": evil, "description": evil, "hint": evil}, "manual": False},
                  "C8": {"score": None, "max_score": 4.0, "manual": True, "misconception": None,
                         "feedback": ["graded by hand by a TA"], "checks": []}}}
    return {"assignment": evil, "isolation": {evil: [evil], "mode": evil}, "workers": 1, "seconds": 1.0,
            "students": {evil: result, "plain": {**result, "disagreements": []}}}


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # a figure label full of markup
def test_everything_from_the_results_is_escaped(tmp_path):
    results = _hostile_results()
    page = feedback.page(HOSTILE, results["students"][HOSTILE], assignment=HOSTILE)
    report_page = report.write_report(results, tmp_path).read_text(encoding="utf-8")
    for text in (page, report_page):
        assert "<script" not in text.lower() and "<img src=x" not in text.lower()
    # id (title, heading), reason, mistake id, description and hint, check id, message (twice), review,
    # cell error, flag and the question's review line: every one of them shows as text
    assert _text(page).count(HOSTILE) >= 12
    assert f"sent to a TA for review: “{HOSTILE}”" in _text(page)
    assert "Your answer to C2 was sent to a TA for review" in _text(page)
    assert _text(report_page).count(HOSTILE) >= 10
    assert f"sent to a TA for review: “{HOSTILE}”" in _text(report_page)


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # a figure label full of markup
def test_a_link_in_the_results_is_text_on_the_pages(tmp_path):
    """The course's own pages never make a link of what the results hold (a message, a review, an
    id): a markdown or HTML `javascript:` link stays text; every link they have is their own."""
    import json

    link = "[x](javascript:alert(1)) <a href='javascript:alert(1)'>y</a> <javascript:alert(1)>"
    results = json.loads(json.dumps(_hostile_results()).replace(json.dumps(HOSTILE)[1:-1], json.dumps(link)[1:-1]))
    page = feedback.page(link, results["students"][link], assignment=link)
    report_page = report.write_report(results, tmp_path).read_text(encoding="utf-8")
    from html.parser import HTMLParser

    for text in (page, report_page):
        urls = []
        parser = HTMLParser()
        parser.handle_starttag = lambda tag, attrs, urls=urls: urls.extend(v for k, v in attrs if k in ("href", "src"))
        parser.feed(text)
        assert urls and all(u.startswith(("#", "data:image/png")) for u in urls), urls
        assert "[x](javascript:alert(1))" in _text(text)


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # a figure label full of markup
def test_hostile_text_stays_text_in_the_browser(tmp_path):
    """Both pages, rendered: no element the results wrote, no script ran, the text is all there."""
    _need_chromium()
    results = _hostile_results()
    page, = [p for p in feedback.write_pages(results, tmp_path / "feedback") if p.stem != "plain"]
    report_path = report.write_report(results, tmp_path / "report")
    ARTIFACTS.mkdir(exist_ok=True)
    for name, path, images in (("feedback", page, 0), ("report", report_path, 3)):
        shot, dom = _render(path, tmp_path / f"hostile-{name}.png", height=1600)
        shutil.copy(shot, ARTIFACTS / f"hostile-{name}.png")
        assert "<script" not in dom.lower() and "data-ran" not in dom, name
        assert dom.lower().count("<img") == images, name
        assert f"sent to a TA for review: “{HOSTILE}”" in _text(dom), name


# ---- in the browser ------------------------------------------------------------------------------

def test_feedback_page_renders_with_its_total_and_what_went_wrong(graded, rendered):
    results, _, _ = graded
    mine = results["students"][INJECTED]
    shot, dom = rendered["feedback"]
    assert shot.stat().st_size > 20_000 and _png_size(shot) == (1200, 1600)
    text = _text(dom)
    assert f"{mine['score']:g} / {mine['max_score']:g} autograded points" in text
    assert "C8 (4 points) is graded by hand" in text
    entry = next(e for e in week4.catalogue() if e.id == "B1-eps-outside-sqrt")
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
    # not the untouched release nor the unreadable one: nbgrader scores an answer left as released 0
    assert "C8 (4 points): 3 submissions to grade by hand" in text
    for key in results["isolation"]:
        assert key.replace("_", " ") in text
    # exactly the three embedded figures, and the injected id only as text
    assert dom.count("<img") == 3 and dom.count('src="data:image/png;base64,') == 3
    assert INJECTED in text and html.escape(INJECTED, quote=False) in dom


def test_no_hidden_check_or_reference_code_in_any_page(graded, rendered):
    _, by_student, report_path = graded
    texts = {str(path.name): _text(path.read_text()) for path in [*by_student.values(), report_path]}
    texts.update({f"rendered {name}": _text(dom) for name, (_, dom) in rendered.items()})
    secret = _secret_lines()
    assert len(secret) > 100
    leaks = [f"{where} in {page}: {line}" for page, text in texts.items() for line, where in secret.items()
             if line in text]
    assert not leaks, "\n".join(leaks[:20])


# ---- the pages' source: templates, not Python ------------------------------------------------------

MARKUP = re.compile(r"<(html|head|body|main|header|footer|section|div|span|p|a|ul|ol|li|table|thead|tbody|tr|"
                    r"th|td|h[1-6]|img|figure|figcaption|style|script|meta|title|code|strong|em|small|br)[\s>/]",
                    re.I)


def test_no_python_file_writes_html():
    sources = sorted((REPO / "autograder").rglob("*.py"))
    assert len(sources) > 20
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}" for path in sources
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if MARKUP.search(line)]
    assert not found, "HTML belongs in autograder/reports/templates:\n" + "\n".join(found)
    # the check itself finds markup where there is some
    assert MARKUP.search((pages.TEMPLATES / "feedback.html.j2").read_text())


def test_templates_escape_and_refuse_undefined_names():
    env = pages.environment()
    names = env.list_templates()
    assert {"feedback.html.j2", "report.html.j2"} <= set(names)
    assert callable(env.autoescape) and all(env.autoescape(name) for name in names)
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        pages.render("feedback.html.j2", student="x")


def test_pages_inline_their_css_file(graded):
    _, pages_by_student, report_path = graded
    css = (pages.STATIC / "page.css").read_text(encoding="utf-8")
    for path in (pages_by_student["reference"], report_path):
        text = path.read_text(encoding="utf-8")
        assert css in text, f"{path.name} does not carry static/page.css verbatim"
        assert "<link" not in text and "src=\"http" not in text
    assert (pages.STATIC / "report.css").read_text(encoding="utf-8") in report_path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_wheel_ships_the_templates(tmp_path):
    """A non-editable install has the templates and CSS and renders a page from them."""
    source = tmp_path / "src"
    for part in ("pyproject.toml", "autograder"):   # the package is autograder* alone
        copy = shutil.copytree if (REPO / part).is_dir() else shutil.copy
        (source / part).parent.mkdir(parents=True, exist_ok=True)
        copy(REPO / part, source / part, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (REPO / part).is_dir() else {}))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel, = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"autograder/reports/{p.relative_to(pages.HERE).as_posix()}"
               for p in [*pages.TEMPLATES.glob("*.html.j2"), *pages.STATIC.glob("*.css")]}
    assert len(shipped) >= 4 and shipped <= names, sorted(shipped - names)
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                           "--target", str(site), str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    script = ("import autograder.reports.feedback as f; print(f.__file__); "
              "print(f.page('s1', {'status': 'failed', 'reason': 'x', 'score': 0, 'max_score': 1}, "
              "'transformer-block'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr[-2000:]
    where, text = done.stdout.split("\n", 1)
    assert Path(where).is_relative_to(site) and "We could not grade this submission" in text


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


def test_each_question_is_labelled_with_its_own_topic(graded):
    questions = graded[0]["students"]["reference"]["questions"]   # the results state each question's topic
    assert pages.topic("C6", questions["C6"], " notebook") == \
        "Encoder, decoder and decoder-only blocks (concepts notebook)"
    assert pages.topic("C7", questions["C7"]) == "Pre-norm and post-norm blocks (concepts)"
    assert pages.topic("B1", questions["B1"]) == "Layer norm and RMSNorm (build)"
# ---- answers awaiting a TA's review, and the questions' topics ---------------------------------------

def _awaiting_results() -> dict:
    """One student whose C2 answer waits for a TA (0 of 2, not a verdict), with B1 lost for real."""
    c2 = {"id": "C2_answer", "score": 0.0, "max_score": 2.0, "hidden": True, "passed": False,
          "message": "the grader could not place this answer", "review": "'the GRU'"}
    b1 = {"id": "B1_random_affine", "score": 0.0, "max_score": 4.0, "hidden": True, "passed": False,
          "message": "off by 0.3", "review": None}
    b1_ok = {"id": "B1_worked_example", "score": 2.0, "max_score": 2.0, "hidden": False, "passed": True,
             "message": "", "review": None}
    result = {"status": "graded", "reason": None, "score": 2.0, "max_score": 10.0, "flags": [],
              "needs_manual_grade": ["C2", "C8"], "load_errors": {},
              "questions": {
                  "C2": {"score": 0.0, "max_score": 2.0, "checks": [c2], "misconception": None, "manual": False,
                         "topic": "Residual streams and depth", "notebook": "concepts",
                         "feedback": ["C2_answer (awaiting review): the grader could not place this answer"]},
                  "B1": {"score": 2.0, "max_score": 6.0, "checks": [b1_ok, b1], "misconception": None,
                         "topic": "Layer norm and RMSNorm", "notebook": "build",
                         "manual": False, "feedback": ["B1_random_affine (-4): off by 0.3"]},
                  "C8": {"score": None, "max_score": 4.0, "manual": True, "misconception": None,
                         "topic": "The MLP sublayer", "notebook": "concepts",
                         "feedback": ["graded by hand by a TA"], "checks": []}}}
    return {"assignment": "transformer-block", "workers": 1, "seconds": 1.0, "students": {"ta": result}}


def test_a_check_waiting_for_review_is_shown_as_awaiting_not_lost(tmp_path):
    results = _awaiting_results()
    text = _text(feedback.page("ta", results["students"]["ta"], "transformer-block"))
    assert "C2 Residual streams and depth (concepts notebook) 0 / 2 2 awaiting review" in text
    assert "lost 2" not in text and "−2" not in text and "0 until a TA" not in text
    assert "Points were lost on B1 :" in text and "lost 4" in text
    assert "Your answer to C2 was sent to a TA for review: its points are awaiting review, not lost" in text
    assert "C2_answer (hidden test) awaiting review 2 points, not lost: a TA decides" in text
    assert "sent to a TA for review: “'the GRU'”" in text
    # nothing lost, only awaiting: no "full marks", no "points were lost"
    only = copy.deepcopy(results["students"]["ta"])
    only["questions"].pop("B1")
    text = _text(feedback.page("ta", only, "transformer-block"))
    assert "No points were lost; the points of C2 are awaiting review" in text
    assert "Full marks" not in text and "Points were lost" not in text
    # the class report: C2 awaits review in one submission and is lost in none
    report_text = _text(report.write_report(results, tmp_path).read_text(encoding="utf-8"))
    assert re.search(r"C2 Residual streams and depth \(concepts\) 0 / 2 0 of 1 1 0 0 ", report_text), report_text
    assert re.search(r"B1 Layer norm and RMSNorm \(build\) 2 / 6 0 of 1 0 0 1 ", report_text)
    assert "awaiting review: sent to a TA for review: “'the GRU'”" in report_text
    stats = report.Stats(results)
    questions = stats.questions
    assert (questions["C2"]["awaiting"], questions["C2"]["none"], questions["B1"]["partial"]) == (1, 0, 1)
    # and Gradescope's file says so for the check
    from autograder.reports.exports import gradescope

    outputs = {test["name"]: test["output"] for test in gradescope(results["students"]["ta"])["tests"]}
    assert outputs["C2_answer"].startswith("awaiting review: a TA decides these points")
    assert "'the GRU'" in outputs["C2_answer"]
    assert outputs["B1_random_affine"] == "off by 0.3"


def test_every_concepts_question_has_its_own_topic_on_the_pages(graded):
    """C6 (which sublayers a block has) is not labelled with C7's topic (where the norm goes)."""
    questions = graded[0]["students"]["reference"]["questions"]

    def topic(qid):
        return pages.topic(qid, questions[qid])
    assert topic("C6") != topic("C7")
    assert "decoder" in topic("C6").lower() and "norm" in topic("C7").lower()
    assert topic("B6") == topic("B7") == topic("C7").replace("concepts", "build")
