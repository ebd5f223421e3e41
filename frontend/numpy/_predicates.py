"""Whole-array comparisons and type predicates of ``irax.numpy``."""
from __future__ import annotations

import numpy as np

from irax import dtypes

from ._creation import asarray
from ._reductions import all
from ._ufuncs import (abs, add, equal, isinf, isnan, less_equal, logical_and, logical_not, logical_or, multiply,
                      subtract, where)


def isscalar(element):
    return np.ndim(element) == 0 if not hasattr(element, "ndim") else element.ndim == 0


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|``; infinities are close only to themselves, NaN to nothing."""
    a, b = asarray(a), asarray(b)
    dtype_ = dtypes.to_inexact_dtype(dtypes.result_type(a, b))
    a, b = a.astype(dtype_), b.astype(dtype_)
    out = less_equal(abs(subtract(a, b)), add(atol, multiply(rtol, abs(b))))
    both_inf = logical_and(isinf(a), isinf(b))
    out = where(both_inf, equal(a, b), logical_and(out, logical_not(logical_or(isinf(a), isinf(b)))))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
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
