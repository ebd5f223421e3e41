"""``irax.numpy.linalg``: JAX's ``jax.numpy.linalg`` on the ``cholesky``, ``lu``, ``triangular_solve``, ``eigh``,
``svd`` and ``qr`` primitives, each function staged under JAX's name (``jit[name=solve]``) with JAX's structure.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from irax import lax
from irax.custom_derivatives import custom_jvp
from irax.lax import linalg as lax_linalg

from ._creation import eye, ones, zeros_like
from ._decompositions import (EigResult, EighResult, QRResult, SVDResult, eig, eigh, eigvals, eigvalsh, lstsq,
                              matrix_rank, pinv, qr, svd, svdvals)
from ._linalg_ops import diagonal as _diagonal
from ._einsum import einsum
from ._linalg_ops import matmul, tensordot, vecdot
from ._linalg_ops import outer as _outer
from ._linalg_ops import trace as _jnp_trace
from ._numeric import cross as _cross
from ._reductions import any as _any
from ._reductions import count_nonzero, cumprod, prod, sum as _sum
from ._reductions import max as _amax, min as _amin
from ._shape import broadcast_to, concatenate, expand_dims, matrix_transpose, moveaxis, tile
from ._ufuncs import abs as _abs
from ._ufuncs import conj, exp, isinf, isnan, log, logical_or, power, real, sqrt, where
from ._util import canonicalize_axis, ensure_arraylike, promote_dtypes_inexact, staged_as

__all__ = ["EigResult", "EighResult", "QRResult", "SVDResult", "cholesky", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices of ``x`` (its last two axes), as the array API's ``linalg.diagonal``."""
    x = ensure_arraylike("jnp.linalg.diagonal", x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.diagonal requires an array of at least two dimensions; got x.shape={x.shape}")
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the matrices of ``x`` (its last two axes)."""
    x = ensure_arraylike("jnp.linalg.trace", x)
    return _jnp_trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def outer(x1, x2, /):
    """The outer product of two vectors."""
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} and "
                         f"x2.ndim={x2.ndim}")
    return _outer(x1, x2)


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _iscomplex(x):
    return np.issubdtype(x.dtype, np.complexfloating)


@staged_as("cholesky", static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper=False, symmetrize_input=True):
    """The lower (``upper``: upper) Cholesky factor of each matrix; NaN where one is not positive definite."""
    a = ensure_arraylike("jnp.linalg.cholesky", a)
    a, = promote_dtypes_inexact(a)
    low = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return conj(matrix_transpose(low)) if upper else low


# --- LU solves --------------------------------------------------------------------------------------------------

def _take_rows(x, rows):
    """``x[..., rows, :]`` for a batch of row indices (``rows`` with x's batch shape and one axis)."""
    return x[_batch_iotas(x.shape[:-2]) + (rows, slice(None))] if x.ndim > 2 else x[rows, :]


def _batch_iotas(batch_shape):
    """Open-mesh indices of the batch dimensions, shaped to broadcast against a trailing row index."""
    n = len(batch_shape)
    return tuple(lax.broadcasted_iota(np.int32, batch_shape, i).reshape(batch_shape + (1,)) for i in range(n))


@staged_as("solve")
def solve(a, b):
    """``a x = b`` by LU with partial pivoting, as a ``custom_linear_solve`` (so that derivatives reuse the
    factorization); ``b`` of shape ``[m]`` is a vector, otherwise a batch of ``[m, n]`` matrices."""
    a, b = ensure_arraylike("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a.shape}")
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] and a.shape[-1] != b.shape[-2]:
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would have "
                         "been treated as a batched 1-dimensional solve. To recover this behavior, use "
                         "solve(a, b[..., None]).squeeze(-1).")
    from irax.lax._linalg_solve import solve as lax_solve
    from ._vectorize import vectorize
    signature = "(m,m),(m)->(m)" if b.ndim == 1 else "(m,m),(m,n)->(m,n)"
    return vectorize(lax_solve, signature=signature)(a, b)


@staged_as("inv")
def inv(a):
    """The inverse of each matrix, as ``solve(a, I)``."""
    arr = ensure_arraylike("jnp.linalg.inv", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    return solve(arr, lax.broadcast(eye(arr.shape[-1], dtype=arr.dtype), arr.shape[:-2]))


# --- determinants -----------------------------------------------------------------------------------------------

@custom_jvp
def _slogdet_lu(a):
    dtype = a.dtype
    lu, pivot, _ = lax_linalg.lu(a)
    diag = _diagonal(lu, axis1=-2, axis2=-1)
    is_zero = _any(diag == np.array(0, dtype=dtype), axis=-1)
    iota = lax.expand_dims(lax.iota(pivot.dtype, a.shape[-1]), range(pivot.ndim - 1))
    parity = count_nonzero(pivot != iota, axis=-1)
    if _iscomplex(a):
        sign = prod(diag / _abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = np.array(1, dtype=dtype)
        parity = parity + count_nonzero(diag < 0, axis=-1)
    sign = where(is_zero, np.array(0, dtype=dtype), sign * (-2 * (parity % 2) + 1).astype(dtype))
    logdet = where(is_zero, np.array(-np.inf, dtype=dtype), _sum(log(_abs(diag)).astype(dtype), axis=-1))
    return sign, real(logdet)


def _trace(z):
    """``trace(z, axis1=-1, axis2=-2)`` unstaged: irax cannot yet linearize a staged call (a ``jit``) on tangents
    inside a ``custom_jvp`` rule, so the rules below call no staged function on their tangents."""
    n = z.shape[-1]
    eye_mask = lax.eq(lax.broadcasted_iota(np.int32, (n, n), 0), lax.broadcasted_iota(np.int32, (n, n), 1))
    mask = lax.broadcast_in_dim(eye_mask, z.shape, (z.ndim - 2, z.ndim - 1))
    return lax.reduce_sum(lax.select(mask, z, lax.full_like(z, 0)), (z.ndim - 2, z.ndim - 1))


@_slogdet_lu.defjvp
def _slogdet_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign, ans = slogdet(x)
    ans_dot = _trace(solve(x, g))
    if _iscomplex(x):
        sign_dot = (ans_dot - real(ans_dot).astype(ans_dot.dtype)) * sign
        ans_dot = real(ans_dot)
    else:
        sign_dot = zeros_like(sign)
    return (sign, ans), (sign_dot, ans_dot)


@staged_as("slogdet", static_argnames=("method",))
def slogdet(a, *, method=None):
    """The sign and the log of the absolute value of each determinant, from an LU decomposition."""
    a = ensure_arraylike("jnp.linalg.slogdet", a)
    a, = promote_dtypes_inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a.shape}")
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")
    return SlogdetResult(*_slogdet_lu(a))


def _cofactor_solve(a, b):
    """JAX's ``_cofactor_solve``: ``det(a) * solve(a, b)``, finite for matrices of rank n - 1 too (then the
    determinant's gradient is a rank-1 matrix), zero where the rank is lower."""
    a_shape = a.shape
    if a_shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch_dims = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = broadcast_to(b, batch_dims + b.shape[-2:])
    lu = broadcast_to(lu, batch_dims + lu.shape[-2:])
    diag = _diagonal(lu, axis1=-2, axis2=-1)
    iota = lax.expand_dims(lax.iota(pivots.dtype, a_shape[-1]), range(pivots.ndim - 1))
    parity = count_nonzero(pivots != iota, axis=-1)
    sign = (-2 * (parity % 2) + 1).astype(dtype)
    partial_det = cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = broadcast_to(permutation, (*batch_dims, a_shape[-1]))
    d = ones(x.shape[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    d = _any(logical_or(isnan(d), isinf(d)), axis=-1)
    d = tile(d[..., None, None], d.ndim * (1,) + x.shape[-2:])
    x = lax.select(d, zeros_like(x), x)
    x = _take_rows(x, permutation)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = lax.select(d, zeros_like(x), x)
    return partial_det[..., -1], x


@custom_jvp
def _det(a):
    sign, logdet = slogdet(a)
    return sign * exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    if x.shape[-1] == 0:  # irax traces the rule on every call; JAX's, only under differentiation
        return _det(x), _trace(g)
    y, z = _cofactor_solve(x, g)
    return y, _trace(z)


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@staged_as("det")
def det(a):
    """The determinant of each matrix: closed forms for 2x2 and 3x3, else from an LU decomposition (whose
    derivative, JAX's, stays finite for singular matrices of rank n - 1)."""
    a = ensure_arraylike("jnp.linalg.det", a)
    a, = promote_dtypes_inexact(a)
    if a.ndim >= 2 and a.shape[-1] == 2 and a.shape[-2] == 2:
        return _det_2x2(a)
    if a.ndim >= 2 and a.shape[-1] == 3 and a.shape[-2] == 3:
        return _det_3x3(a)
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2]:
        return _det(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {a.shape}")


# --- matrix_power, norm -----------------------------------------------------------------------------------------

@staged_as("matrix_power", static_argnames=("n",))
def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring (a negative ``n`` inverts first)."""
    arr = ensure_arraylike("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return broadcast_to(eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = abs(n)
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return (arr @ arr) @ arr
    z = result = None
    while n > 0:
        z = arr if z is None else (z @ z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else (result @ z)
    return result


@staged_as("norm", static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (any ``ord``) and matrix norms (None, 'fro', 1, -1, inf, -inf, and from the singular values 2,
    -2, 'nuc')."""
    x = ensure_arraylike("jnp.linalg.norm", x)
    x, = promote_dtypes_inexact(x)
    ndim = x.ndim
    if axis is None:
        if ord is None:
            return sqrt(_sum(real(x * conj(x)), keepdims=keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axis = (canonicalize_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a vector-norm, "
                         "or two axes to compute a matrix-norm.")
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        summed = _sum(_abs(x), axis=row_axis, keepdims=keepdims)
        if ord == 1:
            return _amax(summed, axis=col_axis, keepdims=keepdims, initial=0)
        return _amin(summed, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        summed = _sum(_abs(x), axis=col_axis, keepdims=keepdims)
        if ord == np.inf:
            return _amax(summed, axis=row_axis, keepdims=keepdims, initial=0)
        return _amin(summed, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        x = moveaxis(x, axis, (-2, -1))
        s = svd(x, compute_uv=False)
        if ord == 2:
            y = _amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = _amin(s, axis=-1)
        else:
            y = _sum(s, axis=-1)
        return expand_dims(y, axis) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ``ord``-norm of the vectors along ``axis`` (all of ``x`` when None)."""
    x = ensure_arraylike("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return _amax(_abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _amin(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _sum(x != 0, dtype=np.finfo(x.dtype).dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _sum(_abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = _abs(x)
    ord_arr = np.array(ord, abs_x.dtype)
    ord_inv = np.array(1. / ord_arr, abs_x.dtype)
    return power(_sum(abs_x ** ord_arr, axis=axis, keepdims=keepdims), ord_inv)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The ``ord``-norm of the matrices of ``x`` (its last two axes)."""
    x = ensure_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@staged_as("cond", static_argnames=("p",))
def cond(x, p=None):
    """The condition number of each matrix in the ``p``-norm (2 and -2: the ratio of extreme singular values);
    inf where NaN arises from a singular matrix without NaN entries."""
    arr = ensure_arraylike("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got {arr.shape=}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got {arr.shape=}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for {p=}, array must be square; got {arr.shape=}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), np.inf, r)


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                         f"x1.shape[axis]={x1.shape[axis]} and x2.shape[axis]={x2.shape[axis]}")
    return _cross(x1, x2, axis=axis)


def multi_dot(arrays, *, precision=None):
    """One ``einsum`` over the chain, which picks the order of the products."""
    arrs = list(ensure_arraylike("jnp.linalg.multi_dot", *arrays))
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2) and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the first and last array "
                         f"which may be 1 or 2 dimensional. Got array shapes {[a.shape for a in arrs]}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of following array. "
                         f"Got array shapes {[a.shape for a in arrs]}")
    axes = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        axes[0] = axes[0][1:]
    if arrs[-1].ndim == 1:
        axes[-1] = axes[-1][:1]
    return einsum(*[x for pair in zip(arrs, axes) for x in pair], optimize="auto", precision=precision)


def tensorinv(a, ind=2):
    arr = ensure_arraylike("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting, rest = arr.shape[:ind], arr.shape[ind:]
    flat = (int(np.prod(contracting)), int(np.prod(rest)))
    if flat[0] != flat[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` dimensions equals that of "
                         f"the remaining dimensions. got arr.shape={arr.shape} with ind={ind}.")
    return inv(arr.reshape(flat)).reshape(*rest, *contracting)


def tensorsolve(a, b, axes=None):
    a, b = ensure_arraylike("tensorsolve", a, b)
    if axes is not None:
        a = moveaxis(a, axes, len(axes) * (a.ndim - 1,))
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={a.shape}, b.shape={b.shape}")
    if b.size != int(np.prod(out_shape)):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
                         f"got a.shape={a.shape}, b.ndim={b.ndim}.")
    return solve(a.reshape(b.size, int(np.prod(out_shape))), b.ravel()).reshape(out_shape)
