"""Searching and counting: ``searchsorted`` as JAX's (a binary search by ``scan`` mapped over the queries, a co-sort,
or every pair compared, in the total order of ``lax.sort``), and what builds on it."""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes, lax
from irax.lax import _sorting as lax_sorting
from irax.lax._scalars import as_operand

from ._util import (check_arraylike, convert, ensure_arraylike, promote_dtypes, promote_dtypes_inexact, staged_as,
                    to_inexact_dtype)


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices of ``v`` into the sorted 1-d ``a`` (``a[sorter]`` when given), NaN sorting last.

    Args:
      method: 'scan' (a binary search per query, a ``scan`` of ``log2(len(a))`` steps), 'scan_unrolled' (the
        same, unrolled), 'sort' (one co-sort of ``a`` and ``v``) or 'compare_all' (every pair compared); all give
        the same indices.
    """
    if sorter is None:
        a, v = ensure_arraylike("searchsorted", a, v)
    else:
        a, v, sorter = ensure_arraylike("searchsorted", a, v, sorter)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument {side=!r}, expected 'left' or 'right'")
    _check_method(method)
    return _searchsorted(a, v, sorter, side, method)


def _check_method(method):
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"invalid argument {method=!r}, expected one of "
                         "['compare_all', 'scan', 'scan_unrolled', 'sort']")


@staged_as("searchsorted", static_argnums=(3, 4))
def _searchsorted(a, v, sorter, side, method):
    a, v = promote_dtypes(a, v)
    if sorter is not None:
        a = a[sorter]
    dtype = np.dtype(np.int64 if a.shape[0] > np.iinfo(np.int32).max else np.int32)
    if method == "sort":
        return _searchsorted_sort_impl(a, v, side, dtype)
    if method == "compare_all":
        return _searchsorted_compare_all_impl(a, v, side, dtype)
    return _searchsorted_scan_impl(a, v, side, dtype, method == "scan_unrolled")


@staged_as("_searchsorted_scan_impl", static_argnums=(2, 3, 4))
def _searchsorted_scan_impl(sorted_arr, query, side, dtype, unrolled):
    """A binary search: ``ceil(log2(n + 1))`` halvings of ``[low, high)``; a query of more than one value is
    this function mapped over its leading axis, as JAX's."""
    import irax
    n = sorted_arr.shape[0]
    if n == 0:
        return lax.full(query.shape, 0, dtype)
    if query.ndim > 0:
        return irax.vmap(lambda q: _searchsorted_scan_impl(sorted_arr, q, side, dtype, unrolled))(query)
    op = lax_sorting._sort_le_comparator if side == "left" else lax_sorting._sort_lt_comparator
    unsigned = np.uint64 if np.dtype(dtype).itemsize == 8 else np.uint32

    def body_fun(state, _):
        low, high = state
        mid = low + (high - low) // 2
        go_left = op(query, sorted_arr[mid])
        return (lax.select(go_left, low, mid), lax.select(go_left, mid, high)), ()
    n_levels = int(np.ceil(np.log2(n + 1)))
    carry, _ = lax.scan(body_fun, (unsigned(0), unsigned(n)), (), length=n_levels, unroll=n_levels if unrolled else 1)
    return carry[1].astype(dtype)


@staged_as("_searchsorted_sort_impl", static_argnums=(2, 3))
def _searchsorted_sort_impl(sorted_arr, query, side, dtype):
    """Each query's rank among the queries and ``a`` sorted together, less its rank among the queries alone."""
    working = np.int32 if sorted_arr.size + query.size <= np.iinfo(np.int32).max else np.int64

    def rank(x):
        idx = lax.iota(working, len(x))
        return lax.full_like(idx, 0).at[lax.sort_key_val(x, idx)[1]].set(idx)
    if side == "left":
        index = rank(lax.concatenate([query.ravel(), sorted_arr], 0))[:query.size]
    else:
        index = rank(lax.concatenate([sorted_arr, query.ravel()], 0))[sorted_arr.size:]
    return lax.reshape(lax.sub(index, rank(query.ravel())), np.shape(query)).astype(dtype)


@staged_as("_searchsorted_compare_all_impl", static_argnums=(2, 3))
def _searchsorted_compare_all_impl(sorted_arr, query, side, dtype):
    import irax
    op = lax_sorting._sort_lt_comparator if side == "left" else lax_sorting._sort_le_comparator
    comparisons = irax.vmap(op, in_axes=(0, None))(sorted_arr, query)
    return comparisons.sum(dtype=dtype, axis=0)


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each ``x`` falls in, for increasing or decreasing ``bins``."""
    check_arraylike("digitize", x, bins)
    if method is not None:
        _check_method(method)
    return _digitize(x, bins, right, method)


@staged_as("digitize", static_argnums=(2, 3))
def _digitize(x, bins, right, method):
    from ._creation import zeros_like
    from ._ufuncs import where
    x, bins_arr = ensure_arraylike("digitize", x, bins)
    if bins_arr.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins_arr.shape[0] == 0:
        return zeros_like(x, dtype=np.int32)
    side = "right" if not right else "left"
    kwds = {} if method is None else {"method": method}
    return where(bins_arr[-1] >= bins_arr[0], searchsorted(bins_arr, x, side=side, **kwds),
                 bins_arr.shape[0] - searchsorted(bins_arr[::-1], x, side=side, **kwds))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element occurs in ``test_elements`` (compared all against all)."""
    element, test_elements = ensure_arraylike("isin", element, test_elements)
    result = _in1d(element, test_elements, invert=invert, method=method, assume_unique=assume_unique)
    return result.reshape(np.shape(element))


@staged_as("_in1d", static_argnames=("assume_unique", "invert", "method"))
def _in1d(ar1, ar2, invert, method="auto", assume_unique=False):
    from ._creation import ones, zeros
    ar1, ar2 = ensure_arraylike("in1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ar1, ar2)
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    if arr1.size == 0 or arr2.size == 0:
        return (ones if invert else zeros)(arr1.shape, dtype=bool)
    if method in ("auto", "compare_all"):
        if invert:
            return (arr1[:, None] != arr2[None, :]).all(-1)
        return (arr1[:, None] == arr2[None, :]).any(-1)
    if method == "binary_search":
        arr2 = lax.sort(arr2)
        ind = searchsorted(arr2, arr1)
        return arr1 != arr2[ind] if invert else arr1 == arr2[ind]
    if method == "sort":
        return _in1d_by_sort(arr1, arr2, invert, assume_unique)
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', 'binary_search', 'sort', "
                     "and 'auto'")


def _in1d_by_sort(arr1, arr2, invert, assume_unique):
    """Membership from one sort of both arrays: an entry of ``arr1`` is in ``arr2`` where the next sorted entry
    equals it (``arr1`` made unique first, so that its own repeats do not count)."""
    from ._creation import arange, ones, zeros
    from ._setops import unique
    from ._shape import concatenate
    if assume_unique:
        ind_out = slice(None)
    else:
        arr1, ind_out = unique(arr1, size=len(arr1), return_inverse=True, fill_value=arr2.max())
    aux, ind = lax.sort_key_val(concatenate([arr1, arr2]), arange(arr1.size + arr2.size))
    if invert:
        return ones(arr1.shape, bool).at[ind[:-1]].set(aux[1:] != aux[:-1], mode="drop")[ind_out]
    return zeros(arr1.shape, bool).at[ind[:-1]].set(aux[1:] == aux[:-1], mode="drop")[ind_out]


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


def _bincount(x, weights, length):
    """JAX's scatter-add of the weights (or ones) at the clipped values."""
    from ._creation import zeros
    from ._ufuncs import clip
    weights = np.array(1, dtype=dtypes.canonicalize_dtype(np.int64)) if weights is None else weights
    return zeros(length, dtypes.dtype(weights)).at[clip(x, 0)].add(weights, mode="drop")


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
    from ._creation import zeros
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
    bin_idx = searchsorted(edges, a, side="right")
    bin_idx = where(a == edges[-1], len(edges) - 1, bin_idx)
    counts = zeros(len(edges), weights.dtype).at[bin_idx].add(weights)[1:]
    if density:
        counts = counts / diff(edges) / counts.sum()
    return counts, edges
