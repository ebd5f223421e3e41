"""Products in ``irax.numpy``: ``dot``, ``matmul``, ``tensordot``, ``einsum`` and friends."""
from __future__ import annotations

import builtins

import numpy as np

from irax import lax
from irax.lax._scalars import as_operand

from ._shape import broadcast_to, reshape
from ._util import canonicalize_axis, check_arraylike, promote_dtypes


def _operands(name, a, b):
    check_arraylike(name, a, b)
    return promote_dtypes(a, b)


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's batching and 1-d rules (one ``dot_general`` as JAX emits it)."""
    check_arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if np.ndim(x) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim {np.ndim(x)}")
    a, b = promote_dtypes(a, b)
    pref = preferred_element_type or a.dtype
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    contract = ((a.ndim - 1,), (b.ndim - 2 if b.ndim > 1 else 0,))
    if a.ndim <= 2 or b.ndim <= 2 or a_batch == b_batch:
        nb = len(a_batch) if a_batch == b_batch and a.ndim > 2 else 0
        if a.ndim > 2 and b.ndim <= 2 or b.ndim > 2 and a.ndim <= 2:
            nb = 0
        batch = (tuple(range(nb)), tuple(range(nb)))
        if nb == 0 and (a.ndim > 2 and b.ndim > 1 or b.ndim > 2):
            return _broadcast_matmul(a, b, pref)
        return lax.dot_general(a, b, (contract, batch), preferred_element_type=pref)
    return _broadcast_matmul(a, b, pref)


def _broadcast_matmul(a, b, pref):
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = lax.expand_dims(a, (0,))
    if b_vec:
        b = lax.expand_dims(b, (1,))
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    nb = len(batch)
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                          preferred_element_type=pref)
    if a_vec:
        out = lax.squeeze(out, (out.ndim - 2,))
    if b_vec:
        out = lax.squeeze(out, (out.ndim - 1,))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    """``np.dot``: scalars multiply, vectors and matrices contract their last/second-last axes."""
    a, b = _operands("dot", a, b)
    pref = preferred_element_type or a.dtype
    if a.ndim == 0 or b.ndim == 0:
        return lax.mul(a, b)
    contract_b = 0 if b.ndim == 1 else b.ndim - 2
    return lax.dot_general(a, b, (((a.ndim - 1,), (contract_b,)), ((), ())), preferred_element_type=pref)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _operands("vdot", a, b)
    if np.issubdtype(a.dtype, np.complexfloating):
        a = lax.conj(a)
    return dot(reshape(a, (-1,)), reshape(b, (-1,)), preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    x1, x2 = _operands("vecdot", x1, x2)
    from ._reductions import sum
    from ._ufuncs import conj, multiply
    return sum(multiply(conj(x1), x2), axis=axis)


def inner(a, b, *, precision=None, preferred_element_type=None):
    a, b = _operands("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return lax.mul(a, b)
    return tensordot(a, b, (-1, -1), preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    a, b = _operands("outer", a, b)
    a, b = reshape(a, (-1,)), reshape(b, (-1,))
    return lax.mul(lax.broadcast_in_dim(a, (a.shape[0], b.shape[0]), (0,)),
                   lax.broadcast_in_dim(b, (a.shape[0], b.shape[0]), (1,)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    a, b = _operands("tensordot", a, b)
    pref = preferred_element_type or a.dtype
    if isinstance(axes, int):
        if axes < 0 or axes > builtins.min(a.ndim, b.ndim):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks ({a.shape} and {b.shape})")
        ca, cb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError("tensordot requires axes lists to have equal length")
        ca = tuple(canonicalize_axis(i, a.ndim) for i in ax_a)
        cb = tuple(canonicalize_axis(i, b.ndim) for i in ax_b)
    return lax.dot_general(a, b, ((ca, cb), ((), ())), preferred_element_type=pref)


def einsum(subscripts, *operands, optimize="auto", precision=None, preferred_element_type=None, out=None):
    """Einstein summation, contracted pairwise left to right with ``dot_general``.

    Supports ``...`` (broadcast like NumPy) and repeated labels in one operand (diagonals).
    """
    operands = list(promote_dtypes(*operands))
    inputs, output = _parse_einsum(subscripts, operands)
    operands = _broadcast_labels(operands, inputs)
    pref = preferred_element_type or operands[0].dtype
    current, cur_sub = _sum_unique(operands[0], inputs[0], inputs[1:], output)
    for k in range(1, len(operands)):
        later = inputs[k + 1:]
        keep = set(output).union(*map(set, later))
        operand, sub = _sum_unique(operands[k], inputs[k], [cur_sub] + later, output)
        contract = [c for c in cur_sub if c in sub and c not in keep]
        batch = [c for c in cur_sub if c in sub and c in keep]
        dims = ((tuple(cur_sub.index(c) for c in contract), tuple(sub.index(c) for c in contract)),
                (tuple(cur_sub.index(c) for c in batch), tuple(sub.index(c) for c in batch)))
        current = lax.dot_general(current, operand, dims, preferred_element_type=pref)
        cur_sub = "".join(batch + [c for c in cur_sub if c not in sub] + [c for c in sub if c not in cur_sub])
    current, cur_sub = _sum_unique(current, cur_sub, [], output)
    return lax.transpose(current, tuple(cur_sub.index(c) for c in output)) if cur_sub != output else current


def _broadcast_labels(operands, inputs):
    """Size-1 axes (from ``...`` broadcasting) are broadcast to the label's size in the other operands."""
    sizes = {}
    for op, sub in zip(operands, inputs):
        for c, d in zip(sub, op.shape):
            if d != 1 and sizes.setdefault(c, d) != d:
                raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {d}")
    out = []
    for op, sub in zip(operands, inputs):
        target = tuple(sizes.get(c, d) if d == 1 else d for c, d in zip(sub, op.shape))
        out.append(broadcast_to(op, target) if target != tuple(op.shape) else op)
    return out


def _sum_unique(x, sub, others, output):
    """Takes diagonals of repeated labels; sums out labels that appear nowhere else."""
    from ._reductions import sum
    while len(set(sub)) != len(sub):
        c = next(c for c in sub if sub.count(c) > 1)
        i = sub.index(c)
        j = sub.index(c, i + 1)
        x = diagonal(x, 0, i, j)
        sub = "".join(l for k, l in enumerate(sub) if k not in (i, j)) + c
    elsewhere = set(output).union(*map(set, others)) if others else set(output)
    drop = [i for i, c in enumerate(sub) if c not in elsewhere]
    if drop:
        x = sum(x, axis=tuple(drop))
        sub = "".join(c for i, c in enumerate(sub) if i not in drop)
    return x, sub


def _parse_einsum(subscripts, operands):
    subscripts = subscripts.replace(" ", "")
    lhs, output = subscripts.split("->") if "->" in subscripts else (subscripts, None)
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {len(inputs)} subscripts for {len(operands)} operands")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in subscripts]
    ellipsis_rank = builtins.max([as_operand(op).ndim - len(sub.replace("...", "")) for sub, op in
                                  zip(inputs, operands) if "..." in sub] or [0])
    broadcast = "".join(spare[:ellipsis_rank])
    expanded = []
    for sub, op in zip(inputs, operands):
        if "..." in sub:
            n = as_operand(op).ndim - len(sub.replace("...", ""))
            sub = sub.replace("...", broadcast[ellipsis_rank - n:] if n else "")
        if len(sub) != as_operand(op).ndim:
            raise ValueError(f"einsum: subscript {sub!r} does not match operand of rank {as_operand(op).ndim}")
        expanded.append(sub)
    if output is None:
        joined = "".join(expanded)
        output = broadcast + "".join(sorted(c for c in set(joined) if joined.count(c) == 1 and c not in broadcast))
    else:
        output = output.replace("...", broadcast)
    return expanded, output


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from ._reductions import sum
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal, via a mask and a sum over columns (exact: one nonzero term per row)."""
    from ._creation import eye
    from ._reductions import any, sum
    from ._shape import moveaxis
    from ._ufuncs import where
    a = moveaxis(as_operand(a), (axis1, axis2), (-2, -1))
    n, m = a.shape[-2:]
    picked = where(eye(n, m, k=offset, dtype=np.bool_), a, lax.full_like(a, 0))
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m))
    start = 0 if offset >= 0 else -offset
    # One term per row is nonzero, so the row's sum (its ``any`` for bools) is the diagonal entry, in a's dtype.
    rows = any(picked, axis=-1) if a.dtype == np.bool_ else sum(picked, axis=-1, dtype=a.dtype)
    return lax.slice_in_dim(rows, start, start + length, axis=-1)


def matvec(x1, x2, /):
    """Batched matrix-vector product: ``(..., m, n) @ (..., n) -> (..., m)``."""
    check_arraylike("matvec", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    return lax.squeeze(matmul(x1, lax.expand_dims(x2, (x2.ndim,))), (-1,))


def vecmat(x1, x2, /):
    """Batched vector-matrix product with the vector conjugated: ``(..., m) @ (..., m, n) -> (..., n)``."""
    from ._ufuncs import conj
    check_arraylike("vecmat", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    out = matmul(lax.expand_dims(conj(x1), (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))
