"""The non-primitive helpers JAX's differentiation rules call, over a ``Builder``.

Each mirrors the ``lax`` function of the same name in what it binds (and in what
it skips, such as an identity transpose), so that derived jaxprs match JAX's.
"""
from __future__ import annotations

from .builder import aval


def unbroadcast(b, target, x):
    """Sums ``x`` down to ``target``'s shape (the transpose of implicit broadcasting)."""
    x_shape = aval(x).shape
    if tuple(target.shape) == x_shape:
        return x
    if not target.shape:
        return b.reduce_sum(x, axes=tuple(range(len(x_shape))))
    dims = tuple(i for i, (a, t) in enumerate(zip(x_shape, target.shape)) if a != t)
    if dims:
        x = b.reduce_sum(x, axes=dims)
    return b.reshape(x, new_sizes=tuple(target.shape), dimensions=None)


def broadcast_in_dim(b, x, shape, broadcast_dimensions):
    """Skips a rank-0 to rank-0 broadcast, as ``lax.broadcast_in_dim`` does."""
    if not aval(x).shape and not shape and not broadcast_dimensions:
        return x
    return b.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=tuple(broadcast_dimensions))


def maybe_broadcast(b, shape, x):
    x_shape = aval(x).shape
    if x_shape == tuple(shape):
        return x
    if not x_shape:
        return b.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=())
    dims = tuple(i for i, (a, t) in enumerate(zip(x_shape, shape)) if a == t)
    squeezed = b.reshape(x, new_sizes=tuple(x_shape[i] for i in dims), dimensions=None)
    return b.broadcast_in_dim(squeezed, shape=tuple(shape), broadcast_dimensions=dims)


def transpose(b, x, permutation):
    if tuple(permutation) == tuple(range(len(aval(x).shape))):
        return x
    return b.transpose(x, permutation=tuple(permutation))


def select(b, pred, on_true, on_false):
    return b.select_n(pred, on_false, on_true)


def balanced_eq(b, x, z, y):
    """1 where x == z, halved where y == z too: max/min's derivative share on ties."""
    return b.div(select(b, b.eq(x, z), b.full_like(z, 1), b.full_like(z, 0)),
                 select(b, b.eq(y, z), b.full_like(z, 2), b.full_like(z, 1)))


def expand_dims(b, x, dims):
    if not dims:
        return x
    shape = list(aval(x).shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    kept = [i for i in range(len(shape)) if i not in set(dims)]
    return b.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=tuple(kept))
