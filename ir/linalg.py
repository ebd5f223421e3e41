"""Shape rules of the linear-algebra primitives (``cholesky``, ``triangular_solve``, ``lu``), as JAX's
``linalg_primitive`` checks them: every operand a batch of matrices with the same leading batch dimensions, its
dtype floating or complex, the same errors for a wrong rank or a non-square matrix."""
from __future__ import annotations

import numpy as np

from .avals import ShapedArray
from .shapes import _all_weak, check_dtypes, same_dtypes

INEXACT = (np.inexact,)


def _batch_and_dims(name, avals_in, ranks):
    """JAX's ``linalg_shape_rule``: the shared batch shape and each operand's trailing ``rank`` dimensions."""
    batch, dims = [], []
    for i, (rank, a) in enumerate(zip(ranks, avals_in)):
        if a.ndim < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got shape={a.shape}")
        batch.append(a.shape[:a.ndim - rank])
        dims.append(a.shape[a.ndim - rank:])
    if any(len(b) != len(batch[0]) for b in batch):
        raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, but got "
                        f"{[len(b) for b in batch]} batch dimensions for the inputs.")
    if any(b != batch[0] for b in batch):
        raise TypeError(f"All inputs to {name} must have the same batch dimensions, but got {batch}.")
    check_dtypes(name, avals_in, INEXACT)
    return batch[0], dims


def cholesky(name, avals_in):
    (x,) = avals_in
    _, ((n, m),) = _batch_and_dims(name, avals_in, (2,))
    if n != m:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {(n, m)}.")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def triangular_solve(name, avals_in, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = avals_in
    _, (a_shape, b_shape) = _batch_and_dims(name, avals_in, (2, 2))
    if a_shape[0] != a_shape[1]:
        raise ValueError(f"The first input to triangular_solve must be a square matrix. Got shape {a_shape}.")
    common = -2 if left_side else -1
    if a_shape[-1] != b_shape[common]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_shape} and {b_shape}.")
    dtype = same_dtypes(name, avals_in)
    return [ShapedArray(b.shape, dtype, _all_weak(avals_in))]


def lu(name, avals_in):
    (x,) = avals_in
    batch, ((m, n),) = _batch_and_dims(name, avals_in, (2,))
    i32 = np.dtype(np.int32)
    return [ShapedArray(x.shape, x.dtype, x.weak_type), ShapedArray(batch + (min(m, n),), i32, x.weak_type),
            ShapedArray(batch + (m,), i32, x.weak_type)]


TRIANGULAR_SOLVE_PARAMS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")
