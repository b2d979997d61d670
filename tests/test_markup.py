"""Links in a student's markdown (``grader_side.markup``): every spelling of an unsafe target that
nbconvert's renderer turns into a link or an image becomes text; safe links stay links."""
from __future__ import annotations

import re

import nbformat
import pytest

from autograder.grader_side import markup
from autograder.nbgrader.preprocessors.sanitize_html import SanitizeStudentHTML

JS = "alert(1)"
UNSAFE = [
    f"[x](javascript:{JS})",
    f"[x](JaVaScRiPt:{JS})",
    f"[x](&#106;avascript:{JS})",
    f"[x](&#x6A;avascript:{JS})",
    f"[x](javascript&colon;{JS})",
    f"[x](javascript\\:{JS})",
    f"[x](  javascript:{JS})",
    f"[x](&#9;javascript:{JS})",
    f"[x](java&#10;script:{JS})",
    f"[x](<javascript:{JS}>)",
    f'[x](javascript:{JS} "a title")',
    "[x](vbscript:msgbox)",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](data:image/svg+xml;base64,PHN2Zy8+)",
    f"[x][r]\n\n[r]: javascript:{JS}",
    f"[x]\n\n[X]: javascript:{JS}",
    f"[x][]\n\n[x]: <javascript:{JS}>",
    f"<javascript:{JS}>",
    f"<JAVASCRIPT:{JS}>",
    f"- item\n  > [x](javascript:{JS})",
    f"| a |\n|---|\n| [x](javascript:{JS}) |",
    f"[outer [inner](javascript:{JS})](https://example.org)",
    f"[x](https://example.org) [y](javascript:{JS}) [z](other.html)",
    f"\\\\[x](javascript:{JS})",
    f"[![i](https://example.org/a.png)](javascript:{JS})",
]
SAFE = ["[x](https://example.org/a?b=c#d)", "[x](http://example.org)", "[x](other.html)", "[x](../up/page.html#s)",
        "[x](#anchor)", "[x](mailto:ta@example.org)", "<https://example.org>", "https://example.org bare",
        "![pasted](attachment:image.png)", "[x](a/b:c)", "text with a colon: and `code[0]`"]


@pytest.mark.parametrize("source", UNSAFE)
def test_an_unsafe_link_becomes_text(source):
    assert markup.unsafe_links(source), "the renderer makes a live link of it (else the case tests nothing)"
    safe = markup.safe_markdown(source)
    assert markup.unsafe_links(safe) == []
    html = markup._render(safe)
    assert "x" in re.sub(r"<[^>]+>", "", html) or "javascript" in html.lower(), "the link's text is still shown"


@pytest.mark.parametrize("source", SAFE)
def test_a_safe_link_is_left_alone(source):
    assert markup.unsafe_links(source) == []
    assert markup.safe_markdown(source) == source


def test_only_the_unsafe_link_of_a_cell_is_touched():
    source = f"# Answer\n\nSee [the notes](https://example.org/notes) and [x](javascript:{JS}), and `a[0]`."
    safe = markup.safe_markdown(source)
    html = markup._render(safe)
    assert '<a href="https://example.org/notes">the notes</a>' in html
    assert f"[x](javascript:{JS})" in html and "<code>a[0]</code>" in html and "<h1" in html


@pytest.mark.parametrize("url", ["javascript:x", " JavaScript:x", "\x01javascript:x", "java\tscript:x",
                                 "java\nscript:x", "data:x", "vbscript:x", "file:///etc/passwd", "foo:bar"])
def test_unsafe_urls(url):
    assert not markup.is_safe_url(url)


@pytest.mark.parametrize("url", ["https://e.org", "HTTP://e.org", "mailto:a@b", "a.html", "/x", "#y", "?q=1",
                                 "a/b:c", "//e.org/x"])
def test_safe_urls(url):
    assert markup.is_safe_url(url)


def test_a_huge_hostile_cell_is_shown_as_text_quickly():
    import time

    source = "[a](b) " * 20000 + f"[x](javascript:{JS})"
    started = time.monotonic()
    safe = markup.safe_markdown(source)
    assert time.monotonic() - started < 10
    assert markup.unsafe_links(safe) == []


def test_the_sanitizer_makes_links_text_in_markdown_cells_and_markdown_outputs():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"[x](javascript:{JS}) [ok](https://example.org)"),
                nbformat.v4.new_code_cell("1", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/markdown": f"[y](javascript:{JS})", "text/plain": "y"})])]
    locked = nbformat.v4.new_markdown_cell(f"[course](javascript:{JS})")
    locked.metadata["nbgrader"] = {"locked": True, "grade_id": "given", "grade": False, "solution": False,
                                   "schema_version": 3}
    nb.cells.append(locked)
    nb, _ = SanitizeStudentHTML().preprocess(nb, {})
    assert markup.unsafe_links(nb.cells[0].source) == [] and "https://example.org" in nb.cells[0].source
    assert markup.unsafe_links(nb.cells[1].outputs[0].data["text/markdown"]) == []
    assert nb.cells[2].source == f"[course](javascript:{JS})", "the course's own cells keep their markup"
