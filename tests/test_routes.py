"""Forbidden routes are judged from the submitted source, in the grader (``grader_side/routes.py``).

The judge is tested on spellings of each route a student might write, on code that must stay
clean (a scratch cell comparing with the builtin, a dead first attempt, the given demo cells),
on the whole catalogue, and on garbage; then end to end through ``course autograde``, where a
route costs the question its points whatever the child says about itself.
"""
from __future__ import annotations

import random

import nbformat
import pytest

import week4
import week4 as checks
import week4 as contract
from autograder import api
from autograder.grader_side import analysis
from autograder.grader_side.assignment import REPO, Assignment, notebook, solved
from autograder.grader_side.misconceptions import edits
from autograder.grader_side.pipeline import routes as step
from autograder.grader_side.pipeline.submission import Env, Outcome, Submission
from autograder.tooling.sampleclass import write_submission
from week4 import catalogue, variants

pytestmark = pytest.mark.unit   # in this process: `make test-unit` (its sandboxed tests are marked)

GIVEN = "import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n" \
        "from student_side import check, ready\n"
HONEST_B1 = '''def layer_norm(x, gamma, beta, eps=1e-5):
    """gamma * (x - mu) / sqrt(sigma^2 + eps) + beta, as F.layer_norm computes it."""
    sigma2, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return gamma * (x - mu) / torch.sqrt(sigma2 + eps) + beta
'''


def _ln(body: str) -> str:
    return "def layer_norm(x, g, b, eps=1e-5):\n" + "".join(f"    {line}\n" for line in body.splitlines())


# (cells after the given imports, question, expected status, expected family or None)
CASES = {
    "honest": ([HONEST_B1], "B1", "clean", None),
    "scratch_compares_with_builtin": ([HONEST_B1, "x = torch.randn(3, 5)\ny = F.layer_norm(x, (5,))\n"
                                       "assert torch.allclose(layer_norm(x, torch.ones(5), torch.zeros(5)), y)"],
                                      "B1", "clean", None),
    "dead_first_attempt": ([_ln("return F.layer_norm(x, x.shape[-1:], g, b, eps)"), HONEST_B1], "B1", "clean", None),
    "local_named_like_a_global": (["x = F.layer_norm(torch.randn(2, 4), (4,))",
                                   _ln("x = x - x.mean(-1, keepdim=True)\nreturn g * x / x.std(-1, keepdim=True, "
                                       "correction=0) + b")], "B1", "clean", None),
    "syntax_error_elsewhere": ([HONEST_B1, "def broken(:\n    pass"], "B1", "clean", None),
    "functional": ([_ln("return F.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "torch_layer_norm": ([_ln("return torch.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "full_module_path": ([_ln("return torch.nn.functional.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                         "builtin"),
    "alias_in_another_cell": (["ln = F.layer_norm", _ln("return ln(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                              "builtin"),
    "imported_under_a_name": (["from torch.nn.functional import layer_norm as normalize\n" +
                               _ln("return normalize(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "module_in_a_helper": (["_norm = nn.LayerNorm(8)", _ln("return _norm(x)")], "B1", "route", "builtin"),
    "native_op": ([_ln("return torch.ops.aten.native_layer_norm(x, [x.shape[-1]], g, b, eps)[0]")], "B1", "route",
                  "builtin"),
    "op_named_in_a_string": ([_ln("op = torch._C._get_operation_overload('aten::native_layer_norm', 'default')\n"
                                  "return op(x, [x.shape[-1]], g, b, eps)[0]")], "B1", "route", "builtin"),
    "getattr_folded": ([_ln("return getattr(F, 'layer_' + 'norm')(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                       "builtin"),
    "getattr_reversed": ([_ln("return getattr(F, 'mron_reyal'[::-1])(x, x.shape[-1:], g, b, eps)")], "B1", "route",
                         "builtin"),
    "module_dict": ([_ln("return F.__dict__['layer' + '_norm'](x, x.shape[-1:], g, b, eps)")], "B1", "route",
                    "builtin"),
    "group_norm": ([_ln("return F.group_norm(x.reshape(-1, 1, x.shape[-1]), 1, eps=eps).reshape(x.shape) * g + b")],
                   "B1", "route", "general-norm"),
    "torch_group_norm": ([_ln("return torch.group_norm(x.reshape(-1, 1, x.shape[-1]), 1).reshape(x.shape) * g + b")],
                         "B1", "route", "general-norm"),
    "instance_norm": ([_ln("return F.instance_norm(x.reshape(1, -1, x.shape[-1])).reshape(x.shape) * g + b")], "B1",
                      "route", "general-norm"),
    "rms_norm_of_centered_rows": ([_ln("c = x - x.mean(-1, keepdim=True)\nreturn F.rms_norm(c, c.shape[-1:], g, eps) "
                                       "+ b")], "B1", "route", "general-norm"),
    "star_import": (["from torch.nn.functional import *\n" + _ln("return group_norm(x, 1) * g + b")], "B1", "route",
                    "general-norm"),
    "dispatch_off": ([_ln("with torch._C.DisableTorchFunction():\n    return F.normalize(x)")], "B1", "route",
                     "dispatch-off"),
    "disabled_impl": ([_ln("return torch._C._disabled_torch_function_impl(F.normalize, (), (x,), {})")], "B1",
                      "route", "dispatch-off"),
    "clears_the_tripwire": ([_ln("import sys\n"
                                 "sys.modules['student_side.server']._watch = lambda forbid, reached, run: run()\n"
                                 "return x")], "B1", "route", "dispatch-off"),
    "patches_torch_in_another_cell": ([HONEST_B1, "torch.var_mean = lambda x, **k: (F.layer_norm(x, x.shape[-1:]), 0)"],
                                      "B1", "route", "builtin"),
    "setattr_on_torch": ([HONEST_B1, "setattr(torch, 'sqrt', lambda t: F.group_norm(t, 1))"], "B1", "route",
                         "general-norm"),
    "patch_inside_a_function": ([HONEST_B1, "def setup():\n    torch.var_mean = F.layer_norm\nsetup()"], "B1", "route",
                                "builtin"),
    "exec_of_a_constant": (["exec('def layer_norm(x, g, b, eps=1e-5):\\n"
                            "    return F.layer_norm(x, x.shape[-1:], g, b)')"],
                           "B1", "route", "builtin"),
    "line_magic": (["%time layer_norm = lambda x, g, b, eps=1e-5: F.layer_norm(x, x.shape[-1:], g, b, eps)"], "B1",
                   "route", "builtin"),
    "cell_magic": (["%%time\n" + _ln("return F.layer_norm(x, x.shape[-1:], g, b, eps)")], "B1", "route", "builtin"),
    "exec_with_its_own_namespace_elsewhere": ([HONEST_B1, "def rms_norm(x, g, eps=1e-6):\n    space = {}\n"
                                               "    exec(open('notes.py').read(), space)\n    return space['f'](x)"],
                                              "B1", "clean", None),
    "exec_into_globals_elsewhere": ([HONEST_B1, "def setup(code):\n    exec(code, globals())"], "B1", "unsure", None),
    "getattr_computed": (["import os\n" + _ln("return getattr(F, os.environ['NAME'])(x, x.shape[-1:], g, b, eps)")],
                         "B1", "unsure", None),
    "exec_computed": ([HONEST_B1, "import base64\nexec(base64.b64decode('bGF5ZXJfbm9ybQ==').decode())"], "B1", "unsure",
                      None),
    "star_import_of_math": (["from math import *\n" + _ln("return g * (x - x.mean(-1, keepdim=True)) / sqrt(2) + b")],
                            "B1", "clean", None),
    "name_no_cell_defines_after_a_star_import": (["from numpy import *\n" + _ln("return helper(x)")], "B1", "unsure",
                                                 None),
    "loads_a_saved_module": (["torch.save(nn.LayerNorm(8), 'ln.pt')",
                              _ln("return torch.load('ln.pt', weights_only=False)(x)")],
                             "B1", "unsure", None),
    "unreadable_module": (["from my_helpers import normalize\n" + _ln("return normalize(x) * g + b")], "B1", "unsure",
                          None),
    "b2_builtin": (["def rms_norm(x, g, eps=1e-6):\n    return F.rms_norm(x, x.shape[-1:], g, eps)"], "B2", "route",
                   "builtin"),
    "b2_module": (["def rms_norm(x, g, eps=1e-6):\n    return nn.RMSNorm(x.shape[-1], eps=eps)(x) * g"], "B2", "route",
                  "builtin"),
    "b2_layer_norm_of_x_and_minus_x": (["def rms_norm(x, g, eps=1e-6):\n    y = torch.cat([x, -x], -1)\n"
                                        "    return F.layer_norm(y, y.shape[-1:], eps=eps)[..., :x.shape[-1]] * g"],
                                       "B2", "route", "general-norm"),
    "b3_autograd_grad": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n    x = x.requires_grad_()\n"
                          "    return torch.autograd.grad(layer_norm(x, gamma, 0 * gamma, eps), x, grad_out)"],
                         "B3", "route", "autograd"),
    "b3_backward": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n    x = x.requires_grad_()\n"
                     "    (layer_norm(x, gamma, 0 * gamma, eps) * grad_out).sum().backward()\n    return x.grad"],
                    "B3", "route", "autograd"),
    "b3_torch_func": (["from torch.func import vjp\ndef layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
                       "    return vjp(lambda t: t, x)[1](grad_out)"], "B3", "route", "autograd"),
    "b3_demo_cell_is_not_its_code": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
                                      "    return x, gamma, gamma",
                                      "leaves = [torch.randn(3, 4).requires_grad_()]\n"
                                      "F.layer_norm(leaves[0], (4,)).backward(torch.randn(3, 4))"],
                                     "B3", "clean", None),
    "b6_subclass": (["class PreNormBlock(nn.TransformerEncoderLayer):\n    pass"], "B6", "route", "transformer-layer"),
    "b6_borrowed_forward": (["_forward = nn.TransformerEncoderLayer.forward",
                             "class PreNormBlock(nn.Module):\n    def forward(self, x, causal=True):\n"
                             "        return _forward(self, x)"], "B6", "route", "transformer-layer"),
    "b6_functional_layer_norm_is_fine": (["class PreNormBlock(nn.Module):\n    def forward(self, x, causal=True):\n"
                                          "        return F.layer_norm(x, x.shape[-1:])"], "B6", "clean", None),
    "b6_scratch_comparison": (["class PreNormBlock(nn.Module):\n    pass",
                               "reference = nn.TransformerEncoderLayer(16, 4)\n"
                               "print(reference(torch.randn(2, 3, 16)))"],
                              "B6", "clean", None),
    "b7_base_patched_later": (["class PreNormBlock(nn.Module):\n    pass",
                               "class PostNormBlock(PreNormBlock):\n    pass",
                               "PreNormBlock._mlp = lambda self, h: nn.Transformer()(h)"], "B7", "route",
                              "transformer-layer"),
}


# Disguised routes: each must be caught (a route) or handed to a TA (unsure), never judged clean.
DISGUISES = {
 "dict_update": (["OPS = {}\n"
                  "OPS.update(norm=F.layer_norm)", _ln("return OPS['norm'](x, x.shape[-1:], g, b, eps)")], "B1"),
 "list_append": (["OPS = []\nOPS.append(F.layer_norm)", _ln("return OPS[0](x, x.shape[-1:], g, b, eps)")], "B1"),
 "setdefault": (["OPS = {}\n"
                 "OPS.setdefault('n', F.layer_norm)", _ln("return OPS['n'](x, x.shape[-1:], g, b, eps)")], "B1"),
 "module_dict_update": ([HONEST_B1,
                         "F.__dict__.update(x=1)\n"
                         "torch.__dict__.update(var_mean=lambda x, **k: (F.layer_norm(x, x.shape[-1:]), 0))"], "B1"),
 "vars_update": ([HONEST_B1, "vars(torch).update(sqrt=lambda t: t)"], "B1"),
 "exec_renamed": (["run = exec\n"
                   "run('def layer_norm(x, g, b, eps=1e-5):\\n    return F.layer_norm(x, x.shape[-1:], g, b)')",
                   HONEST_B1], "B1"),
 "exec_renamed_after": ([HONEST_B1,
     "run = exec\n"
     "run('def layer_norm(x, g, b, eps=1e-5):\\n    return F.layer_norm(x, x.shape[-1:], g, b)')"], "B1"),
 "eval_via_builtins_dict": ([HONEST_B1, "__builtins__.__dict__['ex' + 'ec']('layer_norm = F.layer_norm')"], "B1"),
 "local_response_norm": ([_ln("return F.local_response_norm(x, 1) * g + b")], "B1"),
 "normalize": ([_ln("c = x - x.mean(-1, keepdim=True)\n"
                    "return F.normalize(c, dim=-1) * math.sqrt(x.shape[-1]) * g + b")], "B1"),
 "native_backward": ([
     "def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
     "    m, v = x.mean(-1, keepdim=True), x.var(-1, keepdim=True)\n"
     "    return torch.ops.aten.native_layer_norm_backward(grad_out, x, [x.shape[-1]], m, v, gamma, None, "
     "[True]*3)"], "B3"),
 "encoder_in_list": (["LAYERS = [nn.TransformerEncoderLayer]", "class PreNormBlock(LAYERS[0]):\n    pass"], "B6"),
 "encoder_in_modulelist": ([
     "class PreNormBlock(nn.Module):\n"
     "    def __init__(self, d, h, f=None):\n"
     "        super().__init__()\n"
     "        self.inner = nn.ModuleList([nn.TransformerEncoderLayer(d, h, f or 4 * d, 0.0, 'gelu', "
     "batch_first=True, norm_first=True)])\n"
     "    def forward(self, x, causal=True):\n"
     "        return self.inner[0](x)"], "B6"),
 "encoder_via_registry_update": (["REG = {}\n"
                                  "REG.update(layer=nn.TransformerEncoderLayer)",
                                  "class PreNormBlock(nn.Module):\n"
                                  "    def forward(self, x, causal=True):\n"
                                  "        return REG['layer'](16, 4)(x)"], "B6"),
 "module_alias_value": (["m = F", _ln("return m.local_response_norm(x, 1)")], "B1"),
 "module_alias_group_norm": (["m = F", _ln("return m.group_norm(x, 1)")], "B1"),
 "module_in_tuple": (["MODS = (torch, F)", _ln("return MODS[1].layer_norm(x, x.shape[-1:])")], "B1"),
 "sys_modules_main": ([HONEST_B1, "import sys\nsys.modules['__main__'].layer_norm = F.layer_norm"], "B1"),
 "import_main": ([HONEST_B1, "import __main__\nsetattr(__main__, 'layer_' + 'norm', F.layer_norm)"], "B1"),
 "dunder_import": ([HONEST_B1, "__import__('__main__').layer_norm = F.layer_norm"], "B1"),
 "globals_write_later": ([HONEST_B1, "globals()['layer_norm'] = F.layer_norm"], "B1"),
 "ipython_user_ns": ([HONEST_B1, "get_ipython().user_ns['layer_norm'] = F.layer_norm"], "B1"),
 "ipython_push": ([HONEST_B1, "get_ipython().push({'layer_norm': F.layer_norm})"], "B1"),
 "getattr_aten_by_pieces": ([_ln("op = getattr(torch.ops.aten, 'native_' + 'layer_norm')\n"
                                 "return op(x, [x.shape[-1]], g, b, eps)[0]")], "B1"),
 "getattr_unlisted": ([_ln("return getattr(F, 'local_response_norm')(x, 1)")], "B1"),
 "frame_globals": ([HONEST_B1, "import sys\nsys._getframe(0).f_globals['layer_norm'] = F.layer_norm"], "B1"),
 "subclasses_walk": ([HONEST_B1, "[c for c in object.__subclasses__() if c.__name__ == 'X']"], "B1"),
 "lambda_default": ([_ln("return (lambda f=F.layer_norm: f(x, x.shape[-1:], g, b, eps))()")], "B1"),
 "star_unlisted": (["from torch.nn.functional import *\n" + _ln("return local_response_norm(x, 1)")], "B1"),
 "from_import_unlisted": (["from torch.nn.functional import normalize\n" + _ln("return normalize(x) * g + b")], "B1"),
 "decorator_patch": (["def wrap(f):\n    return F.layer_norm\n", "@wrap\n" + _ln("return x")], "B1"),
 "class_attr_store": (["class Box:\n    op = F.layer_norm", _ln("return Box.op(x, x.shape[-1:], g, b, eps)")], "B1"),
 "torch_func_in_b3": (["import torch.func as tf\n"
                       "def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
                       "    return tf.vjp(lambda t: t, x)[1](grad_out)"], "B3"),
 "tensor_backward_b3": (["def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
                         "    x = x.detach().requires_grad_()\n"
                         "    y = layer_norm(x, gamma, 0 * gamma, eps)\n"
                         "    y.backward(grad_out)\n"
                         "    return x.grad, None, None"], "B3"),
 "transformer_encoder_layer_fwd": (["class PreNormBlock(nn.Module):\n"
                                    "    def forward(self, x, causal=True):\n"
                                    "        return torch._transformer_encoder_layer_fwd(x)"], "B6"),
 "open_and_exec": ([HONEST_B1, "exec(open('x.py').read())"], "B1"),
 "compile_renamed": ([HONEST_B1, "c = compile\nexec(c('layer_norm = F.layer_norm', 'x', 'exec'))"], "B1"),
 "type_three_arg": (["PreNormBlock = type('PreNormBlock', (nn.TransformerEncoderLayer,), {})"], "B6"),
 "getattr_nn_transformer": (["class PreNormBlock(nn.Module):\n"
                             "    def forward(self, x, causal=True):\n"
                             "        return getattr(nn, 'Transformer' + 'EncoderLayer')(16, 4)(x)"], "B6"),
 "torch_load": ([_ln("return torch.load('ln.pt', weights_only=False)(x)")], "B1"),
 "pickle_loads": (["import pickle\n" + _ln("return pickle.loads(b'')(x)")], "B1"),
 "functools_partial_ln": (["import functools\n"
                           "LN = functools.partial(F.layer_norm)", _ln("return LN(x, x.shape[-1:], g, b, eps)")], "B1"),
 "operator_attrgetter": (["import operator\n" + _ln("return operator.attrgetter('layer_norm')(F)(x, x.shape[-1:])")],
                         "B1"),
 "called_later": ([HONEST_B1, "def sneaky():\n"
                              "    import sys\n"
                              "    sys.modules['__main__'].layer_norm = F.layer_norm\n", "sneaky()"], "B1"),
 "called_through_another": ([HONEST_B1, "def sneaky():\n"
                                        "    globals()['layer_norm'] = F.layer_norm\n",
                                        "def outer():\n"
                                        "    sneaky()\n", "outer()"], "B1"),
 "called_through_frames": ([HONEST_B1, "def sneaky():\n"
                                       "    import inspect\n"
                                       "    inspect.currentframe().f_back.f_globals['layer_norm'] = F.layer_norm\n",
                                       "def outer():\n"
                                       "    sneaky()\n", "outer()"], "B1"),
 "star_alias_before_own_def": (["from torch.nn.functional import *\n"
                                "_f = layer_norm\n" + _ln("return _f(x, x.shape[-1:], g, b, eps)")], "B1"),
 "star_in_a_closure": (["from torch.nn.functional import *\n"
                        "def make():\n"
                        "    f = layer_norm\n"
                        "    return lambda x, g, b, eps=1e-5: f(x, x.shape[-1:], g, b, eps)\n"
                        "layer_norm = make()"], "B1"),
 "vars_with_a_constant_key": ([_ln("return vars(F)['layer_norm'](x, x.shape[-1:], g, b, eps)")], "B1"),
 "copies_a_global_by_a_computed_name": (["ref = F.layer_norm", HONEST_B1,
                                         "globals()['layer_norm'] = globals()['r' + 'ef']"], "B1"),
 "update_from_a_helper": (["def make():\n"
                           "    return {'layer_norm': F.layer_norm}", HONEST_B1, "globals().update(make())"], "B1"),
}
# Honest code the old name-based rules got wrong, or that uses a less common allowed helper: clean.
UNUSUAL_BUT_HONEST = {
 "mask_helper": (["class PreNormBlock(nn.Module):\n"
                  "    def __init__(self, d, h, f=None):\n"
                  "        super().__init__()\n"
                  "        self.norm1 = nn.LayerNorm(d)\n"
                  "        self.self_attn = nn.MultiheadAttention(d, h, batch_first=True)\n"
                  "    def forward(self, x, causal=True):\n"
                  "        T = x.shape[1]\n"
                  "        mask = nn.Transformer.generate_square_subsequent_mask(T) if causal else None\n"
                  "        h = self.norm1(x)\n"
                  "        return x + self.self_attn(h, h, h, attn_mask=mask, need_weights=False)[0]"], "B6"),
 "honest_b1": ([HONEST_B1], "B1"),
 "einsum_b3": ([
     "def layer_norm_backward(grad_out, x, gamma, eps=1e-5):\n"
     "    d = x.shape[-1]\n"
     "    mu = x.mean(-1, keepdim=True)\n"
     "    var = ((x - mu) ** 2).mean(-1, keepdim=True)\n"
     "    r = 1.0 / torch.sqrt(var + eps)\n"
     "    xhat = (x - mu) * r\n"
     "    g = gamma * grad_out\n"
     "    gx = r * (g - g.mean(-1, keepdim=True) - xhat * torch.einsum('...d,...d->...', g, xhat)[..., None] / d)\n"
     "    return gx, (grad_out * xhat).reshape(-1, d).sum(0), grad_out.reshape(-1, d).sum(0)"], "B3"),
 "float64_b1": ([_ln("y = x.double()\n"
                     "mu = y.mean(dim=-1, keepdim=True)\n"
                     "var = ((y - mu) ** 2).mean(dim=-1, keepdim=True)\n"
                     "return (g * ((y - mu) / torch.sqrt(var + eps)) + b).to(x.dtype)")], "B1"),
 "typed_b1": (["from typing import Optional\n"
               "def layer_norm(x: torch.Tensor, g: torch.Tensor, b: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:\n"
               "    mu = x.mean(-1, keepdim=True)\n"
               "    if x.ndim < 1:\n"
               "        raise ValueError('need a last dim')\n"
               "    return g * (x - mu) * torch.rsqrt(x.var(-1, keepdim=True, unbiased=False) + eps) + b"], "B1"),
 "reflection_in_a_function_never_called": ([HONEST_B1,
     "def rms_norm(x, g, eps=1e-6):\n"
     "    return g * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)",
     "def helper():\n"
     "    import sys\n"
     "    return sys.modules['torch']\n"], "B2"),
 "its_own_name_in_strings": ([_ln("name = 'layer_norm'\n"
                                  "_calls = {}\n"
                                  "_calls['layer_norm'] = 1\n"
                                  "if x.ndim == 0:\n"
                                  "    raise ValueError('layer_norm')\n"
                                  "mu = x.mean(-1, keepdim=True)\n"
                                  "return g * (x - mu) / torch.sqrt(((x - mu) ** 2).mean(-1, keepdim=True) + eps) + b"
                                  )], "B1"),
 "rms_norm_names_itself_in_an_error": (["def rms_norm(x, g, eps=1e-6):\n"
                                        "    if x.ndim == 0:\n"
                                        "        raise ValueError('rms_norm')\n"
                                        "    return g * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)"], "B2"),
 "star_import_then_its_own_def": (["from torch.nn.functional import *\n" + HONEST_B1], "B1"),
 "scratch_loop_storing_tensors_by_name": ([HONEST_B1, "for name in ['a', 'b']:\n"
                                                      "    globals()[name] = torch.randn(3)"], "B1"),
 "scratch_update_with_a_literal": ([HONEST_B1, "globals().update({'a': torch.zeros(2)})"], "B1"),
 "torch_triu_full": (["class PreNormBlock(nn.Module):\n"
                      "    def forward(self, x, causal=True):\n"
                      "        T = x.size(1)\n"
                      "        m = torch.full((T, T), float('-inf')).triu(1)\n"
                      "        return F.softmax(x @ x.transpose(-2, -1) + m, dim=-1) @ x"], "B6"),
}


@pytest.mark.parametrize("name", DISGUISES)
def test_a_disguised_route_is_never_judged_clean(name):
    cells, question = DISGUISES[name]
    verdict = week4.judge([GIVEN, *cells], [question])[question]
    assert verdict.status in ("route", "unsure"), name
    assert verdict.first.where.startswith("cell ") and verdict.first.code


@pytest.mark.parametrize("name", UNUSUAL_BUT_HONEST)
def test_honest_code_is_proved_clean(name):
    cells, question = UNUSUAL_BUT_HONEST[name]
    verdict = week4.judge([GIVEN, *cells], [question])[question]
    assert verdict.status == "clean", verdict.message()


@pytest.mark.parametrize("scratch", ["globals()['ref'] = F.layer_norm", "globals().update(ref=F.layer_norm)",
                                     "vars()['ref'] = F.layer_norm"])
def test_a_store_that_may_redefine_anything_is_a_tas_question_not_a_route(scratch):
    """A scratch cell writing F.layer_norm under a computed name may, or may not, replace the
    question's code: that is for a TA, never a proof that the honest code takes the route."""
    verdict = week4.judge([GIVEN, HONEST_B1, scratch], ["B1", "B2"])
    assert verdict["B1"].status == "unsure" and verdict["B2"].status == "unsure", verdict
    assert not any(f.kind == "route" for v in verdict.values() for f in v.findings)


def test_an_unlisted_function_is_named_with_its_full_path():
    verdict = week4.judge([GIVEN, "m = F", _ln("return F.normalize(x, dim=-1) * g + b")], ["B1"])["B1"]
    assert verdict.status == "unsure" and verdict.first.family == "unlisted"
    assert "torch.nn.functional.normalize" in verdict.message() and "check it by hand" in verdict.message()


@pytest.mark.parametrize("name", CASES)
def test_the_judge_on_one_spelling(name):
    cells, question, status, family = CASES[name]
    verdict = week4.judge([GIVEN, *cells], [question])[question]
    assert verdict.status == status, (verdict.findings, verdict.message())
    if family is not None:
        assert verdict.first.family == family
    if status == "route":
        message = verdict.message()
        assert message.startswith("not scored:") and question in message and "line" in message
    elif status == "unsure":
        assert "could not rule out" in verdict.message()
    else:
        assert verdict.message() == ""


def test_a_route_names_the_cell_and_line_it_is_on():
    cells = [GIVEN, HONEST_B1, "import torch.nn.functional as G\n\n\n" + _ln("return G.group_norm(x, 1)")]
    verdict = week4.judge(cells, ["B1"], lambda i: f"cell #{i}")["B1"]
    assert verdict.first.where == "cell #2, line 5" and verdict.first.code == "G.group_norm"


def test_the_course_solutions_and_every_correct_variant_are_clean():
    a = Assignment("transformer-block", REPO)
    for name in a.notebooks:
        assert {q: v.status for q, v in week4.judge_notebook(notebook(a, name)).items()} == \
               {q: "clean" for q in week4.RULES}
    for v in variants():
        name = contract.QUESTIONS[v.question].notebook
        nb = notebook(a, name, edits(v, {c.grade_id: c.source for c in a.cells(name)}[v.cell]))
        judged = week4.judge_notebook(nb)
        assert all(verdict.status == "clean" for verdict in judged.values()), (v.id, judged)


# Catalogued wrong answers whose values are right: only the judge takes their points.
ROUTES = {"B1-calls-builtin": "builtin", "B1-torch-layer-norm": "builtin", "B1-group-norm-one-group": "general-norm",
          "B1-dispatch-off": "dispatch-off", "B1-aten-by-name": "builtin", "B2-calls-builtin": "builtin",
          "B2-rms-norm-module": "builtin", "B2-dispatch-off": "dispatch-off", "B3-autograd-grad": "autograd",
          "B3-calls-backward": "autograd", "B3-torch-func-vjp": "autograd",
          "B6-subclasses-encoder-layer": "transformer-layer", "B6-borrows-encoder-forward": "transformer-layer",
          "B7-subclasses-encoder-layer": "transformer-layer", "B7-borrows-encoder-forward": "transformer-layer"}


def test_every_catalogued_route_is_judged_one_and_no_other_entry_is():
    a = Assignment("transformer-block", REPO)
    by_id = {e.id: e for e in catalogue()}
    assert set(ROUTES) <= set(by_id)
    for e in by_id.values():
        name = contract.QUESTIONS[e.question].notebook
        nb = notebook(a, name, edits(e, {c.grade_id: c.source for c in a.cells(name)}[e.cell]))
        verdict = week4.judge_notebook(nb, [e.question]).get(e.question) if e.question in week4.RULES else None
        if e.id in ROUTES:
            assert verdict.status == "route" and verdict.first.family == ROUTES[e.id], (e.id, verdict)
        elif verdict is not None:
            assert verdict.status == "clean", (e.id, verdict.message())


def test_garbage_never_raises():
    rng = random.Random(9)
    garbage = ["(" * 5000, "x = " + "[" * 300 + "]" * 300, "\x00\xff", "def layer_norm(:", "%%bash\nrm -rf /",
               "layer_norm = " + " + ".join(["1"] * 20000), "exec(" * 200 + ")" * 200,
               _ln("return getattr(F, 'a' * 999999999)(x)"), _ln("return getattr(F, '%999999999s' % 'x')(x)"),
               "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(3000)), None, 42]
    for cells in ([g] for g in garbage):
        verdicts = week4.judge([GIVEN, *cells])
        assert set(verdicts) == set(week4.RULES)
    nested = "def layer_norm(x, g, b, eps=1e-5):\n    return " + "(" * 900 + "x" + ")" * 900
    assert week4.judge([GIVEN, nested], ["B1"])["B1"].status in ("clean", "unsure")


def test_judge_notebook_names_cells_by_their_grade_id():
    a = Assignment("transformer-block", REPO)
    e = next(e for e in catalogue() if e.id == "B1-group-norm-one-group")
    nb = notebook(a, "build", edits(e, {c.grade_id: c.source for c in a.cells("build")}["B1_code"]))
    verdict = week4.judge_notebook(nbformat.reads(nbformat.writes(nb), as_version=4), ["B1"])["B1"]
    assert verdict.first.where.startswith("cell B1_code, line ")


# ---- the pipeline step: the judge decides, evidence from the child never clears -----------------

def _submission(a, program, evidence=(), seconds=analysis.SECONDS):
    """A graded-looking submission of the build notebook whose checks all passed, read by the
    bounded helper as program.py reads it."""
    sub = Submission("s", a.source_dir)
    sub.readings["build"] = analysis.read([(GIVEN, False, True)] + [(p, True, True) for p in program],
                                          {q: r for q, r in week4.RULES.items()
                                           if contract.QUESTIONS[q].notebook == "build"},
                                          ["a cell the course gives"] + [f"cell {i + 1}" for i in range(len(program))],
                                          seconds)
    sub.programs["build"] = sub.readings["build"].program
    for c in checks.all_checks():
        if checks.notebook(c) == "build":
            sub.outcomes[c.id] = Outcome(True, evidence=tuple(evidence) if c.question == "B1" else ())
    return sub


def _waiting(sub, question):
    mine = [c.id for c in checks.all_checks() if c.question == question]
    return mine and all(not sub.outcomes[cid].passed and sub.outcomes[cid].review for cid in mine)


def test_evidence_against_a_clean_verdict_waits_for_a_ta():
    a = Assignment("transformer-block", REPO)
    sub = _submission(a, [HONEST_B1], evidence=("layer_norm",))
    step.run(sub, Env(a, sandbox=None))
    assert _waiting(sub, "B1") and "B1" in sub.to_review
    assert all(o.passed for cid, o in sub.outcomes.items() if checks.get(cid).question != "B1")
    assert any("B1" in f and "source shows no route" in f for f in sub.flags), sub.flags


def test_what_code_did_with_hidden_inputs_never_shows_in_a_visible_result():
    """Code that reaches torch's layer_norm only on a hidden check's inputs: the hidden checks wait for
    a TA, the visible ones keep their verdict (a student reads them before grades are published)."""
    a = Assignment("transformer-block", REPO)
    sub = _submission(a, [HONEST_B1])
    b1 = [c for c in checks.all_checks() if c.question == "B1"]
    assert {c.hidden for c in b1} == {False, True}
    for c in b1:
        sub.outcomes[c.id] = Outcome(True, evidence=("layer_norm",) if c.hidden else ())
    step.run(sub, Env(a, sandbox=None))
    assert all(sub.outcomes[c.id].passed for c in b1 if not c.hidden)
    assert all(sub.outcomes[c.id].review for c in b1 if c.hidden) and "B1" in sub.to_review
    for c in b1:                                    # seen by a visible check too: both wait
        sub.outcomes[c.id] = Outcome(True, evidence=("layer_norm",))
    step.run(sub, Env(a, sandbox=None))
    assert _waiting(sub, "B1")


def test_an_uncertain_route_leaves_its_points_to_a_ta():
    a = Assignment("transformer-block", REPO)
    sub = _submission(a, [_ln("return F.normalize(x - x.mean(-1, keepdim=True), dim=-1) * g + b")])
    step.run(sub, Env(a, sandbox=None))
    assert _waiting(sub, "B1") and "B1" in sub.to_review
    review = sub.outcomes[next(c.id for c in checks.all_checks() if c.question == "B1")].review
    assert "torch.nn.functional.normalize" in review and "cell 1, line 2" in review
    assert all(o.passed for cid, o in sub.outcomes.items() if checks.get(cid).question != "B1")


def test_a_judge_out_of_budget_leaves_every_route_question_to_a_ta():
    """A cell whose reading costs more than the budget: the helper is killed, the cells run as
    written, and no route question of the notebook keeps silent points."""
    a = Assignment("transformer-block", REPO)
    magic = "".join(f"%time x{i} = {i}\n" for i in range(20_000))
    sub = _submission(a, [HONEST_B1, magic, "F.layer_norm = lambda *a, **k: 0"], seconds=0.5)
    assert sub.readings["build"].failure and sub.programs["build"][2] == magic
    step.run(sub, Env(a, sandbox=None))
    for q in ("B1", "B2", "B3", "B6", "B7"):
        assert _waiting(sub, q) and "budget" in sub.to_review[q], q
    sub = _submission(a, [HONEST_B1, magic], seconds=0.5)
    sub.outcomes["B4_relu"] = Outcome(False, "`MLP` is not defined")          # a check that failed meanwhile
    step.run(sub, Env(a, sandbox=None))
    assert sub.outcomes["B4_relu"].review and "ran as written" in sub.outcomes["B4_relu"].review
    # a new helper serves the next
    assert analysis.read([("x = 1", True, True)], {"B1": week4.RULES["B1"]}, ["cell 1"]).failure == ""


def test_a_reader_that_cannot_start_sends_the_notebooks_route_questions_to_a_ta(monkeypatch):
    """No process for the program reader (EAGAIN under a process limit, a missing interpreter): the
    notebook runs as written and its route questions wait for a TA, as when the budget runs out;
    the student is not failed whole for the grader's trouble."""
    a = Assignment("transformer-block", REPO)
    while True:                                    # no idle reader to reuse: the next read starts one
        try:
            analysis._idle.get_nowait().stop()
        except analysis.queue.Empty:
            break
    monkeypatch.setattr(analysis.sys, "executable", "/nonexistent/python")
    sub = _submission(a, [HONEST_B1])
    assert "could not start its program reader" in sub.readings["build"].failure
    assert sub.programs["build"][-1] == HONEST_B1
    step.run(sub, Env(a, sandbox=None))
    assert _waiting(sub, "B1") and "could not start" in sub.to_review["B1"]


def test_a_route_fails_every_check_of_its_question_only():
    a = Assignment("transformer-block", REPO)
    sub = _submission(a, [_ln("return F.group_norm(x.reshape(-1, 1, x.shape[-1]), 1).reshape(x.shape) * g + b")])
    step.run(sub, Env(a, sandbox=None))
    b1 = [c.id for c in checks.all_checks() if c.question == "B1"]
    assert b1 and all(not sub.outcomes[cid].passed and "F.group_norm" in sub.outcomes[cid].message for cid in b1)
    assert all(o.passed for cid, o in sub.outcomes.items() if cid not in b1)
    assert sub.diagnoses["B1"].id == "B1-group-norm-one-group"
    assert any("B1 not scored" in f for f in sub.flags)


def test_a_route_names_only_the_misconception_that_takes_the_same_route():
    """Constructing an encoder layer inside forward is a route, but not the catalogued
    "subclasses nn.TransformerEncoderLayer" mistake; subclassing it is."""
    a = Assignment("transformer-block", REPO)
    inside = _submission(a, ["class PreNormBlock(nn.Module):\n    def forward(self, x, causal=True):\n"
                             "        return nn.TransformerEncoderLayer(16, 4, batch_first=True)(x)"])
    step.run(inside, Env(a, sandbox=None))
    assert not inside.outcomes[next(c.id for c in checks.all_checks() if c.question == "B6")].passed
    assert inside.diagnoses["B6"] is None      # named as no misconception, so the matcher guesses none
    subclass = _submission(a, ["class PreNormBlock(nn.TransformerEncoderLayer):\n    pass"])
    step.run(subclass, Env(a, sandbox=None))
    assert subclass.diagnoses["B6"].id == "B6-subclasses-encoder-layer"


# ---- end to end: course autograde in its sandbox ------------------------------------------------

def _b1(a, code):
    return {"B1_code": solved(next(c.source for c in a.cells("build") if c.grade_id == "B1_code")) + "\n\n" + code}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    a = Assignment("transformer-block", REPO)
    by_id = {e.id: e for e in catalogue()}
    build = {c.grade_id: c.source for c in a.cells("build")}
    root = tmp_path_factory.mktemp("routes")
    write_submission(root / "honest", a)
    for entry in ("B1-group-norm-one-group", "B1-dispatch-off", "B3-autograd-grad", "B6-borrows-encoder-forward"):
        write_submission(root / entry, a, edits=edits(by_id[entry], build[by_id[entry].cell]))
    write_submission(root / "unsure", a, edits=_b1(a, "import os\n\n" + _ln(
        "var, mu = getattr(torch, os.environ.get('STATS', 'var_mean'))(x, dim=-1, keepdim=True, correction=0)\n"
        "return g * (x - mu) / torch.sqrt(var + eps) + b")))
    return api.autograde("transformer-block", root, workers=2, timeout=30.0)["students"]


@pytest.mark.sandboxed
def test_routes_lose_their_question_in_course_autograde(graded):
    assert graded["honest"]["score"] == 100.0 and not graded["honest"]["flags"]
    for entry, lost in (("B1-group-norm-one-group", 8), ("B1-dispatch-off", 8), ("B3-autograd-grad", 10),
                        ("B6-borrows-encoder-forward", 10 + 8)):   # B7 inherits the borrowing class
        result = graded[entry]
        question = result["questions"][entry[:2]]
        assert question["score"] == 0.0, question
        assert ROUTES[question["misconception"]["id"]] == ROUTES[entry]   # named by the family of its route
        assert all("not scored" in row["message"] for row in question["checks"])
        assert result["score"] == 100.0 - lost, {q: v["score"] for q, v in result["questions"].items()}
        assert any(f"{entry[:2]} not scored" in flag for flag in result["flags"])


@pytest.mark.sandboxed
def test_an_uncertain_route_waits_for_a_ta(graded):
    result = graded["unsure"]
    assert result["score"] == 92.0 and "B1" in result["needs_manual_grade"]
    assert any("could not rule out" in flag and "getattr" in flag for flag in result["flags"]), result["flags"]
    rows = result["questions"]["B1"]["checks"]
    assert all(row["review"] and "awaiting a TA's review" in row["message"] for row in rows)
    assert not any("not scored" in row["message"] for row in rows)


@pytest.mark.sandboxed
def test_a_name_built_at_run_time_leaves_the_question_to_a_ta(tmp_path):
    """A name built at run time: the grader cannot tell, so the question's points wait for a TA
    (results, and so the CSV and nbgrader's gradebook)."""
    from autograder.grader_side.assignment import Assignment, solved

    a = Assignment("transformer-block", REPO)
    build = {c.grade_id: c.source for c in a.cells("build")}
    unsure = solved(build["B1_code"]) + (
        "\nimport importlib\n\n\ndef layer_norm(x, gamma, beta, eps=1e-5):\n"
        "    name = bytes(int(c) for c in x.new_tensor([108, 97, 121, 101, 114, 95, 110, 111, 114, 109]).tolist())"
        ".decode()   # known only when it runs\n"
        "    f = getattr(importlib.import_module('torch.nn.functional'), name)\n"
        "    return f(x, x.shape[-1:], gamma, beta, eps)\n")
    write_submission(tmp_path / "class" / "unsure", a, edits={"B1_code": unsure})
    result = api.autograde("transformer-block", tmp_path / "class", workers=1)["students"]["unsure"]
    assert result["questions"]["B1"]["score"] == 0.0 and result["score"] == 92.0
    assert "B1" in result["needs_manual_grade"]


def _b6_with(extra: str) -> dict:
    a = Assignment("transformer-block", REPO)
    source = {c.grade_id: c.source for c in a.cells("build")}
    return week4.judge_notebook(notebook(a, "build", {"B6_code": solved(source["B6_code"]).rstrip() + extra}))


def test_a_route_in_a_method_nothing_calls_is_a_tas_question_not_a_route():
    """A reference layer built in a method the block never calls may be a comparison the student
    ran by hand: for a TA, not a proof."""
    judged = _b6_with("\n\n    def torch_reference(self):\n"
                      "        return nn.TransformerEncoderLayer(16, 4, batch_first=True)\n")
    for q in ("B6", "B7"):
        assert judged[q].status == "unsure" and "a method nothing in the notebook calls" in judged[q].message(), q


def test_a_route_in_a_method_the_subclass_overrides_costs_only_its_own_question():
    """PostNormBlock overrides forward: a route in PreNormBlock.forward is B6's, not B7's."""
    judged = _b6_with("\n\n    def forward(self, x, causal=True):\n"
                      "        return nn.TransformerEncoderLayer(16, 4, batch_first=True)(x)\n")
    assert judged["B6"].status == "route" and judged["B7"].status == "clean", judged["B7"].findings


def test_the_blocks_run_attention_on_the_path_training_takes():
    """The blocks' checks forbid module classes only, and their tripwire mode is on all the same:
    under it MultiheadAttention skips its inference fast path, which accepts a 4-D mask that
    training refuses (and ignores ``is_causal`` without a mask), so such a block fails, as it
    always has, in every grader (the visible checks run the same ``_watch``)."""
    import torch
    from torch import nn

    from autograder.student_side import server

    attention = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(1, 4, 8)                                              # (B, T, d)
    mask = torch.ones(4, 4, dtype=torch.bool).triu(1)[None, None]          # (1, 1, T, T)
    with torch.no_grad():
        attention(x, x, x, attn_mask=mask)                                 # the fast path takes it
        with pytest.raises(AssertionError, match="4-D"):
            server._watch({"transformer": {"TransformerEncoderLayer"}}, set(),
                          lambda: attention(x, x, x, attn_mask=mask))
