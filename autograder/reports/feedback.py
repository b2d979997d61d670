"""One feedback page per student, made only from that student's entry in the results document.

The page says the total, the score of every question, and for each question that lost points
what went wrong: the failure messages of the checks (written for students: what was called, on
what kind of input, how far off) and, when the catalogue recognised the mistake, its name and
hint. It is built from the results alone, so it can only show what the results hold: never a
hidden check's code, its probe values or the reference solution (unlike nbgrader's own
``generate_feedback``, which copies the hidden test cells into the page).

Everything that comes from the results (student ids, messages, reasons) is HTML-escaped; the
page is one file with inline CSS, no script and no external resource, and a Content-Security-
Policy that would refuse to run a script even if one slipped in.
"""
from __future__ import annotations

import hashlib
import re
from html import escape
from pathlib import Path

# Words for the lesson's concepts (autograder.contract.CONCEPTS), shown next to question ids.
CONCEPT_WORDS = {
    "positions": "Positions and permutations",
    "norms": "Layer norm and RMSNorm",
    "mlp": "The MLP sublayer",
    "blocks": "Pre-norm and post-norm blocks",
    "params": "Counting parameters",
    "depth": "Residual streams and depth",
}

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

STYLE = """
:root { --ink: #1f2933; --muted: #52606d; --line: #d9e2ec; --soft: #f5f7fa; --accent: #1d4ed8;
        --good: #166534; --good-bg: #e7f6ec; --warn: #8a4b00; --warn-bg: #fff4e0;
        --bad: #9b1c1c; --bad-bg: #fdecec; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--soft); color: var(--ink);
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 880px; margin: 0 auto; padding: 32px 24px 48px; }
header p { margin: 0; color: var(--muted); }
h1 { font-size: 1.6rem; margin: 4px 0 20px; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 32px 0 12px; }
h3 { font-size: 1.05rem; margin: 0 0 8px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 20px 24px; }
.total { display: flex; flex-wrap: wrap; gap: 8px 32px; align-items: center; }
.total .number { font-size: 3rem; font-weight: 700; line-height: 1.1; color: var(--ink); white-space: nowrap; }
.total .number small { font-size: 1.5rem; font-weight: 600; color: var(--muted); }
.total .words { flex: 1 1 260px; }
.total .words p { margin: 2px 0; }
.bar { height: 10px; background: var(--line); border-radius: 5px; overflow: hidden; margin-top: 10px; }
.bar span { display: block; height: 100%; background: var(--accent); }
.notice { border-radius: 10px; padding: 16px 20px; margin: 16px 0; border: 1px solid; }
.notice.bad { background: var(--bad-bg); border-color: #f5b5b5; }
.notice.warn { background: var(--warn-bg); border-color: #f3cf94; }
.notice h2, .notice h3 { margin-top: 0; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line);
        border-radius: 10px; overflow: hidden; }
th, td { text-align: left; padding: 8px 14px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #eef2f7; font-weight: 600; }
tbody th { font-weight: 600; background: #fff; }
a { color: var(--accent); }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: 0; }
.tag { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .85rem; font-weight: 600; }
.tag.good { background: var(--good-bg); color: var(--good); }
.tag.warn { background: var(--warn-bg); color: var(--warn); }
.tag.bad { background: var(--bad-bg); color: var(--bad); }
.tag.manual { background: #e8eefc; color: #1e3a8a; }
.question { margin: 14px 0; }
.question .meta { color: var(--muted); margin: -4px 0 10px; font-size: .95rem; }
.mistake { background: var(--warn-bg); border-left: 4px solid #d97706; padding: 10px 14px; margin: 10px 0;
           border-radius: 0 8px 8px 0; }
.mistake p { margin: 4px 0; }
ul.checks { list-style: none; padding: 0; margin: 8px 0 0; }
ul.checks li { padding: 8px 0; border-top: 1px solid var(--line); }
ul.checks li:first-child { border-top: 0; }
.check-id { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: .9rem; }
.lost { color: var(--bad); font-weight: 600; white-space: nowrap; }
.kind { color: var(--muted); font-size: .9rem; }
.message { display: block; margin-top: 2px; overflow-wrap: anywhere; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: .92em; }
footer { color: var(--muted); font-size: .9rem; margin-top: 36px; }
ul.plain { margin: 6px 0; padding-left: 20px; }
ul.plain li { overflow-wrap: anywhere; }
"""


def page(student: str, result: dict, assignment: str = "transformer-block") -> str:
    """The feedback page of ``student`` (their entry of the results document), as HTML text."""
    questions = result.get("questions") or {}
    failed = result.get("status") != "graded"
    parts = [_head(f"Feedback for {student}: {assignment}"), "<main>",
             "<header>", f"<p>{_e(assignment)} · autograded feedback</p>",
             f"<h1>Feedback for {_e(student)}</h1>", "</header>",
             _total(result, questions, failed)]
    if result.get("reason"):
        parts.append(_reason(result["reason"], result.get("status")))
    if questions and not failed:    # a failed submission's questions all repeat its reason
        parts.append(_table(questions))
        parts.append(_lost(questions))
    parts.append(_cell_errors(result.get("load_errors") or {}))
    parts.append(_notes(result.get("flags") or []))
    parts.append("<footer><p>Tests marked <em>hidden</em> use inputs that are not in your notebook; their "
                 "messages say what was tried and how far off the answer was, without giving the expected "
                 "values away. Questions graded by hand are added to your grade by a TA.</p></footer>")
    parts.append("</main></body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def write_pages(results: dict, folder: Path) -> list[Path]:
    """Write ``<folder>/<student>.html`` for every student (file names made safe); return the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    assignment = results.get("assignment", "")
    written, used = [], set()
    for student, result in results.get("students", {}).items():
        name = safe_name(str(student))
        while name.lower() in used:     # two ids that differ only in case, on a case-blind disk
            name = safe_name(name + "~")
        used.add(name.lower())
        path = folder / f"{name}.html"
        path.write_text(page(str(student), result, assignment), encoding="utf-8")
        written.append(path)
    return written


def safe_name(student: str) -> str:
    """A file name (without extension) for ``student`` that stays inside its folder.

    Letters, digits, ``.``, ``_`` and ``-`` are kept; anything else, a leading dot, an empty name or
    a name the reports use (``report``, ``index``) gets a short digest of the id appended, so two
    different ids never share a file.
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", student).lstrip(".")[:80]
    if name != student or not name or name.lower() in ("report", "index"):
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        name = f"{name or 'student'}-{digest}"
    return name


# ---- pieces -------------------------------------------------------------------------------

def _head(title: str, extra_style: str = "") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta name=\"referrer\" content=\"no-referrer\"><title>{_e(title)}</title>"
            f"<style>{STYLE}{extra_style}</style></head><body>")


def _total(result, questions, failed) -> str:
    score, max_score = result.get("score") or 0.0, result.get("max_score") or 0.0
    manual = [(qid, q.get("max_score")) for qid, q in questions.items() if q.get("manual")]
    if not manual:
        manual = [(qid, None) for qid in result.get("needs_manual_grade") or []]
    lines = [f"<p><strong>{_num(score)} / {_num(max_score)} autograded points</strong>"
             + (" (nothing could be graded)" if failed else "") + "</p>"]
    if manual:
        lines.append("<p>" + _e(_manual_words(manual)) + "</p>")
    lost = [qid for qid, q in questions.items() if _lost_points(q)]
    if lost and not failed:
        links = [f"<a href=\"#{_anchor(qid)}\">{_e(qid)}</a>" for qid in lost]
        lines.append(f"<p>Points were lost on {_join(links)}: see below for what went wrong.</p>")
    elif questions and not failed:
        lines.append("<p>Full marks on every autograded question.</p>")
    share = 0.0 if not max_score else max(0.0, min(1.0, float(score) / float(max_score)))
    return (f"<section class=\"card total\" aria-label=\"Total\">"
            f"<div class=\"number\">{_num(score)} <small>/ {_num(max_score)}</small></div>"
            f"<div class=\"words\">{''.join(lines)}"
            f"<div class=\"bar\" role=\"img\" aria-label=\"{share:.0%} of the autograded points\">"
            f"<span style=\"width: {share * 100:.1f}%\"></span></div></div></section>")


def _manual_words(manual) -> str:
    parts = [f"{qid} ({_num(points)} points)" if points is not None else str(qid) for qid, points in manual]
    verb = "is" if len(parts) == 1 else "are"
    return f"{_join(parts)} {verb} graded by hand by a TA and not included in this total."


def _reason(reason: str, status: str) -> str:
    failed = status != "graded"
    if status == "grader-error":
        title = "We could not grade this submission"
        advice = ("This is a problem on our side, not in your notebooks: your TA has been told and will grade "
                  "it again. You do not need to resubmit.")
    elif failed:
        title = "We could not grade this submission"
        advice = ("Check that you submitted both notebooks, saved from Jupyter with their original names, "
                  "and resubmit; ask your TA if you are not sure what went wrong.")
    else:
        title = "Part of your submission could not be read"
        advice = "The questions of that notebook scored no points: check the file and resubmit it."
    items = "".join(f"<li>{_e(part)}</li>" for part in str(reason).split("; ") if part.strip())
    return (f"<section class=\"notice {'bad' if failed else 'warn'}\" role=\"alert\"><h2>{title}</h2>"
            f"<p>What we found:</p><ul class=\"plain\">{items}</ul><p>{advice}</p></section>")


def _table(questions: dict) -> str:
    from autograder.grader_side.contract import QUESTIONS

    rows = []
    for qid, q in questions.items():
        meta = QUESTIONS.get(qid)
        topic = f"{CONCEPT_WORDS.get(meta.concept, meta.concept)} ({meta.notebook} notebook)" if meta else ""
        if q.get("manual") or q.get("score") is None:
            score, tag = f"– / {_num(q.get('max_score'))}", "<span class=\"tag manual\">graded by hand</span>"
        else:
            got, top = float(q["score"]), float(q.get("max_score") or 0)
            score = f"{_num(got)} / {_num(top)}"
            if got >= top:
                tag = "<span class=\"tag good\">full marks</span>"
            elif got > 0:
                tag = f"<span class=\"tag warn\">lost {_num(top - got)}</span>"
            else:
                tag = f"<span class=\"tag bad\">lost {_num(top - got)}</span>"
        label = f"<a href=\"#{_anchor(qid)}\">{_e(qid)}</a>" if _lost_points(q) else _e(qid)
        rows.append(f"<tr><th scope=\"row\">{label}</th><td>{_e(topic)}</td>"
                    f"<td class=\"num\">{score}</td><td>{tag}</td></tr>")
    return ("<h2>Questions</h2><table><thead><tr><th scope=\"col\">Question</th><th scope=\"col\">Topic</th>"
            "<th scope=\"col\" class=\"num\">Points</th><th scope=\"col\">Result</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _lost(questions: dict) -> str:
    cards = []
    for qid, q in questions.items():
        if not _lost_points(q):
            continue
        got, top = float(q["score"]), float(q.get("max_score") or 0)
        feedback = [str(line) for line in q.get("feedback") or []]
        body = []
        if q.get("misconception"):
            body.append(_mistake(q["misconception"]))
        failing = [row for row in q.get("checks") or [] if not row.get("passed")]
        if failing:
            body.append("<ul class=\"checks\">" + "".join(_checks(rows) for rows in _by_message(failing)) + "</ul>")
        else:
            others = feedback[1:] if q.get("misconception") else feedback
            if others:
                body.append("<ul class=\"checks\">" + "".join(
                    f"<li><span class=\"message\">{_message(line)}</span></li>" for line in others) + "</ul>")
        title = f"<h3>{_e(qid)}: {_num(got)} of {_num(top)} points</h3>"
        cards.append(f"<section class=\"card question\" id=\"{_anchor(qid)}\">{title}{''.join(body)}</section>")
    if not cards:
        return ""
    return "<h2>Where points were lost</h2>" + "".join(cards)


def _mistake(mistake: dict) -> str:
    description, hint = mistake.get("description") or "", mistake.get("hint") or ""
    named = f" <span class=\"kind\">({_e(mistake['id'])})</span>"
    out = [f"<div class=\"mistake\"><p><strong>This looks like a known mistake</strong>{named}</p>"]
    if description:
        out.append(f"<p>{_e(description.strip())}</p>")
    if hint:
        out.append(f"<p><strong>Hint:</strong> {_e(hint.strip())}</p>")
    return "".join(out) + "</div>"


def _by_message(rows: list[dict]) -> list[list[dict]]:
    """Failed checks grouped by message (in order): a missing name fails every check the same way."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(str(row.get("message") or ""), []).append(row)
    return list(groups.values())


def _checks(rows: list[dict]) -> str:
    """One item for failed checks that share a message."""
    ids = ", ".join(f"<span class=\"check-id\">{_e(row.get('id', ''))}</span>" for row in rows)
    hidden = sum(1 for row in rows if row.get("hidden"))
    if len(rows) == 1:
        kind = "hidden test" if hidden else "test in your notebook"
    else:
        kind = ("hidden tests" if hidden == len(rows) else "tests in your notebook" if not hidden
                else f"{len(rows) - hidden} in your notebook, {hidden} hidden")
    lost = sum(float(row.get("max_score") or 0) - float(row.get("score") or 0) for row in rows)
    message = rows[0].get("message") or "this test did not pass"
    return (f"<li>{ids} <span class=\"kind\">({kind})</span> <span class=\"lost\">−{_num(lost)}</span>"
            f"<span class=\"message\">{_message(message)}</span></li>")


def _cell_errors(load_errors: dict) -> str:
    items = [f"<li><span class=\"mono\">{_e(notebook)}.ipynb</span>: {_e(line)}</li>"
             for notebook, lines in load_errors.items() for line in lines or []]
    if not items:
        return ""
    return ("<section class=\"notice warn\"><h2>Cells that raised an error</h2>"
            "<p>While your notebooks ran from top to bottom, these cells stopped with an error; what they "
            "were meant to define may be missing, which can cost points in later questions too.</p>"
            f"<ul class=\"plain\">{''.join(items)}</ul></section>")


def _notes(flags: list) -> str:
    if not flags:
        return ""
    items = "".join(f"<li>{_e(flag)}</li>" for flag in flags)
    return ("<section class=\"card\"><h2 style=\"margin-top:0\">Notes for your TA</h2>"
            "<p>The grader noted these about your submission. They did not change the points above "
            "(tests always run from the original notebook); a TA may look at them.</p>"
            f"<ul class=\"plain\">{items}</ul></section>")


# ---- helpers --------------------------------------------------------------------------------

def _lost_points(q: dict) -> bool:
    if q.get("manual") or q.get("score") is None:
        return False
    return float(q["score"]) < float(q.get("max_score") or 0)


def _anchor(qid) -> str:
    return "q-" + re.sub(r"[^A-Za-z0-9_-]", "_", str(qid))


def _message(text) -> str:
    """Escaped text, with `names` in backticks (as the checks write them) shown as code."""
    return re.sub(r"`([^`]{1,200})`", r"<code>\1</code>", _e(text))


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def _num(value) -> str:
    if value is None:
        return "–"
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return _e(value)


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
