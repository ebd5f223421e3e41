"""Triangles, diagonals and index grids in ``irax.numpy``: masks built from ``iota``, no gather or scatter.

Index-returning functions (``tril_indices``, ``diag_indices``...) depend only on static
sizes, so their results are built on the host, as JAX's are constants of the trace.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.array import Array
from irax.ir.avals import ShapedArray
from irax.lax._scalars import as_operand

from ._creation import eye, tri
from ._shape import ravel, reshape, stack, tile
from ._util import check_arraylike, convert, promote_dtypes, staged_as


def _host(values, dtype=None):
    dtype = dtypes.default_int_dtype() if dtype is None else dtype
    host = np.asarray(values, dtype=dtype)
    return Array._from_host(host, ShapedArray(host.shape, host.dtype))


def _matrix_operand(name, m):
    check_arraylike(name, m)
    m = as_operand(m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    return m


def tril(m, k=0):
    """The lower triangle of the last two axes (entries above diagonal ``k`` zeroed)."""
    return _tril(_matrix_operand("tril", m), operator.index(k))


def triu(m, k=0):
    """The upper triangle of the last two axes (entries below diagonal ``k`` zeroed)."""
    return _triu(_matrix_operand("triu", m), operator.index(k))


@staged_as("tril", static_argnums=(1,))
def _tril(m, k):
    return lax.select_n(_tri_mask(m, k), lax.full_like(m, 0), m)


@staged_as("triu", static_argnums=(1,))
def _triu(m, k):
    return lax.select_n(_tri_mask(m, k - 1), m, lax.full_like(m, 0))


def _tri_mask(m, k):
    mask = tri(*m.shape[-2:], k=k, dtype=np.bool_)
    return lax.broadcast(mask, m.shape[:-2]) if m.ndim > 2 else mask


def tril_indices(n, k=0, m=None):
    rows, cols = np.tril_indices(operator.index(n), operator.index(k), None if m is None else operator.index(m))
    return _host(rows), _host(cols)


def triu_indices(n, k=0, m=None):
    rows, cols = np.triu_indices(operator.index(n), operator.index(k), None if m is None else operator.index(m))
    return _host(rows), _host(cols)


def _shape_2d(name, arr):
    shape = tuple(arr.shape) if hasattr(arr, "shape") else np.shape(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr, k=0):
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k=0):
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


def diag_indices(n, ndim=2):
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr):
    check_arraylike("diag_indices_from", arr)
    shape = np.shape(arr) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], ndim=len(shape))


def diag(v, k=0):
    """The ``k``-th diagonal of a matrix, or a matrix with ``v`` on its ``k``-th diagonal."""
    check_arraylike("diag", v)
    return _diag(as_operand(v), operator.index(k))


@staged(static_argnums=(1,))
def _diag(v, k):
    if v.ndim == 1:
        from ._ufuncs import where
        zero = lambda x: lax.full_like(x, 0, shape=())
        n = v.shape[0] + builtins.abs(k)
        v = lax.pad(v, zero(v), ((builtins.max(0, -k), builtins.max(0, k), 0),))
        return where(eye(n, k=k, dtype=bool), v[:, None], zero(v))
    if v.ndim == 2:
        from ._linalg_ops import diagonal
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v, k=0):
    """``v`` flattened onto the ``k``-th diagonal, scattered into the flat result as JAX's."""
    from ._creation import arange, zeros
    check_arraylike("diagflat", v)
    v = ravel(v)
    size = v.shape[0] + abs(k)
    out = zeros(size * size, dtype=v.dtype)
    i = arange(0, size - abs(k))
    flat = i + k + i * size if k >= 0 else i + (i - k) * size
    return out.at[flat].set(v).reshape(size, size)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with ``val`` (tiled) written on its main diagonal; JAX requires ``inplace=False``."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, val = as_operand(a), as_operand(val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not builtins.all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(a.shape)
    return a.at[diag_indices(n, a.ndim)].set(val if val.ndim == 0 else _tile_to_size(ravel(val), n))


def _tile_to_size(arr, size):
    if arr.size < size:
        arr = tile(arr, -(-size // arr.size))
    return lax.slice_in_dim(arr, 0, size) if arr.size > size else arr


def vander(x, N=None, increasing=False):
    """Columns are powers of ``x``, decreasing unless ``increasing``."""
    check_arraylike("vander", x)
    x = as_operand(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    return _vander(x, N, bool(increasing))


@staged_as("vander", static_argnums=(1, 2))
def _vander(x, N, increasing):
    from ._ufuncs import power
    iota = lax.iota(x.dtype, N)
    if not increasing:
        iota = lax.sub(convert(N - 1, x.dtype), iota)
    return power(lax.expand_dims(x, (1,)), lax.expand_dims(iota, (0,)))


def indices(dimensions, dtype=None, sparse=False):
    """Index grids for an array of shape ``dimensions``, stacked (or sparse, broadcastable)."""
    dtype = dtypes.canonicalize_dtype(int if dtype is None else dtype)
    dimensions = tuple(map(operator.index, dimensions))
    n = len(dimensions)
    output = []
    for i, dim in enumerate(dimensions):
        shape = (1,) * i + (dim,) + (1,) * (n - i - 1) if sparse else dimensions
        output.append(lax.broadcast_in_dim(lax.iota(dtype, dim), shape, (i,)))
    if sparse:
        return tuple(output)
    return stack(output, 0) if output else _host([], dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate grids from 1-d arrays; ``indexing='xy'`` swaps the first two axes (Cartesian)."""
    check_arraylike("meshgrid", *xi)
    args = [as_operand(x) for x in xi]
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if builtins.any(a.ndim != 1 for a in args):
        raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {[a.shape for a in args]}")
    swap = indexing == "xy" and len(args) >= 2
    if swap:
        args[0], args[1] = args[1], args[0]
    shape = [1 if sparse else a.shape[0] for a in args]
    output = [lax.broadcast_in_dim(a, shape[:i] + [a.shape[0]] + shape[i + 1:] if sparse else shape, (i,))
              for i, a in enumerate(args)]
    if swap:
        output[0], output[1] = output[1], output[0]
    return output


def ix_(*args):
    """Open-mesh index arrays: the ``i``-th argument laid along axis ``i``."""
    check_arraylike("ix_", *args)
    n = len(args)
    output = []
    for i, a in enumerate(map(as_operand, args)):
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}")
        if a.dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = a.shape[0]
        output.append(lax.full(shape, 0, np.intp) if a.size == 0 else lax.broadcast_in_dim(a, shape, (i,)))
    return tuple(output)


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero, computed on the host."""
    mask = np.asarray(mask_func(np.ones((n, n)), k))
    rows, cols = np.nonzero(mask)
    return _host(rows), _host(cols)


@staged_as("kron")
def kron(a, b):
    """Kronecker product: ``a``'s axes interleaved with ``b``'s."""
    from ._shape import expand_dims
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim < b.ndim:
        a = expand_dims(a, range(b.ndim - a.ndim))
    elif b.ndim < a.ndim:
        b = expand_dims(b, range(a.ndim - b.ndim))
    a_reshaped = expand_dims(a, range(1, 2 * a.ndim, 2))
    b_reshaped = expand_dims(b, range(0, 2 * b.ndim, 2))
    out_shape = tuple(np.multiply(a.shape, b.shape))
    return reshape(lax.mul(a_reshaped, b_reshaped), out_shape)
