"""``irax.numpy``: NumPy's API with JAX's semantics (immutable arrays, JAX's dtype promotion)."""
from __future__ import annotations

import numpy as _np

from irax import dtypes as _dtypes
from irax.array import Array as ndarray
from irax.dtypes import (bfloat16, finfo, iinfo, issubdtype, promote_types, result_type)

from ._creation import (arange, array, asarray, copy, empty, empty_like, eye, full, full_like, identity, linspace,
                        ones, ones_like, tri, zeros, zeros_like)
from ._indexing import _getitem, _IndexUpdateHelper
from ._linalg_ops import diagonal, dot, einsum, inner, matmul, outer, tensordot, trace, vdot, vecdot
from ._reductions import (all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max, mean, min,
                          prod, ptp, std, sum, var)
from ._shape import (_astype, array_split, astype, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays,
                     broadcast_shapes, broadcast_to, column_stack, concat, concatenate, expand_dims, flip, fliplr,
                     flipud, hsplit, hstack, matrix_transpose, moveaxis, ndim, permute_dims, ravel, repeat, reshape,
                     roll, shape, size, split, squeeze, stack, swapaxes, tile, transpose, vsplit, vstack)
from ._ufuncs import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
                      around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert, bitwise_not, bitwise_or,
                      bitwise_xor, cbrt, ceil, clip, conj, conjugate, copysign, cos, cosh, deg2rad, degrees, divide,
                      divmod, equal, exp, exp2, expm1, fabs, fix, float_power, floor, floor_divide, fmod, greater,
                      greater_equal, heaviside, hypot, imag, invert, isfinite, isinf, isnan, isneginf, isposinf,
                      left_shift, less, less_equal, log, log1p, log2, log10, logaddexp, logical_and, logical_not,
                      logical_or, logical_xor, maximum, minimum, mod, multiply, nan_to_num, negative, nextafter,
                      not_equal, positive, pow, power, rad2deg, radians, real, reciprocal, remainder, right_shift,
                      rint, round, sign, signbit, sin, sinc, sinh, sqrt, square, subtract, tan, tanh, true_divide,
                      trunc, where)


def _scalar_type(name, dtype):
    """``jnp.float32(x)`` makes a 0-d array of that dtype (and ``jnp.float32`` works as a dtype)."""
    def __new__(cls, x=0):
        return asarray(x, dtype=cls.dtype)
    return type(name, (), {"__new__": __new__, "dtype": _np.dtype(dtype), "__doc__": f"The {name} scalar type."})


bool_ = _scalar_type("bool_", _np.bool_)
int8, int16, int32, int64 = (_scalar_type(n, n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_scalar_type(n, n) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_scalar_type(n, n) for n in ("float16", "float32", "float64"))
complex64, complex128 = (_scalar_type(n, n) for n in ("complex64", "complex128"))
bfloat16 = _scalar_type("bfloat16", bfloat16)
float_ = float64
int_ = int64
uint = uint64
complex_ = complex128

dtype = _np.dtype
inf, nan, pi, e, euler_gamma, newaxis = _np.inf, _np.nan, _np.pi, _np.e, _np.euler_gamma, None
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
floating, complexfloating, inexact, number, generic = (_np.floating, _np.complexfloating, _np.inexact, _np.number,
                                                       _np.generic)


def isscalar(element):
    return _np.ndim(element) == 0 if not hasattr(element, "ndim") else element.ndim == 0


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = asarray(a), asarray(b)
    dtype_ = _dtypes.to_inexact_dtype(result_type(a, b))
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


def _view(x, dtype=None):
    from irax import lax
    return x if dtype is None else lax.bitcast_convert_type(x, dtype)


def can_cast(from_, to, casting="safe"):
    return _np.can_cast(from_, to, casting)
