"""Batching rules of the convolution and the windowed reductions, ports of JAX's
``_conv_general_dilated_batch_rule`` (the mapped axis folded into the batch, feature or output-feature dimension,
with groups where both operands are mapped) and of its window batchers (a window of 1 along the mapped axis)."""
from __future__ import annotations

from irax.ir.avals import ShapedArray
from irax.ir.convolution import conv_shape

from .ad_rules_convolution import conv_general_dilated, reshape_axis_into, reshape_axis_out_of
from .batch import BATCH_RULES
from .builder import aval


def _unbatched(a, bdim):
    return ShapedArray(a.shape[:bdim] + a.shape[bdim + 1:], a.dtype)


def _conv_batch(b, args, dims, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                feature_group_count, batch_group_count, precision, preferred_element_type, **params):
    (lhs, rhs), (lhs_bdim, rhs_bdim) = args, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    assert batch_group_count == 1 or feature_group_count == 1
    lhs_shape, rhs_shape = aval(lhs).shape, aval(rhs).shape

    def conv(new_lhs, new_rhs, fgc, bgc):
        return conv_general_dilated(b, new_lhs, new_rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                    dimension_numbers, fgc, bgc, precision, preferred_element_type)

    if (lhs_bdim is not None and lhs_shape[lhs_bdim] == 0) or (rhs_bdim is not None and rhs_shape[rhs_bdim] == 0):
        avals = [aval(x) if d is None else _unbatched(aval(x), d) for x, d in zip(args, dims)]
        out, = conv_shape("conv_general_dilated", avals, window_strides=window_strides, padding=padding,
                          lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                          feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                          preferred_element_type=preferred_element_type)
        return b.full((0,) + out.shape, out.dtype, 0), 0
    if lhs_bdim is not None and rhs_bdim is not None:
        size = lhs_shape[lhs_bdim]
        if batch_group_count > 1:
            new_lhs = reshape_axis_into(b, lhs_bdim, lhs_spec[0], lhs)
            batch_group_count *= size
        else:
            new_lhs = reshape_axis_into(b, lhs_bdim, lhs_spec[1], lhs)
            feature_group_count *= size
        new_rhs = reshape_axis_into(b, rhs_bdim, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(b, out_spec[1], size, out), out_spec[1]
    if lhs_bdim is not None:
        size = lhs_shape[lhs_bdim]
        if batch_group_count == 1:
            new_lhs = reshape_axis_into(b, lhs_bdim, lhs_spec[0], lhs)
            out = conv(new_lhs, rhs, feature_group_count, 1)
        else:
            new_lhs = reshape_axis_out_of(b, lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]), batch_group_count, lhs)
            new_lhs = reshape_axis_into(b, lhs_bdim + int(lhs_spec[0] < lhs_bdim), lhs_spec[0] + 1, new_lhs)
            new_lhs = reshape_axis_into(b, lhs_spec[0], lhs_spec[0], new_lhs)
            out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(b, out_spec[0], size, out), out_spec[0]
    size = rhs_shape[rhs_bdim]
    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = reshape_axis_into(b, rhs_bdim, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(b, out_spec[1], size, out), out_spec[1]
    # groups must stay outermost: factor them out of the output features, fold the batch in, put them back
    group_count = feature_group_count if feature_group_count > 1 else batch_group_count
    new_rhs = reshape_axis_out_of(b, rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), group_count, rhs)
    new_rhs = reshape_axis_into(b, rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(b, rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
    out = reshape_axis_out_of(b, out_spec[1], group_count, out)
    out = reshape_axis_out_of(b, out_spec[1] + 1, size, out)
    return reshape_axis_into(b, out_spec[1], out_spec[1] + 1, out), out_spec[1]


BATCH_RULES["conv_general_dilated"] = _conv_batch


def _window_batch(b, args, dims, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """JAX's ``_reduce_window_batch_rule``: a unit window at the mapped axis, which stays where it is."""
    (operand,), (bdim,) = args, dims
    window_dimensions = tuple(window_dimensions[:bdim]) + (1,) + tuple(window_dimensions[bdim:])
    window_strides = tuple(window_strides[:bdim]) + (1,) + tuple(window_strides[bdim:])
    padding = tuple(padding[:bdim]) + ((0, 0),) + tuple(padding[bdim:])
    base_dilation = tuple(base_dilation[:bdim]) + (1,) + tuple(base_dilation[bdim:])
    window_dilation = tuple(window_dilation[:bdim]) + (1,) + tuple(window_dilation[bdim:])
    return b.same(operand, window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                  base_dilation=base_dilation, window_dilation=window_dilation)[0], bdim


for _name in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    BATCH_RULES[_name] = _window_batch


def _select_and_batch(b, args, dims, *, window_dimensions, window_strides, padding, **params):
    """JAX's select_and_gather_add / select_and_scatter_add batchers: both operands mapped at the front."""
    size = next(aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    x, y = (b.bdim_at_front(a, d, size) for a, d in zip(args, dims))
    window = dict(window_dimensions=(1,) + tuple(window_dimensions), window_strides=(1,) + tuple(window_strides),
                  padding=((0, 0),) + tuple(padding))
    for name in ("base_dilation", "window_dilation"):
        if name in params:
            params[name] = (1,) + tuple(params[name])
    return b.same(x, y, **window, **params)[0], 0


BATCH_RULES["select_and_gather_add"] = BATCH_RULES["select_and_scatter_add"] = _select_and_batch
