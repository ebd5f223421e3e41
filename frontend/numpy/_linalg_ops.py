"""Products in ``irax.numpy``: ``dot``, ``matmul``, ``tensordot`` and friends (``einsum`` has its own module)."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.lax._scalars import as_operand

from ._shape import reshape
from ._util import canonicalize_axis, check_arraylike, convert, ensure_arraylike, promote_dtypes, staged_as


def _operands(name, a, b):
    check_arraylike(name, a, b)
    return promote_dtypes(a, b)


def _result_dtype(name, a, b, preferred_element_type):
    if preferred_element_type is None:
        return dtypes.result_type(a, b, return_weak_type_flag=True)
    return dtypes.canonicalize_dtype(preferred_element_type), False


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's batching and 1-d rules: one ``dot_general`` (unit batch axes squeezed
    first), as ``jnp.matmul`` emits it."""
    a, b = ensure_arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if x.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim {x.ndim}")
    preferred_element_type, output_weak_type = _result_dtype("matmul", a, b, preferred_element_type)
    a_is_mat, b_is_mat = a.ndim > 1, b.ndim > 1
    a_batch_dims = a.shape[:-2] if a_is_mat else ()
    b_batch_dims = b.shape[:-2] if b_is_mat else ()
    num_batch_dims = builtins.max(len(a_batch_dims), len(b_batch_dims))
    a_batch_dims = (None,) * (num_batch_dims - len(a_batch_dims)) + tuple(a_batch_dims)
    b_batch_dims = (None,) * (num_batch_dims - len(b_batch_dims)) + tuple(b_batch_dims)
    a_squeeze, b_squeeze, both_squeeze = [], [], []
    a_batch, b_batch = [], []
    idx_batch, idx_a_other, idx_b_other = [], [], []
    for i, (ba, bb) in enumerate(zip(a_batch_dims, b_batch_dims)):
        if ba is None:
            idx_b_other.append(i)
        elif bb is None:
            idx_a_other.append(i)
        elif ba == 1 and bb == 1:
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
            both_squeeze.append(i)
        elif ba == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif bb == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif ba == bb:
            a_batch.append(len(idx_batch) + len(idx_a_other))
            b_batch.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible types for matmul arguments: {a.aval} and {b.aval}")
    if a_is_mat:
        idx_a_other.append(num_batch_dims)
    if b_is_mat:
        idx_b_other.append(num_batch_dims + a_is_mat)
    perm = np.argsort(np.concatenate([idx_batch, idx_a_other, idx_b_other]).astype(int))
    a = lax.squeeze(a, tuple(a_squeeze))
    b = lax.squeeze(b, tuple(b_squeeze))
    out = lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1 - b_is_mat,)), (tuple(a_batch), tuple(b_batch))),
                          precision=precision, preferred_element_type=preferred_element_type)
    result = lax.transpose(out, tuple(int(p) for p in perm))
    if both_squeeze:
        result = lax.expand_dims(result, tuple(both_squeeze))
    return convert(result, preferred_element_type, output_weak_type)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """``np.dot``: one ``dot_general`` (no contraction for scalars), as ``jnp.dot``."""
    a, b = ensure_arraylike("dot", a, b)
    preferred_element_type, output_weak_type = _result_dtype("dot", a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        contract_dims = ((), ())
    elif b.ndim == 1:
        contract_dims = ((a.ndim - 1,), (0,))
    else:
        contract_dims = ((a.ndim - 1,), (b.ndim - 2,))
    result = lax.dot_general(a, b, (contract_dims, ((), ())), precision=precision,
                             preferred_element_type=preferred_element_type)
    return convert(result, preferred_element_type, output_weak_type)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    from ._ufuncs import conj
    a, b = ensure_arraylike("vdot", a, b)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        a = conj(a)
    return dot(a.ravel(), b.ravel(), precision=precision, preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product over ``axis`` (the first operand conjugated), as ``jnp.vecdot``."""
    from ._shape import moveaxis
    from ._ufuncs import conj
    x1, x2 = ensure_arraylike("jnp.vecdot", x1, x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with axis={axis}")
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    batched = _vectorized_dot(x1, x2, 1, 1)
    if batched is not None:  # JAX's vectorize(vdot): vmap's dot_general
        if dtypes.issubdtype(x1.dtype, np.complexfloating):
            x1 = conj(x1)
        return batched(x1, x2, preferred_element_type)
    from ._reductions import sum
    from ._ufuncs import multiply
    x1, x2 = promote_dtypes(x1, x2)
    return sum(multiply(conj(x1), x2), axis=-1)


def _vectorized_dot(x1, x2, core1, core2):
    """What JAX's ``vectorize`` (vmap over the loop axes) makes of a dot whose operands have
    ``core1``/``core2`` core axes, contracting x1's last core axis with x2's first: a function binding
    one ``dot_general``, or None where the loop shapes need broadcasting (then irax broadcasts)."""
    loop1, loop2 = x1.shape[:x1.ndim - core1], x2.shape[:x2.ndim - core2]
    if loop1 and loop2 and loop1 != loop2 or builtins.any(d == 1 for d in loop1 + loop2):
        return None
    nb = len(loop1) if loop1 and loop2 else 0
    contract = ((x1.ndim - 1,), (x2.ndim - core2,))

    def fn(a, b, preferred_element_type=None):
        preferred_element_type, weak = _result_dtype("vdot", a, b, preferred_element_type)
        out = lax.dot_general(a, b, (contract, (tuple(range(nb)), tuple(range(nb)))),
                              preferred_element_type=preferred_element_type)
        return convert(out, preferred_element_type, weak)
    return fn


def inner(a, b, *, precision=None, preferred_element_type=None):
    a, b = ensure_arraylike("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            a = a.astype(preferred_element_type)
            b = b.astype(preferred_element_type)
        return a * b
    return tensordot(a, b, (-1, -1), precision=precision, preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = _operands("outer", a, b)
    return reshape(a, (-1,))[:, None] * reshape(b, (-1,))[None, :]


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None):
    a, b = ensure_arraylike("tensordot", a, b)
    preferred_element_type, output_weak_type = _result_dtype("tensordot", a, b, preferred_element_type)
    if type(axes) is int:
        if axes > builtins.min(a.ndim, b.ndim):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks ({a.shape} and {b.shape})")
        contracting_dims = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contracting_dims = ((canonicalize_axis(ax1, a.ndim),), (canonicalize_axis(ax2, b.ndim),))
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(f"tensordot requires axes lists to have equal length, got {ax1} and {ax2}.")
            contracting_dims = (tuple(canonicalize_axis(i, a.ndim) for i in ax1),
                                tuple(canonicalize_axis(i, b.ndim) for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or lists, got "
                            f"{ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples of ints.")
    result = lax.dot_general(a, b, (contracting_dims, ((), ())), precision=precision,
                             preferred_element_type=preferred_element_type)
    return convert(result, preferred_element_type, output_weak_type)


@staged_as("trace", static_argnames=("axis1", "axis2", "dtype"))
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of a diagonal, as ``jnp.trace``: the diagonal is masked with ``eye`` and the two axes summed."""
    from ._creation import eye, zeros_like
    from ._reductions import sum
    from ._shape import moveaxis
    from ._ufuncs import where
    a = ensure_arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    if canonicalize_axis(axis1, a.ndim) == canonicalize_axis(axis2, a.ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    a_shape = a.shape
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    a = where(eye(a_shape[axis1], a_shape[axis2], k=offset, dtype=bool), a, zeros_like(a))
    return sum(a, axis=(-2, -1), dtype=dtype)


@staged_as("diagonal", static_argnames=("offset", "axis1", "axis2"))
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal, gathered at its (row, column) pairs as JAX's (a masked sum would lose a -0.0 entry). A square
    matrix's main diagonal is JAX's platform_dependent choice between the gather and a masked sum (its Mosaic
    branch), so that its jaxpr prints as JAX's; irax runs the gather."""
    from ._creation import arange, eye
    from ._shape import moveaxis
    a = as_operand(a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)

    def gathered(a):
        n, m = a.shape[axis1], a.shape[axis2]
        size = builtins.max(0, builtins.min(n + builtins.min(offset, 0), m - builtins.max(offset, 0)))
        a = moveaxis(a, (axis1, axis2), (-2, -1))
        i = arange(size)
        j = arange(abs(offset), abs(offset) + size)
        return a[..., i, j] if offset >= 0 else a[..., j, i]

    if a.shape[0] != a.shape[1] or a.ndim != 2 or offset != 0 or a.dtype == np.bool_:
        return gathered(a)
    mask = eye(a.shape[0], dtype=a.dtype)
    return lax.platform_dependent(a, default=gathered,
                                  mosaic=lambda a: lax.reduce(lax.mul(mask, a), np.array(0, a.dtype), lax.add, (0,)))


@staged_as("matvec")
def matvec(x1, x2, /):
    """Batched matrix-vector product: ``(..., m, n) @ (..., n) -> (..., m)``."""
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    if x1.ndim == 2 and x2.ndim == 1:  # JAX's vectorize(matmul) with no loop axes
        return matmul(x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    return lax.squeeze(matmul(x1, lax.expand_dims(x2, (x2.ndim,))), (-1,))


@staged_as("vecmat")
def vecmat(x1, x2, /):
    """Batched vector-matrix product with the vector conjugated: ``(..., m) @ (..., m, n) -> (..., n)``."""
    from ._ufuncs import conj
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    if x1.ndim == 1 and x2.ndim == 2:  # JAX's vectorize(matmul) with no loop axes
        return matmul(conj(x1), x2)
    x1, x2 = promote_dtypes(x1, x2)
    out = matmul(lax.expand_dims(conj(x1), (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))
