"""No hidden check's failure message reveals a hidden input or an expected value.

Every catalogued wrong answer runs through the hidden checks of its question in this process
(the course's own code, like ``test_misconceptions_inprocess``), with the values each hidden check
uses recorded as it runs: every number, config and tensor shape it sends to the student, and
every value the hidden references return. A failure message may not contain any of them unless
the released notebook or the check's own description already says it. The detector itself is
tested on a check that does leak.
"""
from __future__ import annotations

import inspect
import re
from functools import lru_cache

import nbformat
import numpy as np
import pytest
import torch

import week4
import week4 as checks
import week4 as contract
from autograder.grader_side.assignment import REPO, Assignment
from autograder.grader_side.misconceptions import edits
from autograder.student_side.checks import Check, expect
from autograder.student_side.student import CheckFailed, Student, in_process
from autograder.tooling.sampleclass import trusted_namespace
from week4 import catalogue

REFERENCES = list(contract.CONCEPTS)   # the set's hidden references, one module per concept
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)")
TUPLE = re.compile(r"\((\d+(?:, \d+)*),?\)")


def numbers(text: str) -> set[float]:
    found = set()
    for token in NUMBER.findall(text):
        try:
            found.add(float(token.replace(",", "")))
        except ValueError:
            pass
    return found


def shapes(text: str) -> set[tuple]:
    return {tuple(int(i) for i in t.split(", ")) for t in TUPLE.findall(text)}


class Secrets:
    """What a hidden check computed from its hidden inputs and the references' outputs."""

    def __init__(self):
        self.numbers: set[float] = set()
        self.shapes: set[tuple] = set()
        self.texts: set[str] = set()

    def add(self, value, depth=0):
        if depth > 6 or value is None or isinstance(value, (bool, str)):
            return
        if isinstance(value, (int, float)):
            self.numbers.add(float(value))
        elif isinstance(value, (torch.Tensor, np.ndarray)):
            if value.ndim:
                self.shapes.add(tuple(value.shape))
        elif isinstance(value, dict):
            self.texts.add(str(value))
            for v in value.values():
                self.add(v, depth + 1)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self.add(v, depth + 1)

    def leaked(self, message: str, public_numbers: set, public_shapes: set) -> list:
        """The secrets ``message`` shows (numbers below 10 are too common in prose to tell)."""
        found = [x for x in numbers(message) if x in self.numbers and x not in public_numbers
                 and (abs(x) >= 10 or x != int(x))]
        found += [s for s in shapes(message) if s in self.shapes and s not in public_shapes]
        found += [t for t in self.texts if t in message]
        return found


class Recording(Student):
    """A Student that records every hidden input it sends (the weights of a module excepted)."""

    def __init__(self, transport, secrets):
        super().__init__(transport)
        self.secrets = secrets

    def _ask(self, header, fields, name):
        for key in ("args", "kwargs"):
            self.secrets.add(fields.get(key))
        for forward in fields.get("forwards", []):
            self.secrets.add([forward["args"], forward["kwargs"]])
        return super()._ask(header, fields, name)


@pytest.fixture(scope="module")
def public():
    """Numbers and shapes the released notebooks already show, per notebook."""
    a = Assignment("transformer-block", REPO)
    out = {}
    for name in a.notebooks:
        text = "\n".join(c.source for c in nbformat.read(a.release_dir / f"{name}.ipynb", as_version=4).cells)
        out[name] = numbers(text), shapes(text)
    return out


@pytest.fixture
def recorded(monkeypatch):
    """Record every value the hidden references return; a fresh record per check."""
    box = {"secrets": Secrets()}
    for concept in REFERENCES:
        module = contract.reference(concept)
        for attr, fn in list(vars(module).items()):
            if inspect.isfunction(fn) and fn.__module__ == module.__name__:
                def wrapper(*args, __fn=fn, **kwargs):
                    result = __fn(*args, **kwargs)
                    box["secrets"].add(result)
                    return result
                monkeypatch.setattr(module, attr, wrapper)
    return box


def _clear_caches():
    """Cached reference cases would skip the recording references: recompute them."""
    for concept in contract.CONCEPTS:
        module = contract.hidden(concept)
        for value in vars(module).values():
            if hasattr(value, "cache_clear"):
                value.cache_clear()


def leaks(check: Check, ns: dict, box, public) -> tuple[str, list] | None:
    """(message, what it leaks) when ``check`` fails on ``ns``, else None."""
    _clear_caches()
    box["secrets"] = secrets = Secrets()
    try:
        check.run(Recording(in_process(ns), secrets))
    except CheckFailed as exc:
        message = str(exc)
    else:
        return None
    public_numbers, public_shapes = public[contract.QUESTIONS[check.question].notebook]
    return message, secrets.leaked(message, public_numbers | numbers(check.says), public_shapes | shapes(check.says))


@lru_cache(maxsize=None)
def _namespace(entry_id):
    a = Assignment("transformer-block", REPO)
    entry = next(e for e in catalogue() if e.id == entry_id)
    name = contract.QUESTIONS[entry.question].notebook
    return trusted_namespace(a, name, edits(entry, {c.grade_id: c.source for c in a.cells(name)}[entry.cell]))


HIDDEN_QUESTIONS = sorted({c.question for c in checks.all_checks() if c.hidden}, key=list(contract.QUESTIONS).index)


@pytest.mark.parametrize("question", HIDDEN_QUESTIONS)
def test_no_hidden_message_reveals_a_hidden_value(question, recorded, public):
    import matplotlib.pyplot as plt

    found, failures = [], 0
    for entry in catalogue():
        if entry.question != question:
            continue
        ns = _namespace(entry.id)
        plt.close("all")
        for c in checks.all_checks():
            if c.question == question and c.hidden:
                result = leaks(c, ns, recorded, public)
                if result is not None:
                    failures += 1
                    if result[1]:
                        found.append((entry.id, c.id, result[1], result[0]))
    assert failures, f"no catalogued wrong answer fails a hidden check of {question}: nothing was tested"
    assert not found, "\n".join(f"{e} / {c}: shows {what} in: {msg}" for e, c, what, msg in found[:10])


def test_the_detector_sees_a_message_that_leaks(recorded, public):
    """A hidden check that prints its config and the expected count is caught."""
    ref = week4.reference("params")

    def leaky(student):
        config = dict(ref.LLAMA2_7B, d_model=96, n_layers=3)
        want = ref.count_parameters(config)
        got = student.call("count_parameters", config)
        expect(got == want, f"count_parameters({config}) should be {want['total']:,}")

    def leaky_shape(student):
        x = torch.randn(3, 7, 11)
        shape = student.call('layer_norm', x, torch.ones(11), torch.zeros(11)).shape
        expect(False, f"layer_norm on x of shape {tuple(x.shape)}: {shape}")

    ns = {"count_parameters": lambda config: {"total": 0},
          "layer_norm": lambda x, g, b, eps=1e-5: x}
    for run in (leaky, leaky_shape):
        check = Check(f"B8_{run.__name__}", "B8", 1, True, "a check that leaks", run)
        message, found = leaks(check, ns, recorded, public)
        assert found, message


PROBE = '''
import torch
class _Leak(Exception):
    pass
def layer_norm(x, gamma, beta, eps=1e-5):
    raise {kind}("PROBE shape=%s x=%s gamma=%s" % (tuple(x.shape), x.flatten()[:12].tolist(), gamma[:6].tolist()))
'''


@pytest.mark.parametrize("kind", ["ValueError", "_Leak", "type('x_2_08', (Exception,), {})"])
def test_what_a_students_error_says_about_a_hidden_input_is_never_shown(kind):
    """A student's exception may carry the hidden check's input in its message (or in the name of
    a class of its own): a hidden check tells the error by its kind only; a visible one in full."""
    from autograder.grader_side.assignment import REPO, Assignment
    from autograder.student_side.student import CheckFailed, Student, in_process

    ns: dict = {"__name__": "__main__"}
    exec(PROBE.format(kind=kind), ns)
    by_id = Assignment("transformer-block", REPO).set.by_id
    hidden = [c for c in by_id.values() if c.hidden and c.question == "B1"]
    visible = [c for c in by_id.values() if not c.hidden and c.question == "B1"]
    assert hidden and visible
    for c in hidden:
        with pytest.raises(CheckFailed) as failed:
            c.run(Student(in_process(ns)))
        message = str(failed.value)
        assert "PROBE" not in message and "x_2_08" not in message and "_Leak" not in message, message
        assert "raised" in message and "hidden input" in message
        if kind == "ValueError":
            assert "raised ValueError" in message
    with pytest.raises(CheckFailed, match="PROBE shape="):
        visible[0].run(Student(in_process(ns)))


def test_no_number_the_students_output_sets_is_shown_for_a_hidden_input():
    """An output made from the input (1e6 * x[0] everywhere) would show that input as "the largest
    difference": a hidden check says only that the values are off; a visible one says by how much."""
    from autograder.grader_side.assignment import REPO, Assignment
    from autograder.student_side.student import CheckFailed, Student, in_process

    ns: dict = {"__name__": "__main__"}
    exec("import torch\ndef layer_norm(x, gamma, beta, eps=1e-5):\n    return x * 0 + 1e6 * x.flatten()[0]\n", ns)
    by_id = Assignment("transformer-block", REPO).set.by_id
    for c in by_id.values():
        if c.question == "B1":
            try:
                c.run(Student(in_process(ns)))
            except CheckFailed as exc:
                assert ("largest difference" in str(exc)) == (not c.hidden) or "off" not in str(exc), (c.id, str(exc))
    hidden_messages = []
    for c in (c for c in by_id.values() if c.question == "B1" and c.hidden):
        with pytest.raises(CheckFailed) as failed:
            c.run(Student(in_process(ns)))
        hidden_messages.append(str(failed.value))
    assert any(" off" in m for m in hidden_messages), hidden_messages
    assert not any("largest difference" in m for m in hidden_messages), hidden_messages


@pytest.mark.parametrize("question", ["B4", "B6", "B8"])
def test_no_reply_of_the_students_process_decides_what_a_hidden_check_shows(question):
    """Student code runs in the process that answers the grader, and can rewrite its replies: one
    that marks its error as the grader's own words, or names the parameters that did not fit with
    the check's input in them, shows a hidden check nothing of it; of the names that did not fit, a
    hidden check shows only those of the weights the grader sent, a visible one the module's own."""
    from autograder.grader_side.assignment import REPO, Assignment
    from autograder.student_side import wire
    from autograder.student_side.student import CheckFailed, Student

    def forged(header, blobs):
        args = wire.unpack(header.get("args", []), blobs)
        if header["op"] == "module" and header.get("state") and header["name"] == "PreNormBlock":
            return {"ok": False, "misfit": {"missing": 5, "not expected": None, "of another size": "x"}}, []
        if header["op"] == "module" and header.get("state"):
            state = sorted(wire.unpack(header["state"], blobs))
            return {"ok": False, "misfit": {"missing": [f"PROBE {args}"], "not expected": [f"PROBE {args}", state[0]],
                                            "of another size": [state[-1]]}, "grader": True}, []
        return {"ok": False, "error": f"ValueError: PROBE {args}", "grader": True}, []

    shown = {}
    for c in Assignment("transformer-block", REPO).set.by_id.values():
        if c.question == question:
            try:
                c.run(Student(forged))
            except CheckFailed as exc:       # (a check that wants an error passes)
                shown[c] = str(exc)
    for c, message in shown.items():     # (B6's forged misfit carries no PROBE)
        assert ("PROBE" in message) == (not c.hidden and (question != "B6" or "weights do not fit" not in message)), \
            (c.id, message)
    fits = [m for c, m in shown.items() if c.hidden and "weights do not fit" in m]
    assert (question in ("B4", "B6")) == bool(fits), shown
    if question == "B6":    # lists of another type: the reason without names
        assert all(m.endswith("raised ValueError: the check's weights do not fit this module: build exactly the "
                              "submodules the TODO box names, sized from the constructor's arguments") for m in fits)
        return
    for message in fits:
        assert "not expected: linear1.bias; of another size: linear2.weight" in message, message
        assert "missing: parameters of its own that the weights do not name, listed by the visible checks" in message


SHAPED = '''
import numpy as np
def swiglu_hidden_dim(d_model, multiple_of=256):
    return np.zeros((d_model, multiple_of, 0))
def count_parameters(config):
    shape = [config[k] for k in ("vocab_size", "max_positions", "d_model", "n_layers", "d_ff")] + [0]
    return {k: np.zeros(shape) for k in ("embeddings", "attention", "mlp", "norms", "unembedding", "total")}
def layer_norm_backward(x, gamma, dy, eps=1e-5):
    return np.zeros((*x.shape, 0)), "PROBE %s" % (tuple(x.shape),), np.zeros((1,) * x.ndim)
'''


@pytest.mark.parametrize("question", ["B3", "B5", "B8"])
def test_the_shape_or_text_a_students_output_takes_is_not_shown_for_a_hidden_input(question):
    """What code returns on a hidden check's input may carry that input in its shape, its size, its
    number of dims or its text (a tensor shaped (d_model, d_ff, 0)): a hidden check names only its
    kind; a visible one describes it."""
    from autograder.grader_side.assignment import REPO, Assignment
    from autograder.student_side.student import CheckFailed, Student, in_process

    ns: dict = {"__name__": "__main__"}
    exec(SHAPED, ns)
    shown = {}
    for c in Assignment("transformer-block", REPO).set.by_id.values():
        if c.question == question:
            try:
                c.run(Student(in_process(ns)))
            except CheckFailed as exc:
                shown[c] = str(exc)
    def describes(message: str) -> bool:
        return "shape (" in message or "dim(s) where" in message or "PROBE" in message

    assert not [(c.id, m) for c, m in shown.items() if c.hidden and describes(m)]
    assert [c for c, m in shown.items() if c.hidden] and [c for c, m in shown.items() if not c.hidden and describes(m)]


def test_text_returned_on_a_hidden_input_is_not_quoted_and_an_answer_still_is():
    """Text a function returns on a hidden check's input, which the grader cannot read as a number,
    fails without being quoted; text given as an answer variable still goes to a TA, quoted."""
    from autograder.student_side import checks as toolkit
    from autograder.student_side.student import ON_INPUT, CheckFailed

    hidden = toolkit._HIDDEN.set(True)
    try:
        for on_input in (True, False):
            token = ON_INPUT.set(on_input)
            try:
                with pytest.raises(CheckFailed) as failed:
                    toolkit.as_number("PROBE 13 or 14", "weights_memory_gb(n_params)")
            finally:
                ON_INPUT.reset(token)
            assert ("PROBE" in str(failed.value)) == (not on_input), str(failed.value)
            assert isinstance(failed.value, toolkit.NeedsReview) == (not on_input)
    finally:
        toolkit._HIDDEN.reset(hidden)
