"""The class report for TAs: one HTML page and three figures, made from the results document.

``write_report`` writes ``report.html`` with ``scores_per_question.png`` (how many submissions
earned full, partial or no marks per question), ``misconceptions.png`` (how often each catalogued
mistake was recognised) and ``totals.png`` (histogram of totals). The page embeds the figures as
well, so it can be mailed or moved on its own. It shows the class size and totals, the grading
time (and nbgrader's, when given), the isolation the grader ran under, the misconceptions with
their descriptions and hints, the answers sent to a TA for review, and every submission a TA
should look at.

The page is ``templates/report.html.j2`` rendered with autoescaping (see ``pages``); the same
results give the same bytes (no timestamp, fixed sizes, PNGs without metadata). Figures use
matplotlib's Agg canvas directly: no display, no pyplot state.
"""
from __future__ import annotations

import base64
import io
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.grader_side.results import QuestionResult, Results, StudentResult, as_results
from autograder.reports import pages

FIGURES = ("scores_per_question.png", "misconceptions.png", "totals.png")

# Okabe-Ito colours: told apart with every common colour-vision deficiency.
FULL, PARTIAL, NONE, AWAITING = "#009E73", "#F0E442", "#D55E00", "#56B4E9"
BLUE, INK, GRID = "#0072B2", "#1f2933", "#d9e2ec"


def write_report(results: Results | Mapping[str, Any], folder: Path, nbgrader_seconds: float | None = None) -> Path:
    """Write ``<folder>/report.html`` and its figures; return the page's path. ``results``: a
    ``Results``, or the results document ``autograde`` returns."""
    results = as_results(results)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stats = Stats(results)
    pngs = {"scores_per_question.png": _plot_questions(stats), "misconceptions.png": _plot_mistakes(stats),
            "totals.png": _plot_totals(stats)}
    for name, data in pngs.items():
        (folder / name).write_bytes(data)
    path = folder / "report.html"
    path.write_text(_page(results, stats, pngs, nbgrader_seconds), encoding="utf-8")
    return path


# ---- numbers ------------------------------------------------------------------------------------

@dataclass
class Mistake:
    """A catalogued mistake as the report counts it."""
    question: str
    description: str
    hint: str
    students: list[str] = field(default_factory=list)


class Stats:
    """What the report shows, computed once from the results."""

    def __init__(self, results: Results | Mapping[str, Any]):
        results = as_results(results)
        self.assignment = str(results.assignment)
        self.students: dict[str, StudentResult] = results.students
        self.graded = {sid: r for sid, r in self.students.items() if r.status == "graded"}
        self.failed = {sid: r for sid, r in self.students.items() if r.status != "graded"}
        self.max_score = max((float(r.max_score or 0) for r in self.students.values()), default=0.0)
        self.totals = [float(r.score or 0) for r in self.graded.values()]

        # questions in the contract's order, then any the results add
        seen = Results(self.assignment, {}, 1, self.graded).question_order()
        self.questions: dict[str, dict[str, Any]] = {}
        for qid in seen:
            rows = [r.questions[qid] for r in self.graded.values() if qid in r.questions]
            auto = [q for q in rows if not q.manual and q.score is not None]
            if not auto:
                continue
            top = max(float(q.max_score or 0) for q in auto)
            scores = [float(q.score) for q in auto if q.score is not None]
            # points waiting for a TA's review are not lost: such a question is counted apart
            lost = [q for q in auto if pages.points_lost(q)]
            kinds = Counter(_kind(q) for q in auto)
            self.questions[qid] = {
                "max": top, "scores": scores, "n": len(scores),
                **{kind: kinds[kind] for kind in ("full", "awaiting", "partial", "none")},
                "named": sum(1 for q in lost if q.misconception),
                "unnamed": sum(1 for q in lost if not q.misconception),
                "topic": pages.topic(qid, auto[0]),
            }

        # misconceptions: count, question, description and hint
        self.mistakes: Counter[str] = Counter()
        self.mistake_info: dict[str, Mistake] = {}
        for sid, r in self.graded.items():
            for qid, q in r.questions.items():
                mistake = q.misconception
                if not mistake:
                    continue
                mid = str(mistake.id)
                self.mistakes[mid] += 1
                info = self.mistake_info.setdefault(mid, Mistake(str(qid), mistake.description, mistake.hint))
                info.students.append(str(sid))
        order = list(self.questions)
        self.mistake_order = sorted(self.mistakes, key=lambda m: (-self.mistakes[m], _index(
            order, self.mistake_info[m].question), m))

        # hand grading: question -> [points, how many submissions]; answers sent to a TA for review
        self.manual: dict[str, list[Any]] = {}
        self.reviews: list[dict[str, str]] = []
        for sid, r in self.students.items():
            sent = [{"student": str(sid), "question": str(qid), "check": str(row.id), "answer": str(row.review)}
                    for qid, row in r.checks() if row.review]
            asked = {str(qid) for qid, row in r.checks() if row.review}
            for grade in pages.to_grade_by_hand(r):
                if not grade.review:
                    self.manual.setdefault(grade.question, [grade.points, 0])[1] += 1
                elif grade.question not in asked:
                    asked.add(grade.question)
                    sent.append({"student": str(sid), "question": grade.question, "check": "", "answer": ""})
            self.reviews += sent

        self.flagged: list[tuple[str, StudentResult, list[tuple[str, str]]]] = []
        for sid, r in self.students.items():
            items: list[tuple[str, str]] = []
            if r.status != "graded":
                items.append(("failed", str(r.reason or "no reason recorded")))
            elif r.reason:
                items.append(("partly unreadable", str(r.reason)))
            items += [("flag", str(flag)) for flag in r.flags]
            items += [("nbgrader disagrees", str(line)) for line in r.disagreements]
            if items:
                self.flagged.append((str(sid), r, items))

    @property
    def mean(self):
        return statistics.fmean(self.totals) if self.totals else None

    @property
    def median(self):
        return statistics.median(self.totals) if self.totals else None


def _kind(question: QuestionResult) -> str:
    """How one submission did on an autograded question: full marks, awaiting a TA's review (some
    of its points wait for one), some points or no points."""
    score = float(question.score or 0)   # (an autograded question: scored)
    if score >= float(question.max_score or 0):
        return "full"
    if pages.points_awaiting(question) > 0:
        return "awaiting"
    return "partial" if score > 0 else "none"


def _index(order, item):
    return order.index(item) if item in order else len(order)


# ---- figures ----------------------------------------------------------------------------------

def _figure(width, height):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None}, facecolor="white")
    return buf.getvalue()


def _style(ax):
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#9aa5b1")
    ax.tick_params(colors=INK, labelsize=10)
    ax.set_axisbelow(True)


def _rc():
    import matplotlib

    return matplotlib.rc_context({"font.family": "DejaVu Sans", "font.size": 10, "text.color": INK,
                                  "axes.labelcolor": INK, "axes.titlesize": 12, "axes.titleweight": "bold",
                                  "svg.hashsalt": "report", "path.simplify": True})


def _plot_questions(stats: Stats) -> bytes:
    qids = list(stats.questions)
    with _rc():
        fig = _figure(9, 0.42 * max(len(qids), 3) + 1.6)
        ax = fig.add_subplot()
        _style(ax)
        if not qids:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no graded submission", ha="center", va="center", transform=ax.transAxes)
        else:
            y = list(range(len(qids)))[::-1]
            left = [0.0] * len(qids)
            parts = [("full", FULL, "full marks"), ("partial", PARTIAL, "some points"), ("none", NONE, "no points")]
            if any(stats.questions[q]["awaiting"] for q in qids):
                parts.insert(1, ("awaiting", AWAITING, "awaiting review"))
            for key, colour, label in parts:
                share = [100 * stats.questions[q][key] / stats.questions[q]["n"] for q in qids]
                ax.barh(y, share, left=left, color=colour, label=label, height=0.7, edgecolor="white",
                        linewidth=1.0)
                left = [a + b for a, b in zip(left, share, strict=True)]
            for yy, qid in zip(y, qids, strict=True):
                q = stats.questions[qid]
                mean = 100 * statistics.fmean(q["scores"]) / q["max"] if q["max"] else 0
                ax.text(101.5, yy, f"mean {mean:.0f}%", va="center", fontsize=9, color=INK)
            ax.set_yticks(y, [f"{qid} ({stats.questions[qid]['max']:g} pts)" for qid in qids], parse_math=False)
            ax.set_xlim(0, 100)
            ax.set_xlabel("share of graded submissions (%)")
            ax.xaxis.grid(True, color=GRID, linewidth=0.8)
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(parts), frameon=False, borderaxespad=0.2)
            _title(fig, f"Points per question ({len(stats.graded)} graded submissions)")
        fig.tight_layout()
        return _png(fig)


def _plot_mistakes(stats: Stats) -> bytes:
    ids = stats.mistake_order[:25]
    with _rc():
        fig = _figure(10, 0.62 * max(len(ids), 2) + 1.3)
        ax = fig.add_subplot()
        _style(ax)
        if not ids:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no known mistake was recognised in this class", ha="center", va="center",
                    transform=ax.transAxes, fontsize=12)
        else:
            y = list(range(len(ids)))[::-1]
            counts = [stats.mistakes[m] for m in ids]
            ax.barh(y, counts, color=BLUE, height=0.65)
            for yy, count in zip(y, counts, strict=True):
                ax.text(count, yy, f" {count}", va="center", fontsize=9)
            labels = [m + ("\n" + _short(stats.mistake_info[m].description, 58)
                           if stats.mistake_info[m].description else "") for m in ids]
            ax.set_yticks(y, labels, parse_math=False)
            ax.set_xlim(0, max(counts) * 1.12 + 0.5)
            ax.xaxis.get_major_locator().set_params(integer=True)
            ax.xaxis.grid(True, color=GRID, linewidth=0.8)
            ax.set_xlabel("submissions")
            more = f" (top {len(ids)} of {len(stats.mistakes)})" if len(stats.mistakes) > len(ids) else ""
            _title(fig, f"Known mistakes recognised{more}")
        fig.tight_layout()
        return _png(fig)


def _plot_totals(stats: Stats) -> bytes:
    top = stats.max_score or 100.0
    with _rc():
        fig = _figure(9, 3.8)
        ax = fig.add_subplot()
        _style(ax)
        width = 5.0 if top >= 40 else 1.0
        edges = [i * width for i in range(int(top // width) + 1)]
        if edges[-1] < top:
            edges.append(top)
        ax.hist(stats.totals, bins=edges, color=BLUE, edgecolor="white", linewidth=0.8)
        if stats.totals:
            ax.axvline(stats.mean, color=INK, linestyle="--", linewidth=1.4, label=f"mean {stats.mean:.1f}")
            ax.axvline(stats.median, color=NONE, linestyle=":", linewidth=1.8, label=f"median {stats.median:g}")
            ax.legend(frameon=False, loc="upper left")
        ax.set_xlim(0, top)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.yaxis.grid(True, color=GRID, linewidth=0.8)
        ax.set_xlabel(f"autograded total before any late penalty (out of {top:g})")
        ax.set_ylabel("submissions")
        _title(fig, f"Totals of the {len(stats.totals)} graded submissions")
        fig.tight_layout()
        return _png(fig)


def _title(fig, text: str) -> None:
    fig.suptitle(text, x=0.01, ha="left", fontsize=12, fontweight="bold", color=INK)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ---- page -------------------------------------------------------------------------------------

def _page(results: Results, stats: Stats, pngs: dict[str, bytes], nbgrader_seconds: float | None) -> str:
    isolation = results.isolation
    return pages.render(
        "report.html.j2", styles=("page.css", "report.css"), assignment=stats.assignment,
        n=len(stats.students), cards=_cards(results, stats, nbgrader_seconds),
        flagged=[{"student": sid, "status": "failed" if r.status != "graded" else "graded",
                  "score": r.score, "max_score": r.max_score, "notes": notes}
                 for sid, r, notes in stats.flagged],
        manual=[(qid, points, count) for qid, (points, count) in stats.manual.items()], reviews=stats.reviews,
        figures=[(name, "data:image/png;base64," + base64.b64encode(data).decode("ascii"))
                 for name, data in pngs.items()],
        mistakes=[{"id": mid, "count": stats.mistakes[mid], "question": stats.mistake_info[mid].question,
                   "description": stats.mistake_info[mid].description, "hint": stats.mistake_info[mid].hint,
                   "students": sorted(stats.mistake_info[mid].students)} for mid in stats.mistake_order],
        questions={qid: {**q, "mean": round(statistics.fmean(q["scores"]), 2)} for qid, q in stats.questions.items()},
        isolation=[(str(key).replace("_", " "), list(value) if isinstance(value, (list, tuple)) else None, value)
                   for key, value in isolation.items()])


def _cards(results: Results, stats: Stats, nbgrader_seconds: float | None) -> list[tuple[str, str, str]]:
    """(label, number, detail) of each summary card."""
    num = pages.num
    seconds = results.seconds
    workers = results.workers
    n = len(stats.students)
    cards = [("submissions", f"{n}", f"{len(stats.graded)} graded, {len(stats.failed)} failed"),
             ("mean total", num(round(stats.mean, 1)) if stats.mean is not None else "–",
              f"of {num(stats.max_score)} autograded points, before any late penalty (graded submissions)"),
             ("median total", num(stats.median) if stats.median is not None else "–",
              f"of {num(stats.max_score)} autograded points, before any late penalty"),
             ("grading time", f"{num(seconds)} s",
              f"with {num(workers)} worker{'s' if workers != 1 else ''}"
              + (f", {float(seconds) / n:.2f} s per submission" if n and seconds is not None else ""))]
    if nbgrader_seconds is not None:
        detail = "nbgrader autograde on the same class"
        if seconds:
            ratio = float(nbgrader_seconds) / float(seconds)
            detail += (f": course autograde was {ratio:.1f}× faster" if ratio >= 1
                       else f": course autograde was {1 / ratio:.1f}× slower")
        cards.append(("nbgrader time", f"{float(nbgrader_seconds):.1f} s", detail))
    return cards
