"""Index arithmetic, choosing among arrays, static deletion/insertion and bit packing in ``irax.numpy``.

Everything here is arithmetic, ``select_n`` or static slicing; ``delete`` and ``insert``
need their indices concrete (JAX needs gather and scatter otherwise, which irax lacks yet).
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.core import Tracer
from irax.lax._scalars import as_operand

from ._shape import broadcast_arrays, concatenate, moveaxis, ravel, swapaxes
from ._util import canonicalize_axis, check_arraylike, convert, staged_as


def unravel_index(indices, shape):
    """The multi-index of each flat index into ``shape``; out-of-range indices are clipped (as JAX)."""
    from ._ufuncs import divmod, where
    check_arraylike("unravel_index", indices)
    indices = as_operand(indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if builtins.any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        indices, out[i] = divmod(indices, s)
    oob_pos = lax.gt(indices, convert(0, indices.dtype))
    oob_neg = lax.full_like(oob_pos, False) if np.issubdtype(indices.dtype, np.unsignedinteger) else \
        lax.lt(indices, convert(-1, indices.dtype))
    return tuple(where(oob_pos, s - 1, where(oob_neg, 0, i)) for s, i in zip(shape, out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of a tuple of index arrays into an array of shape ``dims``."""
    from ._ufuncs import add, clip, multiply, remainder
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(map(operator.index, dims))
    check_arraylike("ravel_multi_index", *multi_index)
    index = [as_operand(i) for i in multi_index]
    dtype = dtypes.result_type(int, *index) if dtype is None else dtypes.canonicalize_dtype(dtype)
    if not np.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if int(np.prod(dims, dtype=np.int64)) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold flattened index for "
                         f"dims={dims}. Use the dtype argument to pass a suitable dtype.")
    for i in index:
        if not np.issubdtype(i.dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if builtins.any(isinstance(i, Tracer) for i in index):
            raise NotImplementedError("ravel_multi_index with mode='raise' needs concrete indices; use "
                                      "mode='wrap' or mode='clip' under jit")
        if builtins.any(np.any((np.asarray(i) < 0) | (np.asarray(i) >= d)) for i, d in zip(index, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        index = [clip(i, 0, d - 1) for i, d in zip(index, dims)]
    elif mode == "wrap":
        index = [remainder(i, d) for i, d in zip(index, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = lax.full((), 0, dtype)
    for i, s in zip(index, strides):
        result = add(result, multiply(convert(i, dtype), int(s)))
    return result


def choose(a, choices, out=None, mode="raise"):
    """Per element, the entry of ``choices[a]`` (``select_n`` over the broadcast choices)."""
    from ._ufuncs import clip, remainder
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a, *choices)
    a = as_operand(a)
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise NotImplementedError("jnp.choose with mode='raise' needs a concrete `a`; use mode='wrap' or "
                                      "mode='clip' under jit")
        if np.any((np.asarray(a) < 0) | (np.asarray(a) >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    from ._util import promote_dtypes
    a, *cases = broadcast_arrays(a, *promote_dtypes(*choices))
    return lax.select_n(convert(a, np.int32), *cases)


def piecewise(x, condlist, funclist, *args, **kw):
    """Each element from the function of the last true condition (the extra function where none is).

    JAX applies each function to the selected scalars; here each runs on all of ``x`` and the results
    are selected, which agrees for elementwise functions.
    """
    from ._creation import asarray
    check_arraylike("piecewise", x)
    x = as_operand(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = funclist[-1:] + funclist[:-1]
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")
    conds = asarray(condlist, dtype=np.bool_)
    index = lax.full(x.shape, 0, np.int32)
    for i in range(nc):
        index = lax.select_n(lax.index_in_dim(conds, i, keepdims=False), index, lax.full_like(index, i + 1))
    cases = [convert(f(x, *args, **kw), x.dtype) if callable(f) else lax.full(x.shape, f, x.dtype)
             for f in funclist]
    from ._shape import broadcast_to
    return lax.select_n(index, *[broadcast_to(c, x.shape) for c in cases])


def _static_indices(name, obj):
    if isinstance(obj, Tracer):
        raise NotImplementedError(f"jnp.{name} with traced indices needs gather/scatter, which irax does not "
                                  "support yet; pass static indices")
    return np.asarray(obj)


def _take_runs(a, positions, axis):
    """``a`` indexed by static ``positions`` along ``axis``, as slices of consecutive runs."""
    pieces, start = [], 0
    for k in range(1, len(positions) + 1):
        if k == len(positions) or positions[k] != positions[k - 1] + 1:
            pieces.append(lax.slice_in_dim(a, int(positions[start]), int(positions[k - 1]) + 1, axis=axis))
            start = k
    if not pieces:
        return lax.slice_in_dim(a, 0, 0, axis=axis)
    return lax.concatenate(pieces, axis) if len(pieces) > 1 else pieces[0]


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries at static ``obj`` (int, slice, index array or boolean mask) along ``axis``."""
    check_arraylike("delete", arr)
    a = as_operand(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        mask = np.ones(n, np.bool_)
        mask[obj] = False
    else:
        host = _static_indices("delete", obj)
        if host.dtype == np.bool_:
            if host.shape != (n,):
                raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                                 "length matching specified axis.")
            mask = ~host
        elif np.issubdtype(host.dtype, np.integer):
            if np.any((host < -n) | (host >= n)):
                raise IndexError(f"index out of bounds for axis {axis} with size {n}")
            mask = np.ones(n, np.bool_)
            mask[host] = False
        else:
            raise ValueError(f"np.delete(arr, obj): got obj.dtype={host.dtype}; must be integer or bool.")
    return _take_runs(a, np.flatnonzero(mask), axis)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the static indices ``obj`` along ``axis``."""
    from ._creation import array
    from ._shape import broadcast_to
    check_arraylike("insert", arr, values)
    a = as_operand(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    indices = np.arange(*obj.indices(n)) if isinstance(obj, slice) else _static_indices("insert", obj)
    if indices.ndim > 1:
        raise ValueError(f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}")
    if not np.issubdtype(indices.dtype, np.integer):
        if indices.size == 0:
            indices = indices.astype(int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values = array(values, ndmin=a.ndim, dtype=a.dtype)
    if indices.size == 1:
        if indices.ndim == 0:
            values = moveaxis(values, 0, axis)
        indices = np.full(values.shape[axis], indices.reshape(()))
    n_insert = np.broadcast_shapes(indices.shape, (values.shape[axis],))[0]
    shape = list(a.shape)
    shape[axis] = n_insert
    values = broadcast_to(values, tuple(shape))
    indices = np.clip(np.where(indices < 0, indices + n, indices), 0, n)
    indices = np.broadcast_to(indices, (n_insert,))
    order = np.argsort(indices, kind="stable")
    values_at = np.empty(n_insert, np.int64)
    values_at[order] = indices[order] + np.arange(n_insert)
    source = np.full(n + n_insert, -1, np.int64)  # -1: from arr; k >= 0: the k-th value
    source[values_at] = np.arange(n_insert)
    return _interleave(a, values, source, axis)


def _interleave(a, values, source, axis):
    pieces, arr_next, k = [], 0, 0
    while k < len(source):
        end = k
        if source[k] < 0:
            while end < len(source) and source[end] < 0:
                end += 1
            pieces.append(lax.slice_in_dim(a, arr_next, arr_next + end - k, axis=axis))
            arr_next += end - k
        else:
            while end < len(source) and source[end] >= 0 and source[end] == source[k] + end - k:
                end += 1
            pieces.append(lax.slice_in_dim(values, int(source[k]), int(source[k]) + end - k, axis=axis))
        k = end
    return concatenate(pieces, axis=axis) if pieces else a


@staged_as("packbits", static_argnames=("axis", "bitorder"))
def packbits(a, axis=None, bitorder="big"):
    """Booleans (nonzero entries) packed eight to a ``uint8`` along ``axis``."""
    from ._creation import arange
    from ._shape import expand_dims, ravel
    from ._util import ensure_arraylike
    arr = ensure_arraylike("packbits", a)
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = lax.ne(arr, convert(0, arr.dtype)).astype("uint8")
    bits = arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = ravel(arr)
        axis = 0
    arr = swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = lax.pad(arr, np.uint8(0), (arr.ndim - 1) * [(0, 0, 0)] + [(0, 8 - remainder, 0)])
    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    bits = expand_dims(bits, tuple(range(arr.ndim - 1)))
    packed = (arr << bits).sum(-1).astype("uint8")
    return swapaxes(packed, axis, -1)


@staged_as("unpackbits", static_argnames=("axis", "count", "bitorder"))
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Each ``uint8`` unpacked into eight 0/1 entries along ``axis`` (the first ``count`` kept)."""
    from ._creation import arange, asarray
    from ._pad import pad
    from ._shape import expand_dims, ravel
    from ._util import ensure_arraylike
    arr = ensure_arraylike("unpackbits", a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = asarray(1) << arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr = ravel(arr)
        axis = 0
    arr = swapaxes(arr, axis, -1)
    unpacked = ((arr[..., None] & expand_dims(bits, tuple(range(arr.ndim)))) > 0).astype("uint8")
    unpacked = unpacked.reshape(unpacked.shape[:-2] + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = pad(unpacked, [(0, 0)] * (unpacked.ndim - 1) + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)
