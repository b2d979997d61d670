"""Runs one grader request against a submission's namespace, next to the submission.

This module is imported where student code runs: in a sandboxed child (``course autograde``)
or in the notebook's own kernel (nbgrader's hidden tests and the visible checks). It needs only
torch and numpy, knows no answers, and returns plain data: the grader compares elsewhere.

Requests (``header["op"]``):
- ``call``: ``ns[name](*args, **kwargs)``
- ``module``: build ``ns[name](*args, **kwargs)``, load ``state`` strictly (if given), then run each
  of ``forwards`` (a list of ``{"args", "kwargs"}``) under no_grad; the reply is the list of outputs
- ``params``: build the module and list its parameters, each once, as ``[[its names], shape]`` (a
  parameter a module also holds in another container, ``nn.Sequential(self.linear1, ...)``, has
  several names)
- ``value``: ``ns[name]``
Arguments may hold ``{"__function__": spec}`` items, rebuilt as functions by ``callables.build``.
``forbid`` maps a label to the torch functions (by ``__name__``) and ``torch.nn`` module classes
the student's code must not reach; the reply lists the labels it did reach.
"""
from __future__ import annotations

from collections.abc import Mapping

import torch
from torch.overrides import TorchFunctionMode

from . import callables, wire

MAX_ERROR = 300


class _Tripwire(TorchFunctionMode):
    """Records the torch functions reached while student code runs."""

    def __init__(self, watched: set[str]):
        super().__init__()
        self.watched: set[str] = watched
        self.seen: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in self.watched:
            self.seen.add(name)
        return func(*args, **(kwargs or {}))


def serve(ns: dict, header: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """Answer one request; every failure becomes ``{"ok": False, "error": ...}``."""
    forbid = _tripwires(header.get("forbid"))
    reached: set[str] = set()
    try:
        name = header["name"]
        if name not in ns:
            return {"ok": False, "missing": True, "error": f"NameError: name {name!r} is not defined"}, []
        op = header["op"]
        if op == "value":
            value = ns[name]
        else:
            args = _materialize(wire.unpack(header.get("args", []), blobs, tensors=True))
            kwargs = _materialize(wire.unpack(header.get("kwargs", {}), blobs, tensors=True))
            if op == "call":
                value = _watch(forbid, reached, lambda: ns[name](*args, **kwargs))
            elif op == "module":
                module = _build(ns[name], args, kwargs)
                state = wire.unpack(header.get("state"), blobs, tensors=True)
                misfit = _load(module, state) if state is not None else None
                if misfit:    # names only: the grader words the reason, and decides which names it shows
                    return {"ok": False, "misfit": misfit, "forbidden": sorted(reached)}, []
                value = _run_module(module, header, blobs, forbid, reached)
            elif op == "params":
                value = _parameters(_build(ns[name], args, kwargs))
            else:
                raise ValueError(f"unknown op {op!r}")
        packed, out = wire.pack(value)
        return {"ok": True, "value": packed, "forbidden": sorted(reached)}, out
    except BaseException as exc:  # student code may raise anything, SystemExit included
        message = f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
        return {"ok": False, "error": message, "forbidden": sorted(reached)}, []


def _build(cls, args, kwargs):
    """``cls(*args, **kwargs)`` with its own initial weights the same on every run and in every
    process (a fixed seed, without touching the caller's random state)."""
    with torch.random.fork_rng(devices=[]):
        # Seed the CPU generator only: torch.manual_seed also queues a seeding for every absent
        # accelerator, formatting a stack trace each time (a few ms per call).
        torch.default_generator.manual_seed(0)
        return cls(*args, **kwargs)


def _parameters(module) -> list:
    """``[[names], shape]`` for each distinct parameter of ``module``, in the order it registered them."""
    parameters = dict(module.named_parameters(remove_duplicate=False))
    return [[names, list(tensor.shape)] for names, tensor in _aliases(parameters)]


def _aliases(named: Mapping[str, torch.Tensor]) -> list[tuple[list[str], torch.Tensor]]:
    """``named`` (name -> tensor) grouped by tensor: ``(every name of one tensor, the tensor)``."""
    groups: dict[int, tuple[list[str], torch.Tensor]] = {}
    for name, tensor in named.items():
        groups.setdefault(id(tensor), ([], tensor))[0].append(name)
    return list(groups.values())


def _load(module, state: dict) -> dict[str, list[str]] | None:
    """Load the check's weights strictly; a mismatch is returned as the names that do not fit
    (``Student.misfit`` words it), never their sizes (the sizes of a hidden check's weights are
    part of its hidden input).

    A tensor the module holds under several names (its submodules also kept in an
    ``nn.Sequential`` or a list) gets its weights through any one of them; a buffer of the
    module's own that the check's weights do not name keeps its value.
    """
    own = module.state_dict(keep_vars=True)
    params = {id(p) for p in module.parameters()}
    full, missing = {}, []
    for names, tensor in _aliases(own):
        given = [n for n in names if n in state]
        if given:
            full.update({n: state[given[0]] for n in names})
        elif id(tensor) in params:
            missing += names
        else:
            full.update({n: tensor.detach() for n in names})
    unexpected = sorted(set(state) - set(own))
    resized = sorted(k for k in set(own) & set(state) if tuple(own[k].shape) != tuple(state[k].shape))
    if missing or unexpected or resized:
        return {"missing": sorted(missing), "not expected": unexpected, "of another size": resized}
    module.load_state_dict(full, strict=True)
    return None


def _run_module(module, header, blobs, forbid, reached):
    module.eval()
    for banned, names in forbid.items():
        for sub in module.modules():
            if type(sub).__name__ in names:
                reached.add(banned)
    forwards = _materialize(wire.unpack(header.get("forwards", []), blobs, tensors=True))
    with torch.no_grad():
        return [_watch(forbid, reached, lambda f=f: module(*f.get("args", []), **f.get("kwargs", {})))
                for f in forwards]


def _watch(forbid, reached, run):
    """Run ``run()`` with a tripwire on the forbidden builtins; record which were reached."""
    watched = set().union(*forbid.values())
    banned_classes = {cls: banned for banned, names in forbid.items() for cls in map(_module_class, names) if cls}
    originals = {cls: cls.forward for cls in banned_classes}

    def trip(banned):
        def forward(*a, **k):
            reached.add(banned)
            raise RuntimeError(f"this question asks you not to use torch.nn.{banned}-style modules")
        return forward

    for cls, banned in banned_classes.items():
        cls.forward = trip(banned)
    try:
        if not watched:
            return run()
        mode = _Tripwire(watched)
        with mode:
            result = run()
        for banned, names in forbid.items():
            if mode.seen & names:
                reached.add(banned)
        return result
    finally:
        for cls, forward in originals.items():
            cls.forward = forward


def _tripwires(forbid) -> dict[str, set[str]]:
    """The request's ``forbid`` as label -> names (anything else in it is ignored)."""
    if not isinstance(forbid, dict):
        return {}
    return {str(label): {n for n in names if isinstance(n, str)}
            for label, names in forbid.items() if isinstance(names, list)}


def _module_class(name: str):
    """The ``torch.nn`` module class called ``name``, if there is one."""
    cls = getattr(torch.nn, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, torch.nn.Module) else None


def _materialize(value):
    """Replace ``{"__function__": spec}`` items with the functions they describe."""
    if isinstance(value, dict):
        if "__function__" in value:
            return callables.build(_materialize(value["__function__"]))
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_materialize(v) for v in value]
    return value
