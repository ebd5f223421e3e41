"""Host callbacks (``pure_callback``, ``io_callback``, ``debug_callback``, ``debug_print``): the Python objects
their params hold, and their shape rules.

A callback, a pytree structure or NumPy's print options cannot be an MLIR attribute: the attribute holds a key
into this process's table of them. A module printed and parsed back in the same process keeps working; parsed in
another, its callbacks name objects that are not there, and the verifier says so.
"""
from __future__ import annotations

import itertools
import re
import sys

import numpy as np

from .errors import JaxRuntimeError
from .mlir import ir
from .params import ParamKind

_OBJECTS: dict[int, object] = {}
_KEYS: dict[int, int] = {}  # id(object) -> key, so that a retrace of the same callback gives the same text
_next_key = itertools.count(1)

# Ops whose effect is the point (printing, the user's I/O): dead-code elimination and CSE keep each one.
EFFECTFUL = frozenset({"io_callback", "debug_callback", "debug_print"})
CALLBACK_OPS = frozenset({"pure_callback"}) | EFFECTFUL


def object_key(value) -> int:
    key = _KEYS.get(id(value))
    if key is None or _OBJECTS[key] is not value:
        key = next(_next_key)
        _OBJECTS[key] = value
        _KEYS[id(value)] = key
    return key


def object_of(key: int):
    try:
        return _OBJECTS[key]
    except KeyError:
        raise ValueError(f"host object #{key} is not in this process: a module with host callbacks runs only in "
                         "the process that traced it") from None


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


class PyObjectKind(ParamKind):
    """A Python object (a callback, a tree structure), stored as its key in this process's table; prints as JAX
    prints it, addresses masked as JAX's printer masks them."""

    def encode(self, value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), object_key(value))

    def decode(self, attr):
        return object_of(ir.IntegerAttr(attr).value)

    def fmt(self, value):
        return _ADDRESS.sub("0xXXXXXXXXXXXX", str(value))

    def check(self, attr):
        return isinstance(attr, ir.IntegerAttr)


PY_OBJECT = PyObjectKind()


def callback_results(name, avals_in, *, result_avals, **params):
    """``pure_callback`` and ``io_callback``: the avals the user declared."""
    return list(result_avals)


def no_results(name, avals_in, **params):
    """``debug_callback`` and ``debug_print`` return nothing."""
    return []


class AvalsKind(ParamKind):
    """A tuple of ShapedArrays (a callback's declared results), stored as their tensor types."""

    def encode(self, value):
        from .dialect import tensor_type_of
        return ir.ArrayAttr.get([ir.TypeAttr.get(tensor_type_of(a)) for a in value])

    def decode(self, attr):
        from .dialect import aval_of_type
        return tuple(aval_of_type(ir.TypeAttr(a).value) for a in ir.ArrayAttr(attr))

    def check(self, attr):
        return isinstance(attr, ir.ArrayAttr) and all(isinstance(a, ir.TypeAttr) for a in ir.ArrayAttr(attr))


AVALS = AvalsKind()


def merge_args(in_tree, dynamic, static_args):
    """The callback's ``(args, kwargs)``: the traced leaves with the static ones (``(position, value)`` pairs)
    put back in their places, as JAX's ``merge_callback_args``."""
    static = dict(static_args)
    dynamic = iter(dynamic)
    leaves = [static[i] if i in static else next(dynamic) for i in range(in_tree.num_leaves)]
    return in_tree.unflatten(leaves)


def print_callback(params):
    """The host function of a ``debug_print``: the operands formatted into ``fmt`` as JAX's
    ``_format_print_callback`` does, under the NumPy print options of the trace."""
    fmt, options = params["fmt"], dict(params["np_printoptions"])

    def show(*arrays):
        args, kwargs = merge_args(params["in_tree"], arrays, params["static_args"])
        if params["has_placeholders"]:
            with np.printoptions(**options):
                message = fmt.format(*args, **kwargs)
        else:
            message = " ".join((fmt, *(str(a) for a in args)))
        sys.stdout.write(message + "\n")
        return []
    return show


def checked_call(callback, result_avals, *arrays) -> list:
    """``callback(*arrays)``, its results checked against the op's ``result_avals`` (a wrong shape or dtype
    would otherwise be read as the declared one)."""
    outs = list(callback(*arrays))
    where = getattr(callback, "where", None)
    staged = f" (host callback staged at {where})" if where else ""
    for i, (value, aval) in enumerate(zip(outs, result_avals)):
        value = np.asarray(value)
        if value.shape != aval.shape:
            raise JaxRuntimeError(f"INTERNAL: Incorrect output shape for return value #{i}: Expected: "
                                  f"{aval.shape}, Actual: {value.shape}{staged}")
        if value.dtype != aval.dtype:
            raise JaxRuntimeError(f"INTERNAL: Incorrect output dtype for return value #{i}: Expected: "
                                  f"{aval.dtype}, Actual: {value.dtype}{staged}")
    return outs
