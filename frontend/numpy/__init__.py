"""``irax.numpy``: NumPy's API with JAX's semantics (immutable arrays, JAX's dtype promotion)."""
from __future__ import annotations

import numpy as _np

from irax.basearray import Array as ndarray
from irax.dtypes import bfloat16, promote_types, result_type

from ._creation import (arange, array, asarray, bartlett, blackman, copy, empty, empty_like, eye, from_dlpack,
                        frombuffer, fromfunction, fromiter, fromstring, full, full_like, geomspace, hamming, hanning,
                        identity, linspace, logspace, ones, ones_like, tri, zeros, zeros_like)
from ._indexing import _getitem, _IndexUpdateHelper, put, put_along_axis, take, take_along_axis
from ._linalg_ops import (diagonal, dot, inner, matmul, matvec, outer, tensordot, trace, vdot, vecdot,
                          vecmat)
from ._matrix import (diag, diag_indices, diag_indices_from, diagflat, fill_diagonal, indices, ix_, kron, mask_indices,
                      meshgrid, tril, tril_indices, tril_indices_from, triu, triu_indices, triu_indices_from, vander)
from ._numeric import (convolve, correlate, corrcoef, cov, cross, diff, ediff1d, gradient, select, trapezoid,
                       unwrap)
from ._pad import pad
from ._polynomial import polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, trim_zeros
from ._predicates import (allclose, array_equal, array_equiv, can_cast, isclose, iscomplexobj, isrealobj, isscalar,
                          iterable)
from ._reductions import (all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum,
                          cumulative_prod, cumulative_sum, max, mean, min, nanargmax, nanargmin, nancumprod, nancumsum,
                          nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar, prod, ptp, std, sum, var)
from ._quantiles import median, nanmedian, nanpercentile, nanquantile, percentile, quantile
from ._search import bincount, digitize, histogram, histogram_bin_edges, isin, searchsorted
from ._sorting import argpartition, argsort, lexsort, partition, sort, sort_complex
from ._setops import (intersect1d, setdiff1d, setxor1d, union1d, unique, unique_all, unique_counts,
                      unique_inverse, unique_values)
from ._selection import (choose, delete, insert, packbits, piecewise, ravel_multi_index, unpackbits,
                         unravel_index)
from ._shape import (_astype, _view, append, array_split, astype, atleast_1d, atleast_2d, atleast_3d, block,
                     broadcast_arrays, broadcast_shapes, broadcast_to, column_stack, concat, concatenate, dsplit,
                     dstack, expand_dims, flip, fliplr, flipud, hsplit, hstack, matrix_transpose, moveaxis, ndim,
                     permute_dims, ravel, repeat, reshape, resize, roll, rollaxis, rot90, shape, size, split, squeeze,
                     stack, swapaxes, tile, transpose, unstack, vsplit, vstack)
from ._ufuncs import (abs, absolute, acos, acosh, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
                      around, asin, asinh, atan, atan2, atanh, bitwise_count, bitwise_invert, bitwise_left_shift,
                      bitwise_not, bitwise_right_shift, cbrt, ceil, clip, conj, conjugate, copysign, cos, cosh,
                      deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, fabs, fix, float_power, floor,
                      floor_divide, fmax, fmin, fmod, frexp, greater, greater_equal, heaviside, hypot, imag, invert,
                      iscomplex, isfinite, isinf, isnan, isneginf, isposinf, isreal, ldexp, left_shift, less,
                      less_equal, log, log1p, log2, log10, logical_not, mod, modf, nan_to_num, nextafter, not_equal,
                      positive, pow, power, rad2deg, radians, real, reciprocal, remainder, right_shift, rint, round,
                      sign, signbit, sin, sinc, sinh, spacing, sqrt, square, tan, tanh, true_divide, trunc, where)
from ._ufunc_api import (add, bitwise_and, bitwise_or, bitwise_xor, frompyfunc, logaddexp, logaddexp2, logical_and,
                         logical_or, logical_xor, maximum, minimum, multiply, negative, subtract, ufunc)
from ._utilities import (apply_over_axes, array_repr, array_str, finfo, get_printoptions, iinfo, isdtype, issubdtype,
                         load, printoptions, save, savez, set_printoptions)
from . import linalg
from . import fft
from ._histograms import histogram2d, histogramdd
from ._einsum import einsum, einsum_path
from ._io import fromfile
from ._polyzeros import poly, roots
from ._index_tricks import c_, index_exp, mgrid, ogrid, r_, s_
from ._misc import (apply_along_axis, argwhere, compress, extract, flatnonzero, gcd, i0, interp, kaiser, lcm,
                    nonzero, place)
from ._vectorize import vectorize

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
bool, single, double, csingle, cdouble = bool_, float32, float64, complex64, complex128
ComplexWarning = _np.exceptions.ComplexWarning

dtype = _np.dtype
inf, nan, pi, e, euler_gamma, newaxis = _np.inf, _np.nan, _np.pi, _np.e, _np.euler_gamma, None
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
floating, complexfloating, inexact, number, generic = (_np.floating, _np.complexfloating, _np.inexact, _np.number,
                                                       _np.generic)
character, flexible, object_ = _np.character, _np.flexible, _np.object_


