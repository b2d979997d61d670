"""Week 5's trained model is trained once and shipped, not retrained by the notebook: the build
notebook's ``TinyLM`` trained on the copy-first task (the set's ``copy_first.py``, in a child Python
with torch's kernels pinned), committed as ``solutions/inside-the-block/trained/copy_first.pt`` and
so copied into the release; the notebook loads it. A fresh training comes within 1e-4 of the
committed weights on any machine (the same bytes only on one CPU), a set folder without them builds
them, and releasing twice changes nothing. (That the hidden checks grade as before is
``test_every_set``'s: full marks for the reference, none for the untouched release, in both graders.)"""
from __future__ import annotations

import hashlib
import importlib
import io
import shutil

import nbformat
import pytest
import torch
from nbclient import NotebookClient

from autograder import api
from autograder.grader_side import problem_set
from autograder.grader_side.assignment import REPO

SET = "inside-the-block"
WEIGHTS = "trained/copy_first.pt"
pytestmark = pytest.mark.slow


def _set_module(name: str):
    """A module of the set's folder (``grading.built``, ``grading.reference.lens``), as the grader loads it."""
    return importlib.import_module(f"{problem_set.load(REPO / 'solutions' / SET).package}.{name}")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return api.make_course(tmp_path_factory.mktemp("trained"), SET)


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_release_ships_the_committed_weights(made):
    shipped = (made.release_dir / WEIGHTS).read_bytes()
    assert (made.source_dir / WEIGHTS).read_bytes() == shipped, "the source notebook loads the release's weights"
    assert _sha(shipped) == _sha((REPO / "solutions" / SET / WEIGHTS).read_bytes()), "the committed ones"
    source = REPO / "solutions" / SET / "copy_first.py"
    assert (made.release_dir / "copy_first.py").read_bytes() == source.read_bytes(), "the training ships with it"


def _close(fresh: bytes, committed: bytes) -> None:
    """A fresh training is the committed weights to 1e-4 (a model cell or copy_first.py changed
    without retraining is caught; another CPU's last bits are not: see grading/built.py)."""
    a, b = (torch.load(io.BytesIO(data), weights_only=True) for data in (fresh, committed))
    assert a.keys() == b.keys()
    far = {name: float((a[name] - b[name]).abs().max())
           for name in a if not torch.allclose(a[name], b[name], atol=1e-4)}
    assert not far, f"retrain and commit the weights (see grading/built.py): largest differences {far}"


def test_the_shipped_weights_are_the_notebook_model_trained(made):
    """They load into the notebook's own TinyLM (tensors only), and that model has learned the task:
    it names the first token at almost every position, and so does the reference lens's last row."""
    state = torch.load(made.release_dir / WEIGHTS, weights_only=True)
    model = _set_module("grading.built").model_class(made.source_dir / "build.pct.py")()
    model.load_state_dict(state)
    lens = _set_module("grading.reference.lens")
    gen = torch.Generator().manual_seed(7)
    prompts = [torch.randint(16, (8,), generator=gen) for _ in range(50)]
    with torch.no_grad():
        right = sum(int((model(p).argmax(-1) == p[0]).sum()) for p in prompts)
        last = [lens.lens_guesses(lens.logit_lens(state, p))[-1] == int(p[0]) for p in prompts]
    assert right / (8 * len(prompts)) > 0.95
    assert all(last)


def test_b7s_answers_are_what_the_shipped_weights_give(made):
    """B7's answers (reference.lens.DROP, SETTLED) are read from the shipped model as a student reads
    them: the notebook's own TinyLM with block 2's attention left out of the stream, run by hand here,
    and the reference's knockout, which zeroes that part's output layer instead, agree on both."""
    lens = _set_module("grading.reference.lens")
    state = torch.load(made.release_dir / WEIGHTS, weights_only=True)
    model = _set_module("grading.built").model_class(made.source_dir / "build.pct.py")()
    model.load_state_dict(state)
    prompt = torch.tensor(lens.KNOCKOUT_PROMPT)
    block, part = lens.KNOCKOUT
    assert part == "attention"

    def rows(skip: int | None) -> torch.Tensor:
        h = model.embed(prompt)
        out = []
        for number, blk in enumerate(model.blocks, start=1):
            if number != skip:
                h = h + blk.attention(blk.norm1(h))
            h = h + blk.fc2(torch.nn.functional.gelu(blk.fc1(blk.norm2(h))))
            out.append(model.unembed(model.norm_f(h[-1])))
        return torch.stack(out)

    with torch.no_grad():
        intact, knocked = rows(None), rows(block)
    first = int(prompt[0])
    drop = float(lens.token_probability(intact, first)[-1] - lens.token_probability(knocked, first)[-1])
    assert drop == pytest.approx(lens.DROP, abs=1e-4)
    assert lens.settled_at(lens.lens_guesses(knocked)) == lens.SETTLED
    assert lens.settled_at(lens.lens_guesses(intact)) < lens.SETTLED     # the knockout delays the settling
    reference = lens.knockout_lens(state, prompt, block, part)
    assert torch.allclose(reference, knocked, atol=1e-4)
    assert lens.WINDOWS["b7_drop"].holds(drop)


def test_releasing_twice_changes_nothing(made):
    shutil.copytree(REPO / "course", made.root / "course", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("figures", "notes"))   # course release reads the schedule
    before = _files(made.release_dir)
    weights = made.source_dir / WEIGHTS
    stamp = weights.stat().st_mtime_ns
    api.release(SET, course=made.root)
    assert _files(made.release_dir) == before
    assert weights.stat().st_mtime_ns == stamp, "a weights file that is already right is left untouched"


def test_the_notebook_loads_the_shipped_weights_without_training(made, tmp_path):
    """The release's notebook, untouched, run top to bottom: ``trained`` is whatever the shipped file
    holds (here planted weights no training makes), and the retrain cell is off."""
    folder = tmp_path / "release"
    shutil.copytree(made.release_dir, folder)
    state = torch.load(folder / WEIGHTS, weights_only=True)
    planted = {name: torch.full_like(t, 0.25) for name, t in state.items()}
    torch.save(planted, folder / WEIGHTS)
    nb = nbformat.read(folder / "build.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import torch as _torch\n"
        "_planted = _torch.load('trained/copy_first.pt', weights_only=True)\n"
        "print('loaded:', all(_torch.equal(t, _planted[k]) for k, t in trained.state_dict().items()))\n"
        "print('retrained:', RETRAIN)\n"
        "print('untrained:', 'model' not in dir() and isinstance(untrained_model, TinyLM))"))
    NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert printed.split() == ["loaded:", "True", "retrained:", "False", "untrained:", "True"], nb.cells[-1].outputs


def test_nbgrader_generate_assignment_alone_ships_the_weights(tmp_path):
    """A set folder without its trained weights, released with nbgrader's own command, trains them
    (one fresh training, in its own child Python) and ships what a training makes: the committed
    weights, to 1e-4, so the notebook can load them."""
    from autograder.tooling.authoring import build
    from autograder.tooling.release import nbgrader

    shutil.copytree(REPO / "solutions", tmp_path / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__", "*.ipynb", "trained"))
    shutil.copy(REPO / "nbgrader_config.py", tmp_path)
    build(tmp_path / "solutions" / SET)
    assert not (tmp_path / "solutions" / SET / WEIGHTS).exists()
    nbgrader("generate_assignment", SET, "--force", "--log-level=WARN", repo=tmp_path)
    shipped = tmp_path / "assignments" / SET / WEIGHTS
    assert shipped.is_file(), "nbgrader generate_assignment released no trained weights"
    assert shipped.read_bytes() == (tmp_path / "solutions" / SET / WEIGHTS).read_bytes()
    _close(shipped.read_bytes(), (REPO / "solutions" / SET / WEIGHTS).read_bytes())
