"""Links in a student's markdown: only safe schemes survive; any other link is shown as text.

A markdown cell of a submission is rendered to HTML by nbconvert (``generate_feedback``, and
formgrader's manual-grading view) with mistune and *harmful protocols allowed*, so
``[x](javascript:...)`` would be a live link on the page a TA or a student opens. The HTML a
student writes is escaped by ``SanitizeStudentHTML`` (bleach); this module covers what bleach
cannot see, markdown's own links, images and autolinks (inline, reference-style, in any spelling).

Whether a link is safe is judged on the HTML that nbconvert's own markdown renderer makes of the
cell, the attribute values read as a browser reads them (entities decoded, tabs and newlines
removed, leading spaces and control characters stripped): an ``href`` or ``src`` keeps its link
when it is relative (no scheme) or ``http``, ``https`` or ``mailto`` (images also ``attachment:``,
the notebook's own pasted image). So every spelling the renderer accepts is covered, because it is
the renderer that is asked.

A cell with an unsafe link gets a backslash before the ``[`` or ``<`` that opens it (markdown's
escape: the character is shown as it is), so the link reads as the text the student typed; the
rest of the cell, safe links included, is kept. Which openers to escape is found by trying, and
the result is always checked again; a cell too large or too odd for that is shown whole as text.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
SAFE_IMAGE_SCHEMES = SAFE_SCHEMES | {"attachment"}
# Attributes whose value a browser follows or loads.
URL_ATTRIBUTES = frozenset({"href", "src", "srcset", "action", "formaction", "xlink:href", "poster", "background",
                            "data", "cite", "longdesc", "ping", "manifest", "codebase", "lowsrc", "dynsrc"})
# Openers tried one by one x the cell's length (about a second of rendering per 1,000,000), per
# notebook: past it, a cell with an unsafe link is shown whole as text.
MAX_WORK = 1_000_000
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")      # every ASCII punctuation character


def is_safe_url(value: str, image: bool = False) -> bool:
    """Whether a browser following ``value`` (an attribute's value, entities already decoded)
    stays on a safe scheme: relative, or http, https, mailto (and attachment for an image)."""
    url = re.sub(r"[\t\n\r]", "", value).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11"
                                              "\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f \x7f")
    m = SCHEME.match(url)
    if m is None:
        # No scheme: relative -- unless a colon comes before any '/', '?' or '#' (not a URL a
        # browser reads as relative everywhere, so not kept).
        head = re.split(r"[/?#]", url, maxsplit=1)[0]
        return ":" not in head
    return m.group(1).lower() in (SAFE_IMAGE_SCHEMES if image else SAFE_SCHEMES)


class _Links(HTMLParser):
    """The URL-valued attributes of an HTML fragment that are not safe."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.unsafe: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.lower() in URL_ATTRIBUTES and value is not None:
                if not is_safe_url(value, image=tag.lower() in ("img", "source", "picture")):
                    self.unsafe.append(value)

    handle_startendtag = handle_starttag


def _render(source: str) -> str:
    """``source`` as nbconvert's HTML exporter renders a markdown cell (attachments left as links)."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class Renderer(IPythonRenderer):
        def _embed_image_or_attachment(self, src: str) -> str:
            return src

    return MarkdownWithMath(renderer=Renderer(escape=False, exclude_anchor_links=True)).render(source)


def unsafe_links(source: str) -> list[str]:
    """The unsafe link and image targets of the markdown ``source`` as nbconvert renders it."""
    try:
        html = _render(source)
    except RecursionError:
        return ["(markdown too deeply nested to render)"]
    parser = _Links()
    parser.feed(html)
    parser.close()
    return parser.unsafe


def as_text(source: str) -> str:
    """``source`` shown exactly as typed: every ASCII punctuation character escaped."""
    return PUNCTUATION.sub(r"\\\1", source)


class Budget:
    """What is left of one notebook's ``MAX_WORK``."""

    def __init__(self, work: int = MAX_WORK):
        self.left = work


def safe_markdown(source: str, budget: Budget | None = None) -> str:
    """``source`` with every link whose target is not safe shown as text (see the module's doc)."""
    if not unsafe_links(source):
        return source
    budget = budget or Budget()
    # An opener is a '[' or '<' not already escaped (after an even run of backslashes).
    openers = [m.end() - 1 for m in re.finditer(r"\\*[\[<]", source) if (m.end() - 1 - m.start()) % 2 == 0]
    work = len(openers) * (len(source) + 100)
    if work <= budget.left:
        budget.left -= work
        escaped = set(openers)
        if not unsafe_links(_escape_at(source, escaped)):
            for pos in openers:          # give back every opener that can be given back safely
                trial = escaped - {pos}
                if not unsafe_links(_escape_at(source, trial)):
                    escaped = trial
            return _escape_at(source, escaped)
    text = as_text(source)
    if not unsafe_links(text):
        return text
    fence = "~" * max(3, 1 + max((len(m) for m in re.findall(r"~+", source)), default=0))
    return f"{fence}\n{source}\n{fence}"


def _escape_at(source: str, positions: set[int]) -> str:
    out, last = [], 0
    for pos in sorted(positions):
        out.append(source[last:pos])
        out.append("\\")
        last = pos
    out.append(source[last:])
    return "".join(out)
