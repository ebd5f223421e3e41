"""Searching and counting by comparing every pair (JAX's ``method='compare_all'``): no sort, gather or scatter.

The cost is ``O(len(a) * len(v))``, which is what these functions cost in JAX on small
inputs; a sort-based method arrives with the sort primitive.
"""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._reductions import sum
from ._util import check_arraylike, convert, promote_dtypes, promote_dtypes_inexact, staged_as, to_inexact_dtype


def _less(x, y):
    """``x < y`` in the total order of sorting: NaN after every number."""
    lt = lax.lt(x, y)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return lt
    return lax.bitwise_or(lt, lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))


def _count_before(a, v, side):
    """How many entries of the sorted 1-d ``a`` go before each ``v``: the insertion index."""
    a_b = lax.broadcast_in_dim(a, tuple(v.shape) + a.shape, (v.ndim,))
    v_b = lax.broadcast_in_dim(v, tuple(v.shape) + a.shape, tuple(range(v.ndim)))
    before = _less(a_b, v_b) if side == "left" else lax.bitwise_not(_less(v_b, a_b))
    return sum(before, axis=-1, dtype=np.int32)


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices of ``v`` into the sorted 1-d ``a`` (every ``method`` computes the same result)."""
    check_arraylike("searchsorted", a, v)
    if sorter is not None:
        raise NotImplementedError("jnp.searchsorted with sorter needs gather, which irax does not support yet")
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right']")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"method={method!r} not recognized; allowed values are 'scan', 'scan_unrolled', "
                         "'sort', 'compare_all'")
    if np.ndim(a) != 1:
        raise ValueError("a should be 1-dimensional")
    return _searchsorted(a, v, side)


@staged_as("searchsorted", static_argnums=(2,))
def _searchsorted(a, v, side):
    a, v = promote_dtypes(a, v)
    return _count_before(a, v, side)


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each ``x`` falls in, for increasing or decreasing ``bins``."""
    check_arraylike("digitize", x, bins)
    bins = as_operand(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return lax.full(np.shape(x), 0, np.int32)
    return _digitize(x, bins, bool(right))


@staged_as("digitize", static_argnums=(2,))
def _digitize(x, bins, right):
    from ._ufuncs import where
    side = "left" if right else "right"
    x, bins = promote_dtypes(x, bins)
    n = bins.shape[0]
    increasing = lax.ge(lax.index_in_dim(bins, n - 1, keepdims=False), lax.index_in_dim(bins, 0, keepdims=False))
    forward = _count_before(bins, x, side)
    backward = lax.sub(convert(n, np.int32), _count_before(lax.rev(bins, (0,)), x, side))
    return where(increasing, forward, backward)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element occurs in ``test_elements`` (compared all against all)."""
    from ._util import ensure_arraylike
    element, test_elements = ensure_arraylike("isin", element, test_elements)
    result = _in1d(element, test_elements, invert=invert, method=method, assume_unique=assume_unique)
    return result.reshape(np.shape(element))


@staged_as("_in1d", static_argnames=("assume_unique", "invert", "method"))
def _in1d(ar1, ar2, invert, method="auto", assume_unique=False):
    from ._creation import ones, zeros
    from ._util import ensure_arraylike
    ar1, ar2 = ensure_arraylike("in1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ar1, ar2)
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    if arr1.size == 0 or arr2.size == 0:
        return (ones if invert else zeros)(arr1.shape, dtype=bool)
    if method in ("auto", "compare_all"):
        if invert:
            return (arr1[:, None] != arr2[None, :]).all(-1)
        return (arr1[:, None] == arr2[None, :]).any(-1)
    if method in ("binary_search", "sort"):
        raise NotImplementedError(f"jnp.isin with method={method!r} needs sort, which irax does not support yet")
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', 'binary_search', 'sort', "
                     "and 'auto'")


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or sums ``weights``) per non-negative integer value; ``length`` must be static under jit."""
    check_arraylike("bincount", x)
    x = as_operand(x)
    if x.dtype == np.bool_:
        x = convert(x, np.int32)
    if not np.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        host = np.asarray(x)  # needs concrete values, as in JAX
        length = max(minlength, host.size and int(max(0, host.max())) + 1)
    length = operator.index(length)
    if weights is not None and np.shape(weights) != x.shape:
        raise ValueError(f"type of weights must match type of x. Got shapes {x.shape} and {np.shape(weights)}")
    return _bincount(x, weights, length)


@staged(static_argnums=(2,))
def _bincount(x, weights, length):
    from ._ufuncs import where
    weights = lax.full(x.shape, 1, dtypes.canonicalize_dtype(np.int64)) if weights is None else as_operand(weights)
    x = lax.max(x, convert(0, x.dtype))
    shape = (x.shape[0], length)
    hit = lax.eq(lax.broadcast_in_dim(x, shape, (0,)), lax.broadcasted_iota(x.dtype, shape, 1))
    return sum(where(hit, lax.broadcast_in_dim(weights, shape, (0,)), convert(0, weights.dtype)), axis=0)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """``bins + 1`` evenly spaced edges over ``range`` (the data's min and max by default)."""
    from ._creation import asarray, linspace
    from ._reductions import ptp
    from ._ufuncs import where
    del weights  # unused: string bins are not supported
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = to_inexact_dtype(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype)
    bins_int = operator.index(bins)
    if range is None:
        range = [arr.min(), arr.max()]
    range = asarray(range, dtype=dtype)
    if np.shape(range) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    range = (where(ptp(range) == 0, range[0] - 0.5, range[0]),
             where(ptp(range) == 0, range[1] + 0.5, range[1]))
    return linspace(range[0], range[1], bins_int + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or weight sums) of ``a`` per bin, and the bin edges; the last bin includes its right edge."""
    from ._numeric import diff
    from ._ufuncs import where
    check_arraylike("histogram", a, bins)
    if weights is None:
        (a,) = promote_dtypes_inexact(a)
        weights = lax.full_like(a, 1)
    else:
        check_arraylike("histogram", weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(a, weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    from ._shape import ravel
    a, weights = ravel(a), ravel(weights)
    n = edges.shape[0]
    idx = _count_before(edges, a, "right")
    idx = where(lax.eq(a, lax.index_in_dim(edges, n - 1, keepdims=False)), n - 1, idx)
    counts = lax.slice_in_dim(_bincount(idx, weights, n), 1, n)
    if density:
        counts = lax.div(lax.div(counts, diff(edges)), sum(counts))
    return counts, edges
