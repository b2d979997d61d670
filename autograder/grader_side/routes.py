"""Which questions' code reaches a forbidden route, judged from the submitted source.

Some questions ask students to write an operation torch already has (a norm, a block without
torch's own layer, a gradient by its closed form). What each one forbids and may use is its
``Rule``, which the problem set declares (``solutions/<set>/grading/__init__.py`` ``RULES``).
Whether a submission takes a route to the library's implementation is decided here, in the
grader, from the notebook's cell sources, never from what the student's process says about
itself (that is evidence only: ``pipeline/routes.py``).

Both graders use it through the pipeline: the step ``pipeline/program.py`` has it judge the code
each notebook runs, in a helper process with a time and memory budget (``analysis.py``), and
the step ``pipeline/routes.py`` applies the verdicts.

``judge(sources)`` parses every cell (IPython syntax included) and, per question, finds the code
the question's names reach: their final definitions, the global names those use (resolved to the
statements that bind them at that point), every statement that patches such a name
(``torch.var_mean = ...``, ``setattr(F, ...)``), code run from constant strings (``exec``,
``%time``), and so on until nothing new is reached. In that code it looks for a route in any
spelling: an attribute, import or alias of a forbidden name, a string naming it (folded from
constants: ``getattr(F, "ge" + "lu")``), a more general operation that reduces to the asked one,
torch's dispatch hooks switched off, the off-limits layer subclassed or its ``forward`` borrowed,
autograd where the closed form is asked.

Clean is proved, not presumed: every name the reached code uses must be the student's own code
(judged the same way) or on the question's allowlist (``Rule.allowed``: tensor arithmetic,
reductions, reshapes, the ``torch.nn`` parts the question allows, math), by its full dotted path
once aliases are resolved. Anything else (a torch function not on the list, an attribute name or
code computed at run time, a builtin held under another name, a store the judge cannot follow, a
module whose code it cannot see) makes the verdict ``unsure`` with the reason and the line, and
the question's points wait for a TA. Code no question reaches (a scratch cell comparing with
torch's own function, the given demo cells) costs nothing.
"""
from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
import symtable
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Any, Union

from autograder.grader_side import syntax

# ---- the rules -------------------------------------------------------------------------------

AUTOGRAD = frozenset({"autograd", "backward", "grad", "functorch", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                       "hvp", "vhp", "jacobian", "grad_and_value", "linearize", "run_backward", "_make_grads",
                       "grad_fn", "retain_grad", "register_hook", "enable_grad", "set_grad_enabled",
                       "requires_grad_", "requires_grad"})
# Switching torch's dispatch hooks off, or reaching into the check's tripwire.
DISPATCH = frozenset({
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl", "_DisableTorchDispatch",
    "_disable_current_modes", "_set_torch_function_mode", "_pop_torch_function_stack",
    "_push_on_torch_function_stack", "_len_torch_function_stack", "_get_function_stack_at",
    "_is_torch_function_mode_enabled", "_set_torch_function_state", "_EnableTorchFunction", "_pop_mode",
    "_push_mode", "_pop_mode_temporarily", "_unset_dispatch_mode", "_set_dispatch_mode", "_python_dispatch",
    "no_dispatch", "_ExcludeDispatchKeyGuard", "_IncludeDispatchKeyGuard", "_ForceDispatchKeyGuard",
    "_DisableFuncTorch", "_RestorePythonTLSSnapshot", "_Tripwire", "_tripwires", "_watch"})


# ---- what a question may use: its allowlist ----------------------------------------------------
# A name the question's code uses must be the student's own code, or one of these, by its full
# dotted path once aliases are resolved (``F.gelu`` -> ``torch.nn.functional.gelu``). Anything else
# torch, numpy or the standard library offers is not judged clean: the question goes to a TA.

# Tensor arithmetic, reductions, reshapes, creation and comparisons: ``torch.X`` and ``torch.Tensor.X``.
_TENSOR_OPS = frozenset("""
    add sub subtract mul multiply div divide true_divide floor_divide remainder fmod neg negative pow square
    sqrt rsqrt exp exp2 expm1 log log2 log10 log1p abs absolute sign reciprocal clamp clip clamp_min clamp_max
    maximum minimum max min where lerp addcmul addcdiv erf erfc tanh sigmoid sin cos tan atan atan2 floor ceil
    round trunc frac hypot
    sum mean var std var_mean std_mean prod amax amin aminmax argmax argmin logsumexp cumsum cumprod
    count_nonzero all any nansum nanmean median
    matmul mm bmm mv dot vdot einsum outer inner tensordot baddbmm addmm addbmm t transpose permute swapaxes
    swapdims movedim reshape view view_as flatten unflatten squeeze unsqueeze cat concat concatenate stack
    hstack vstack split tensor_split chunk unbind narrow select index_select gather scatter scatter_add expand
    expand_as repeat repeat_interleave tile broadcast_to broadcast_tensors flip roll tril triu diag diagonal
    diag_embed masked_fill masked_select take_along_dim numel
    tensor as_tensor from_numpy zeros ones full empty zeros_like ones_like full_like empty_like rand randn
    randint rand_like randn_like randint_like randperm arange linspace logspace eye tril_indices triu_indices
    manual_seed
    eq ne lt le gt ge isclose allclose equal isfinite isnan isinf logical_and logical_or logical_not
    logical_xor sort argsort topk softmax log_softmax relu clone detach contiguous finfo iinfo is_tensor
    is_floating_point no_grad inference_mode get_default_dtype result_type promote_types Size Tensor dtype
    device Generator float32 float float64 double float16 half bfloat16 int64 long int32 int int16 int8
    uint8 bool complex64 inf nan pi e newaxis
""".split())
_TENSOR_METHODS = _TENSOR_OPS | frozenset("""
    to float double half long int bool type_as item tolist numpy new_tensor new_zeros new_ones new_full
    new_empty masked_fill_ fill_ zero_ copy_ add_ mul_ sub_ div_ clamp_ dim ndim ndimension T mT shape size
    dtype is_contiguous cpu element_size
""".split())
# Activations, softmax, linear maps and attention, for every question (``torch.nn.functional.X``).
_FUNCTIONAL = frozenset("""
    gelu relu silu tanh sigmoid softmax log_softmax softplus linear bilinear dropout pad one_hot
    scaled_dot_product_attention
""".split())
# The torch.nn containers and parameter-free layers any module may be built from.
MODULE_BASICS = frozenset("Module ModuleList ModuleDict Sequential Parameter ParameterList ParameterDict Linear "
                           "Identity GELU ReLU SiLU Tanh Sigmoid Softmax Dropout".split())
_STANDARD = frozenset(
    [f"math.{n}" for n in "sqrt exp log log2 log10 log1p expm1 pow erf erfc tanh pi e inf nan tau ceil floor "
                          "prod isclose isqrt isfinite fabs fsum hypot comb factorial sin cos gcd".split()] +
    [f"numpy.{n}" for n in "sqrt exp log pi e inf float32 float64 prod".split()] +
    [f"functools.{n}" for n in "partial reduce wraps lru_cache cache cached_property".split()] +
    [f"itertools.{n}" for n in "pairwise product chain accumulate repeat islice count zip_longest".split()] +
    [f"operator.{n}" for n in "add sub mul truediv matmul neg".split()] +
    [f"typing.{n}" for n in "Optional Union Callable Sequence Iterable Any Tuple List Dict".split()] +
    ["dataclasses.dataclass", "dataclasses.field", "collections.OrderedDict", "collections.namedtuple",
     "warnings.warn", "student_side.check", "student_side.ready"])
# Builtins that reach no code by name.
_SAFE_BUILTINS = frozenset("""
    abs all any bool bytes callable chr complex dict divmod enumerate filter float format frozenset hash id int
    isinstance issubclass iter len list map max min next object ord pow print property range repr reversed
    round set slice sorted staticmethod classmethod str sum super tuple type zip NotImplemented Ellipsis
    __name__ __doc__
""".split())


def allowed(functional: Set[str] = frozenset(), modules: Iterable[str] = frozenset(),
            exact: Iterable[str] = ()) -> frozenset[str]:
    """A question's allowlist: the basics everyone may use, plus ``torch.nn.functional`` names
    ``functional``, ``torch.nn`` names ``modules`` and full dotted names ``exact``."""
    return frozenset({f"torch.{n}" for n in _TENSOR_OPS} | {f"torch.Tensor.{n}" for n in _TENSOR_METHODS}
                     | {f"torch.nn.functional.{n}" for n in _FUNCTIONAL | functional}
                     | {f"torch.nn.{n}" for n in modules} | {"torch.nn.init"} | _STANDARD
                     | {f"torch.linalg.{n}" for n in ("vector_norm", "norm", "matrix_norm")}
                     | set(exact))


@dataclass(frozen=True)
class Rule:
    """What one question forbids (family -> the names that reach it) and what it may use."""
    question: str
    names: tuple[str, ...]                          # the contract's names whose code is judged
    asked: str                                      # what the question asks for, for messages
    families: dict[str, frozenset[str]]
    allowed: frozenset[str] = frozenset()           # full dotted names its code may use (``allowed``)
    under_torch: dict[str, frozenset[str]] = field(default_factory=dict)  # family -> names forbidden only under torch
    words: dict[str, str] = field(default_factory=dict)  # family -> how it reads in a message (beyond REACHES)

    def family(self, name: str, torch_root: bool) -> str | None:
        for fam, members in self.families.items():
            if name in members:
                return fam
        for fam, members in self.under_torch.items():
            if torch_root and name in members:
                return fam
        return None

    def to_data(self) -> dict:
        """The rule as plain JSON data (for the bounded helper that judges, ``analysis.py``)."""
        return {"question": self.question, "names": list(self.names), "asked": self.asked,
                "families": {k: sorted(v) for k, v in self.families.items()}, "allowed": sorted(self.allowed),
                "under_torch": {k: sorted(v) for k, v in self.under_torch.items()}, "words": dict(self.words)}

    @classmethod
    def from_data(cls, d: dict) -> "Rule":
        return cls(d["question"], tuple(d["names"]), d["asked"], {k: frozenset(v) for k, v in d["families"].items()},
                   frozenset(d["allowed"]), {k: frozenset(v) for k, v in d["under_torch"].items()}, dict(d["words"]))

    def reads(self, family: str) -> str:
        return self.words.get(family) or REACHES.get(family, family)

    def allows(self, path: str) -> bool:
        """Whether the dotted ``path`` (aliases resolved) is on the question's list, or under
        ``torch.nn.init`` (initialisers)."""
        return path in self.allowed or path.startswith("torch.nn.init.")


# How a family reads in a message.
REACHES = {
    "builtin": "torch's own implementation of it",
    "dispatch-off": "torch with its dispatch hooks switched off (or the grader's tripwire)",
    "autograd": "autograd",
}

# Modules whose code needs no reading: the standard library, and what the course provides.
_KNOWN_MODULES = set(sys.stdlib_module_names) | {"torch", "numpy", "matplotlib", "student_side", "IPython",
                                                 "scipy", "einops", "tqdm"}
# Modules that reach code or objects by name at run time.
_DYNAMIC_MODULES = {"builtins", "ctypes", "gc", "importlib", "marshal", "pickle", "dill", "cloudpickle", "runpy",
                    "code", "codeop", "pydoc"}
_DYNAMIC_ATTRS = {"__globals__", "__builtins__", "__code__", "__closure__", "__subclasses__", "__dict__",
                  "__getattribute__", "__getattr__", "modules", "f_globals", "f_locals", "f_back", "_getframe",
                  "__import__", "import_module", "get_objects", "attrgetter", "methodcaller", "locate",
                  "user_ns", "user_global_ns", "push", "run_cell", "ex", "ev", "run_code", "safe_execfile"}
# Builtins that reach code or names by a value computed at run time: a call of one is judged on its
# arguments (``getattr(F, "gelu")``); one held under another name may do anything.
_REFLECTIVE = frozenset({"exec", "eval", "compile", "globals", "locals", "vars", "__import__", "getattr", "setattr",
                         "delattr", "hasattr", "breakpoint"})
# Methods that change the object they are called on, when called on a module.
_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove",
                       "__setitem__", "__setattr__", "__delitem__", "__delattr__"})
# Names a notebook kernel defines on its own.
_IPYTHON_NAMES = {"display", "get_ipython", "In", "Out", "exit", "quit", "_", "__", "___"}
# IPython magics that run their argument as code in the notebook's namespace.
_CODE_MAGICS = {"time", "timeit", "prun", "capture", "debug", "pdb"}
# IPython magics that change nothing the checks call.
_INERT_MAGICS = {"matplotlib", "load_ext", "reload_ext", "autoreload", "aimport", "config", "pip", "conda", "env",
                 "cd", "pwd", "ls", "who", "whos", "who_ls", "precision", "xmode", "history", "lsmagic",
                 "system", "sx", "bash", "sh", "html", "HTML", "markdown", "latex", "javascript", "js", "svg",
                 "writefile", "script", "pylab", "notebook", "mkdir", "cat", "echo", "clear", "page", "pinfo",
                 "pinfo2", "psearch", "pdoc", "pdef", "psource", "pfile", "colors", "doctest_mode", "tb"}


# ---- results ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    kind: str       # "route": the question loses its points; "unsure": a TA decides
    family: str     # a key of REACHES, "dynamic" (what the grader cannot resolve), "unlisted" (not on
                    # the question's allowlist) or "judge" (the analysis itself failed or ran out of budget)
    reason: str     # one line: what the code does
    where: str      # "cell 12, line 3"
    code: str       # the source text it is about (short)
    name: str = ""  # the forbidden member it reaches ("group_norm"), for a route


@dataclass
class Verdict:
    """One question's verdict: ``route`` (loses its points), ``unsure`` (for a TA) or ``clean``."""
    question: str
    findings: list[Finding] = field(default_factory=list)
    rule: Rule | None = None

    @property
    def status(self) -> str:
        kinds = {f.kind for f in self.findings}
        return "route" if "route" in kinds else "unsure" if "unsure" in kinds else "clean"

    @property
    def first(self) -> Finding | None:
        order = sorted(self.findings, key=lambda f: f.kind != self.status)
        return order[0] if order else None

    def message(self) -> str:
        """For the student (a route) or the TA (unsure); empty when clean."""
        f, rule = self.first, self.rule
        if f is None or rule is None:
            return ""
        names = ", ".join(f"`{n}`" for n in rule.names)
        if f.kind == "route":
            return (f"not scored: {names} reaches {rule.reads(f.family)}: {f.code} ({f.where}); "
                    f"{self.question} asks for {rule.asked}")
        place = f"{f.code}, {f.where}" if f.code else f.where
        return (f"{self.question}: the grader could not rule out a forbidden route in {names}: {f.reason} "
                f"({place}); check it by hand")


# ---- parsing ---------------------------------------------------------------------------------

@dataclass
class _Stmt:
    node: ast.stmt
    cell: int
    line: int                       # where the statement starts in its cell
    spliced: bool = False           # run from a string: every node is reported at the host's line
    binds: dict[str, str] = field(default_factory=dict)  # name -> "bind" (replaces it) or "touch" (may bind, patch it)
    now: set[str] = field(default_factory=set)       # global names used when the statement runs
    later: set[str] = field(default_factory=set)     # global names used when its functions run
    opaque: str = ""                # why it may bind any name at all ("" if it cannot)
    blind: bool = False             # ... with values the statement does not show (exec, reflection)
    stores: set[int] = field(default_factory=set)    # ids of globals()/vars() calls only written through
    latent: str = ""                # why its functions may, once called
    star: str = ""                  # module of a star import
    nodes: list[tuple[ast.AST, bool]] = field(default_factory=list)  # (node, inside a function body), ast.walk's order
    calls_on: set[str] = field(default_factory=set)  # roots of method calls (``d.update(...)`` -> d): may change them
    module_mutations: set[str] = field(default_factory=set)  # roots changed even when a module (``F.__dict__.update``)


def _parse(source: str) -> ast.Module | None:
    """A cell as Python: as written, else after IPython's transforms, else with magics removed."""
    for attempt in (lambda s: s, _ipython, _strip_magics):
        try:
            text = attempt(source)
            return syntax.parse(text) if text is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _ipython(source: str) -> str | None:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TransformerManager().transform_cell(source)


def _strip_magics(source: str) -> str:
    if source.lstrip().startswith("%%"):
        return ""
    return "".join(line[:len(line) - len(line.lstrip())] + "pass\n" if line.lstrip()[:1] in "%!?" and line.strip()
                   else line for line in source.splitlines(True))


def _magic(call: ast.Call) -> tuple[str, ast.AST | None] | None:
    """(magic name, its code argument) of ``get_ipython().run_line_magic/run_cell_magic(...)``."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr in ("run_line_magic", "run_cell_magic") and call.args):
        return None
    name = _fold(call.args[0])
    code = call.args[-1] if f.attr == "run_cell_magic" and len(call.args) == 3 else (
        call.args[1] if len(call.args) > 1 else None)
    return (name if isinstance(name, str) else "?"), code


def _code_argument(call: ast.Call) -> tuple[bool, ast.AST | None]:
    """(whether the call runs code, the expression holding that code)."""
    if isinstance(call.func, ast.Name) and call.func.id in ("exec", "eval", "compile"):
        return True, call.args[0] if call.args else None
    magic = _magic(call)
    if magic is not None:
        name, code = magic
        if name in _INERT_MAGICS:
            return False, None
        return True, code if name in _CODE_MAGICS else None
    return False, None


# Cells up to this size are kept once read (the last 256 of them, with their syntax trees: a few
# MB): the course's given cells, and a cell several submissions share, are analysed only once.
_CACHED_CELL = 20_000


def _statements(sources: list[str]) -> list[_Stmt]:
    """Every top-level statement in run order, with code run from constant strings spliced in,
    each analysed (what it binds and uses)."""
    return [replace(stmt, cell=cell) for cell, source in enumerate(sources)
            for stmt in (_cell_statements(source) if len(source) <= _CACHED_CELL else _read_cell(source))]


@functools.lru_cache(maxsize=256)
def _cell_statements(source: str) -> tuple[_Stmt, ...]:
    return _read_cell(source)


def _read_cell(source: str) -> tuple[_Stmt, ...]:
    """One cell's statements, analysed, as cell 0 (the analysis is never changed afterwards)."""
    out: list[_Stmt] = []

    def add(body: list[ast.stmt], host_line: int | None = None, depth: int = 0) -> None:
        for node in body:
            line = host_line or node.lineno
            call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
            runs, code = _code_argument(call) if call is not None else (False, None)
            if runs and depth < 5:
                text = _fold(code) if code is not None else None
                parsed = _parse(text) if isinstance(text, str) else None
                if parsed is not None:
                    add(parsed.body, line, depth + 1)
                    continue
            out.append(_Stmt(node, 0, line, host_line is not None))

    module = _parse(source)
    if module is not None:
        add(module.body)
    for s in out:
        try:
            _analyse(s)
        except RecursionError:
            s.opaque = "code nested too deeply to read"
    return tuple(out)


# ---- what each statement binds and uses ------------------------------------------------------

def _root(node: ast.AST) -> str | None:
    """The name at the root of ``a.b[c]``, ``vars(a)[k]``, ``getattr(a, k).b``."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            node = node.value
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name) and \
                node.func.id in ("vars", "getattr"):
            node = node.args[0]
        elif isinstance(node, ast.Name):
            return node.id
        else:
            return None


def _chain(node: ast.expr) -> tuple[str | None, list[str]]:
    """(root name, attributes) of a plain chain ``a.b.c`` -> ("a", ["b", "c"]); (None, [...]) when
    the chain starts at anything but a name (a call, a subscript)."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), attrs[::-1]


def _target_names(target: ast.expr, names: list[str]) -> None:
    if isinstance(target, ast.Name):
        names.append(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            _target_names(t, names)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, names)


def _nodes(root: ast.AST) -> list[tuple[ast.AST, bool]]:
    """Every node of ``root``, in ``ast.walk``'s order, with whether it lies in the body of a
    function or lambda (code that runs only when called, in the function's own namespace)."""
    out: list[tuple[ast.AST, bool]] = []
    todo = deque([(root, False)])
    while todo:
        node, inside = todo.popleft()
        out.append((node, inside))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = {id(b) for b in node.body} if isinstance(node.body, list) else {id(node.body)}
            todo.extend((child, inside or id(child) in body) for child in ast.iter_child_nodes(node))
        else:
            todo.extend((child, inside) for child in ast.iter_child_nodes(node))
    return out


def _analyse(stmt: _Stmt) -> None:
    node = stmt.node
    stmt.nodes = _nodes(node)
    # Names it replaces outright (a plain top-level binding).
    direct: list[str] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        direct.append(node.name)
    elif isinstance(node, ast.Assign):
        for t in node.targets:
            _target_names(t, direct)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        _target_names(node.target, direct)
    elif isinstance(node, ast.Import):
        direct += [a.asname or a.name.split(".")[0] for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        direct += [a.asname or a.name for a in node.names if a.name != "*"]
        if any(a.name == "*" for a in node.names):
            stmt.star = node.module or "?"
    elif isinstance(node, ast.Delete):
        for t in node.targets:
            _target_names(t, direct)
    for name in direct:
        stmt.binds[name] = "bind"
    # Names it may bind or patch: nested bindings, attribute and item assignments, setattr.
    try:
        table = symtable.symtable(ast.unparse(node), "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        stmt.opaque = "code the grader cannot read"
        return
    _uses(table, stmt, now=True)
    called = {id(sub.func) for sub, _ in stmt.nodes if isinstance(sub, ast.Call)}
    # globals()/vars() only written through (``globals()[k] = v``, ``globals().update(...)``): what
    # they may bind is the value the statement shows, which the judge reads.
    stores = {id(t.value) for sub, _ in stmt.nodes if isinstance(sub, (ast.Assign, ast.AugAssign, ast.Delete))
              for t in (sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target])
              if isinstance(t, ast.Subscript)}
    stores |= {id(sub.func.value) for sub, _ in stmt.nodes if isinstance(sub, ast.Call)
               and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("update", "setdefault", "__setitem__")}
    for sym in table.get_symbols():
        if (sym.is_assigned() or sym.is_imported()) and sym.get_name() not in stmt.binds:
            stmt.binds[sym.get_name()] = "touch"
    for sub, in_function in stmt.nodes:
        targets = []
        if isinstance(sub, (ast.Assign, ast.Delete)):
            targets = sub.targets
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
            targets = [sub.target]
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and \
                sub.func.id in ("setattr", "delattr") and sub.args:
            targets = [ast.Attribute(sub.args[0], "?")]
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)):
                root = _root(t)
                if root is not None and root not in stmt.binds:
                    stmt.binds[root] = "touch"
        if isinstance(sub, ast.Call):
            runs, code = _code_argument(sub)
            # exec(code, namespace) inside a function writes only to the namespace it is given.
            own_namespace = in_function and len(sub.args) > 1 and not (
                isinstance(sub.args[1], ast.Call) and isinstance(sub.args[1].func, ast.Name)
                and sub.args[1].func.id == "globals")
            if runs and (code is None or not isinstance(_fold(code), str)) and not own_namespace:
                stmt.opaque, stmt.blind = "runs code built at run time", True
            if isinstance(sub.func, ast.Name) and not sub.args and (
                    sub.func.id == "globals" or sub.func.id in ("vars", "locals") and not in_function):
                stmt.opaque = stmt.opaque or f"writes names through {sub.func.id}()"
                if id(sub) in stores:
                    stmt.stores.add(id(sub))
                else:
                    stmt.blind = True
        if isinstance(sub, ast.Name) and sub.id in ("builtins", "__builtins__"):
            stmt.opaque, stmt.blind = stmt.opaque or "changes Python's builtins", True
        reason = _reaches_anything(sub, called, stmt.binds)
        if reason and in_function:
            stmt.latent = stmt.latent or reason
        elif reason:
            stmt.opaque = stmt.opaque or reason
            stmt.blind = stmt.blind or not reason.startswith("assigns through")
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
            root, attrs = _root(sub.func), _chain(sub.func)[1]
            if root is not None:
                stmt.calls_on.add(root)
                if attrs[-1] in _MUTATORS or any(a.startswith("__") for a in attrs):
                    stmt.module_mutations.add(root)
        if isinstance(sub, ast.Call):
            magic = _magic(sub)
            if magic is not None and magic[0] not in _INERT_MAGICS | _CODE_MAGICS:
                stmt.opaque, stmt.blind = stmt.opaque or f"runs the IPython magic %{magic[0]}", True


def _reaches_anything(node: ast.AST, called: set[int], binds: dict[str, str]) -> str:
    """Why ``node`` may read or write any name at all ("" when it cannot): reflection, a builtin
    that runs or looks up code held under another name, an import by a computed name, a store
    through an expression whose root is not a name."""
    if isinstance(node, ast.Name) and node.id in _REFLECTIVE and id(node) not in called \
            and node.id not in binds and isinstance(node.ctx, ast.Load):
        return f"holds the builtin {node.id} under another name"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
        return "imports a module by a name given at run time"
    if isinstance(node, ast.Attribute) and node.attr in _DYNAMIC_ATTRS and (node.attr != "modules"
                                                                             or _root(node) == "sys"):
        return f"reaches objects through .{node.attr}"
    if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            m.split(".")[0] == "__main__" for m in ([a.name for a in node.names] if isinstance(node, ast.Import)
                                                      else [node.module or ""])):
        return "imports the notebook's own namespace (__main__)"
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        for t in (node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]):
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) is None:
                return "assigns through an expression the grader cannot follow"
    return ""


def _uses(table: symtable.SymbolTable, stmt: _Stmt, now: bool) -> None:
    kind = table.get_type()
    comprehension = kind == "function" and table.get_name() in ("listcomp", "setcomp", "dictcomp", "genexpr")
    if kind == "function" and not comprehension:
        now = False
    into = stmt.now if now else stmt.later
    for sym in table.get_symbols():
        if kind == "function" and sym.is_declared_global() and sym.is_assigned():
            stmt.binds.setdefault(sym.get_name(), "touch")
        if not sym.is_referenced():
            continue
        if kind == "module" or sym.is_global() or (kind == "class" and not sym.is_local()):
            into.add(sym.get_name())
    for child in table.get_children():
        _uses(child, stmt, now)


# ---- reaching definitions --------------------------------------------------------------------

class _Program:
    def __init__(self, stmts: list[_Stmt]):
        self.stmts = stmts
        self.records: dict[str, list[tuple[int, str]]] = {}
        self.reasons = self._opaque(stmts)    # statement -> why it may bind any name at all
        self.called_opaque = {i for i in self.reasons if not stmts[i].opaque}   # through code they call
        self.opaque = sorted(self.reasons)
        self.stars = [(i, s.star) for i, s in enumerate(stmts) if s.star]
        self.aliases: dict[str, set[str]] = {}     # name -> the dotted paths an import binds it to
        for s in stmts:
            for sub, _ in s.nodes:
                for name, path in _imported(sub):
                    self.aliases.setdefault(name, set()).add(path)
        for i, s in enumerate(stmts):
            for name, how in s.binds.items():
                self.records.setdefault(name, []).append((i, how))
            # A method call may change what it is called on (``REGISTRY.update(f=F.gelu)``);
            # on a module, only one that writes into it (``F.__dict__.update``) counts.
            for name in (s.calls_on - self.aliases.keys()) | s.module_mutations:
                if name not in s.binds:
                    self.records.setdefault(name, []).append((i, "touch"))
        self.torch_names = {"torch", "functorch"} | {
            name for s in stmts if isinstance(s.node, (ast.Import, ast.ImportFrom))
            for name in s.binds if _torch_module(s.node, name)}

    @staticmethod
    def _opaque(stmts: list[_Stmt]) -> dict[int, str]:
        """The statements that may bind any name: those that do so when they run, and those that
        call (directly or through other functions) a function that does so when called."""
        reasons = {i: s.opaque for i, s in enumerate(stmts) if s.opaque}
        latent = {i: s.latent for i, s in enumerate(stmts) if s.latent}
        changed = bool(latent)
        while changed:
            changed = False
            names = {n: latent[i] for i in latent for n in stmts[i].binds}
            for i, s in enumerate(stmts):
                now = next((names[n] for n in s.now if n in names), "")
                later = next((names[n] for n in s.later if n in names), "")
                if now and i not in reasons:
                    reasons[i], changed = f"calls code that {now}", True
                if later and i not in latent:
                    latent[i], changed = later, True
        return reasons

    def window(self, name: str, at: int | None = None, later: bool = False) -> tuple[int, int]:
        """The statements [start, end) whose effects ``name`` may have at statement ``at`` (or once
        every cell ran): from its last plain binding before, up to its next one; ``later``: in a
        function statement ``at`` defines, which may be called at any time after, so up to the end."""
        binds = [i for i, how in self.records.get(name, []) if how == "bind"]
        if at is None:
            return max(binds, default=-1), len(self.stmts)
        return (max((i for i in binds if i < at), default=-1),
                len(self.stmts) if later else min((i for i in binds if i >= at), default=len(self.stmts)))

    def defs(self, name: str, at: int | None = None, later: bool = False) -> tuple[set[int], set[int]]:
        """(statements that bind or patch ``name`` in its window, statements there that may bind
        any name at all): what may give ``name`` its value at statement ``at``."""
        start, end = self.window(name, at, later)
        found = {i for i, _ in self.records.get(name, []) if start <= i < end}
        found |= {i for i, _ in self.stars if start <= i < end}
        return found, {i for i in self.opaque if start <= i < end} - found

    def stars_giving(self, name: str, at: int, later: bool) -> list[str]:
        """The modules of star imports that may give ``name`` its value at ``at``. (A module name a
        star import may give again, like ``torch`` from ``torch.nn.functional``, is the same module.)"""
        if any("." not in path for path in self.aliases.get(name, ())):
            return []
        start, end = self.window(name, at, later)
        return [m for i, m in self.stars if start <= i < end]

    def reach(self, names: Iterable[str]) -> tuple[list[int], set[int]]:
        """(every statement the code of ``names`` reaches, those among them reached only because
        they may bind any name: a route there is a TA's question, not a proof)."""
        todo = [(i, maybe) for n in names
                for group, maybe in zip(self.defs(n), (False, True), strict=True) for i in group]
        seen: dict[int, bool] = {}
        while todo:
            i, maybe = todo.pop()
            if i in seen and (maybe or not seen[i]):
                continue
            seen[i] = maybe
            s = self.stmts[i]
            for n in s.now:
                for group, via in zip(self.defs(n, i), (maybe, True), strict=True):
                    todo += [(j, via) for j in group]
            for n in s.later:
                for group, via in zip(self.defs(n, i, later=True), (maybe, True), strict=True):
                    todo += [(j, via) for j in group]
        return sorted(seen), {i for i, maybe in seen.items() if maybe}


def _imported(node: ast.AST) -> list[tuple[str, str]]:
    """(name bound, dotted path it is bound to) for an import statement: ``import torch.nn as nn``
    -> [("nn", "torch.nn")], ``import torch.nn`` -> [("torch", "torch")], ``from torch import nn as m``
    -> [("m", "torch.nn")]."""
    if isinstance(node, ast.Import):
        return [(a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0]) for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names if a.name != "*"]
    return []


def _torch_module(node: ast.Import | ast.ImportFrom, name: str) -> bool:
    if isinstance(node, ast.Import):
        return any((a.asname or a.name.split(".")[0]) == name and a.name.split(".")[0] in ("torch", "functorch")
                   for a in node.names)
    return (node.module or "").split(".")[0] in ("torch", "functorch")


# ---- looking for routes ----------------------------------------------------------------------

# What folding a constant expression gives: a string, number, bytes or a list of them.
Folded = Union[str, bytes, int, float, list["Folded"]]
_IDENTIFIER_PATH = re.compile(r"^[A-Za-z_][\w.:]*$")
_MAX_TEXT = 10_000
# Folding may build at most this much from its inputs (their size times the receiver's): a
# method or format whose output could be larger is not folded at all.
_MAX_WORK = 1_000_000
# A format field with a width or precision, given or taken from the arguments ("%9999s",
# "%.3000000d", "%*d", "{:>9999}", "{:{}}"): folding it could allocate without bound.
_WIDE = re.compile(r"%(?:\([^)]*\))?[-+ #0]*[\d*.]|\{[^}]*[:!][^}]*[\d{]")


def _size(value: object) -> int:
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, list):
        return len(value) + sum(_size(v) for v in value)
    return 1


def _small(value: Folded | None) -> Folded | None:
    """``value`` when it is within the folding cap, else None."""
    return value if value is None or _size(value) <= _MAX_TEXT else None


def _fold(node: ast.AST | None, depth: int = 0) -> Folded | None:
    """The constant a small expression evaluates to (strings, numbers, bytes, lists), or None;
    None too for any result over ``_MAX_TEXT`` whatever produced it, and for an expression whose
    result could be larger than ``_MAX_WORK`` before it is computed."""
    return _small(_fold_any(node, depth))


def _fold_any(node: ast.AST | None, depth: int) -> Folded | None:
    if node is None or depth > 20:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, bytes, int, float)) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _fold(node.operand, depth + 1)
        return -value if isinstance(value, (int, float)) else None
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_fold(e, depth + 1) for e in node.elts]
        folded = [i for i in items if i is not None]
        return folded if len(folded) == len(items) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            value = _fold(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1)
            if value is None or (isinstance(v, ast.FormattedValue) and v.format_spec is not None):
                return None
            parts.append(str(value))
        return "".join(parts)
    if isinstance(node, ast.BinOp):
        # Any: Python's own operators decide which operand types they take; what they refuse
        # raises, and is caught below (the same holds for the subscripts and calls that follow).
        left: Any = _fold(node.left, depth + 1)
        right: Any = _fold(node.right, depth + 1)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Mult):
                times, seq = (right, left) if isinstance(right, int) else (left, right)
                if isinstance(times, int) and hasattr(seq, "__len__") and len(seq) * times <= _MAX_TEXT:
                    return seq * times
                return None
            if isinstance(node.op, ast.Mod) and isinstance(left, str) and not _WIDE.search(left) \
                    and _size(left) * (1 + _size(right)) <= _MAX_WORK:
                return left % (tuple(right) if isinstance(right, list) else right)
        except Exception:
            return None
        return None
    if isinstance(node, ast.Subscript):
        base: Any = _fold(node.value, depth + 1)
        if isinstance(node.slice, ast.Slice):
            bounds: list[Any] = [_fold(p, depth + 1) if p is not None else None for p in
                                 (node.slice.lower, node.slice.upper, node.slice.step)]
            try:
                return base[slice(*bounds)] if base is not None else None
            except Exception:
                return None
        index: Any = _fold(node.slice, depth + 1)
        try:
            return base[index] if base is not None and index is not None else None
        except Exception:
            return None
    if isinstance(node, ast.Call) and not node.keywords:
        args: list[Any] = [_fold(a, depth + 1) for a in node.args]

        if any(a is None for a in args):
            return None
        if isinstance(node.func, ast.Name) and node.func.id in ("chr", "str", "bytes") and len(args) == 1 \
                and not (node.func.id == "bytes" and not isinstance(args[0], list)):
            try:
                convert: dict[str, Callable[[Any], Any]] = {"chr": chr, "str": str, "bytes": lambda b: bytes(b)}
                return convert[node.func.id](args[0])
            except Exception:
                return None
        if isinstance(node.func, ast.Attribute):
            value = _fold(node.func.value, depth + 1)
            method = node.func.attr
            if method == "format" and isinstance(value, str) and _WIDE.search(value) or \
                    _size(value) * (1 + sum(_size(a) for a in args)) > _MAX_WORK:
                return None
            if isinstance(value, (str, bytes)) and method in ("join", "lower", "upper", "replace", "strip", "lstrip",
                                                              "rstrip", "format", "decode", "encode", "title",
                                                              "capitalize", "swapcase", "removeprefix",
                                                              "removesuffix"):
                try:
                    return getattr(value, method)(*args)
                except Exception:
                    return None
            if method == "fromhex" and isinstance(node.func.value, ast.Name) and node.func.value.id == "bytes":
                try:
                    return bytes.fromhex(*args)
                except Exception:
                    return None
    return None


# Modules whose star import the judge may look into (importing them has no side effect).
_STAR_MODULES = {"math", "cmath", "random", "itertools", "functools", "operator", "collections", "typing", "numpy",
                 "numpy.linalg"}


def _star_gives(module: str, name: str) -> bool:
    """Whether ``from module import *`` defines ``name``, for the modules in ``_STAR_MODULES``."""
    if module not in _STAR_MODULES:
        return False
    try:
        found = importlib.import_module(module)
    except ImportError:
        return False
    exported = getattr(found, "__all__", None)
    return name in exported if exported is not None else hasattr(found, name) and not name.startswith("_")


def _words(text: object) -> list[str]:
    """The identifiers a string could name: 'aten::native_group_norm.default' -> [aten, native_group_norm, default]."""
    if isinstance(text, bytes):
        try:
            text = text.decode()
        except UnicodeDecodeError:
            return []
    if not isinstance(text, str) or not _IDENTIFIER_PATH.match(text.strip()):
        return []
    return [w for w in re.split(r"[.:]+", text.strip()) if w]


@dataclass
class _Context:
    """What visiting one statement's nodes needs to know about them."""
    docstrings: set[int]    # ids of string constants that are docstrings
    inner: set[int]         # ids of nodes that start a longer chain (``torch`` and ``torch.nn`` in torch.nn.gelu)
    called: set[int]        # ids of nodes that are called
    bases: set[int]         # ids of nodes that are a class's bases
    free: set[str] | None   # global names the nodes use (None: any)


def _is_exception(name: str) -> bool:
    return isinstance(getattr(builtins, name, None), type) and issubclass(getattr(builtins, name), BaseException)


class _Scanner:
    """Looks for one rule's routes in the statements a question reaches, and for what its
    allowlist does not cover."""

    def __init__(self, rule: Rule, program: _Program, labels: Callable[[int], str]) -> None:
        self.rule, self.program, self.labels = rule, program, labels
        self.findings: list[tuple[tuple[int, int], Finding]] = []   # ((cell, line), finding)
        self.inside_string = 0      # the line of the exec(...) whose code is being read, if any
        self.doubtful = False       # the statement is reached only because it may bind any name
        self.doubt = "a statement that may redefine it"     # ... or another reason a route there is not proof
        self.at = 0                 # the statement being read
        self.shown_stores: set[int] = set()  # its globals() calls only written through, when that is all it hides
        self.dead: set[int] = set()      # ids of methods the question's class overrides (never run for it)
        self.unused: set[int] = set()    # ids of methods nothing in the notebook refers to

    def add(self, kind: str, family: str, reason: str, node: ast.AST, where: tuple[int, int], name: str = "") -> None:
        if kind == "route" and self.doubtful:   # it may not be what the question runs: a TA decides
            kind, reason = "unsure", f"{self.doubt} {reason}"
        try:
            code = ast.unparse(node)
        except Exception:
            code = type(node).__name__
        code = " ".join(code.split())
        code = code if len(code) <= 70 else code[:67] + "..."
        cell, line = where
        self.findings.append(((cell, line), Finding(kind, family, reason, f"{self.labels(cell)}, line {line}", code,
                                                    name)))

    def stmt(self, i: int) -> None:
        self.at = i
        s = self.program.stmts[i]
        # A statement reached only because it may bind any name, whose values are all in sight, is
        # judged by those values alone.
        shown = self.doubtful and not s.blind and not s.latent and i not in self.program.called_opaque
        if i in self.program.reasons and not shown:
            self.add("unsure", "dynamic", f"{self.program.reasons[i]}, which may redefine it", s.node, (s.cell, s.line))
        self.shown_stores = s.stores if shown else set()
        nodes = [n for n, _ in s.nodes] if s.nodes else list(ast.walk(s.node))
        self.walk_nodes(nodes, s, 0, s.now | s.later)

    def walk_nodes(self, nodes: list[ast.AST], s: _Stmt, depth: int, free: set[str] | None) -> None:
        """Visit ``nodes``; ``free`` holds the global names they use (None: every name may be global).
        A method the question's class overrides is not visited; in one nothing refers to, a route
        is a TA's question."""
        skip = {id(n) for f in nodes if id(f) in self.dead for n in ast.walk(f)}
        doubt = {id(n) for f in nodes if id(f) in self.unused for n in ast.walk(f)}
        nodes = [n for n in nodes if id(n) not in skip]
        docstrings = {id(n.value) for n in nodes if isinstance(n, ast.Expr)
                      and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
        inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        bases = {id(b) for n in nodes if isinstance(n, ast.ClassDef) for b in n.bases}
        ctx = _Context(docstrings, inner, called, bases, free)
        outer, why = self.doubtful, self.doubt
        for node in nodes:
            self.doubtful = outer or id(node) in doubt
            self.doubt = why if outer or id(node) not in doubt else "a method nothing in the notebook calls"
            self.visit(node, s, ctx, depth)
        self.doubtful, self.doubt = outer, why

    def where(self, s: _Stmt, node: ast.AST) -> tuple[int, int]:
        if s.spliced or self.inside_string:
            return s.cell, self.inside_string or s.line
        return s.cell, getattr(node, "lineno", s.line)

    def walk(self, root: ast.AST, s: _Stmt, depth: int) -> None:
        self.walk_nodes(list(ast.walk(root)), s, depth, None)

    def torch_root(self, node: ast.AST) -> bool:
        root = _root(node)
        return root in self.program.torch_names

    def route(self, name: str, node: ast.AST, s: _Stmt, torch_root: bool, reason: str | None = None) -> bool:
        family = self.rule.family(name, torch_root)
        if family is not None:
            self.add("route", family, reason or f"uses {name}", node, self.where(s, node), name)
            return True
        return False

    def path(self, path: str, node: ast.AST, s: _Stmt, how: str = "uses") -> None:
        """Judge a dotted name the code reaches (aliases resolved): on the question's list, a
        member of a forbidden family, or neither (a TA decides)."""
        if self.rule.allows(path):
            return
        words = path.split(".")
        torch_root = words[0] in ("torch", "functorch")
        for k, w in enumerate(words):
            family = self.rule.family(w, torch_root)
            if family is not None:   # named from the forbidden member on: "TransformerEncoderLayer.forward"
                self.add("route", family, f"{how} {path}", node, self.where(s, node), ".".join(words[k:]))
                return
        self.add("unsure", "unlisted", f"{how} {path}, which is not among the operations "
                 f"{self.rule.question} may use", node, self.where(s, node))

    def aliased(self, name: str, ctx: _Context) -> set[str]:
        """The dotted paths a global ``name`` is imported as (empty when it is not an import)."""
        if ctx.free is not None and name not in ctx.free:
            return set()
        return self.program.aliases.get(name, set())

    def visit(self, node: ast.AST, s: _Stmt, ctx: _Context, depth: int) -> None:
        if isinstance(node, ast.Attribute):
            root, attrs = _chain(node)
            paths = self.aliased(root, ctx) if root is not None else set()
            if paths:
                if id(node) not in ctx.inner:   # the whole chain: torch.nn.functional.gelu
                    for p in sorted(paths):
                        self.path(".".join([p, *attrs]), node, s, "subclasses" if id(node) in ctx.bases else "uses")
            else:
                self.route(node.attr, node, s, self.torch_root(node.value))
            if node.attr in _DYNAMIC_ATTRS and (node.attr != "modules" or _root(node) == "sys"):
                self.add("unsure", "dynamic", f"reaches objects through .{node.attr}", node, self.where(s, node))
            if node.attr in ("load", "loads") and self.torch_root(node.value):
                self.add("unsure", "dynamic", "loads objects saved elsewhere (their code is not in the notebook)", node,
                         self.where(s, node))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            self.name(node, s, ctx)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                words = module.split(".")
                torch_root = words[0] in ("torch", "functorch")
                for w in words:
                    self.route(w, node, s, torch_root, f"imports {module}")
                if words[0] not in _KNOWN_MODULES:
                    self.add("unsure", "dynamic", f"imports {module}, whose code the grader cannot read", node,
                             self.where(s, node))
                elif words[0] in _DYNAMIC_MODULES:
                    self.add("unsure", "dynamic", f"imports {module}, which reaches code by name at run time", node,
                             self.where(s, node))
            if isinstance(node, ast.ImportFrom):
                torch_root = (node.module or "").split(".")[0] in ("torch", "functorch")
                for a in node.names:
                    self.route(a.name, node, s, torch_root, f"imports {a.name} from {node.module}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in ctx.docstrings:
            words = _words(node.value)   # a dotted or aten:: reference ("aten::native_group_norm"); a bare
            for w in words if len(words) > 1 else ():   # word is a name in a message or a key, not a use
                if self.route(w, node, s, True, f"names {w} in a string"):
                    break
        elif isinstance(node, ast.Subscript):
            key = _fold(node.slice)
            if isinstance(key, (str, bytes)) and not isinstance(node.slice, ast.Constant):
                for w in _words(key):
                    if self.route(w, node, s, True, f"looks up {w} by a string"):
                        break
        elif isinstance(node, ast.Call):
            self.call(node, s, ctx, depth)

    def name(self, node: ast.Name, s: _Stmt, ctx: _Context) -> None:
        """A name read on its own (not the start of a chain): an imported function or module, a
        builtin, a name only a star import defines, or the student's own (reached: nothing to do)."""
        global_here = ctx.free is None or node.id in ctx.free
        paths = self.aliased(node.id, ctx)
        if paths and id(node) not in ctx.inner:
            for p in sorted(paths):
                self.path(p, node, s, "subclasses" if id(node) in ctx.bases else "uses")
        if not global_here or node.id in _IPYTHON_NAMES:
            return
        stars = self.program.stars_giving(node.id, self.at, node.id not in s.now)
        if stars:
            given = [m for m in stars if m.split(".")[0] in ("torch", "functorch") or _star_gives(m, node.id)]
            for m in given:
                self.path(f"{m}.{node.id}", node, s, "uses (from a star import)")
            if not given and node.id not in self.program.records and not hasattr(builtins, node.id):
                self.add("unsure", "dynamic", f"uses {node.id}, which only a star import can define",
                         node, self.where(s, node))
            return
        if node.id in self.program.records:
            return
        if hasattr(builtins, node.id):
            if node.id in ("builtins", "__builtins__"):
                self.add("unsure", "dynamic", "changes or reads Python's builtins", node, self.where(s, node))
            elif not (node.id in _SAFE_BUILTINS or _is_exception(node.id)
                      or node.id in _REFLECTIVE and id(node) in ctx.called):
                self.add("unsure", "unlisted", f"uses the builtin {node.id}, which is not among the operations "
                         f"{self.rule.question} may use", node, self.where(s, node))
            return

    def call(self, node: ast.Call, s: _Stmt, ctx: _Context, depth: int) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        runs, code = _code_argument(node)
        if runs:
            text = _fold(code) if code is not None else None
            parsed = _parse(text) if isinstance(text, (str,)) and depth < 5 else None
            if parsed is None:
                self.add("unsure", "dynamic", "runs code built at run time", node, self.where(s, node))
            else:
                outer, self.inside_string = self.inside_string, self.where(s, node)[1]
                self.walk(parsed, s, depth + 1)
                self.inside_string = outer
            return
        if name in ("getattr", "setattr", "delattr", "hasattr", "__getattribute__", "__getattr__", "attrgetter",
                    "methodcaller", "__import__", "import_module", "locate", "get_overloads"):
            index = 1 if name in ("getattr", "setattr", "delattr", "hasattr") else 0
            if len(node.args) > index:
                key = _fold(node.args[index])
                owner = node.args[0] if index == 1 else None
                base = self.aliased(owner.id, ctx) if isinstance(owner, ast.Name) else set()
                if isinstance(key, str) and base and _IDENTIFIER_PATH.match(key):
                    for p in sorted(base):
                        self.path(f"{p}.{key}", node, s, "looks up")
                elif isinstance(key, (str, bytes)):
                    for w in _words(key):
                        if self.route(w, node, s, True, f"looks up {w} by a string"):
                            break
                elif not (index == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls")):
                    self.add("unsure", "dynamic", "looks up a name computed at run time", node, self.where(s, node))
        elif name in ("globals", "locals", "vars") and isinstance(func, ast.Name) and id(node) not in self.shown_stores:
            self.add("unsure", "dynamic", f"reaches names through {name}()", node, self.where(s, node))


# ---- the judge -------------------------------------------------------------------------------

def judge(sources: Sequence[str], rules: Mapping[str, Rule],
          labels: Callable[[int], str] | None = None) -> dict[str, Verdict]:
    """Per question of ``rules`` (question -> ``Rule``), the verdict on the notebook whose code cells, in run
    order, are ``sources``. ``labels(i)`` names cell ``i`` in messages (default "cell i+1").

    Never raises for anything the sources contain; a question whose names no cell defines is clean
    (its checks fail on their own).
    """
    labels = labels or (lambda i: f"cell {i + 1}")
    stmts = _statements([s if isinstance(s, str) else "" for s in sources])
    program = _Program(stmts)
    verdicts: dict[str, Verdict] = {}
    for qid, rule in rules.items():
        scanner = _Scanner(rule, program, labels)
        reached, maybe = program.reach(rule.names)
        scanner.dead, scanner.unused = _methods_not_run(program, rule.names)
        for i in reached:
            scanner.doubtful = i in maybe
            try:
                scanner.stmt(i)
            except RecursionError:
                scanner.add("unsure", "dynamic", "code nested too deeply to read", stmts[i].node,
                            (stmts[i].cell, stmts[i].line))
        verdicts[qid] = Verdict(qid, _unique(scanner.findings), rule)
    return verdicts


def judge_notebook(notebook: Mapping[str, Any], rules: Mapping[str, Rule]) -> dict[str, Verdict]:
    """``judge`` on a notebook (an nbformat node or its JSON as a dict): its code cells in order,
    each named in messages by its ``grade_id`` when it has one."""
    cells = [c for c in notebook.get("cells", []) if isinstance(c, dict) and c.get("cell_type") == "code"]
    sources = [c.get("source", "") if isinstance(c.get("source"), str) else "".join(c.get("source") or [])
               for c in cells]
    ids = [((c.get("metadata") or {}).get("nbgrader") or {}).get("grade_id") for c in cells]

    def label(i: int) -> str:
        grade_id = ids[i] if 0 <= i < len(ids) else None
        return f"cell {grade_id[:40]}" if isinstance(grade_id, str) else f"code cell {i + 1}"

    return judge(sources, rules, label)


# Methods torch.nn.Module (or Python) calls by itself: a class that defines one has it run.
_CALLED_BY_TORCH = frozenset("""
    forward extra_repr state_dict load_state_dict _load_from_state_dict _save_to_state_dict _apply apply to cuda
    cpu float double half bfloat16 train eval parameters named_parameters buffers named_buffers children
    named_children modules named_modules register_buffer register_parameter register_module add_module
    zero_grad requires_grad_ share_memory type get_submodule get_parameter get_buffer
""".split())


def _methods_not_run(program: _Program, names: Iterable[str]) -> tuple[set[int], set[int]]:
    """(ids of the methods a question's class overrides, ids of methods nothing refers to), among
    the classes the question's names are and their bases (plain names of classes in the notebook).

    A base's method is dead for the question when a class before it in the chain defines the same
    name and no class before it calls ``super()`` or names ``Base.method``; a method whose name
    no statement of the notebook uses (as an attribute, a name or a string), that is not a dunder
    and not one torch calls itself, may be dead code, so what it reaches is a TA's question.
    """
    classes: dict[str, ast.ClassDef] = {}
    for s in program.stmts:
        if isinstance(s.node, ast.ClassDef):
            classes[s.node.name] = s.node          # the last definition of each name
    referenced: set[str] = set()
    for s in program.stmts:
        for node, _ in s.nodes:
            if isinstance(node, ast.Attribute):
                referenced.add(node.attr)
            elif isinstance(node, ast.Name):
                referenced.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                referenced.update(_words(node.value))
    dead: set[int] = set()
    unused: set[int] = set()
    for name in names:
        chain: list[ast.ClassDef] = []
        cls = classes.get(name)
        while cls is not None and cls not in chain:
            chain.append(cls)
            base = cls.bases[0] if len(cls.bases) == 1 else None
            cls = classes.get(base.id) if isinstance(base, ast.Name) else None
        defined: set[str] = set()
        for k, cls in enumerate(chain):
            methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            later = {n.attr for c in chain[:k] for n in ast.walk(c) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == cls.name}
            reaches_up = any(isinstance(n, ast.Name) and n.id == "super" for c in chain[:k] for n in ast.walk(c))
            for m in methods:
                if m.name in defined and not reaches_up and m.name not in later:
                    dead.add(id(m))
                elif not (m.name.startswith("__") or m.name in _CALLED_BY_TORCH or m.name in referenced):
                    unused.add(id(m))
            defined |= {m.name for m in methods}
    return dead, unused


def _unique(findings: list[tuple[tuple[int, int], Finding]]) -> list[Finding]:
    seen: set[tuple[str, str, str, str]] = set()
    out: list[Finding] = []

    for _, f in sorted(findings, key=lambda pair: pair[0]):
        if (f.kind, f.family, f.where, f.code) not in seen:
            seen.add((f.kind, f.family, f.where, f.code))
            out.append(f)
    return out
