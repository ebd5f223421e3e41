"""Lowering of gather and the scatters to ``stablehlo.gather``/``stablehlo.scatter``, modes handled as JAX's
lowering handles them: a FILL_OR_DROP gather is a gather masked by a select (``_gather_fill``), a CLIP scatter
clamps its indices first (``_clamp_scatter_indices``).

XLA clamps gather starts and drops out-of-bounds scatter windows; IREE 3.13 does neither safely (an out-of-bounds
scatter writes outside its buffer, corrupting memory). So every gather start is clamped here, and a scatter's
windows that must be dropped are sent to a padding added past the end of the operand's first indexed dimension,
cut off again afterwards.

IREE also compiles only some scatters (``x.at[i, :2].set(u)``, as JAX emits it, fails with "expected indices to be
equal to batch rank"; see ``_iree_compiles``). Any other scatter is rewritten into one that writes single elements,
each update element given its full operand coordinate.
"""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.gather_scatter import SCATTERS, GatherScatterMode, scatter_slice_sizes
from irax.ir.mlir import ir
from irax.ir.params import dense_attr

from .to_stablehlo import LOWERINGS, _attr, _compare_type, emit_pad, lowering, reduce

_BOOL = np.dtype(np.bool_)


def _dims_attr(kind, **fields):
    body = ", ".join(f"{k} = [{', '.join(str(int(d)) for d in v)}]" if isinstance(v, (tuple, list)) else f"{k} = {v}"
                     for k, v in fields.items() if not isinstance(v, (tuple, list)) or len(v))
    return ir.Attribute.parse(f"#stablehlo.{kind}<{body}>")


def _index_dtype(operand_shape):
    return np.dtype(np.int32 if max(operand_shape, default=0) < 2 ** 31 - 1 else np.int64)


def _convert(ctx, x, dtype):
    a = aval_of_type(x.type)
    return x if a.dtype == dtype else ctx.emit1("stablehlo.convert", [x], tensor_type(a.shape, dtype))


def _compare(ctx, x, y, direction):
    shape = aval_of_type(x.type).shape
    return ctx.emit1("stablehlo.compare", [x, y], tensor_type(shape, _BOOL),
                     comparison_direction=f"#stablehlo<comparison_direction {direction}>",
                     compare_type=f"#stablehlo<comparison_type {_compare_type(aval_of_type(x.type).dtype)}>")


def _per_component(ctx, indices, values):
    """One value per index component, broadcast to the indices' shape."""
    a = aval_of_type(indices.type)
    values = np.array(values, a.dtype)
    t = tensor_type(values.shape, a.dtype)
    const = ctx.emit("stablehlo.constant", [], [t], {"value": dense_attr(values, t)}).result
    return ctx.emit1("stablehlo.broadcast_in_dim", [const], indices.type, broadcast_dimensions=[a.ndim - 1])


def _in_bounds(ctx, indices, operand_shape, slice_sizes, index_map):
    """Whether each index vector's window lies inside the operand (JAX's mask in ``_gather_fill``)."""
    a = aval_of_type(indices.type)
    upper = _per_component(ctx, indices, [operand_shape[d] - slice_sizes[d] for d in index_map])
    ok = ctx.emit1("stablehlo.and", [_compare(ctx, indices, ctx.constant(0, a.dtype, a.shape), "GE"),
                                     _compare(ctx, indices, upper, "LE")], tensor_type(a.shape, _BOOL))
    return reduce(ctx, ok, [a.ndim - 1], "stablehlo.and", True)


@lowering("gather")
def _gather(ctx, operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted, mode, fill_value=None,
            **params):
    out = ctx.result_avals[0]
    if out.size == 0:
        return ctx.constant(0, out.dtype, out.shape)
    dn = dimension_numbers
    operand_shape = aval_of_type(operand.type).shape
    fill = mode == GatherScatterMode.FILL_OR_DROP
    if fill:
        indices = _convert(ctx, indices, _index_dtype(operand_shape))
        mask = _in_bounds(ctx, indices, operand_shape, slice_sizes, dn.start_index_map)
    indices = _clamp_indices(ctx, indices, operand_shape, slice_sizes, dn.start_index_map)
    index_ndim = aval_of_type(indices.type).ndim
    attr = _dims_attr("gather", offset_dims=dn.offset_dims, collapsed_slice_dims=dn.collapsed_slice_dims,
                      operand_batching_dims=dn.operand_batching_dims,
                      start_indices_batching_dims=dn.start_indices_batching_dims,
                      start_index_map=dn.start_index_map, index_vector_dim=index_ndim - 1)
    result = ctx.emit1("stablehlo.gather", [operand, indices], dimension_numbers=attr,
                       slice_sizes=list(slice_sizes), indices_are_sorted=bool(indices_are_sorted))
    if not fill:
        return result
    batch_dims = [d for d in range(out.ndim) if d not in dn.offset_dims]
    mask = ctx.emit1("stablehlo.broadcast_in_dim", [mask], tensor_type(out.shape, _BOOL),
                     broadcast_dimensions=batch_dims)
    filler = ctx.constant(np.asarray(fill_value).astype(out.dtype), out.dtype, out.shape)
    return ctx.emit1("stablehlo.select", [mask, result, filler])


_COMBINERS = {"add": "stablehlo.add", "sub": "stablehlo.subtract", "mul": "stablehlo.multiply",
              "min": "stablehlo.minimum", "max": "stablehlo.maximum"}


def _clamp_indices(ctx, indices, operand_shape, sizes, index_map):
    """JAX's ``_clamp_scatter_indices``: every start clamped so that its window fits."""
    if not len(index_map):
        return indices
    a = aval_of_type(indices.type)
    upper = _per_component(ctx, indices, [min(operand_shape[d] - sizes[d], np.iinfo(a.dtype).max) for d in index_map])
    return ctx.emit1("stablehlo.clamp", [ctx.constant(0, a.dtype, a.shape), indices, upper], indices.type)


def _iree_compiles(operand_shape, updates_shape, dn):
    """Whether IREE compiles the scatter as it is: some index component addresses the operand (IREE rejects an
    empty dimension map), every update window spans whole operand dimensions that no index component addresses,
    and the other dimensions (inserted or batching) are one, or lead (measured: windows between or before several
    of them fail like partial windows)."""
    windows = [d for d in range(len(operand_shape)) if d not in dn.inserted_window_dims
               and d not in dn.operand_batching_dims]
    others = sorted(set(range(len(operand_shape))) - set(windows))
    return bool(dn.scatter_dims_to_operand_dims) and (len(others) <= 1 or others == list(range(len(others)))) and all(
        updates_shape[u] == operand_shape[d] and d not in dn.scatter_dims_to_operand_dims
        for d, u in zip(windows, dn.update_window_dims))


def _element_coordinates(ctx, indices, updates_shape, operand_shape, dn):
    """The operand coordinate of every update element, shape ``(n, rank)`` (n update elements, row-major)."""
    idx = aval_of_type(indices.type)
    dtype = idx.dtype
    shape = tuple(updates_shape)
    scatter_axes = [d for d in range(len(shape)) if d not in dn.update_window_dims]
    windows = [d for d in range(len(operand_shape)) if d not in dn.inserted_window_dims
               and d not in dn.operand_batching_dims]
    window_axis = dict(zip(windows, dn.update_window_dims))
    batch_axis = {od: scatter_axes[i] for od, i in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims)}
    full = tensor_type(shape, dtype)

    def iota(axis):
        return ctx.emit1("stablehlo.iota", [], full, iota_dimension=axis)

    columns = []
    for d in range(len(operand_shape)):
        if d in dn.scatter_dims_to_operand_dims:
            j = list(dn.scatter_dims_to_operand_dims).index(d)
            starts = idx.shape[:-1] + (1,)
            column = ctx.emit1("stablehlo.slice", [indices], tensor_type(starts, dtype),
                               start_indices=[0] * (idx.ndim - 1) + [j], limit_indices=list(starts[:-1]) + [j + 1],
                               strides=[1] * idx.ndim)
            column = ctx.emit1("stablehlo.reshape", [column], tensor_type(idx.shape[:-1], dtype))
            column = ctx.emit1("stablehlo.broadcast_in_dim", [column], full, broadcast_dimensions=scatter_axes)
            if d in window_axis:
                column = ctx.emit1("stablehlo.add", [column, iota(window_axis[d])], full)
        elif d in batch_axis:
            column = iota(batch_axis[d])
        else:
            column = iota(window_axis[d])
        columns.append(column)
    n = int(np.prod(shape, dtype=np.int64))
    flat = [ctx.emit1("stablehlo.reshape", [c], tensor_type((n, 1), dtype)) for c in columns]
    return ctx.emit1("stablehlo.concatenate", flat, tensor_type((n, len(columns)), dtype), dimension=1)


def _drop_to_padding(ctx, operand, indices, sizes, index_map):
    """The operand padded past the end of its first indexed dimension, and the indices clamped, except that a
    window XLA drops starts in the padding (so the scatter writes it there)."""
    out = aval_of_type(operand.type)
    first = index_map[0]
    indices = _convert(ctx, indices, _index_dtype(tuple(out.shape) + (out.shape[first] + sizes[first],)))
    idx = aval_of_type(indices.type)
    keep = _in_bounds(ctx, indices, out.shape, sizes, index_map)
    keep = ctx.emit1("stablehlo.broadcast_in_dim", [keep], tensor_type(idx.shape, _BOOL),
                     broadcast_dimensions=list(range(idx.ndim - 1)))
    not_first = _compare(ctx, ctx.emit1("stablehlo.iota", [], indices.type, iota_dimension=idx.ndim - 1),
                         ctx.constant(0, idx.dtype, idx.shape), "NE")
    keep = ctx.emit1("stablehlo.or", [keep, not_first], tensor_type(idx.shape, _BOOL))
    clamped = _clamp_indices(ctx, indices, out.shape, sizes, index_map)
    trash = _per_component(ctx, indices, [out.shape[first]] + [0] * (len(index_map) - 1))
    indices = ctx.emit1("stablehlo.select", [keep, clamped, trash], indices.type)
    padded_shape = tuple(n + sizes[first] if d == first else n for d, n in enumerate(out.shape))
    high = [sizes[first] if d == first else 0 for d in range(out.ndim)]
    operand = emit_pad(ctx, operand, ctx.constant(0, out.dtype), padded_shape, edge_padding_low=[0] * out.ndim,
                       edge_padding_high=high, interior_padding=[0] * out.ndim)
    return operand, indices


def _scatter(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode,
             update_jaxpr=None, **params):
    out = aval_of_type(operand.type)
    updates_aval = aval_of_type(updates.type)
    if out.size == 0 or updates_aval.size == 0:
        return operand
    dn = dimension_numbers
    if np.issubdtype(out.dtype, np.complexfloating) and update_jaxpr in _COMPONENTWISE and (
            update_jaxpr is not None or ctx.op.name == "jaxpr.scatter"):
        # IREE 3.13 miscompiles complex scatters (two scatter-adds into equal zero operands, a gather's transpose
        # taken twice, wrote into one buffer): setting, adding and subtracting act on each part apart.
        parts = [_scatter(ctx, _part(ctx, operand, part), indices, _part(ctx, updates, part), dimension_numbers=dn,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
                          update_jaxpr=update_jaxpr) for part in ("real", "imag")]
        return ctx.emit1("stablehlo.complex", parts, operand.type)
    if not out.shape:  # IREE crashes on a scalar operand: every update goes to element 0 of a vector of one
        vector = tensor_type((1,), out.dtype)
        result = _scatter(ctx, ctx.emit1("stablehlo.reshape", [operand], vector),
                          ctx.constant(0, np.int32, updates_aval.shape + (1,)), updates,
                          dimension_numbers=dn._replace(inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)),
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                          mode=GatherScatterMode.CLIP, update_jaxpr=update_jaxpr)
        return ctx.emit1("stablehlo.reshape", [result], operand.type)
    sizes = scatter_slice_sizes(out.shape, updates_aval.shape, dn)
    padded = mode != GatherScatterMode.CLIP and len(dn.scatter_dims_to_operand_dims) > 0
    if padded:
        operand, indices = _drop_to_padding(ctx, operand, indices, sizes, dn.scatter_dims_to_operand_dims)
    else:
        indices = _clamp_indices(ctx, indices, out.shape, sizes, dn.scatter_dims_to_operand_dims)
    operand_shape = aval_of_type(operand.type).shape
    if _iree_compiles(operand_shape, updates_aval.shape, dn):
        attr = _dims_attr("scatter", update_window_dims=dn.update_window_dims,
                          inserted_window_dims=dn.inserted_window_dims, input_batching_dims=dn.operand_batching_dims,
                          scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
                          scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims,
                          index_vector_dim=aval_of_type(indices.type).ndim - 1)
    else:
        indices = _element_coordinates(ctx, indices, updates_aval.shape, operand_shape, dn)
        updates = ctx.emit1("stablehlo.reshape", [updates], tensor_type((updates_aval.size,), out.dtype))
        rank = len(out.shape)
        attr = _dims_attr("scatter", inserted_window_dims=tuple(range(rank)),
                          scatter_dims_to_operand_dims=tuple(range(rank)), index_vector_dim=1)
    op = ctx.emit("stablehlo.scatter", [operand, indices, updates], [operand.type],
                  {"scatter_dimension_numbers": attr, "indices_are_sorted": _attr(bool(indices_are_sorted)),
                   "unique_indices": _attr(bool(unique_indices))}, regions=1)
    scalar = tensor_type((), out.dtype)
    block = ctx.region_block(op, [scalar, scalar])
    ip = ir.InsertionPoint(block)
    current, update = block.arguments
    result = update
    if update_jaxpr is not None and ctx.op.name == "jaxpr.scatter":  # scatter_apply: a call of its function
        result = ir.Operation.create("func.call", results=[scalar], operands=[current, update], attributes={
            "callee": ir.FlatSymbolRefAttr.get(update_jaxpr)}, loc=ctx.loc, ip=ip).result
    elif update_jaxpr is not None:
        result = ir.Operation.create(_COMBINERS[update_jaxpr], results=[scalar], operands=[current, update],
                                     loc=ctx.loc, ip=ip).result
    ir.Operation.create("stablehlo.return", results=[], operands=[result], loc=ctx.loc, ip=ip)
    if not padded:
        return op.result
    return ctx.emit1("stablehlo.slice", [op.result], tensor_type(out.shape, out.dtype), start_indices=[0] * out.ndim,
                     limit_indices=list(out.shape), strides=[1] * out.ndim)


_COMPONENTWISE = (None, "add", "sub")


def _part(ctx, x, part):
    """The real or imaginary part of a complex value."""
    x_aval = aval_of_type(x.type)
    return ctx.emit1(f"stablehlo.{part}", [x], tensor_type(x_aval.shape, np.finfo(x_aval.dtype).dtype))


for _name in SCATTERS:
    LOWERINGS[_name] = _scatter
