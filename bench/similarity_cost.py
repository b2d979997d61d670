"""Benchmark: what ``course similarity`` costs on a class of 1,000 (not a timed test).

    .venv/bin/python bench/similarity_cost.py [--students 1000] [--copies 20] [--seed 0]

A synthetic class: every student answers 16 code cells and one essay; each cell is a dozen lines
drawn from a pool of statement shapes with the student's own names and numbers (so independent
students share short idioms, as real ones do), below the course's given stub. ``--copies``
students hand in another student's work with every name changed and the comments rewritten.
Prints the time to fingerprint the class, to find the pairs (inverted index, common fingerprints
ignored, pairs counted only among students who share one), to write the page and CSV, how many
pairs shared any fingerprint against the n(n-1)/2 a full comparison would score, and whether every
planted copy was found and nothing else.

Goal: a class of 1,000 in well under a minute on one core.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.reports import similarity as sim  # noqa: E402

SHAPES = [
    "{a} = {b} @ {c}.transpose(-2, -1) / {n}",
    "{a} = torch.softmax({b}, dim=-1)",
    "if {a} is not None:\n    {b} = {b}.masked_fill(~{a}, float('-inf'))",
    "{a} = {b}.mean(dim=-1, keepdim=True)",
    "{a} = (({b} - {c}) ** 2).mean(dim=-1)",
    "for {a} in range({n}):\n    {b} = {b} + {c}[{a}] * {n}",
    "{a} = [{b} * {n} for {b} in {c}]",
    "{a} = nn.Linear({b}, {c}, bias=False)",
    "return {a}({b}) + {c}",
    "{a} = {b}.reshape({c}, -1, {n})",
    "while {a} < {n}:\n    {a} += {b}",
    "{a}, {b} = {c}.chunk({n}, dim=-1)",
    "{a} = torch.cat([{b}, {c}], dim={n})",
    "assert {a}.shape == {b}.shape, {c}",
    "{a} = max({b}, {c}) - min({b}, {n})",
]
WORDS = ("the a model layer linear map affine depth width matrix bias weight function stack nonlinear "
         "activation hidden output input token attention head residual norm scale collapse product").split()
STUB = ('def task_{i}(x, y, z):\n    """Compute task {i} from x, y and z."""\n'
        '    raise NotImplementedError("write this")\n')


def _name(rng: random.Random) -> str:
    rest = rng.choices("abcdefghijklmnopqrstuvwxyz_", k=rng.randint(0, 6))
    return rng.choice("abcdefghkmpqrstuvwxyz") + "".join(rest)


def _cell(rng: random.Random, i: int) -> str:
    lines = [f"def task_{i}(x, y, z):"]
    for _ in range(rng.randint(8, 14)):
        shape = rng.choice(SHAPES)
        code = shape.format(a=_name(rng), b=_name(rng), c=_name(rng), n=rng.randint(1, 9))
        lines += ["    " + line for line in code.splitlines()]
        if rng.random() < 0.3:
            lines.append(f"    # {' '.join(rng.choices(WORDS, k=5))}")
    return "\n".join(lines) + "\n"


def _essay(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(60, 120))).capitalize() + "."


def _disguise(code: str, rng: random.Random) -> str:
    names = {n for n in re.findall(r"\b[a-z_][a-z_]*\b", code)} - {"def", "return", "if", "is", "not", "none",
                                                                   "for", "in", "range", "while", "assert",
                                                                   "max", "min", "float", "dim", "bias", "x", "y", "z"}
    renamed = {n: f"v{rng.randint(0, 10**6)}_{n}" for n in names if n not in ("torch", "nn", "keepdim")}
    code = re.sub(r"\b[a-z_][a-z_]*\b", lambda m: renamed.get(m.group(), m.group()), code)
    return re.sub(r"#.*", "# changed", code)


def synthetic_class(students: int, copies: int, seed: int):
    """(submissions, the course's given cells, the planted pairs)."""
    rng = random.Random(seed)
    given = [sim.Cell("nb", f"T{i}", "code", STUB.format(i=i)) for i in range(16)]
    subs = []
    for s in range(students - copies):
        cells = [sim.Cell("nb", f"T{i}", "code", STUB.format(i=i) + "\n" + _cell(rng, i)) for i in range(16)]
        cells.append(sim.Cell("nb", "essay", "text", _essay(rng)))
        subs.append(sim.Submission(f"s{s:04d}", cells))
    planted = set()
    for c in range(copies):
        source = subs[rng.randrange(students - copies)]
        cells = [sim.Cell(x.notebook, x.label, x.kind, _disguise(x.source, rng) if x.kind == "code" else x.source)
                 for x in source.cells]
        subs.append(sim.Submission(f"copy{c:03d}", cells))
        planted.add(tuple(sorted((source.student, f"copy{c:03d}"))))
    return subs, given, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    subs, given, planted = synthetic_class(args.students, args.copies, args.seed)
    tokens = sum(len(sim.code_tokens(c.source)) for c in subs[0].cells)
    print(f"class: {len(subs)} students, {sum(len(s.cells) for s in subs)} cells, about {tokens} code tokens each")

    started = time.perf_counter()
    course = sim.boilerplate(given)
    prints = {s.student: set().union(*(sim.cell_fingerprints(c) - course for c in s.cells)) for s in subs}
    fingerprinted = time.perf_counter()
    pairs, ignored, candidates = sim.pairs(prints)
    paired = time.perf_counter()
    result = sim.compare("synthetic", subs, given)
    compared = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sim.write_page(result, Path(tmp))
    written = time.perf_counter()

    n = len(subs)
    found = {tuple(sorted((p.a, p.b))) for p in result.pairs}
    print(f"fingerprints: {fingerprinted - started:.2f} s ({sum(map(len, prints.values())) / n:.0f} a student)")
    print(f"pairs: {paired - fingerprinted:.2f} s; {candidates} pairs shared a rare fingerprint and were scored "
          f"(of {n * (n - 1) // 2} pairs in the class), {len(ignored)} common fingerprints ignored")
    print(f"course similarity's whole comparison (compare: fingerprints, pairs, matching cells): "
          f"{compared - paired:.2f} s; page and CSV: {written - compared:.2f} s")
    print(f"planted copies found: {len(found & planted)} of {len(planted)}; other pairs listed: {len(found - planted)}")


if __name__ == "__main__":
    main()
