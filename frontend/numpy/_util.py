"""Argument checking and JAX's implicit promotion of dtypes and ranks for ``irax.numpy``."""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes, lax
from irax.array import Array
from irax.core import Tracer
from irax.lax._scalars import as_operand

_PY_SCALARS = (bool, int, float, complex)


def check_arraylike(name, *args):
    for i, a in enumerate(args):
        if not (isinstance(a, (Array, Tracer, np.ndarray, np.generic)) or type(a) in _PY_SCALARS
                or hasattr(a, "__jax_array__")):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at position {i}.")


def convert(x, dtype, weak_type=False):
    return lax._convert(x, np.dtype(dtype), weak_type)


def promote_dtypes(*args):
    """Converts every argument to the promoted dtype (and weak type) of all of them."""
    if len(args) < 2:
        return [as_operand(a) for a in args]
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    """As ``promote_dtypes``, but booleans become int32 (JAX's ``to_numeric_dtype``)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = np.dtype(np.int32) if dtype == np.bool_ else dtype
    return [convert(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args):
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)) and args[0].dtype.kind in "fcV":
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = dtypes.to_inexact_dtype(dtype)
    return [convert(a, dtype, weak) for a in args]


def promote_shapes(*args):
    """Left-pads lower-rank operands with unit axes (rank-0 operands stay as they are)."""
    if len(args) < 2:
        return list(args)
    nd = max(np.ndim(a) if not hasattr(a, "ndim") else a.ndim for a in args)
    out = []
    for a in args:
        if getattr(a, "ndim", 0) not in (nd, 0):
            a = lax.broadcast_in_dim(a, (1,) * (nd - a.ndim) + tuple(a.shape), tuple(range(nd - a.ndim, nd)))
        out.append(a)
    return out


def promote_args(name, *args):
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)):
        return list(args)
    check_arraylike(name, *args)
    return promote_shapes(*promote_dtypes(*args))


def promote_args_numeric(name, *args):
    check_arraylike(name, *args)
    return promote_shapes(*promote_dtypes_numeric(*args))


def promote_args_inexact(name, *args):
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)) and args[0].dtype.kind in "fcV":
        return list(args)
    check_arraylike(name, *args)
    return promote_shapes(*promote_dtypes_inexact(*args))


def canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def canonicalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axis}")
        return axes
    return (canonicalize_axis(axis, ndim),)


def staged_as(name, **kwargs):
    """``staged`` under JAX's name for the function, so a jaxpr shows ``jit[name=tril]`` where JAX's does."""
    from irax.api import staged

    def wrap(fun):
        fun.__name__ = fun.__qualname__ = name
        return staged(fun, **kwargs)
    return wrap
