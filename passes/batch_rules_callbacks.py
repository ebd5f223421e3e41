"""Batching rules of the host callbacks, as JAX's.

``pure_callback`` follows its ``vmap_method``: ``sequential`` calls it once per example in a ``scan`` (unrolled for
``sequential_unrolled``), ``expand_dims``, ``broadcast_all`` and ``legacy_vectorized`` call it once on the batch
(unbatched operands given a unit axis, broadcast, or left as they are), and ``None`` refuses. An unordered
``io_callback`` is sequential, an ordered one refuses. ``jax.debug``'s run once per example, on its slices.
"""
from __future__ import annotations

from irax.ir.control_flow import stacked_type
from irax.ir.dialect import tensor_type_of
from irax.ir.mlir import ir

from . import funcs
from .batch import BATCH_RULES
from .builder import Builder, aval

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")


def _pure_callback_batch(b, args, dims, *, vmap_method, result_avals, **params):
    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of 'sequential', "
            "'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. "
            f"Got vmap_method={vmap_method}.")
    if vmap_method.startswith("sequential"):
        return _sequential(b, args, dims, vmap_method == "sequential_unrolled", vmap_method=vmap_method,
                           result_avals=result_avals, **params)
    operands = []
    for x, d in zip(args, dims):
        if d is not None:
            operands.append(b.moveaxis(x, d, 0))
        elif vmap_method == "legacy_vectorized":
            operands.append(x)
        else:  # lax.broadcast, as JAX's rule: a unit axis for expand_dims, the batch's for broadcast_all
            shape = aval(x).shape
            size = b.axis_size if vmap_method == "broadcast_all" else 1
            operands.append(b.broadcast_in_dim(x, shape=(size,) + shape,
                                               broadcast_dimensions=tuple(range(1, len(shape) + 1))))
    batched = tuple(a.update(shape=(b.axis_size,) + a.shape) for a in result_avals)
    outs = b.same(*operands, vmap_method=vmap_method, result_avals=batched, **params)
    return outs, [0] * len(outs)


def _io_callback_batch(b, args, dims, *, ordered, **params):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(b, args, dims, False, ordered=ordered, **params)


def _sequential(b, args, dims, unrolled, **params):
    """The callback in a ``scan`` over the examples (JAX's ``lax.map``): the unbatched operands are the scan's
    constants, the batched ones (moved to the front) its xs."""
    consts = [x for x, d in zip(args, dims) if d is None]
    xs = [b.moveaxis(x, d, 0) for x, d in zip(args, dims) if d is not None]
    slice_types = [tensor_type_of(aval(x).update(shape=aval(x).shape[1:])) for x in xs]
    enclosing = b.ip.block.owner
    body, block = funcs.new_function(b.module, f"{b.primitive}_sequential", slice_types + [c.type for c in consts],
                                     after=enclosing, loc=b.loc)
    inner = Builder(ir.InsertionPoint(block), b.loc, b.module)
    slices, inner_consts = iter(block.arguments[:len(xs)]), iter(block.arguments[len(xs):])
    operands = [next(inner_consts) if d is None else next(slices) for d in dims]
    funcs.finish(body, block, inner.bind(b.primitive, *operands, **params), n_consts=len(consts))
    result_types = [stacked_type(t, b.axis_size) for t in funcs.function_type(body).results]
    outs = b.emit("scan", consts + xs, result_types, jaxpr=funcs.name_of(body), length=b.axis_size,
                  num_consts=len(consts), num_carry=0, reverse=False, unroll=b.axis_size if unrolled else 1)
    return outs, [0] * len(outs)


def _debug_batch(b, args, dims, **params):
    """Once per example, on its slices (JAX's ``debug_batching_rule``)."""
    for i in range(b.axis_size):
        b.same(*(x if d is None else _index(b, x, i, d) for x, d in zip(args, dims)), **params)
    return [], []


def _index(b, x, i, axis):
    shape = aval(x).shape
    starts = tuple(i if k == axis else 0 for k in range(len(shape)))
    limits = tuple(i + 1 if k == axis else n for k, n in enumerate(shape))
    piece = b.slice(x, start_indices=starts, limit_indices=limits, strides=(1,) * len(shape))
    return b.squeeze(piece, dimensions=(axis,))


BATCH_RULES.update({"pure_callback": _pure_callback_batch, "io_callback": _io_callback_batch,
                    "debug_callback": _debug_batch, "debug_print": _debug_batch})
