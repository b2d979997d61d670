"""The lesson's text says what the code does: the numbers the notes quote are those the figures
and B9's plot draw, each fact is stated one way, and no visible check gives away a concept answer."""
from __future__ import annotations

import ast
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

import week4
from autograder.grader_side.assignment import REPO

visible_norms = week4.visible("norms")
depth = week4.reference("depth")

NOTES = (REPO / "course" / "notes" / "transformer-block.md").read_text()
BUILD = (REPO / "solutions" / "transformer-block" / "build.pct.py").read_text()


def _function(source: str, name: str) -> str:
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(source, node)


def test_b9_plot_draws_the_references_gradient_norms():
    ns = {"torch": torch, "nn": nn, "stack_forward": depth.stack_forward}
    exec(_function(BUILD, "grad_norm_per_layer"), ns)
    for residual in (True, False):
        assert ns["grad_norm_per_layer"](residual=residual) == depth.grad_norms_per_layer(residual=residual)


def test_the_notes_quote_the_depth_numbers_of_the_plot_at_layer_1():
    residual = depth.grad_norms_per_layer(residual=True)[0]
    plain = depth.grad_norms_per_layer(residual=False)[0]
    mantissa, exponent = f"{plain:.0e}".split("e")
    quoted = re.search(r"gradient at layer (\d+), the one nearest the input, is about \$([\d.]+)\$; "
                       r"without them it is about\s+\$(\d) \\times 10\^\{(-\d+)\}\$", NOTES)
    assert quoted, "the depth worked example no longer quotes layer 1's numbers"
    assert quoted.groups() == ("1", f"{residual:.1f}", mantissa, str(int(exponent)))
    assert "layer (1 = closest to the input)" in BUILD
    assert 'layer (1 = nearest the input' in (REPO / "course" / "figures.py").read_text()


def test_the_gelu_gap_is_stated_one_way_and_is_true():
    z = torch.linspace(-8, 8, 160_001, dtype=torch.float64)
    gap = (F.gelu(z) - F.gelu(z, approximate="tanh")).abs().max().item()
    assert 4.5e-4 < gap < 5e-4
    code = [*(REPO / "autograder").rglob("*.py"), *week4.SET.folder.rglob("*.py")]   # the grader's and the set's
    texts = [NOTES, BUILD, *(p.read_text() for p in code)]
    for text in texts:   # no other size of the gap next to a mention of the tanh form
        for mention in re.finditer(r"tanh", text):
            assert not re.search(r"10\^\{-3\}|1e-3", text[mention.start():mention.start() + 160])
    for text in (NOTES, BUILD):
        assert "5 \\times 10^{-4}" in text
    assert "by up to 5e-4" in open(week4.visible("mlp").__file__).read()


def test_rmsnorm_eps_is_not_attributed_to_llama():
    catalogue = sorted(week4.SET.folder.rglob("grading/misconceptions/*.py"))
    assert catalogue
    for text in (NOTES, BUILD, *(p.read_text() for p in catalogue)):
        assert "Llama's)" not in text and not re.search(r"is Llama's\s*(\$|10|1e|eps|\\epsilon)", text)
    assert "Llama 2 uses $10^{-5}$" in BUILD


def test_no_visible_check_shows_the_answer_to_c5():
    """B1's visible example must not print [1, -1] for u = [3, 1] before the student answers C5."""
    source = open(visible_norms.__file__).read()
    assert "[3, 1]" not in source and "3.0, 1.0" not in source


# ---- the notes teach with other numbers than the graded questions ---------------------------------

def _prose() -> dict[str, str]:
    """What students read besides the questions' own code: the notes, and the markdown cells of
    both notebooks' text form (C8's rubric is for TAs and leaves the release)."""
    from autograder.tooling import authoring

    texts = {"notes": NOTES}
    for name in ("concepts", "build"):
        source = (REPO / "solutions" / "transformer-block" / f"{name}.pct.py").read_text()
        texts[name] = "\n\n".join(authoring._uncomment(body) for kind, attrs, body in authoring.parse(source, name)
                                  if kind == "md" and attrs.get("grade_id") != "C8_rubric")
    return texts


def _sentences(text: str) -> list[str]:
    text = " ".join(text.replace("*", "").replace("`", "").split())
    return re.split(r"(?<=[.!?:;])\s+(?=[A-Z$(\[-])", text)


# Ways the prose used to state (or could state) a graded answer: C1's pair, C2's name, C3's and C4's
# counts, C5's vector.
GIVEN_AWAY = {
    "C1": [r"dog bites (the )?man", r"man bites (the )?dog"],
    "C2": [r"\bLSTM", r"long short[- ]term"],
    "C3": [r"\bMLPs?\b[^.]{0,40}\b(more|most)\b[^.]{0,20}\b(weights|parameters)\b", r"two[- ]thirds",
           r"8\s*/\s*12", r"attention\b[^.]{0,30}\b(fewer|less)\b[^.]{0,20}\b(weights|parameters)\b"],
    "C4": [r"ratio (of |is )?\$?2(\.0)?\b", r"d_\{ff\}\s*=\s*8d\^2", r"which is \$8d\^2\$",
           r"twice as many (weights|parameters)"],
    "C5": [r"\[\s*1(\.0)?\s*,\s*-\s*1(\.0)?\s*\]", r"\(\s*1\s*,\s*-\s*1\s*\)", r"\[1, −1\]"],
}


def test_the_prose_states_none_of_the_graded_answers():
    for where, text in _prose().items():
        for question, patterns in GIVEN_AWAY.items():
            for pattern in patterns:
                found = re.search(pattern, text, re.I | re.S)
                assert not found, f"{where} gives away {question}: {found.group(0)!r}"
        for sentence in _sentences(text):
            low = sentence.lower()
            # C6: the three decoder sublayers named side by side, or what GPT leaves out
            assert not (re.search(r"\b(masked|causal)\b", low) and "cross-attention" in low
                        and "feed-forward" in low), f"{where} lists C6's sublayers: {sentence!r}"
            assert not ("gpt" in low and re.search(r"cross[- ]attention|encoder-decoder attention", low)), \
                f"{where} says what GPT drops (C6): {sentence!r}"
            # C7: which placement the 2017 paper used, and which one models ship today
            assert not (re.search(r"2017|original|first transformer|vaswani", low)
                        and re.search(r"post-?(norm|ln)", low)), f"{where} gives away C7's 2017 placement: {sentence!r}"
            assert not (re.search(r"modern|today|current|default|standard|nowadays|recent", low)
                        and re.search(r"pre-?(norm|ln)", low)), \
                f"{where} gives away C7's modern placement: {sentence!r}"


# C8 is graded by hand from a rubric (the C8_rubric cell of concepts.pct.py): its first three elements
# and the last one's conclusion, in the words the rubric and a model answer would use.
C8_RUBRIC = {
    "algebra": [r"W_2\s*(\\[,;!]\s*)?\(?\s*W_1", r"W_2\s*(\\[,;!]\s*)?b_1"],
    "one affine map": [r"\b(single|one|another|an)\s+(affine|linear)\s+(map|function|layer|transformation)",
                       r"hidden layer adds nothing"],
    "stacking": [r"compos\w*\s+(of\s+)?(\w+\s+)?(affine|linear)", r"no more expressive than",
                 r"depth buys nothing", r"stack\w*[^.]{0,80}\b(is|are|stays?|remains?)\s+(still\s+)?(affine|linear)\b"],
    "collapse": [r"\bcollaps"],
}


def c8_rubric_stated(text: str) -> list[tuple[str, str]]:
    text = " ".join(text.split())
    return [(element, found.group(0)) for element, patterns in C8_RUBRIC.items() for pattern in patterns
            if (found := re.search(pattern, text, re.I))]


def test_the_prose_does_not_answer_c8():
    """The notes teach what the activation adds and leave the collapse argument to the student."""
    for where, text in _prose().items():
        assert not c8_rubric_stated(text), f"{where} states C8's rubric: {c8_rubric_stated(text)}"
    old = ("Drop $\\phi$ and the MLP becomes $W_2 W_1 x + (W_2 b_1 + b_2)$, a single affine map. Composing "
           "affine maps gives another affine map, so a hundred such layers in a row are no more expressive "
           "than one matrix and one offset.")   # what the notes used to say
    assert {element for element, _ in c8_rubric_stated(old)} == {"algebra", "one affine map", "stacking"}
    rubric = (REPO / "solutions" / "transformer-block" / "concepts.pct.py").read_text()
    rubric = rubric[rubric.index('grade_id="C8_rubric"'):rubric.index("END MARK SCHEME")]
    assert {element for element, _ in c8_rubric_stated(rubric)} == set(C8_RUBRIC)
    notes = " ".join(NOTES.split())
    assert "piecewise linear" in notes and "for you to work out in C8" in notes


def test_the_notes_still_teach_what_the_questions_ask():
    """With other numbers: another sentence pair, another vector, another width; and the names a
    student needs for C6, how to tell the two placements apart in code and in a diagram for C7, and
    the cell state for C2."""
    notes = " ".join(NOTES.split())
    for needed in ("Alice paid Bob", "Bob paid Alice", "u = [2, 4, 6]", "[-1.225, 0, 1.225]", "d = 16",
                   "*cross-attention*", "*self-attention*", "*feed-forward network*", "cell state",
                   "`x = norm(x + f(x))`", "`x = x + f(norm(x))`", "follow the arrow that goes around"):
        assert needed in notes, needed
    assert "GPT-2 computed it with the tanh approximation" in notes
    assert "two other curved (nonlinear) pieces: the softmax inside attention, and the norms" in notes


def test_the_notes_worked_layer_norm_is_right():
    u = torch.tensor([2.0, 4.0, 6.0])
    assert torch.allclose(F.layer_norm(u, (3,), eps=0.0), torch.tensor([-1.2247, 0.0, 1.2247]), atol=1e-4)
    assert torch.allclose((u - u.mean()) / u.std(), torch.tensor([-1.0, 0.0, 1.0]))   # the sample-std slip


# ---- C4's counts and C7's placements: what once gave them away ------------------------------------

def _counts_at_default_width(text: str) -> list[str]:
    """Places where ``text`` gives attention's and the MLP's counts at one width with d_ff = 4d (256
    and 512 at d = 8, 64 and 128 at d = 4, or any 4d^2 next to its 8d^2): both together answer C3 and,
    since the ratio is the same at every width, q4_ratio."""
    found = []
    for d in range(2, 65):
        pair = rf"\b{4 * d * d:,}\b.{{0,60}}\b{8 * d * d:,}\b|\b{8 * d * d:,}\b.{{0,60}}\b{4 * d * d:,}\b"
        for pattern in {pair, pair.replace(",", "")}:
            found += [m.group(0) for m in re.finditer(pattern, text, re.S)]
    return found


def test_no_prose_gives_both_counts_at_the_default_mlp_width():
    """C4's TODO box printed "d = 8 gives 256 and 512": the answer to C3 and, divided, to q4_ratio."""
    assert _counts_at_default_width("**Checked:** $d = 8$ gives 256 and 512, and $d = 4$ gives 64 and 128")
    for where, text in _prose().items():
        assert not _counts_at_default_width(text), f"{where}: {_counts_at_default_width(text)}"


# A sentence that names a model, a paper or an era, next to a statement of where its norms sit (or of
# the warm-up that only one placement needs), answers C7 for the student.
ERA = r"2017|2018|2019|original|first transformers?|vaswani|\bbert\b|\bgpt|llama|mistral|modern|today|current|recent"
PLACEMENT = (r"\bpre[- ]?(norm|ln)\b|\bpost[- ]?(norm|ln)\b"
             r"|in front of (its|each|every) sublayer|before (its|each|every) sublayer"
             r"|after (the|its|each|every) (add|sum|residual)|kept (their|its|the same) placement|warm-?up"
             r"|(added|adds|with) (one|a) final norm|same route")


def c7_given_away(text: str) -> list[str]:
    return [s for s in _sentences(text) if re.search(ERA, s, re.I) and re.search(PLACEMENT, s, re.I)]


def test_no_prose_ties_a_model_or_an_era_to_a_norm_placement():
    old = ("The first transformers had six encoder and six decoder blocks and were trained with the careful "
           "learning-rate warm-up described above. BERT (2018) kept their placement. GPT-2 (2019) moved every "
           "norm in front of its sublayer and added one final norm after the last block, and the much deeper "
           "language models that came after it took the same route.")   # what the notes used to say
    assert len(c7_given_away(old)) == 3
    for where, text in _prose().items():
        assert not c7_given_away(text), f"{where} gives away C7: {c7_given_away(text)}"


# ---- week 5's notes agree with its questions and with the lesson ----------------------------------

WEEK5_NOTES = (REPO / "solutions" / "inside-the-block" / "notes" / "inside-the-block.md").read_text()


def _section(text: str, name: str) -> str:
    start = text.index(f"\n## {name}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


TRANSPORT = r"\b(carried|carries|carry|moved|moves|brought|brings|copied|copies)\b"
HEDGE = r"\b(suggests?|may|might|whether|does not|do not|cannot|only an intervention|if)\b"


def causal_claims(text: str) -> list[str]:
    """Sentences that say a part of the model moved the answer, without a hedge: what B6 teaches
    students the lens alone cannot show."""
    return [s for s in _sentences(text) if re.search(TRANSPORT, s, re.I)
            and re.search(r"\b(attention|blocks?|heads?|mlp)\b", s, re.I) and not re.search(HEDGE, s, re.I)]


def test_week5s_notes_draw_no_causal_conclusion_from_the_lens():
    assert causal_claims("After block 1 the guess is often wrong; from block 2 on, attention has carried "
                         "the answer across.")   # what the notes used to say
    lens = _section(WEEK5_NOTES, "lens")
    assert not causal_claims(lens), causal_claims(lens)
    flat = " ".join(lens.split())
    assert "a correlation" in flat and "knock" in flat and "only an intervention tests them" in flat


def test_week5s_superposition_example_is_reconciled_with_the_lessons_six_or_more():
    """The lesson says that with a small threshold six or more features interfere; the notes' example
    packs eight cleanly at b = -0.75. The notes say why both hold, with numbers the reference agrees
    with (one feature on, b the bias)."""
    import importlib.util

    path = REPO / "solutions" / "inside-the-block" / "grading" / "reference" / "superposition.py"
    spec = importlib.util.spec_from_file_location("week5_superposition_reference", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    flat = " ".join(_section(WEEK5_NOTES, "superposition").split())
    claims = {"At $b = -0.3$, five features 72° apart are already too close": [(5, True), (4, False)],
              "At $b = -0.75$, eight fit": [(8, False), (9, True)]}
    for claim, cases in claims.items():
        assert claim in flat, claim
        b = float(re.search(r"\$b = (-[\d.]+)\$", claim).group(1))
        for n, interferes in cases:
            assert ref.interferes(n, [0], b) is interferes, (n, b)
    assert "six or more" in flat and "the example cuts deeper" in flat
    assert "Eight features 45° apart, $b = -0.75$" in flat


def _week5_prose(notebook: str) -> str:
    """The markdown students read in one of week 5's notebooks (B6's rubric is for TAs)."""
    from autograder.tooling import authoring

    source = (REPO / "solutions" / "inside-the-block" / f"{notebook}.pct.py").read_text()
    return "\n\n".join(authoring._uncomment(body) for kind, attrs, body in authoring.parse(source, notebook)
                       if kind == "md" and attrs.get("grade_id") != "B6_rubric")


SCALE_STATED = r"1\s*-\s*(\\theta|θ|threshold)|1\s*/\s*\(1|reaches \$?1 - "


def test_week5_leaves_b3s_scale_for_the_student_to_derive():
    """What students read (the notes' memory section, the build notebook's markdown and B3's visible
    checks, which are released) never states the scale 1 / (1 - threshold): the notes work it out
    for one threshold (0.2), and B3 asks for the reasoning at other numbers."""
    checks = (REPO / "solutions" / "inside-the-block" / "student_side" / "checks" / "memory.py").read_text()
    memory = _section(WEEK5_NOTES, "memory")
    for name, text in {"notes": memory, "build": _week5_prose("build"), "visible checks": checks}.items():
        assert not re.search(SCALE_STATED, text), (name, re.search(SCALE_STATED, text))
    assert re.search(SCALE_STATED, "W2 = values.T / (1 - threshold)")       # what the release used to say
    flat = " ".join(memory.split())
    assert "$\\theta = 0.2$" in flat and "1.25\\,v_1" in flat
    for asked in ("0.85", "0.9 ", "\\theta = 0.4"):                          # b3_share's and b3_threshold's numbers
        assert asked not in flat, asked


def test_week5s_knockout_numbers_are_the_figure_models():
    """The notes' knockout paragraph quotes the figure's model (``reference.lens.trained_state``): the
    median probability of the right token over its 200 prompts intact and with three knockouts, and the
    right panel's prompt settling one block later without block 2's attention."""
    import statistics

    lens = _week5_reference("lens")
    state = lens.trained_state(seed=0)
    prompts = torch.randint(16, (200, 8), generator=torch.Generator().manual_seed(2024))   # the figure's
    flat = " ".join(_section(WEEK5_NOTES, "lens").split())

    def median(s) -> float:
        return statistics.median(float(lens.token_probability(lens.logit_lens(s, p), int(p[0]))[-1]) for p in prompts)

    quoted = {None: 0.994, (4, "block"): 0.983, (1, "attention"): 0.961, (2, "attention"): 0.918}
    for knockout, value in quoted.items():
        got = median(state if knockout is None else lens.knocked_out(state, *knockout))
        assert f"{got:.3f}" == f"{value:.3f}" and f"{value:.3f}" in flat, (knockout, got)
    example = torch.tensor([3, 11, 6, 3, 9, 14, 1, 7])
    intact = lens.logit_lens(state, example)
    knocked = lens.knockout_lens(state, example, 2, "attention")
    assert lens.settled_at(lens.lens_guesses(intact)) == 2 and lens.settled_at(lens.lens_guesses(knocked)) == 3
    assert f"{float(lens.token_probability(knocked, 3)[-1]):.2f}" == "0.98"
    assert "settles at block 3 instead of 2, yet the last row still gives the answer 0.98" in flat


def _week5_reference(concept: str):
    from autograder.grader_side import problem_set

    return problem_set.load(REPO / "solutions" / "inside-the-block").reference(concept)
