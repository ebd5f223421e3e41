"""Lowering of the convolution to ``stablehlo.convolution`` and of the windowed reductions, as JAX lowers them on
CPU except where IREE 3.13 needs another form.

IREE compiles every convolution form JAX emits (strides, negative padding, lhs/rhs dilation, feature and batch
groups, 1-3 spatial dims). Where it departs from XLA's CPU backend the lowering works around it:

- half-precision convolutions accumulate in their own type in IREE (a 3x3x3 bfloat16 conv is off by several
  ulps); they are computed in float32 and rounded once, as XLA does;
- complex convolutions are expanded into three real ones (Gauss's trick, what JAX's CPU lowering does too);
- a convolution with an empty operand or result is its zero result, never handed to IREE.

Windowed reductions: with irax's compile flags (``--iree-dispatch-creation-fuse-multi-use=false``, see
``backends/iree.py``) IREE 3.13 miscompiles a module holding two ``stablehlo.reduce_window`` ops of the same
configuration (both results come out wrong, a silent error), which any network with two equal pooling layers, or
a pooling's value and JVP, would hit. So a window of at most ``_UNROLL_LIMIT`` elements (every pooling window)
reduces as one strided ``slice`` of the explicitly padded and dilated operand per window element, combined
elementwise (half-precision sums in float32, rounded once); only larger windows use ``stablehlo.reduce_window``.
``select_and_gather_add`` is JAX's variadic
reduction over (operand, tangent) pairs, unrolled the same way. IREE legalizes ``stablehlo.select_and_scatter``
only for windows that do not overlap (stride >= window): those keep it, with the padding applied beforehand as
JAX's CPU lowering does; overlapping ones run XLA's select iteration over the window's slices and scatter the
source back with one interior-padded ``pad`` per window element.
"""
from __future__ import annotations

import itertools

import numpy as np

from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.mlir import ir
from irax.ir.shapes import issubdtype

from .to_stablehlo import _HALF, _attr, _compare_type, _convert_to, _extreme, lowering

_F32 = np.dtype(np.float32)
# Windows of at most this many elements reduce as one strided slice per element (see the module docstring).
_UNROLL_LIMIT = 64


def _padding_attr(padding):
    rows = np.array([[int(lo), int(hi)] for lo, hi in padding], np.int64).reshape(len(padding), 2)
    return ir.DenseElementsAttr.get(rows, type=ir.RankedTensorType.get([len(padding), 2],
                                                                       ir.IntegerType.get_signless(64)))


def _conv_dims_attr(dn):
    lhs, rhs, out = dn
    fields = dict(input_batch_dimension=lhs[0], input_feature_dimension=lhs[1], input_spatial_dimensions=lhs[2:],
                  kernel_input_feature_dimension=rhs[1], kernel_output_feature_dimension=rhs[0],
                  kernel_spatial_dimensions=rhs[2:], output_batch_dimension=out[0], output_feature_dimension=out[1],
                  output_spatial_dimensions=out[2:])
    body = ", ".join(f"{k} = [{', '.join(str(int(d)) for d in v)}]" if isinstance(v, (tuple, list))
                     else f"{k} = {int(v)}" for k, v in fields.items())
    return ir.Attribute.parse(f"#stablehlo.conv<raw {body}>")


def _convolution(ctx, lhs, rhs, out_dtype, params):
    out_shape = ctx.result_avals[0].shape
    dn = params["dimension_numbers"]
    nsp = len(dn.lhs_spec) - 2
    if _few_outputs_large_window(out_shape, aval_of_type(rhs.type).shape, params):
        return _convolution_as_dots(ctx, lhs, rhs, out_dtype, out_shape, params)
    attrs = {"dimension_numbers": _conv_dims_attr(dn),
             "feature_group_count": _attr(int(params["feature_group_count"])),
             "batch_group_count": _attr(int(params["batch_group_count"])),
             "window_strides": _attr(list(params["window_strides"])), "padding": _padding_attr(params["padding"]),
             "lhs_dilation": _attr(list(params["lhs_dilation"])), "rhs_dilation": _attr(list(params["rhs_dilation"])),
             "window_reversal": ir.DenseBoolArrayAttr.get([False] * nsp)}
    if params["precision"] is not None:
        attrs["precision_config"] = ir.ArrayAttr.get([ir.Attribute.parse(f"#stablehlo<precision {p}>")
                                                      for p in params["precision"]])
    return ctx.emit("stablehlo.convolution", [lhs, rhs], [tensor_type(out_shape, out_dtype)], attrs).result


# A convolution with at most this many output positions and a window of at least as many elements is lowered as
# one dot_general per output position (see ``_convolution_as_dots``).
_DOTS_MAX_OUTPUTS = 64


def _few_outputs_large_window(out_shape, rhs_shape, params) -> bool:
    dn = params["dimension_numbers"]
    outputs = int(np.prod([out_shape[d] for d in dn.out_spec[2:]]))
    window = int(np.prod([rhs_shape[d] for d in dn.rhs_spec[2:]]))
    return (outputs <= _DOTS_MAX_OUTPUTS and window >= outputs and params["feature_group_count"] == 1
            and params["batch_group_count"] == 1 and all(d == 1 for d in params["lhs_dilation"]))


def _convolution_as_dots(ctx, lhs, rhs, out_dtype, out_shape, params):
    """A kernel gradient (what JAX's transpose of a convolution by its kernel emits) convolves the input with the
    output's cotangent as window: a window as large as the image and a few output positions. IREE tiles that form
    poorly (58 ms against XLA's 3.6 ms for the 3x3x16x32 kernel gradient of the bench's convnet); as one
    dot_general per output position, contracting the input features and the window, it runs as fast as XLA's.
    Operands are brought to (batch, feature, spatial...) layout, the input padded once; each output position slices
    its (dilated) window and the results are stacked into the output layout."""
    dn = params["dimension_numbers"]
    nsp = len(dn.lhs_spec) - 2
    lhs = _transposed(ctx, lhs, dn.lhs_spec)
    rhs = _transposed(ctx, rhs, dn.rhs_spec)
    lhs_shape, rhs_shape = aval_of_type(lhs.type).shape, aval_of_type(rhs.type).shape
    lhs = ctx.emit1("stablehlo.pad", [lhs, ctx.constant(0, out_dtype)], tensor_type(
        lhs_shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], params["padding"])), out_dtype),
        edge_padding_low=[0, 0] + [lo for lo, _ in params["padding"]],
        edge_padding_high=[0, 0] + [hi for _, hi in params["padding"]], interior_padding=[0] * (nsp + 2))
    positions = [out_shape[d] for d in dn.out_spec[2:]]
    batch, features = lhs_shape[0], rhs_shape[0]
    contract = list(range(1, nsp + 2))
    attr = (f"#stablehlo.dot<lhs_contracting_dimensions = {contract}, rhs_contracting_dimensions = {contract}>")
    rows = []
    for index in itertools.product(*map(range, positions)):
        start = [0, 0] + [i * s for i, s in zip(index, params["window_strides"])]
        limit = [batch, lhs_shape[1]] + [b + (k - 1) * d + 1 for b, k, d in
                                         zip(start[2:], rhs_shape[2:], params["rhs_dilation"])]
        window = ctx.emit1("stablehlo.slice", [lhs], tensor_type((batch,) + rhs_shape[1:], out_dtype),
                           start_indices=start, limit_indices=limit, strides=[1, 1] + list(params["rhs_dilation"]))
        dot = ctx.emit1("stablehlo.dot_general", [window, rhs], tensor_type((batch, features), out_dtype),
                        dot_dimension_numbers=attr)
        rows.append(ctx.emit1("stablehlo.reshape", [dot], tensor_type((1, batch, features), out_dtype)))
    stacked = rows[0] if len(rows) == 1 else ctx.emit1(
        "stablehlo.concatenate", rows, tensor_type((len(rows), batch, features), out_dtype), dimension=0)
    canonical = tuple(positions) + (batch, features)
    stacked = ctx.emit1("stablehlo.reshape", [stacked], tensor_type(canonical, out_dtype))
    # axis j of the output holds the canonical axis spec.index(j): batch, feature, then the positions
    order = [nsp, nsp + 1] + list(range(nsp))
    perm = [order[list(dn.out_spec).index(j)] for j in range(nsp + 2)]
    return ctx.emit1("stablehlo.transpose", [stacked], tensor_type(out_shape, out_dtype), permutation=perm)


def _transposed(ctx, x, spec):
    shape = aval_of_type(x.type).shape
    if list(spec) == list(range(len(spec))):
        return x
    return ctx.emit1("stablehlo.transpose", [x], tensor_type(tuple(shape[d] for d in spec),
                                                             aval_of_type(x.type).dtype), permutation=list(spec))


@lowering("conv_general_dilated")
def _conv_general_dilated(ctx, lhs, rhs, **params):
    out = ctx.result_avals[0]
    if out.size == 0 or aval_of_type(lhs.type).size == 0 or aval_of_type(rhs.type).size == 0:
        return ctx.constant(0, out.dtype, out.shape)
    if issubdtype(out.dtype, np.complexfloating):
        part = np.dtype(np.float32 if out.dtype == np.complex64 else np.float64)
        lhs, rhs = _convert_to(ctx, lhs, out.dtype), _convert_to(ctx, rhs, out.dtype)

        def split(x):
            shape = aval_of_type(x.type).shape
            return [ctx.emit1(f"stablehlo.{p}", [x], tensor_type(shape, part)) for p in ("real", "imag")]

        def add(x, y, op="add"):
            return ctx.emit1(f"stablehlo.{op}", [x, y], x.type)
        (x_re, x_im), (y_re, y_im) = split(lhs), split(rhs)
        k1 = _convolution(ctx, add(x_re, x_im), y_re, part, params)
        k2 = _convolution(ctx, x_re, add(y_im, y_re, "subtract"), part, params)
        k3 = _convolution(ctx, x_im, add(y_re, y_im), part, params)
        return ctx.emit1("stablehlo.complex", [add(k1, k3, "subtract"), add(k1, k2)])
    compute = _F32 if out.dtype in _HALF else out.dtype
    lhs, rhs = _convert_to(ctx, lhs, compute), _convert_to(ctx, rhs, compute)
    return _convert_to(ctx, _convolution(ctx, lhs, rhs, compute, params), out.dtype)


# --- windowed reductions --------------------------------------------------------------------------------------------

def _window_attrs(window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None):
    attrs = {"window_dimensions": _attr(list(window_dimensions)), "window_strides": _attr(list(window_strides)),
             "padding": _padding_attr(padding)}
    if window_dilation is not None:
        attrs["window_dilations"] = _attr(list(window_dilation))
    return attrs


def _padded(ctx, x, fill, padding, base_dilation):
    """``x`` with its base dilation and padding made explicit: a ``stablehlo.pad`` with ``fill``."""
    if all(d == 1 for d in base_dilation) and not any(lo or hi for lo, hi in padding):
        return x
    a = aval_of_type(x.type)
    shape = tuple(max(n + (n - 1) * (d - 1), 0) + lo + hi if n else lo + hi
                  for n, d, (lo, hi) in zip(a.shape, base_dilation, padding))
    return ctx.emit1("stablehlo.pad", [x, ctx.constant(fill, a.dtype)], tensor_type(shape, a.dtype),
                     edge_padding_low=[int(lo) for lo, _ in padding], edge_padding_high=[int(hi) for _, hi in padding],
                     interior_padding=[int(d) - 1 for d in base_dilation])


def _window_slices(ctx, x, out_shape, window_dimensions, window_strides, window_dilation):
    """For each offset in the window (row-major), the strided slice of ``x`` holding that element of every
    window."""
    dtype = aval_of_type(x.type).dtype
    for k in itertools.product(*(range(w) for w in window_dimensions)):
        start = [o * d for o, d in zip(k, window_dilation)]
        yield ctx.emit1("stablehlo.slice", [x], tensor_type(out_shape, dtype), start_indices=start,
                        limit_indices=[b + (n - 1) * s + 1 for b, n, s in zip(start, out_shape, window_strides)],
                        strides=list(window_strides))


def _unrolled(window_dimensions):
    return int(np.prod(window_dimensions)) <= _UNROLL_LIMIT


def _body(ctx, op, index, arg_types):
    block = op.regions[index].blocks.append(*arg_types)
    ip = ir.InsertionPoint(block)

    def emit(name, operands, rtype, **attrs):
        return ir.Operation.create(name, results=[rtype], operands=list(operands),
                                   attributes={k: _attr(v) for k, v in attrs.items()}, loc=ctx.loc, ip=ip).result

    def ret(*values):
        ir.Operation.create("stablehlo.return", results=[], operands=list(values), loc=ctx.loc, ip=ip)
    return block, emit, ret


def _identity(kind, dtype):
    return 0 if kind == "sum" else _extreme(dtype, kind == "min")


_BODIES = {"sum": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum"}


def _reduce_window(kind):
    def lower(ctx, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        dtype = aval_of_type(x.type).dtype
        out = ctx.result_avals[0]
        if out.size == 0:
            return ctx.constant(0, out.dtype, out.shape)
        init = _identity(kind, dtype)
        x = _padded(ctx, x, init, padding, base_dilation)
        if _unrolled(window_dimensions):
            if kind == "sum" and dtype in _HALF:  # summed in float32 and rounded once, as XLA's CPU backend does
                x = _convert_to(ctx, x, _F32)
            parts = _window_slices(ctx, x, out.shape, window_dimensions, window_strides, window_dilation)
            total = next(parts)
            for part in parts:
                total = ctx.emit1(_BODIES[kind], [total, part], total.type)
            return _convert_to(ctx, total, dtype)
        op = ctx.emit("stablehlo.reduce_window", [x, ctx.constant(init, dtype)], [ctx.op.results[0].type],
                      _window_attrs(window_dimensions, window_strides, [(0, 0)] * out.ndim,
                                    window_dilation=window_dilation), regions=1)
        scalar = tensor_type((), dtype)
        block, emit, ret = _body(ctx, op, 0, [scalar, scalar])
        ret(emit(_BODIES[kind], block.arguments, scalar))
        return op.result
    return lower


for _kind in ("sum", "max", "min"):
    lowering(f"reduce_window_{_kind}")(_reduce_window(_kind))


def _select_compare(emit, x, y, select_prim, dtype, shape=()):
    return emit("stablehlo.compare", [x, y], tensor_type(shape, np.dtype(np.bool_)),
                comparison_direction=f"#stablehlo<comparison_direction {select_prim.upper()}>",
                compare_type=f"#stablehlo<comparison_type {_compare_type(dtype)}>")


@lowering("select_and_gather_add")
def _select_and_gather_add(ctx, tangents, operand, *, select_prim, window_dimensions, window_strides, padding,
                           base_dilation, window_dilation):
    """JAX's ``_select_and_gather_add_using_variadic_reducewindow``: a reduce over (operand, tangent) pairs that
    keeps the pair whose operand ``select_prim`` prefers (the earlier one on ties)."""
    out = ctx.result_avals[0]
    if out.size == 0:
        return ctx.constant(0, out.dtype, out.shape)
    dtype = aval_of_type(operand.type).dtype
    t_dtype = aval_of_type(tangents.type).dtype
    identity = _extreme(dtype, select_prim == "le")
    operand = _padded(ctx, operand, identity, padding, base_dilation)
    tangents = _padded(ctx, tangents, 0, padding, base_dilation)
    window = (window_dimensions, window_strides, window_dilation)
    if _unrolled(window_dimensions):
        values = _window_slices(ctx, operand, out.shape, *window)
        tans = _window_slices(ctx, tangents, out.shape, *window)
        value, tangent = next(values), next(tans)
        for v, t in zip(values, tans):
            keep = _select_compare(ctx.emit1, value, v, select_prim, dtype, out.shape)
            value = ctx.emit1("stablehlo.select", [keep, value, v], value.type)
            tangent = ctx.emit1("stablehlo.select", [keep, tangent, t], tangent.type)
        return tangent
    out_types = [tensor_type(out.shape, dtype), tensor_type(out.shape, t_dtype)]
    op = ctx.emit("stablehlo.reduce_window", [operand, tangents, ctx.constant(identity, dtype),
                                              ctx.constant(0, t_dtype)], out_types,
                  _window_attrs(window_dimensions, window_strides, [(0, 0)] * out.ndim,
                                window_dilation=window_dilation), regions=1)
    kt, vt = tensor_type((), dtype), tensor_type((), t_dtype)
    block, emit, ret = _body(ctx, op, 0, [kt, vt, kt, vt])
    kx, vx, ky, vy = block.arguments
    which = _select_compare(emit, kx, ky, select_prim, dtype)
    ret(emit("stablehlo.select", [which, kx, ky], kt), emit("stablehlo.select", [which, vx, vy], vt))
    return op.results[1]


@lowering("select_and_scatter_add")
def _select_and_scatter_add(ctx, source, operand, *, select_prim, window_dimensions, window_strides, padding):
    out = ctx.result_avals[0]
    s_aval = aval_of_type(source.type)
    if out.size == 0 or s_aval.size == 0:
        return ctx.constant(0, out.dtype, out.shape)
    o_aval = aval_of_type(operand.type)
    dtype = o_aval.dtype
    if any(lo or hi for lo, hi in padding):
        identity = ctx.constant(_extreme(dtype, select_prim == "le"), dtype)
        padded_shape = tuple(d + lo + hi for d, (lo, hi) in zip(o_aval.shape, padding))
        operand = ctx.emit1("stablehlo.pad", [operand, identity], tensor_type(padded_shape, dtype),
                            edge_padding_low=[int(lo) for lo, _ in padding],
                            edge_padding_high=[int(hi) for _, hi in padding], interior_padding=[0] * o_aval.ndim)
    else:
        padded_shape = o_aval.shape
    if all(s >= w for s, w in zip(window_strides, window_dimensions)):
        result = _select_and_scatter(ctx, source, operand, select_prim, window_dimensions, window_strides)
    else:
        result = _unrolled_select_and_scatter(ctx, source, operand, select_prim, window_dimensions, window_strides)
    if padded_shape == o_aval.shape:
        return result
    return ctx.emit1("stablehlo.slice", [result], start_indices=[int(lo) for lo, _ in padding],
                     limit_indices=[int(lo) + d for (lo, _), d in zip(padding, o_aval.shape)],
                     strides=[1] * o_aval.ndim)


def _select_and_scatter(ctx, source, operand, select_prim, window_dimensions, window_strides):
    o_aval = aval_of_type(operand.type)
    dtype, s_dtype = o_aval.dtype, aval_of_type(source.type).dtype
    attrs = _window_attrs(window_dimensions, window_strides, [(0, 0)] * o_aval.ndim)
    op = ctx.emit("stablehlo.select_and_scatter", [operand, source, ctx.constant(0, s_dtype)],
                  [tensor_type(o_aval.shape, s_dtype)], attrs, regions=2)
    kt, st = tensor_type((), dtype), tensor_type((), s_dtype)
    block, emit, ret = _body(ctx, op, 0, [kt, kt])
    ret(_select_compare(emit, *block.arguments, select_prim, dtype))
    block, emit, ret = _body(ctx, op, 1, [st, st])
    ret(emit("stablehlo.or" if s_dtype == np.bool_ else "stablehlo.add", block.arguments, st))
    return op.result


def _unrolled_select_and_scatter(ctx, source, operand, select_prim, window_dimensions, window_strides):
    """Overlapping windows, which IREE 3.13 cannot legalize in ``stablehlo.select_and_scatter``: one strided
    slice of the operand per window offset; XLA's select iteration over them (the first offset whose element
    ``select_prim`` prefers to all later ones wins) gives each window's chosen offset, and the source goes to
    that offset through an interior-padded ``pad`` per offset."""
    o_aval, s_aval = aval_of_type(operand.type), aval_of_type(source.type)
    dtype = o_aval.dtype
    bool_t, idx_t = tensor_type(s_aval.shape, np.dtype(np.bool_)), tensor_type(s_aval.shape, np.dtype(np.int32))
    offsets = list(itertools.product(*(range(w) for w in window_dimensions)))

    def window_slice(k):
        return ctx.emit1("stablehlo.slice", [operand], tensor_type(s_aval.shape, dtype), start_indices=list(k),
                         limit_indices=[o + (n - 1) * s + 1 for o, n, s in zip(k, s_aval.shape, window_strides)],
                         strides=list(window_strides))

    chosen, chosen_index = window_slice(offsets[0]), ctx.constant(0, np.int32, s_aval.shape)
    for i, k in enumerate(offsets[1:], 1):
        value = window_slice(k)
        keep = ctx.emit1("stablehlo.compare", [chosen, value], bool_t,
                         comparison_direction=f"#stablehlo<comparison_direction {select_prim.upper()}>",
                         compare_type=f"#stablehlo<comparison_type {_compare_type(dtype)}>")
        chosen = ctx.emit1("stablehlo.select", [keep, chosen, value], chosen.type)
        chosen_index = ctx.emit1("stablehlo.select", [keep, chosen_index, ctx.constant(i, np.int32, s_aval.shape)],
                                 idx_t)
    zeros, zero = ctx.constant(0, s_aval.dtype, s_aval.shape), ctx.constant(0, s_aval.dtype)
    total = None
    for i, k in enumerate(offsets):
        hit = ctx.emit1("stablehlo.compare", [chosen_index, ctx.constant(i, np.int32, s_aval.shape)], bool_t,
                        comparison_direction="#stablehlo<comparison_direction EQ>",
                        compare_type="#stablehlo<comparison_type SIGNED>")
        part = ctx.emit1("stablehlo.select", [hit, source, zeros], source.type)
        high = [d - (o + (n - 1) * s + 1) for d, o, n, s in zip(o_aval.shape, k, s_aval.shape, window_strides)]
        part = ctx.emit1("stablehlo.pad", [part, zero], tensor_type(o_aval.shape, s_aval.dtype),
                         edge_padding_low=list(k), edge_padding_high=high,
                         interior_padding=[s - 1 for s in window_strides])
        total = part if total is None else ctx.emit1("stablehlo.add", [total, part], part.type)
    return total
