"""Turning Python and NumPy values into operands that ``bind`` accepts."""
from __future__ import annotations

import numpy as np

from irax import dtypes
from irax.array import Array
from irax.core import Tracer, current_trace
from irax.ir.avals import ShapedArray

_PY_SCALARS = (bool, int, float, complex)


def scalar_like(value, dtype, weak=True) -> Array:
    """A 0-d array of ``dtype`` holding a Python scalar, weakly typed as JAX makes it."""
    dtype = np.dtype(dtype)
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python int {value} too large to convert to {dtype.name}")
    if type(value) is bool or (type(value) in (int, float) and -65504 <= value <= 65504):
        array = np.array(value, dtype=dtype)  # in every dtype's range: no overflow to silence
    else:
        with np.errstate(all="ignore"):
            array = np.array(value, dtype=dtype)
    out = Array._from_host(array, ShapedArray((), dtype, weak and dtype != np.bool_))
    if weak and type(value) in (float, complex) and dtypes.issubdtype(dtype, np.inexact):
        out._python_value = value
    return out


def const_like(example, value, typed=np.array):
    """``value`` as JAX's ``lax._const`` makes it: a Python scalar beside a weakly typed scalar, so that the
    arithmetic it joins stays weak, else ``typed(value, dtype)`` of the example's dtype."""
    dtype = dtypes.dtype(example)
    if dtypes.is_weakly_typed(example) and np.ndim(example) == 0:
        value = dtypes.scalar_type_of(example)(value)
        if dtypes.dtype(value, canonicalize=True) == dtype:
            return value
    return typed(value, dtype)


def as_operand(x):
    """Arrays and tracers pass through; anything else becomes an ``Array`` as ``jnp.asarray`` would."""
    if isinstance(x, (Array, Tracer)):
        return x
    if type(x) in _PY_SCALARS:
        return scalar_like(x, dtypes.canonicalize_dtype(dtypes.dtype(x)))
    if type(x) is not np.ndarray and hasattr(x, "__jax_array__"):
        return as_operand(x.__jax_array__())
    memo = getattr(current_trace(), "host_operands", None)
    if memo is not None and id(x) in memo:
        return memo[id(x)][1]
    array = x if type(x) is np.ndarray else np.asarray(x)
    if array.dtype == object:
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")
    dtype = dtypes.canonicalize_dtype(array.dtype)
    operand = Array._from_host(np.array(array, dtype=dtype), ShapedArray(array.shape, dtype))
    if memo is not None:  # one NumPy array closed over twice is one constant, as in JAX
        memo[id(x)] = (x, operand)
    return operand
