"""Whole-array comparisons and type predicates of ``irax.numpy``."""
from __future__ import annotations

import numpy as np

from irax import dtypes, lax
from irax.array import Array
from irax.core import Tracer

from ._creation import asarray
from ._reductions import all
from ._ufuncs import equal, isfinite, isnan, logical_and, logical_or
from ._util import check_arraylike, convert_element_type, promote_args, promote_args_inexact, staged_as


def isscalar(element):
    """Python and NumPy scalars, and arrays of no dimensions; not other objects (``None``, lists, functions)."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array, Tracer)):
        return element.ndim == 0
    if getattr(element, "__jax_array__", None) is not None:
        return np.ndim(element.__jax_array__()) == 0
    return False


@staged_as("allclose", static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_arraylike("allclose", a, b)
    return all(isclose(a, b, rtol, atol, equal_nan))


@staged_as("isclose", static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` (or ``a == b``, for infinities); NaN is close to nothing unless
    ``equal_nan``, as ``jnp.isclose``."""
    a, b = promote_args("isclose", a, b)
    a, b = promote_args_inexact("isclose", a, b)
    dtype = a.dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        dtype = np.array(0, dtype).real.dtype
    rtol = convert_element_type(rtol, dtype)
    atol = convert_element_type(atol, dtype)
    both_nan = logical_and(isnan(a), isnan(b))
    check_fin = isfinite(b)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = logical_or(lax.eq(a, b), logical_and(check_fin, in_range))
    return logical_or(out, both_nan) if equal_nan else out


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if np.shape(a1) != np.shape(a2):
        return asarray(False, dtype=bool)
    eq = asarray(equal(a1, a2))
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    """Equal after broadcasting; False when the shapes do not broadcast."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray(False)
    return all(equal(a1, a2))


def iscomplexobj(x):
    if x is None:
        return False
    dtype = x.dtype if hasattr(x, "dtype") else asarray(x).dtype
    return np.issubdtype(dtype, np.complexfloating)


def isrealobj(x):
    return not iscomplexobj(x)


def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_, to, casting)


def iterable(y):
    return np.iterable(y)
