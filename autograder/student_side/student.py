"""The grader's handle on a submission: ask it to run something, get plain data back.

Checks talk to a ``Student``; how the request reaches the student's code is the transport's
business: a sandboxed child process (``course autograde``) or the notebook's own namespace
(nbgrader hidden tests, visible checks). Both go through ``wire`` and ``server.serve``, so a
check sees the same numpy arrays either way.
"""
from __future__ import annotations

import builtins
import contextvars
import json
from typing import Callable

from . import wire

Transport = Callable[[dict, list], tuple]

# What one check keeps of the replies it got, to name a misconception later: every honest reply
# fits; beyond this a reply is kept only as ("too large", its size), so a hostile reply of many
# megabytes is dropped as soon as the check has judged it.
KEEP_BYTES = 256 * 1024


class CheckFailed(AssertionError):
    """A check did not pass; the message is written for the student."""


def function_arg(kind: str, **weights) -> dict:
    """A function argument for student code, rebuilt next to it by ``callables.build``."""
    return {"__function__": {"kind": kind, **weights}}


class Student:
    def __init__(self, transport: Transport, forbidden_fails: bool = True,
                 why_missing: Callable[[str], str | None] | None = None):
        self._send = transport
        # What to tell the student when a name is not defined, when the transport knows more (the
        # cell that should define it stopped with an error); None: the plain "is not defined".
        self._why_missing = why_missing
        # Every reply in order (values, or ("raised" | "forbidden" | "missing" | "too large", what)), to
        # match misconceptions; at most KEEP_BYTES of values in all.
        self.replies: list = []
        self._kept = 0
        # The forbidden builtins the code said it reached. With ``forbidden_fails`` (in a notebook)
        # reaching one fails the check; the grader instead judges routes from the source and keeps
        # this as evidence only.
        self.forbidden_fails = forbidden_fails
        self.evidence: set[str] = set()
        # Set for a hidden check (checks.check): an error the code raises is told by its kind only,
        # never its message, which the student writes and could fill with the check's input.
        self.hidden_input = False

    def call(self, name: str, *args, forbid: dict | None = None, **kwargs):
        """``name(*args, **kwargs)`` in the submission; arrays come back as numpy arrays."""
        return self._ask({"op": "call", "name": name, "forbid": _forbid(forbid)},
                         {"args": list(args), "kwargs": kwargs}, name)

    def module(self, name: str, args=(), kwargs=None, state=None, forwards=(), forbid: dict | None = None):
        """Build ``name(*args, **kwargs)``, load ``state`` strictly (unless None), and return the
        outputs of ``module(*a, **k)`` for each ``(a, k)`` in ``forwards``."""
        return self._ask({"op": "module", "name": name, "forbid": _forbid(forbid)},
                         {"args": list(args), "kwargs": kwargs or {}, "state": state,
                          "forwards": [{"args": list(a), "kwargs": k} for a, k in forwards]}, name)

    def params(self, name: str, *args, **kwargs) -> list:
        """``[[names], shape]`` for each distinct parameter of the module ``name(*args, **kwargs)``
        (one tensor the module also holds in another container has several names)."""
        return self._ask({"op": "params", "name": name}, {"args": list(args), "kwargs": kwargs}, name)

    def error(self, name: str, *args, **kwargs) -> str | None:
        """The error ``name(*args, **kwargs)`` raises in the submission ("ValueError: ..."), or None."""
        return self._error_of(lambda: self.call(name, *args, **kwargs))

    def module_error(self, name: str, args=(), kwargs=None, forwards=()) -> str | None:
        """The error building the module ``name(*args, **kwargs)`` or running ``forwards`` on it
        raises ("ValueError: ..."), or None."""
        return self._error_of(lambda: self.module(name, args, kwargs, forwards=forwards))

    @staticmethod
    def _error_of(run) -> str | None:
        try:
            run()
        except CheckFailed as exc:
            if "is not defined" in str(exc) or "TODO box" in str(exc):   # missing, or still the stub
                raise
            return str(exc).partition(" raised ")[2] or str(exc)
        return None

    def value(self, name: str):
        """The value the submission gave the variable ``name``."""
        return self._ask({"op": "value", "name": name}, {}, name)

    def _ask(self, header: dict, fields: dict, name: str):
        ON_INPUT.set(header["op"] != "value")
        blobs: list[bytes] = []
        for key, value in fields.items():
            header[key], _ = wire.pack(value, blobs)
        reply, reply_blobs = self._send(header, blobs)
        if not isinstance(reply, dict):
            raise CheckFailed(f"the grader could not read what `{name}` returned")
        if reply.get("missing"):
            self.replies.append(("missing", name))
            why = self._why_missing(name) if self._why_missing else None
            raise CheckFailed(why or f"`{name}` is not defined: run the cell that defines it, and keep the name "
                                     "exactly as given")
        if not reply.get("ok"):
            if "misfit" in reply:
                self.replies.append(("raised", "ValueError"))
                raise CheckFailed(f"`{name}` raised ValueError: {self._misfit(reply['misfit'], fields.get('state'))}")
            error = str(reply.get("error"))[:300]
            self.replies.append(("raised", error.partition(":")[0]))
            if error.startswith("NotImplementedError") and "see the TODO box" in error:
                raise CheckFailed(f"`{name}` is still the release's stub: write it in the cell that defines it "
                                  "(its TODO box says what to write)")
            if self.hidden_input:    # nothing in a reply decides it: student code can write any reply
                kind = error.partition(":")[0]
                raise CheckFailed(f"`{name}` raised {kind if kind in _BUILTIN_ERRORS else 'an exception'}: its "
                                  "message is left out on this check's hidden input, as it could show that input "
                                  "(the visible checks show it on theirs)")
            raise CheckFailed(f"`{name}` raised {error}")
        forbidden = reply.get("forbidden")
        for banned in (forbidden[:8] if isinstance(forbidden, list) else []):
            if not isinstance(banned, str):
                continue
            self.evidence.add(banned[:40])
            if self.forbidden_fails:
                self.replies.append(("forbidden", banned))
                raise CheckFailed(f"`{name}` reaches torch's built-in {banned}; this question asks you to write it "
                                  "yourself")
        try:
            value = wire.unpack(reply.get("value"), reply_blobs)
        except wire.WireError as exc:
            raise CheckFailed(f"`{name}` returned something that is not plain data ({exc})") from None
        self._keep(value)
        return value

    def _misfit(self, misfit, state) -> str:
        """Why the check's weights ``state`` did not load, in the grader's words, from the names the
        code's reply gives: of the weights' own names only those ``state`` has (the reply cannot
        slip text in), and the module's own names only where the check's input is visible."""
        def named(what: str) -> list[str]:
            found = misfit.get(what) if isinstance(misfit, dict) else None
            return sorted({n for n in found if isinstance(n, str)}) if isinstance(found, list) else []

        sent = set(state) if isinstance(state, dict) else set()
        parts = [f"{what}: {', '.join(found)}" for what in ("not expected", "of another size")
                 if (found := [n for n in named(what) if n in sent])]
        if own := named("missing"):
            parts.insert(0, "missing: " + ("parameters of its own that the weights do not name, listed by the "
                                           "visible checks" if self.hidden_input else
                                           ", ".join(n[:60] for n in own[:12])))
        return ("the check's weights do not fit this module" + (f" ({'; '.join(parts)})" if parts else "")
                + ": build exactly the submodules the TODO box names, sized from the constructor's arguments")

    def _keep(self, value) -> None:
        size = _size(value)
        if self._kept + size > KEEP_BYTES:
            self.replies.append(("too large", size))
        else:
            self._kept += size
            self.replies.append(value)


# The exceptions a hidden check names by kind: Python's own (a class the student makes could carry
# the input in its name).
# Whether the last reply answered the check's own input (a call, a module, its parameters) rather
# than an answer variable: on a hidden check, nothing of such a reply is quoted (``checks.shown``).
ON_INPUT: contextvars.ContextVar[bool] = contextvars.ContextVar("on_input", default=False)

_BUILTIN_ERRORS = frozenset(name for name, value in vars(builtins).items()
                            if isinstance(value, type) and issubclass(value, BaseException))


def _forbid(forbid: dict | None) -> dict:
    """A check's tripwires (label -> torch names) as plain data for the request."""
    return {label: list(names) for label, names in (forbid or {}).items()}


def _size(value) -> int:
    """Bytes a reply holds, roughly: its arrays' and strings' bytes."""
    if isinstance(value, (list, tuple)):
        return 8 + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return 8 + sum(len(str(k)) + _size(v) for k, v in value.items())
    if isinstance(value, (str, bytes)):
        return len(value)
    nbytes = getattr(value, "nbytes", None)
    return nbytes if isinstance(nbytes, int) else 8


def in_process(ns: dict) -> Transport:
    """Serve requests from a namespace in this process (a notebook kernel)."""
    from . import server

    def send(header, blobs):
        header = json.loads(json.dumps(header))   # the same plain data a child would receive
        return server.serve(ns, header, blobs)
    return send
