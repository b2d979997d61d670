"""``course similarity``: winnowed fingerprints of what students wrote, compared across a class.

The unit tests hold the algorithm to its promises (renaming, reformatting, re-commenting and
reordering change nothing; different code shares next to nothing). The class test plants copies in a
real course's sample class of students who each wrote their own correct answers (the catalogue's
VARIANTS, each by one student only), and checks every copy is found and no independent pair is, on
the command line, in the CSV and in the page as Chromium renders it.
"""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograder import api
from autograder.grader_side.assignment import REPO
from autograder.reports import similarity as sim
from autograder.tooling.sampleclass import write_submission
from browser import CHROMIUM, Browser, have_chromium
from hostile_text import PAYLOAD, assert_clean

ORIGINAL = '''
import torch

def attention_weights(q, k, mask=None):
    """softmax(q k^T / sqrt(d)) with an optional causal mask."""
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d ** 0.5   # (T, T)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)

def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta
'''

# The same program: names changed, comments changed, reformatted, the two functions swapped.
DISGUISED = '''
import torch
def normalise(inp, g, b, epsilon=1e-5):
    # centre then scale
    mu = inp.mean(dim = -1, keepdim = True)
    v = ((inp - mu)**2).mean(dim=-1,
                               keepdim=True)
    return g*(inp-mu)/torch.sqrt(v+epsilon)+b


def attn(query, key, m=None):
    """my attention"""
    width = query.shape[-1]
    s = query @ key.transpose(-2, -1) / width ** 0.5
    if m is not None:
        s = s.masked_fill(~m,
                          float("-inf"))   # hide the future
    return torch.softmax(s, dim=-1)
'''

# The same two tasks, solved independently.
DIFFERENT = '''
import math
import torch.nn.functional as F

def attention_weights(q, k, mask=None):
    logits = torch.einsum("id,jd->ij", q, k).div(math.sqrt(q.size(-1)))
    logits = logits.where(mask, torch.full_like(logits, -1e9)) if mask is not None else logits
    weights = F.softmax(logits, -1)
    return weights

def layer_norm(x, gamma, beta, eps=1e-5):
    centred = x - x.mean(-1, keepdims=True)
    spread = centred.pow(2).mean(-1, keepdims=True).add(eps).rsqrt()
    return centred.mul(spread).mul(gamma).add(beta)
'''


def _score(one: str, other: str, kind: str = "code") -> float:
    a = sim.cell_fingerprints(sim.Cell("nb", "x", kind, one))
    b = sim.cell_fingerprints(sim.Cell("nb", "x", kind, other))
    assert a and b
    return len(a & b) / min(len(a), len(b))


# ---- the algorithm ----------------------------------------------------------------------------------

def test_names_comments_and_layout_are_not_tokens():
    assert sim.code_tokens("total = a + b  # sum\n") == sim.code_tokens("s=x+y\n\n\n")
    assert sim.code_tokens("if x:\n    return y\n") == ["if", "N", ":", ";", "return", "N", ";"]
    assert sim.code_tokens("y = 'a' + \"b\"\n") == ["N", "=", "S", "+", "S", ";"]
    # a cell that does not tokenize is cut at whitespace
    assert sim.code_tokens("def f(:\n  '''open") == ["def", "f(:", "'''open"]


def test_a_disguised_copy_scores_as_a_copy_and_independent_code_does_not():
    assert _score(ORIGINAL, ORIGINAL) == 1.0
    assert _score(ORIGINAL, DISGUISED) >= 0.9
    assert _score(ORIGINAL, DIFFERENT) <= 0.2


def test_winnowing_keeps_a_fingerprint_in_every_window():
    tokens = [str(i % 37) for i in range(400)]
    prints = sim.fingerprints(tokens, 5, 4)
    assert 0 < len(prints) <= 396
    # the same stretch inside other text keeps its fingerprints (a copied passage is found wherever it is)
    inside = [f"x{i}" for i in range(50)] + tokens + [f"y{i}" for i in range(50)]
    assert len(prints & sim.fingerprints(inside, 5, 4)) >= 0.9 * len(prints)
    assert sim.fingerprints(tokens[:4], 5, 4) == set()
    # the same in another process (no salted str hash)
    again = subprocess.run([sys.executable, "-c", "from autograder.reports import similarity as s; "
                            "print(sorted(s.fingerprints([str(i % 37) for i in range(400)], 5, 4)))"],
                           capture_output=True, text=True, check=True, cwd=REPO)
    assert json.loads(again.stdout) == sorted(prints)


def test_free_text_is_compared_by_words():
    answer = ("Without the nonlinearity the two linear layers collapse into one affine map, so depth buys "
              "nothing and the model cannot represent thresholds.")
    assert _score(answer, answer.upper().replace(",", " ;"), "text") == 1.0
    other = ("The activation between the layers is what lets stacked blocks express functions that are not "
             "linear; remove it and every block is a matrix multiply plus a bias.")
    assert _score(answer, other, "text") <= 0.1
    # a string answer in code is free text too
    assert sim.string_answers(f"q = {answer!r}\nx = 'short one'\n") == [answer]


def test_given_code_never_counts_and_common_code_is_ignored():
    given = [sim.Cell("nb", "given", "code", ORIGINAL)]
    students = [sim.Submission("a", [sim.Cell("nb", "c", "code", ORIGINAL)]),
                sim.Submission("b", [sim.Cell("nb", "c", "code", DISGUISED)])]
    assert sim.compare("set", students, given).pairs == []
    assert [(p.a, p.b) for p in sim.compare("set", students, []).pairs] == [("a", "b")]
    # everyone's same answer (more than half of the class) is an idiom, not a copy
    crowd = [sim.Submission(f"s{i}", [sim.Cell("nb", "c", "code", ORIGINAL)]) for i in range(5)]
    found = sim.compare("set", crowd, [])
    assert found.pairs == [] and found.ignored_common > 0


def test_only_students_who_share_a_fingerprint_are_paired():
    prints = {f"s{i}": {i * 10 + j for j in range(10)} for i in range(200)}
    prints["copy"] = set(prints["s7"])
    found, _, candidates = sim.pairs(prints)
    assert candidates == 1 and [(p.a, p.b, p.score) for p in found] == [("copy", "s7", 1.0)]


# ---- a real course's class --------------------------------------------------------------------------

STYLES = 4      # independent students, each writing their own answers


def _own_answers(a, style: int) -> dict[str, str]:
    """The solution cells of one independent student: style 0 writes the source's solution; style i
    writes the catalogue's i-th correct variant of each cell (appended to the stub, as a student
    answers below it) and leaves a cell with fewer variants as released."""
    if style == 0:
        return {}
    by_cell: dict[str, list] = {}
    for v in a.set.variants:
        by_cell.setdefault(v.cell, []).append(v)
    released = {c.grade_id: c.source for n in a.notebooks for c in a.cells(n, released=True)}
    edits = {}
    for cell in (c.grade_id for n in a.notebooks for c in a.cells(n) if c.solution):
        variants = by_cell.get(cell, [])
        if len(variants) >= style:
            edits[cell] = released[cell].rstrip("\n") + "\n\n\n" + variants[style - 1].code.strip("\n") + "\n"
        else:
            edits[cell] = released[cell]
    return edits


ESSAYS = [
    "Two affine maps in a row are one affine map, so the hidden layer adds no expressive power at all.",
    "If phi is dropped, W2 times W1 is just another matrix; the network then stays linear however deep it gets.",
    "The elementwise activation is what bends the function; without it stacking layers is pointless algebra.",
    "Linear layers compose to a linear layer. Depth only helps once a nonlinearity sits between them.",
    "Removing the nonlinearity collapses the MLP: the product of the weights is one matrix and the bias adds up.",
    "A network of only matrix multiplies and additions computes an affine function, whatever its width.",
]
COPIED = ("Stacking linear maps yields a linear map; the activation in between is the whole reason a deeper "
          "model can fit curved decision boundaries that one matrix never could.")


def _rename(code: str) -> str:
    """``code`` with its local names changed (a copier's disguise)."""
    for old, new in (("hidden", "hid"), ("d_ff", "width_ff"), ("x64", "xx"), ("z", "zz"), ("gate", "g8"),
                     ("scores", "sc"), ("weights", "wts"), ("mask", "msk"), ("logits", "lg")):
        code = re.sub(rf"\b{old}\b", new, code)
    return code


def _reformat(code: str) -> str:
    """``code`` with its comments replaced, spaces around operators changed and top-level functions
    and classes in reverse order (a copier's other disguise)."""
    code = re.sub(r"#[^\n'\"]*$", "# my own note", code, flags=re.M)
    code = re.sub(r" = ", "=", code).replace(", ", ",")
    blocks = re.split(r"\n(?=(?:def|class) )", code)
    return "\n".join(reversed(blocks)) if len(blocks) > 1 else code


def _write_class(root: Path, a) -> dict[str, Path]:
    """A class with independent students and planted copies; returns their folders."""
    folders = {}
    sub = root / "submitted"
    for style in range(STYLES):
        sid = f"own-{style}"
        folders[sid] = write_submission(sub / sid, a, _own_answers(a, style))
    copies = {"renamed-copy-of-own-1": ("own-1", _rename), "reformatted-copy-of-own-2": ("own-2", _reformat)}
    for sid, (source, disguise) in copies.items():
        edits = {k: disguise(v) for k, v in _own_answers(a, int(source[-1])).items()}
        folders[sid] = write_submission(sub / sid, a, edits)
    # everyone writes their own essay (C8), one student copies another's, hostile characters and all
    for i, sid in enumerate(list(folders)):
        _set_markdown(folders[sid], "C8_answer", ESSAYS[i % len(ESSAYS)] + f" Written by {sid}.")
    folders["essay-copier"] = write_submission(sub / "essay-copier", a, untouched=True)   # no code of their own
    essay = f"{PAYLOAD} <script>document.title='ran'</script> " + COPIED
    _set_markdown(folders["own-3"], "C8_answer", essay)
    _set_markdown(folders["essay-copier"], "C8_answer", essay.replace("linear map", "linear function"))
    return folders


def _set_markdown(folder: Path, grade_id: str, text: str) -> None:
    for path in folder.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
                cell.source = text
                nbformat.write(nb, path)


@pytest.fixture(scope="module")
def compared(course, tmp_path_factory):
    root = tmp_path_factory.mktemp("similar") / "course"
    shutil.copytree(course, root, ignore=shutil.ignore_patterns("submitted", "autograded"))
    a = api.Assignment("transformer-block", root)
    _write_class(root, a)
    broken = root / "submitted" / "broken"
    write_submission(broken, a, untouched=True)
    (broken / a.name / "build.ipynb").write_text("{not json")
    out = root / "similarity"
    before = _files(root)
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "similarity", a.name, "--course", str(root),
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # it wrote its page and CSV, and nothing else: no gradebook, no submission, no autograded/
    assert _files(root) == {**before, **_files(root, "similarity")}
    assert sorted(p.name for p in out.iterdir()) == ["similarity.csv", "similarity.html"]
    return root, out, done.stdout


def _files(root: Path, under: str = "") -> dict[str, tuple[int, int]]:
    """Every file below ``root`` (or its folder ``under``) with its size and modification time."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in (root / under).rglob("*") if p.is_file()}


PLANTED = {("own-1", "renamed-copy-of-own-1"), ("own-2", "reformatted-copy-of-own-2"), ("essay-copier", "own-3")}


def test_every_planted_copy_is_found_and_no_independent_pair(compared):
    root, out, stdout = compared
    rows = list(csv.DictReader((out / "similarity.csv").open(encoding="utf-8")))
    found = {tuple(sorted((r["student_a"], r["student_b"]))) for r in rows}
    assert found == PLANTED, rows
    essay = next(r for r in rows if r["student_b"] == "own-3" or r["student_a"] == "own-3")
    assert "C8_answer ~ concepts:C8_answer" in essay["matching_cells"]
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    # the terminal: the table of pairs, the page named, the unreadable notebook with its reason, no grade
    for a, b in PLANTED:
        assert re.search(rf"{re.escape(a)}\s+{re.escape(b)}", stdout), stdout
    assert str(out / "similarity.html") in stdout
    assert "broken" in stdout and "build.ipynb is not a notebook" in stdout
    assert_clean(stdout, "course similarity's output")


def test_the_page_shows_the_pairs_side_by_side_and_student_text_only_as_text(compared):
    if not have_chromium():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set CHROMIUM=/path/to/it)")
    _, out, _ = compared
    page = out / "similarity.html"
    assert_clean(page.read_text(encoding="utf-8"), "similarity.html")
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<script" not in dom.replace("&lt;script", "") and "<title>Similarity: transformer-block</title>" in dom
    text = re.sub(r"<[^>]+>", " ", dom)
    assert text.count("&lt;script&gt;document.title='ran'&lt;/script&gt;") == 2   # both sides of the essay pair
    assert "3 pairs at or over 0.5" in " ".join(text.split())
    assert dom.count('class="side-by-side"') >= 3
    assert "renamed-copy-of-own-1" in text and "broken" in text
    # opened in the browser: no script ran (the title is the page's), the essay's markup is text in both cells
    browser = Browser()
    try:
        browser.open(page.resolve().as_uri())
        assert browser.evaluate("document.title") == "Similarity: transformer-block"
        shown = browser.evaluate("[...document.querySelectorAll('pre')].map(e => e.textContent)"
                                 ".filter(t => t.includes(\"<script>document.title='ran'</script>\")).length")
        assert shown == 2
        assert browser.evaluate("document.querySelectorAll('script, img, iframe, a[href]').length") == 0
    finally:
        browser.close()


def test_the_page_shows_the_start_of_a_huge_cell_not_all_of_it(tmp_path):
    """A cell of megabytes (under the notebook caps) is shown as its first SHOWN_CHARS characters and
    how many more there are: the page repeats a cell for every pair it is in."""
    from autograder.reports.similarity import SHOWN_CHARS, Cell, CellMatch, Comparison, Pair, write_page

    huge = Cell("build", "B1_code", "code", "x = 1\n" * 500_000)
    small = Cell("build", "B1_code", "code", "x = 1\n")
    found = Comparison("toy", 0.5, [Pair("a", "b", 1.0, 10, (CellMatch(huge, small, 10, 1.0),))], 2, {}, 0, 1)
    page = write_page(found, tmp_path).read_text()
    assert len(page) < 4 * SHOWN_CHARS + 20_000
    assert f"{len(huge.source) - SHOWN_CHARS:,} more characters, not shown" in page
