"""Plain-data encoding shared by the grader and the code that runs next to a submission.

A value crosses a process boundary as a JSON header plus raw byte blobs:
numbers, strings, booleans, None, lists and string-keyed dicts go into the header (a number of
another Python type, an int subclass or a Fraction, as its plain int or float value);
every array becomes ``{"__array__": i, "dtype": ..., "shape": [...]}`` pointing at blob ``i``.
Nothing is pickled, and the reading side rebuilds fresh numpy arrays of a few
known dtypes, so no object a submission made can reach the grader's comparisons.
"""
from __future__ import annotations

import math
import numbers
import sys

import numpy as np

DTYPES = ("float32", "float64", "int64", "int32", "bool")
_NAMES = {np.dtype(name): name for name in DTYPES}   # native byte order only
MAX_DEPTH = 16


class WireError(ValueError):
    """A value that is not plain data (or is malformed) was sent or received."""


def pack(value, blobs: list[bytes] | None = None, depth: int = 0):
    """Turn ``value`` into a JSON-able header; arrays are appended to ``blobs``.

    Tensors are read through numpy, so only their numbers travel. Returns (header, blobs).
    """
    blobs = [] if blobs is None else blobs
    return _pack(value, blobs, depth), blobs


def _pack(value, blobs, depth):
    if depth > MAX_DEPTH:
        raise WireError("value nests too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) in (int, float):
        return value
    if isinstance(value, int):          # an int subclass (an IntEnum...): its plain int value
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, numbers.Rational) and not isinstance(value, np.generic):   # a Fraction
        return _pack(value.numerator, blobs, depth) / _pack(value.denominator, blobs, depth)
    if isinstance(value, (list, tuple)):
        return [_pack(v, blobs, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise WireError("dict keys must be strings")
        if "__array__" in value:
            raise WireError("'__array__' is a reserved key")
        return {k: _pack(v, blobs, depth + 1) for k, v in value.items()}
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    array = _as_array(value)
    if array is not None:
        name = _NAMES.get(array.dtype)   # (dtype.name is slow: this runs for every array sent)
        if name is None:
            array = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
            name = _NAMES[array.dtype]
        if not array.flags.c_contiguous:
            array = np.require(array, requirements='C')   # (ascontiguousarray would make a 0-d array 1-d)
        blobs.append(array.tobytes())
        return {"__array__": len(blobs) - 1, "dtype": name, "shape": list(array.shape)}
    raise WireError(f"cannot send a {type(value).__name__}: return a tensor, a number, a string or a list of those")


def _as_array(value):
    """numpy view of a tensor's numbers (``tobytes`` copies them out), or the array itself, or
    None for anything else."""
    if isinstance(value, np.ndarray):
        return value
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        # Read the storage through the base class so a subclass cannot swap its numbers.
        plain = torch.Tensor.detach(value)
        plain = torch.Tensor.cpu(plain)
        if plain.dtype == torch.bfloat16 or plain.dtype == torch.float16:
            plain = torch.Tensor.float(plain)
        return torch.Tensor.numpy(torch.Tensor.contiguous(plain))
    return None


def _torch():
    return sys.modules.get("torch")


def unpack(header, blobs: list[bytes], depth: int = 0, tensors: bool = False):
    """Rebuild a value from ``pack``'s output, validating every field.

    With ``tensors=True`` arrays come back as torch tensors (for the side that runs student code).
    """
    if depth > MAX_DEPTH:
        raise WireError("value nests too deeply")
    if header is None or isinstance(header, (bool, str)):
        return header
    if type(header) in (int, float):
        return header
    if isinstance(header, list):
        return [unpack(v, blobs, depth + 1, tensors) for v in header]
    if isinstance(header, dict):
        if "__array__" in header:
            return _unpack_array(header, blobs, tensors)
        return {str(k): unpack(v, blobs, depth + 1, tensors) for k, v in header.items()}
    raise WireError(f"unexpected {type(header).__name__} in reply")


def _unpack_array(header, blobs, tensors):
    index, dtype, shape = header.get("__array__"), header.get("dtype"), header.get("shape")
    if type(index) is not int or not 0 <= index < len(blobs):
        raise WireError("array points at a missing blob")
    if dtype not in DTYPES:
        raise WireError(f"array dtype {dtype!r} is not allowed")
    if not isinstance(shape, list) or len(shape) > 8 or not all(type(n) is int and n >= 0 for n in shape):
        raise WireError("array shape is malformed")
    data = blobs[index]
    if not isinstance(data, (bytes, bytearray)) or len(data) != math.prod(shape) * np.dtype(dtype).itemsize:
        raise WireError("array bytes do not match its shape")
    array = np.frombuffer(bytes(data), dtype=dtype).reshape(shape).copy()
    if tensors:
        import torch
        return torch.from_numpy(array)
    return array
