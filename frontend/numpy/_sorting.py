"""Sorting: ports of JAX's ``jax/_src/numpy/sorting.py``, each a ``jit`` under JAX's name so that a jaxpr shows
what JAX's does (``jit[name=argsort]``). ``partition`` and ``argpartition`` are two ``lax.top_k`` calls, as JAX's."""
from __future__ import annotations

import numpy as np

from irax import dtypes, lax
from irax.lax._scalars import as_operand

from ._util import canonicalize_axis, check_arraylike, ensure_arraylike, staged_as, to_inexact_dtype

_INT32_MAX = np.iinfo(np.int32).max


def _index_dtype(size):
    """JAX's ``int_dtype_for_dim(size, signed=True)``, with int32 widened to the default integer (NumPy's)."""
    return np.dtype(np.int64) if size > _INT32_MAX else dtypes.default_int_dtype()


def _check_kind_and_order(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use"
                        " stable=True or stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """A sorted copy of ``a`` along ``axis`` (flattened for None); NaN last."""
    arr = ensure_arraylike("sort", a)
    _check_kind_and_order("sort", kind, order)
    return _sort(arr, axis, bool(stable), bool(descending))


@staged_as("sort", static_argnums=(1, 2, 3))
def _sort(arr, axis, stable, descending):
    if axis is None:
        arr = arr.ravel()
        axis = 0
    dimension = canonicalize_axis(axis, arr.ndim)
    result = lax.sort(arr, dimension=dimension, is_stable=stable)
    return lax.rev(result, dimensions=[dimension]) if descending else result


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """The indices that sort ``a`` along ``axis``; a stable descending sort keeps equal entries in order."""
    arr = ensure_arraylike("argsort", a)
    _check_kind_and_order("argsort", kind, order)
    return _argsort(arr, axis, bool(stable), bool(descending), None if dtype is None else
                    dtypes.canonicalize_dtype(dtype))


@staged_as("argsort", static_argnums=(1, 2, 3, 4))
def _argsort(arr, axis, stable, descending, dtype):
    if axis is None:
        arr = arr.ravel()
        axis = 0
    dimension = canonicalize_axis(axis, arr.ndim)
    idx_dtype = _index_dtype(arr.shape[dimension]) if dtype is None else dtype
    iota = lax.broadcasted_iota(idx_dtype, arr.shape, dimension)
    # reversed before a stable descending sort, so that equal entries keep their order once reversed back
    if descending and stable:
        arr = lax.rev(arr, dimensions=[dimension])
        iota = lax.rev(iota, dimensions=[dimension])
    _, indices = lax.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return lax.rev(indices, dimensions=[dimension]) if descending else indices


def _partition_operand(name, a, kth, axis):
    arr = ensure_arraylike("partition", a)
    if dtypes.issubdtype(arr.dtype, np.complexfloating):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonicalize_axis(axis, arr.ndim)
    return arr, canonicalize_axis(kth, arr.shape[axis]), axis


def partition(a, kth, axis=-1):
    """``a`` with its ``kth`` smallest entry along ``axis`` in place, smaller ones before it, larger ones after
    (NaNs with the sign bit set count as the smallest)."""
    return _partition(*_partition_operand("partition", a, kth, axis))


@staged_as("partition", static_argnums=(1, 2))
def _partition(arr, kth, axis):
    arr = arr.swapaxes(axis, -1)
    if dtypes.issubdtype(arr.dtype, np.unsignedinteger):  # -(arr + 1) keeps 0 the largest negated value
        bottom = -lax.top_k(-(arr + 1), kth + 1)[0] - 1
    else:
        bottom = -lax.top_k(-arr, kth + 1)[0]
    top = lax.top_k(arr, arr.shape[-1] - kth - 1)[0]
    out = lax.concatenate([bottom, top], dimension=arr.ndim - 1)
    return out.swapaxes(-1, axis)


def argpartition(a, kth, axis=-1):
    """The indices that ``partition`` would move each entry from."""
    return _argpartition(*_partition_operand("argpartition", a, kth, axis))


@staged_as("argpartition", static_argnums=(1, 2))
def _argpartition(arr, kth, axis):
    from irax.batching import vmap
    arr = arr.swapaxes(axis, -1)
    if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
        bottom_ind = lax.top_k(-(arr + 1), kth + 1)[1]
    else:
        bottom_ind = lax.top_k(-arr, kth + 1)[1]
    # the top indices come from a proxy, which duplicate values cannot confuse
    set_to_zero = lambda a, i: a.at[i].set(0)  # noqa: E731
    for _ in range(arr.ndim - 1):
        set_to_zero = vmap(set_to_zero)
    proxy = set_to_zero(lax.full(arr.shape, 1.0), bottom_ind)
    top_ind = lax.top_k(proxy, arr.shape[-1] - kth - 1)[1]
    out = lax.concatenate([bottom_ind, top_ind], dimension=arr.ndim - 1)
    return out.swapaxes(-1, axis)


def sort_complex(a):
    """``a`` sorted along its last axis, as complex numbers."""
    return _sort_complex(ensure_arraylike("sort_complex", a))


@staged_as("sort_complex")
def _sort_complex(a):
    a = lax.sort(a)
    return lax.convert_element_type(a, _to_complex_dtype(a.dtype))


def _to_complex_dtype(dtype):
    """JAX's ``dtypes.to_complex_dtype``."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        return np.dtype(dtype)
    wide = to_inexact_dtype(dtype) == np.float64
    return dtypes.canonicalize_dtype(np.complex128 if wide else np.complex64)


def lexsort(keys, axis=-1):
    """The indices that sort by every key, the last key the primary one (an array of keys is unstacked inside
    the jit, as in JAX)."""
    stacked = hasattr(keys, "ndim") and not isinstance(keys, (tuple, list))
    key_arrays = as_operand(keys) if stacked else tuple(keys)
    check_arraylike("lexsort", *((key_arrays,) if stacked else key_arrays))
    shapes = [tuple(key_arrays.shape[1:])] * key_arrays.shape[0] if stacked else [np.shape(k) for k in key_arrays]
    if len(shapes) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len(set(shapes)) > 1:
        raise ValueError("all keys need to be the same shape")
    if len(shapes[0]) == 0:
        return lax.full((), 0, dtypes.default_int_dtype())
    return _lexsort(key_arrays if stacked else tuple(ensure_arraylike("lexsort", k) for k in key_arrays), axis)


@staged_as("lexsort", static_argnums=(1,))
def _lexsort(keys, axis):
    key_arrays = tuple(keys)
    axis = canonicalize_axis(axis, np.ndim(key_arrays[0]))
    iota = lax.broadcasted_iota(_index_dtype(key_arrays[0].shape[axis]), np.shape(key_arrays[0]), axis)
    return lax.sort((*key_arrays[::-1], iota), dimension=axis, num_keys=len(key_arrays))[-1]
