"""Batching rules of ``cholesky``, ``lu``, ``lu_pivots_to_permutation``, ``eigh``, ``eig``, ``schur``, ``svd``, ``qr``,
``geqrf``, ``geqp3``, ``ormqr``, ``tridiagonal``, ``householder_product``, ``hessenberg``, ``symmetric_product``,
``triangular_solve`` and ``tridiagonal_solve``, ports of JAX's: the primitives take leading batch dimensions, so
``expand_dims_batcher`` moves the batch axis to the front; ``_triangular_solve_batching_rule``
(``_tridiagonal_solve_batching_rule``) folds a batch of right-hand sides into the columns (rows) of one when the matrix
is shared."""
from __future__ import annotations

from .batch import BATCH_RULES
from .builder import aval


def _leading_batch(b, args, dims, **params):
    """JAX's ``expand_dims_batcher``."""
    size = next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    outs = b.same(*[b.bdim_at_front(x, d, size) for x, d in zip(args, dims)], **params)
    return outs, [0] * len(outs)


def _triangular_solve_batch(b, args, dims, *, left_side, **params):
    (a, y), (ba, by) = args, dims
    if ba is not None:
        return _leading_batch(b, args, dims, left_side=left_side, **params)
    nd = len(aval(y).shape)
    if left_side:
        y = b.moveaxis(y, by, nd - 1)
        shape = aval(y).shape
        flat = b.reshape(y, new_sizes=shape[:-2] + (shape[-2] * shape[-1],), dimensions=None)
        out_dim = nd - 1
    else:
        y = b.moveaxis(y, by, nd - 2)
        shape = aval(y).shape
        flat = b.reshape(y, new_sizes=shape[:-3] + (shape[-3] * shape[-2], shape[-1]), dimensions=None)
        out_dim = nd - 2
    out = b.triangular_solve(a, flat, left_side=left_side, **params)
    return [b.reshape(out, new_sizes=shape, dimensions=None)], [out_dim]


def _tridiagonal_solve_batch(b, args, dims, *, perturb_singular):
    """JAX's ``_tridiagonal_solve_batching_rule``: with the diagonals shared, the batch of right-hand sides
    becomes more columns of one."""
    if any(d is not None for d in dims[:3]):
        return _leading_batch(b, args, dims, perturb_singular=perturb_singular)
    *diagonals, y = args
    nd = len(aval(y).shape)
    y = b.moveaxis(y, dims[3], nd - 2)
    shape = aval(y).shape
    flat = b.reshape(y, new_sizes=shape[:-3] + (shape[-3], shape[-2] * shape[-1]), dimensions=None)
    out = b.tridiagonal_solve(*diagonals, flat, perturb_singular=perturb_singular)
    return [b.reshape(out, new_sizes=shape, dimensions=None)], [nd - 2]


BATCH_RULES["cholesky"] = _leading_batch
BATCH_RULES["lu"] = _leading_batch
BATCH_RULES["lu_pivots_to_permutation"] = _leading_batch
BATCH_RULES["symmetric_product"] = _leading_batch
BATCH_RULES["householder_product"] = _leading_batch
BATCH_RULES["hessenberg"] = _leading_batch
BATCH_RULES["eigh"] = _leading_batch
BATCH_RULES["eig"] = _leading_batch
BATCH_RULES["schur"] = _leading_batch


def _cholesky_update_batch(b, args, dims):
    """JAX's ``cholesky_update`` has no batching rule."""
    raise NotImplementedError("Batching rule for 'cholesky_update' not implemented")


BATCH_RULES["cholesky_update"] = _cholesky_update_batch
BATCH_RULES["geqrf"] = _leading_batch
BATCH_RULES["geqp3"] = _leading_batch
BATCH_RULES["ormqr"] = _leading_batch
BATCH_RULES["tridiagonal"] = _leading_batch
BATCH_RULES["svd"] = _leading_batch
BATCH_RULES["qr"] = _leading_batch
BATCH_RULES["triangular_solve"] = _triangular_solve_batch
BATCH_RULES["tridiagonal_solve"] = _tridiagonal_solve_batch
