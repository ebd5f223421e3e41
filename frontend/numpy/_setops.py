"""``unique`` and the set operations (``union1d``, ``intersect1d``, ``setdiff1d``, ``setxor1d``), ported from JAX's
``jax/_src/numpy/setops.py`` so that they bind JAX's primitives behind JAX's ``jit`` boundaries.

Their results have a size that depends on the values, so without ``size=`` they need concrete input and raise
JAX's ConcretizationTypeError under a transformation; with a static ``size=`` the result is padded (with
``fill_value``, or by default the smallest value found) or truncated to it.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from irax import dtypes, errors, lax
from irax.array import Array
from irax.core import Tracer

from ._util import canonicalize_axis, ensure_arraylike, lax_const, promote_dtypes, staged_as

__all__ = ["intersect1d", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]

UNIQUE_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can specify "
                    "a concrete value for the size argument, which will determine the output size.")


def _jnp():
    import irax.numpy as jnp
    return jnp


def concrete_or_error(force, value, context):
    """JAX's ``core.concrete_or_error``: ``force(value)`` (or ``value`` itself for None) when it is known at trace
    time, else a ConcretizationTypeError that names ``context``."""
    if isinstance(value, Tracer) and value.concrete is None:
        raise errors.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {value._describe()}\n"
            f"{context}{value._context_message()}\n")
    return value if force is None else force(value)


def _neq_equal_nan(x, y):
    isnan = _jnp().isnan
    return lax.bitwise_and(lax.ne(x, y), lax.bitwise_not(lax.bitwise_and(isnan(x), isnan(y))))


@staged_as("_unique_sorted_mask", static_argnames=("axis", "equal_nan"))
def _unique_sorted_mask(ar, axis, equal_nan):
    jnp = _jnp()
    aux = jnp.moveaxis(ar, axis, 0)
    if np.issubdtype(aux.dtype, np.complexfloating):
        aux = jnp.where(jnp.isnan(aux), lax_const(aux, np.nan), aux)
    size, *out_shape = aux.shape
    if math.prod(out_shape) == 0:
        size = 1
        perm = jnp.zeros(1, dtype=int)
    else:
        perm = jnp.lexsort(aux.reshape(size, math.prod(out_shape)).T[::-1])
    aux = aux[perm]
    if aux.size:
        neq = _neq_equal_nan if dtypes.issubdtype(aux.dtype, np.inexact) and equal_nan else lax.ne
        mask = jnp.ones(size, dtype=bool)
        mask = mask.at[1:].set(jnp.any(neq(aux[1:], aux[:-1]), tuple(range(1, aux.ndim))))
    else:
        mask = jnp.zeros(size, dtype=bool)
    return aux, mask, perm


def _unique(ar, axis, return_index=False, return_inverse=False, return_counts=False, equal_nan=True, size=None,
            fill_value=None, return_true_size=False):
    """``unique`` along one axis of ``ar``; ``return_true_size`` adds the number of distinct values (for the set
    operations, which pad with ``size``)."""
    jnp = _jnp()
    axis = canonicalize_axis(axis, ar.ndim)
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    if size is None:
        ind = concrete_or_error(None, mask, "The error arose in jnp.unique(). " + UNIQUE_SIZE_HINT)
    else:
        ind = jnp.nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        result = _fill_after(result, mask, size, fill_value)
    ret = (jnp.moveaxis(result, 0, axis),)
    if return_index:
        ret += (perm[ind] if aux.size else perm,)
    if return_inverse:
        ret += (_inverse_indices(ar, axis, aux, mask, perm),)
    if return_counts:
        ret += (_counts(ar, axis, aux, mask, size),)
    if return_true_size:
        ret += (mask.sum(),)
    return ret[0] if len(ret) == 1 else ret


def _fill_after(result, mask, size, fill_value):
    jnp = _jnp()
    fill_value = jnp.asarray(fill_value).astype(result.dtype)
    if not result.shape[0]:
        return jnp.full_like(result, fill_value, shape=(size, *result.shape[1:]))
    valid = lax.expand_dims(jnp.arange(size) < mask.sum(), tuple(range(1, result.ndim)))
    return jnp.where(valid, result, fill_value)


def _inverse_indices(ar, axis, aux, mask, perm):
    jnp = _jnp()
    if not aux.size:
        return jnp.zeros(ar.shape[axis], dtype=int)
    imask = jnp.cumsum(mask) - 1
    return jnp.zeros(mask.shape, dtype=int).at[perm].set(imask)


def _counts(ar, axis, aux, mask, size):
    jnp = _jnp()
    if aux.size:
        if size is None:
            idx = jnp.append(jnp.nonzero(mask)[0], mask.size)
        else:
            idx = jnp.nonzero(mask, size=size + 1)[0]
            idx = idx.at[1:].set(jnp.where(idx[1:], idx[1:], mask.size))
        return jnp.diff(idx)
    if ar.shape[axis]:
        return jnp.full((1,), ar.shape[axis], dtype=int)
    return jnp.empty(0, dtype=int)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):
    """The sorted distinct values of ``ar`` (flattened, or the distinct slices along ``axis``).

    Args:
      return_index, return_inverse, return_counts: also return the first index of each value, the index of each
        entry's value in the result, and how often each value occurs.
      equal_nan: whether NaNs count as one value.
      size: a static length for the result, which makes ``unique`` work under ``jit``.
      fill_value: pads the result past the distinct values (the smallest value by default).

    Raises:
      ConcretizationTypeError: under a transformation without ``size``.
    """
    del sorted  # the result is always sorted, as in JAX
    arr = ensure_arraylike("unique", ar)
    if size is None:
        arr = concrete_or_error(None, arr,
                                "The error arose for the first argument of jnp.unique(). " + UNIQUE_SIZE_HINT)
    else:
        size = concrete_or_error(operator.index, size,
                                 "The error arose for the size argument of jnp.unique(). " + UNIQUE_SIZE_HINT)
    arr_shape = arr.shape
    if axis is None:
        axis_int = 0
        arr = arr.flatten()
    else:
        axis_int = canonicalize_axis(axis, arr.ndim)
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts, equal_nan=equal_nan, size=size,
                     fill_value=fill_value)
    if return_inverse and axis is None:
        idx = 2 if return_index else 1
        result = (*result[:idx], result[idx].reshape(arr_shape), *result[idx + 1:])
    return result


class _UniqueAllResult(NamedTuple):
    """The result of ``unique_all``."""
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class _UniqueCountsResult(NamedTuple):
    """The result of ``unique_counts``."""
    values: Array
    counts: Array


class _UniqueInverseResult(NamedTuple):
    """The result of ``unique_inverse``."""
    values: Array
    inverse_indices: Array


def unique_all(x, /, *, size=None, fill_value=None):
    """The Array API's ``unique_all``: values, first indices, inverse indices and counts (NaNs all distinct)."""
    x = ensure_arraylike("unique_all", x)
    values, indices, inverse, counts = unique(x, return_index=True, return_inverse=True, return_counts=True,
                                              equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueAllResult(values=values, indices=indices, inverse_indices=inverse, counts=counts)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The Array API's ``unique_counts``: the distinct values and how often each occurs."""
    x = ensure_arraylike("unique_counts", x)
    values, counts = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueCountsResult(values=values, counts=counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The Array API's ``unique_inverse``: the distinct values and where each entry's value is among them."""
    x = ensure_arraylike("unique_inverse", x)
    values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueInverseResult(values=values, inverse_indices=inverse)


def unique_values(x, /, *, size=None, fill_value=None):
    """The Array API's ``unique_values``: the distinct values (NaNs all distinct)."""
    x = ensure_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def _concat_unique(arr1, arr2):
    """The distinct values of each array, those of ``arr2`` right after those of ``arr1`` (zeros after), and how
    many there are in all."""
    jnp = _jnp()
    arr1, arr2 = jnp.ravel(arr1), jnp.ravel(arr2)
    arr1, num_unique1 = _unique(arr1, axis=0, size=arr1.size, return_true_size=True)
    arr2, num_unique2 = _unique(arr2, axis=0, size=arr2.size, return_true_size=True)
    arr = jnp.zeros(arr1.size + arr2.size, dtype=dtypes.result_type(arr1, arr2))
    arr = lax.dynamic_update_slice(arr, arr1, (0,))
    arr = lax.dynamic_update_slice(arr, arr2, (num_unique1,))
    return arr, num_unique1 + num_unique2


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values of ``ar1`` that are not in ``ar2``.

    Raises:
      ConcretizationTypeError: under a transformation without ``size``.
    """
    jnp = _jnp()
    arr1, arr2 = ensure_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    if size is None:
        concrete_or_error(None, ar1, "The error arose in setdiff1d()")
    else:
        size = concrete_or_error(operator.index, size, "The error arose in setdiff1d()")
    fill_value = jnp.full_like(arr1, fill_value=(0 if fill_value is None else fill_value), shape=())
    if arr1.size == 0:
        return jnp.full_like(arr1, fill_value, shape=size or 0)
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.size)
    from ._search import _in1d
    mask = _in1d(arr1, arr2, invert=True, assume_unique=assume_unique)
    if size is None:
        return arr1[mask]
    if not assume_unique:
        n_unique = arr1.size + 1 - (arr1 == arr1[0]).sum()
        mask = jnp.where(jnp.arange(arr1.size) < n_unique, mask, False)
    return jnp.where(jnp.arange(size) < mask.sum(), arr1[jnp.where(mask, size=size)], fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct values of both arrays.

    Raises:
      ConcretizationTypeError: under a transformation without ``size``.
    """
    jnp = _jnp()
    ar1, ar2 = ensure_arraylike("union1d", ar1, ar2)
    if size is None:
        ar1 = concrete_or_error(None, ar1, "The error arose in union1d()")
        ar2 = concrete_or_error(None, ar2, "The error arose in union1d()")
    else:
        size = concrete_or_error(operator.index, size, "The error arose in union1d()")
    return unique(jnp.concatenate((ar1, ar2), axis=None), size=size, fill_value=fill_value)


def _fill_past(vals, num_results, fill_value):
    """``vals`` past ``num_results`` set to ``fill_value``, or by default to the smallest value in ``vals``."""
    jnp = _jnp()
    if fill_value is None:
        vals = jnp.where(jnp.arange(len(vals)) < num_results, vals, vals.max())
        return jnp.where(jnp.arange(len(vals)) < num_results, vals, vals.min())
    return jnp.where(jnp.arange(len(vals)) < num_results, vals, fill_value)


@staged_as("_setxor1d_size", static_argnames=("assume_unique", "size"))
def _setxor1d_size(arr1, arr2, fill_value, *, assume_unique, size):
    jnp = _jnp()
    if assume_unique:
        aux = jnp.sort(jnp.concatenate([arr1, arr2]))
        flag = jnp.concatenate((bool(aux.size), aux[1:] != aux[:-1], True), axis=None)
    else:
        arr, num_unique = _concat_unique(arr1, arr2)
        mask = jnp.arange(arr.size + 1) < num_unique + 1
        _, aux = lax.sort([~mask[1:], arr], is_stable=True, num_keys=2)
        flag = mask & jnp.concatenate((bool(aux.size), aux[1:] != aux[:-1], False),
                                      axis=None).at[num_unique].set(True)
    aux_mask = flag[1:] & flag[:-1]
    num_results = aux_mask.sum()
    if aux.size:
        indices = jnp.nonzero(aux_mask, size=size, fill_value=len(aux))[0]
        vals = aux.at[indices].get(mode="fill", fill_value=0)
    else:
        vals = jnp.zeros(size, aux.dtype)
    return _fill_past(vals, num_results, fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values found in exactly one of the two arrays.

    Raises:
      ConcretizationTypeError: under a transformation without ``size``.
    """
    jnp = _jnp()
    ar1, ar2 = ensure_arraylike("setxor1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(jnp.ravel(ar1), jnp.ravel(ar2))
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value=fill_value, assume_unique=assume_unique, size=size)
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = jnp.concatenate((arr1, arr2))
    if aux.size == 0:
        return aux
    aux = jnp.sort(aux)
    flag = jnp.concatenate((True, aux[1:] != aux[:-1], True), axis=None)
    return aux[flag[1:] & flag[:-1]]


@staged_as("_intersect1d_sorted_mask", static_argnames=("return_indices",))
def _intersect1d_sorted_mask(arr1, arr2, return_indices):
    """The two arrays sorted together, where each entry equals the next, and (optionally) where each came from."""
    jnp = _jnp()
    arr = jnp.concatenate((arr1, arr2))
    if return_indices:
        from ._sorting import _index_dtype
        iota = lax.broadcasted_iota(_index_dtype(arr.shape[0]), np.shape(arr), dimension=0)
        aux, indices = lax.sort_key_val(arr, iota)
    else:
        aux, indices = jnp.sort(arr), None
    return aux, aux[1:] == aux[:-1], indices


@staged_as("_intersect1d_size", static_argnames=("fill_value", "assume_unique", "size", "return_indices"))
def _intersect1d_size(arr1, arr2, fill_value, assume_unique, size, return_indices):
    jnp = _jnp()
    if assume_unique:
        ind1, num_unique1 = jnp.arange(arr1.size), jnp.full((), arr1.size)
        ind2 = jnp.arange(arr2.size)
        arr = jnp.concatenate([arr1, arr2])
        aux, aux_sort_indices = lax.sort([arr, jnp.arange(arr.size)], is_stable=True, num_keys=1)
        mask = jnp.ones(arr.size, dtype=bool)
    else:
        arr1, ind1, num_unique1 = _unique(arr1, 0, size=arr1.size, return_index=True, return_true_size=True,
                                          fill_value=0)
        arr2, ind2, num_unique2 = _unique(arr2, 0, size=arr2.size, return_index=True, return_true_size=True,
                                          fill_value=0)
        arr = jnp.zeros(arr1.size + arr2.size, dtype=dtypes.result_type(arr1, arr2))
        arr = lax.dynamic_update_slice(arr, arr1, (0,))
        arr = lax.dynamic_update_slice(arr, arr2, (num_unique1,))
        mask = jnp.arange(arr.size) < num_unique1 + num_unique2
        _, aux, aux_sort_indices = lax.sort([~mask, arr, jnp.arange(arr.size)], is_stable=True, num_keys=2)
    aux_mask = (aux[1:] == aux[:-1]) & mask[1:]
    num_results = aux_mask.sum()
    if aux.size:
        val_indices = jnp.nonzero(aux_mask, size=size, fill_value=aux.size)[0]
        vals = aux.at[val_indices].get(mode="fill", fill_value=0)
    else:
        val_indices = jnp.arange(0)
        vals = jnp.zeros(size, aux.dtype)
    vals = _fill_past(vals, num_results, fill_value)
    if not return_indices:
        return vals
    arr1_indices = aux_sort_indices.at[val_indices].get(mode="fill", fill_value=arr1.size)
    arr1_indices = jnp.where(jnp.arange(len(arr1_indices)) < num_results, arr1_indices, arr1.size)
    arr2_indices = aux_sort_indices.at[val_indices + 1].get(mode="fill", fill_value=arr2.size) - num_unique1
    arr2_indices = jnp.where(jnp.arange(len(arr2_indices)) < num_results, arr2_indices, arr2.size)
    if not assume_unique:
        arr1_indices = ind1.at[arr1_indices].get(mode="fill", fill_value=ind1.size)
        arr2_indices = ind2.at[arr2_indices].get(mode="fill", fill_value=ind2.size)
    return vals, arr1_indices, arr2_indices


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """The sorted distinct values found in both arrays, and with ``return_indices`` the index of each value's first
    occurrence in ``ar1`` and in ``ar2``.

    Raises:
      ConcretizationTypeError: under a transformation without ``size``.
    """
    jnp = _jnp()
    ar1, ar2 = ensure_arraylike("intersect1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ar1, ar2)
    arr1, arr2 = jnp.ravel(arr1), jnp.ravel(arr2)
    if size is not None:
        return _intersect1d_size(arr1, arr2, return_indices=return_indices, size=size, fill_value=fill_value,
                                 assume_unique=assume_unique)
    ind1 = ind2 = jnp.arange(0)
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    aux, mask, aux_sort_indices = _intersect1d_sorted_mask(arr1, arr2, return_indices)
    int1d = aux[:-1][mask]
    if not return_indices:
        return int1d
    arr1_indices = aux_sort_indices[:-1][mask]
    arr2_indices = aux_sort_indices[1:][mask] - np.size(arr1)
    if not assume_unique:
        arr1_indices, arr2_indices = ind1[arr1_indices], ind2[arr2_indices]
    return int1d, arr1_indices, arr2_indices
