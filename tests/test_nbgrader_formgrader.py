"""Manual grading end to end, with no `nbgrader autograde` at all: `course autograde` fills the
gradebook, a TA gives C8 a score through a real Jupyter server's formgrader API, `nbgrader export`
adds it to the autograded points, a re-grade keeps it, and `nbgrader generate_feedback` pages show
each check's result and no hidden test source; a student's `javascript:` links run nothing in
headless Chromium, on the feedback page or in formgrader's manual-grading view."""
import csv
import html
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import api
from autograder.grader_side.results import StudentResult
from autograder.tooling.sampleclass import write_submission
from conftest import validate_results
from nbgrader_course import ASSIGNMENT, Server, clone_course, give_c8

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    from autograder.grader_side.assignment import Assignment

    root = clone_course(course, tmp_path_factory.mktemp("formgrader"))
    a = Assignment(ASSIGNMENT, root)
    write_submission(root / "submitted" / "ref", a)
    write_submission(root / "submitted" / "blank", a, untouched=True)
    results = api.autograde(ASSIGNMENT, root / "submitted", workers=2, repo=root, gradebook=True)
    return root, results


def export(root: Path) -> dict[str, float]:
    api.nbgrader("export", "--log-level=WARN", repo=root)
    with open(root / "grades.csv") as f:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}


def test_manual_c8_adds_to_the_autograded_total_and_survives_a_regrade(graded, tmp_path):
    root, _ = graded
    assert export(root) == {"ref": 100.0, "blank": 0.0}
    give_c8(root, tmp_path, {"ref": 3.0})
    assert export(root) == {"ref": 103.0, "blank": 0.0}
    # The TA's command, in the course folder: grades submitted/ into that folder's gradebook again.
    done = subprocess.run([str(Path(sys.executable).parent / "course"), "autograde", ASSIGNMENT, "--workers=2",
                           f"--out={tmp_path / 'results.json'}"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    validate_results(json.loads((tmp_path / "results.json").read_text()))
    assert export(root) == {"ref": 103.0, "blank": 0.0}


RUBRIC = "C8 rubric (for TAs: formgrader shows it, the students' notebooks do not have it)"


def test_formgrader_shows_c8s_rubric_right_after_the_answer(graded, tmp_path):
    """The page a TA grades C8 on (formgrader's submission view of concepts) shows the rubric, with
    its points per element, just below the student's answer and its score box; the release the
    student worked on has none of it."""
    root, _ = graded
    server = Server(root, tmp_path)
    try:
        entries = server.get(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/concepts")
        (ref,) = [e for e in entries if e["student"] == "ref"]
        page = server.page(f"/formgrader/submissions/{ref['id']}/")
    finally:
        server.stop()
    answer, rubric = page.index('id="C8_answer"'), page.index(html.escape(RUBRIC, quote=False).split("'")[0])
    assert answer < rubric
    text = page_text_of(page[rubric:])
    for element in ("Algebra.", "One affine map.", "Stacking.", "Why it matters."):
        assert element in text, element
    assert "MARK SCHEME" not in text      # the markers are HTML comments: not shown
    released = (root / "assignments" / ASSIGNMENT / "concepts.ipynb").read_text()
    assert "C8 rubric" not in released and "MARK SCHEME" not in released


def page_text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<!--.*?-->|<[^>]+>", "", markup, flags=re.S))


def test_course_commands_work_on_the_course_folder_they_run_in(tmp_path):
    done = subprocess.run([str(Path(sys.executable).parent / "course"), "autograde", ASSIGNMENT],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no nbgrader_config.py" in done.stderr


def page_text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


def test_feedback_pages_show_each_check_and_no_hidden_source(graded):
    import week4 as checks

    root, _ = graded
    api.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
    for name in ("concepts", "build"):
        ref = page_text(root / "feedback" / "ref" / ASSIGNMENT / f"{name}.html")
        blank = page_text(root / "feedback" / "blank" / ASSIGNMENT / f"{name}.html")
        mine = [c for c in checks.all_checks() if checks.notebook(c) == name]
        assert mine and all(f"passed {c.id} ({c.points:g} point" in ref for c in mine)
        assert all(f"{c.id} failed: " in blank for c in mine) and "failed" not in ref
    assert "B1_random_affine failed: `layer_norm` is still the release's stub" in page_text(
        root / "feedback" / "blank" / ASSIGNMENT / "build.html")
    for page in (root / "feedback").rglob("*.html"):
        text = page.read_text()
        assert "HIDDEN TESTS" not in text and "hidden_check" not in text and "grader_side" not in text, page
        # C8's rubric and anchor answers are the TAs' (reused next year): formgrader shows them, feedback not
        assert "C8 rubric" not in text and "Anchor answers" not in text and "MARK SCHEME" not in text, page
    assert "C8 is graded by hand" in page_text(root / "feedback" / "ref" / ASSIGNMENT / "concepts.html")


def test_a_check_left_to_a_ta_is_listed_for_manual_grading_with_the_answer(graded):
    """A check outcome that needs a TA (``review``, the answer quoted) reaches nbgrader as a grade
    that needs manual grading, worth nothing until the TA decides."""
    import nbformat
    from nbgrader.api import Gradebook

    from autograder.course import Course
    from autograder.nbgrader.recorder import Recorder

    root, results = graded
    result = StudentResult.from_dict(results["students"]["ref"])
    (row,) = [r for r in result.questions["C3"].checks if r.id == "C3_answer"]
    row.review = "'the feed-forward part, mostly' (neither accepted nor rejected)"
    with Recorder(Course(root), ASSIGNMENT) as recorder:
        recorder.record("ref-reviewed", result, root / "submitted" / "ref")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        grades = {g.name: g for nb in gb.find_submission(ASSIGNMENT, "ref-reviewed").notebooks for g in nb.grades}
        assert grades["C3_answer"].needs_manual_grade and grades["C3_answer"].score == 0
        assert not grades["C2_answer"].needs_manual_grade and grades["C2_answer"].score == 2
    nb = nbformat.read(root / "autograded" / "ref-reviewed" / ASSIGNMENT / "concepts.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "C3_answer"]
    assert "the feed-forward part, mostly" in cell.outputs[0]["evalue"]
    # nbgrader's feedback shows "Score: 0.0 / 2.0" beside this output: it says why, and claims nothing else
    assert cell.outputs[0]["evalue"].startswith("C3_answer is awaiting review: not scored yet, a TA decides "
                                                "(until then nbgrader shows 0): ")
    assert "not lost" not in cell.outputs[0]["evalue"]
    api.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--student=ref-reviewed", "--log-level=WARN", repo=root)
    page = page_text(root / "feedback" / "ref-reviewed" / ASSIGNMENT / "concepts.html")
    at = page.index("C3_answer is awaiting review")
    assert "not scored yet" in page[at:at + 200] and "not lost" not in page


SCRIPT = "<script>document.title = 'owned'</script>"


def test_html_a_student_wrote_is_escaped_where_a_ta_reads_it(course, tmp_path):
    """A C8 answer, a markdown cell and a raw HTML cell holding a script reach the autograded
    notebook (what formgrader shows in the TA's Jupyter session) and the feedback page as text,
    through both graders; the course's own markup stays."""
    import nbformat

    from autograder.grader_side.assignment import Assignment

    root = clone_course(course, tmp_path / "course")
    a = Assignment(ASSIGNMENT, root)
    folder = write_submission(root / "submitted" / "x_html", a)
    nb = nbformat.read(folder / "concepts.ipynb", as_version=4)
    (answer,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "C8_answer"]
    answer.source = f"The MLP needs a nonlinearity. {SCRIPT}"
    nb.cells.append(nbformat.v4.new_markdown_cell(f"A note. {SCRIPT}"))
    nb.cells.append(nbformat.v4.new_raw_cell(SCRIPT, metadata={"raw_mimetype": "text/html"}))
    nbformat.write(nb, folder / "concepts.ipynb")
    for grade in ("course autograde", "nbgrader autograde"):
        if grade == "course autograde":
            api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True)
        else:
            api.nbgrader("autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=root)
        api.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
        autograded = (root / "autograded" / "x_html" / ASSIGNMENT / "concepts.ipynb").read_text()
        page = (root / "feedback" / "x_html" / ASSIGNMENT / "concepts.html").read_text()
        for text in (autograded, page):
            assert "<script>document" not in text, grade
        assert "&lt;script&gt;document.title" in page and "The MLP needs a nonlinearity." in page, grade
        assert "C8 rubric (for TAs" in autograded, grade   # put back from the gradebook: formgrader shows it


def _link_cells(beacon) -> tuple[str, str]:
    """A C8 answer and another markdown cell holding unsafe links in many spellings (each running
    the beacon's marker if it ever runs) and three safe ones."""
    import base64

    js = beacon.payload
    page = base64.b64encode(f"<script>fetch('{beacon.url}/ran/8')</script>".encode()).decode()
    svg = base64.b64encode(f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"fetch('{beacon.url}/ran/9')\"/>"
                           .encode()).decode()
    answer = "\n\n".join([
        "The MLP needs a nonlinearity.",
        f"[evil1]({js('1')})",
        f"[evil2]({js('2').replace('javascript', 'JaVaScRiPt')})",
        f"[evil3](&#106;{js('3')[1:]})",
        f"[evil4](  {js('4')})",
        f"[evil5](&#9;{js('5')})",
        f"[evil6](java&#10;{js('6')[4:]})",
        "[evil7](vbscript:msgbox(7))",
        f"[evil8](data:text/html;base64,{page})",
        f"![evil9](data:image/svg+xml;base64,{svg})",
        "[evil10][r10]",
        f"<{js('11')}>",
        "[safe-https](https://example.org/) [safe-rel](other.html) [safe-mail](mailto:ta@example.org)",
        f"[r10]: {js('10')}",
    ])
    return answer, f"A note with [evil12]({js('12')}) and [evil13][].\n\n[evil13]: {js('13')}"


def _nothing_runs(browser, beacon, url: str, title: str) -> dict:
    """Open ``url``, click every link that is not http(s) or mailto and every text of an unsafe one;
    assert no script ran (the beacon was never called, the title is the page's own)."""
    from browser import PROBE, click_everything_unsafe

    browser.open(url)
    found = browser.evaluate(PROBE)
    click_everything_unsafe(browser)
    time.sleep(1.5)   # what a click started has had its time
    assert beacon.hits == [], beacon.hits
    assert found["title"] == title and browser.evaluate("document.title") == title
    assert [link for link in found["links"] if link["protocol"] not in ("http:", "https:", "mailto:")] == []
    assert not [link for link in found["links"] if "evil" in link["text"]], "an unsafe link is still a link"
    assert not [src for src in found["images"] if src.lower().lstrip().startswith(("data:", "javascript:"))
                and not src.startswith("data:image/png")], found["images"]
    hrefs = {link["text"]: link["href"] for link in found["links"]}
    assert hrefs.get("safe-https") == "https://example.org/" and hrefs.get("safe-rel") == "other.html"
    assert hrefs.get("safe-mail") == "mailto:ta@example.org"
    text = browser.evaluate("document.body.innerText")
    assert all(f"evil{i}" in text for i in (*range(1, 11), 12, 13)), text[-3000:]
    return found


def test_links_a_student_wrote_run_nothing_in_the_browser(course, tmp_path):
    """A C8 answer and a markdown cell full of `javascript:`, `vbscript:` and `data:` links (every
    spelling: case, entities, spaces, references, autolinks), graded by both graders: the autograded
    notebook holds no unsafe link, and headless Chromium, opening the `generate_feedback` page and
    formgrader's manual-grading view and clicking the links, runs none of them; the safe links stay
    links (the relative one is followed)."""
    import nbformat

    from autograder.grader_side import markup
    from autograder.grader_side.assignment import Assignment
    from browser import Beacon, Browser, click_everything_unsafe, have_chromium

    if not have_chromium():
        pytest.skip("no Chromium: apt-get install -y chromium (or set CHROMIUM=/path/to/it)")
    root = clone_course(course, tmp_path / "course")
    (root / "feedback").mkdir()
    beacon = Beacon(root / "feedback")
    browser = Browser()
    try:
        # The harness sees a script run: the same links, live, on a page of their own.
        answer, note = _link_cells(beacon)
        (root / "feedback" / "control.html").write_text(
            "<title>control</title>" + markup._render(answer))
        browser.open(f"{beacon.url}/control.html")
        click_everything_unsafe(browser)
        time.sleep(1.5)
        ran = {hit.rsplit("/", 1)[1] for hit in beacon.hits}
        assert {"1", "2", "3", "4", "10", "11"} <= ran, f"the marker works: {ran}"
        assert browser.evaluate("document.title").startswith("ran-")
        beacon.hits.clear()

        a = Assignment(ASSIGNMENT, root)
        folder = write_submission(root / "submitted" / "x_links", a)
        nb = nbformat.read(folder / "concepts.ipynb", as_version=4)
        (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "C8_answer"]
        cell.source = answer
        nb.cells.append(nbformat.v4.new_markdown_cell(note))
        nbformat.write(nb, folder / "concepts.ipynb")
        page = root / "feedback" / "x_links" / ASSIGNMENT / "concepts.html"
        for grade in ("course autograde", "nbgrader autograde"):
            if grade == "course autograde":
                api.autograde(ASSIGNMENT, root / "submitted", workers=1, repo=root, gradebook=True)
            else:
                api.nbgrader("autograde", ASSIGNMENT, "--force", "--log-level=ERROR", repo=root)
            graded = nbformat.read(root / "autograded" / "x_links" / ASSIGNMENT / "concepts.ipynb", as_version=4)
            mine = [c.source for c in graded.cells if c.cell_type == "markdown" and "evil" in c.source]
            assert len(mine) == 2 and all(markup.unsafe_links(source) == [] for source in mine), grade
            assert "[safe-https](https://example.org/)" in mine[0], grade
            api.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--log-level=WARN", repo=root)
            (page.parent / "other.html").write_text("<title>other</title><p>the relative link works</p>")
            title = re.search(r"<title>(.*?)</title>", page.read_text(), re.S).group(1).strip()
            _nothing_runs(browser, beacon, f"{beacon.url}/x_links/{ASSIGNMENT}/concepts.html", html.unescape(title))
            browser.evaluate("document.querySelector('a[href=\"other.html\"]').click()")
            time.sleep(1.0)
            assert browser.evaluate("document.title") == "other", grade
        server = Server(root, tmp_path)
        try:
            (entry,) = [e for e in server.get(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/concepts")
                        if e["student"] == "x_links"]
            url = f"http://127.0.0.1:{server.port}/formgrader/submissions/{entry['id']}/?token={server.token}"
            browser.open(url)
            title = browser.evaluate("document.title")
            assert "C8" in browser.evaluate("document.body.innerText") or title, "formgrader's view loaded"
            _nothing_runs(browser, beacon, url, title)
        finally:
            server.stop()
        assert beacon.hits == []
    finally:
        browser.close()
        beacon.stop()


def test_a_timestamp_that_is_not_a_time_is_flagged_and_the_student_still_recorded(graded, course, tmp_path):
    """timestamp.txt can come from the student's side of the exchange: one that is not a time is
    reported, and the student is recorded without a submission time; a real one is kept. A student
    id nbgrader's own commands cannot match is reported too, and so is the LMS's mark of a late
    upload that came with no time."""
    import shutil
    from datetime import datetime

    from nbgrader.api import Gradebook

    from autograder.course import Course
    from autograder.nbgrader.recorder import Recorder

    _, results = graded
    root = clone_course(course, tmp_path / "course")
    flags = {}
    with Recorder(Course(root), ASSIGNMENT) as recorder:
        for sid, text in (("garbled", "next tuesday\x1b[2J"), ("on_time", "2026-11-30 10:00:00.000000 UTC"),
                          ("linked", None), ("new\nline", "2026-11-30 10:00:00.000000 UTC"), ("marked_late", "")):
            folder = shutil.copytree(graded[0] / "submitted" / "ref", tmp_path / sid)
            if text == "":   # Canvas's LATE_, kept by zip_collect's Canvas collector, and no time
                (folder / ASSIGNMENT / "lms_late.txt").write_text("Canvas marked this submission late")
            elif text is None:
                (folder / ASSIGNMENT / "timestamp.txt").symlink_to("/etc/hostname")
            else:
                (folder / ASSIGNMENT / "timestamp.txt").write_text(text)
            result = StudentResult.from_dict(results["students"]["ref"])
            recorder.record(sid, result, folder)
            flags[sid] = result.flags
    assert [f for f in flags["garbled"] if f.startswith("timestamp.txt is not a time ('next tuesday")], flags
    assert not any("timestamp" in f for f in flags["on_time"]), flags
    assert not any("student id" in f for f in flags["on_time"]) and \
        [f for f in flags["new\nline"] if "student id holds a line break" in f], flags
    assert [f for f in flags["linked"] if f.startswith("timestamp.txt is not a time (it is not a plain file")], flags
    assert [f for f in flags["marked_late"] if f.startswith("the LMS marked this submission late")], flags
    assert not any("LMS" in f for sid in ("garbled", "on_time", "linked") for f in flags[sid]), flags
    assert (root / "autograded" / "marked_late" / ASSIGNMENT / "lms_late.txt").is_file()
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        garbled, on_time = (gb.find_submission(ASSIGNMENT, sid) for sid in ("garbled", "on_time"))
        assert garbled.timestamp is None and garbled.score == 100
        assert on_time.timestamp == datetime(2026, 11, 30, 10, 0) and on_time.score == 100
    assert (root / "autograded" / "garbled" / ASSIGNMENT / "concepts.ipynb").is_file()
