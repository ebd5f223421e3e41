"""NumPy reference rules of the convolution and the windowed reductions: XLA's semantics, vectorised over a
strided window view of the dilated, padded operand.

Both reduce to the same plan: dilate the base (holes hold the reduction's identity, zeros for a convolution), pad
or crop each spatial axis, then view every window (its elements ``window_dilation`` apart, windows ``strides``
apart) and contract (convolution) or reduce (windowed reductions) over the window axes. The select-and-gather/
scatter pair picks, in each window, the first element that is the max (``ge``) or min (``le``), as XLA's
``select`` iteration does.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irax.ir.convolution import conv_shape_tuple, dilate_shape

from .numpy_rules import RULES, _widen

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _dilate(x, axes, dilation, fill):
    if all(d == 1 for d in dilation):
        return x
    shape = list(x.shape)
    index = [slice(None)] * x.ndim
    for axis, d in zip(axes, dilation):
        shape[axis] = dilate_shape((x.shape[axis],), (d,))[0]
        index[axis] = slice(None, None, d)
    out = np.full(shape, fill, x.dtype)
    out[tuple(index)] = x
    return out


def _pad(x, axes, padding, fill):
    """Pads (positive) or crops (negative) each axis."""
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for axis, (lo, hi) in zip(axes, padding):
        widths[axis] = (max(lo, 0), max(hi, 0))
    x = np.pad(x, widths, constant_values=fill) if any(w != (0, 0) for w in widths) else x
    for axis, (lo, hi) in zip(axes, padding):
        crop[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
    return x[tuple(crop)]


def _windows(x, axes, window, strides, window_dilation):
    """The view ``x[..., out..., k...]``: window axes appended after ``x``'s axes, ``axes`` becoming the output
    positions. Every axis of ``x`` must hold at least one whole window."""
    dilated = dilate_shape(window, window_dilation)
    view = sliding_window_view(x, dilated, axis=axes)
    index = [slice(None)] * x.ndim + [slice(None, None, d) for d in window_dilation]
    for axis, s in zip(axes, strides):
        index[axis] = slice(None, None, s)
    return view[tuple(index)]


def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count,
          batch_group_count, precision=None, preferred_element_type=None, out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    dtype = np.result_type(_widen(lhs).dtype, _widen(rhs).dtype)
    if preferred_element_type is not None:
        dtype = np.result_type(dtype, _widen(np.zeros((), preferred_element_type)).dtype)
    if dtype == np.bool_:
        dtype = np.dtype(np.int32)
    x = np.transpose(lhs, lhs_spec).astype(dtype)
    w = np.transpose(rhs, rhs_spec).astype(dtype)
    nsp = x.ndim - 2
    spatial = tuple(range(2, 2 + nsp))
    x = _pad(_dilate(x, spatial, lhs_dilation, 0), spatial, padding, 0)
    out_shape = conv_shape_tuple(x.shape, dilate_shape(w.shape, (1, 1) + tuple(rhs_dilation)),
                                 window_strides, [(0, 0)] * nsp, batch_group_count)
    if 0 in out_shape or x.size == 0 or w.size == 0:
        out = np.zeros(out_shape, dtype)
    else:
        win = _windows(x, spatial, w.shape[2:], window_strides, rhs_dilation)  # n c o... k...
        o_s, k_s = _LETTERS[:nsp], _LETTERS[nsp:2 * nsp]
        n, c = x.shape[:2]
        o = w.shape[0]
        if batch_group_count > 1:
            g = batch_group_count
            win = win.reshape((g, n // g, c) + win.shape[2:])
            ww = w.reshape((g, o // g) + w.shape[1:])
            out = np.einsum(f"GNC{o_s}{k_s},GOC{k_s}->NGO{o_s}", win, ww)
        else:
            g = feature_group_count
            win = win.reshape((n, g, c // g) + win.shape[2:])
            ww = w.reshape((g, o // g) + w.shape[1:])
            out = np.einsum(f"NGC{o_s}{k_s},GOC{k_s}->NGO{o_s}", win, ww)
        out = out.reshape(out_shape)
    return np.transpose(out, np.argsort(out_spec))


RULES["conv_general_dilated"] = _conv


def _identity(kind, dtype):
    if dtype == np.bool_:
        return kind == "min"
    if np.issubdtype(dtype, np.inexact):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _window_view(x, fill, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The windows of ``x`` (dilated, padded with ``fill``), window axes flattened last; None if there are none."""
    axes = tuple(range(x.ndim))
    x = _pad(_dilate(x, axes, base_dilation, fill), axes, padding, fill)
    out_shape = tuple(max((d - w) // s + 1, 0) for d, w, s in
                      zip(x.shape, dilate_shape(window_dimensions, window_dilation), window_strides))
    if 0 in out_shape or 0 in window_dimensions:
        return out_shape, None
    win = _windows(x, axes, window_dimensions, window_strides, window_dilation)
    return out_shape, win.reshape(out_shape + (-1,))


def _reduce_window(kind):
    def rule(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        x = _widen(x)
        fill = 0 if kind == "sum" else _identity(kind, x.dtype)
        out_shape, win = _window_view(x, fill, window_dimensions, window_strides, padding, base_dilation,
                                      window_dilation)
        if win is None:
            return np.full(out_shape, fill, x.dtype)
        return {"sum": np.sum, "max": np.max, "min": np.min}[kind](win, axis=-1).astype(x.dtype)
    return rule


for _kind in ("sum", "max", "min"):
    RULES[f"reduce_window_{_kind}"] = _reduce_window(_kind)


def _select(select_prim):
    return (np.argmax, "max") if select_prim == "ge" else (np.argmin, "min")


def _select_and_gather_add(tangents, operand, *, select_prim, window_dimensions, window_strides, padding,
                           base_dilation, window_dilation):
    pick, kind = _select(select_prim)
    operand, tangents = _widen(operand), _widen(tangents)
    args = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    out_shape, values = _window_view(operand, _identity(kind, operand.dtype), *args)
    if values is None:
        return np.zeros(out_shape, tangents.dtype)
    _, tans = _window_view(tangents, 0, *args)
    chosen = pick(values, axis=-1)[..., None]
    return np.take_along_axis(tans, chosen, axis=-1)[..., 0]


def _select_and_scatter_add(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    pick, kind = _select(select_prim)
    source, operand = _widen(source), _widen(operand)
    axes = tuple(range(operand.ndim))
    padded = _pad(operand, axes, padding, _identity(kind, operand.dtype))
    out = np.zeros(padded.shape, source.dtype)
    ones = (1,) * operand.ndim
    out_shape, values = _window_view(padded, 0, window_dimensions, window_strides, [(0, 0)] * operand.ndim, ones,
                                     ones)
    if values is not None and source.size:
        within = np.unravel_index(pick(values, axis=-1), tuple(window_dimensions))
        starts = np.indices(out_shape) * np.reshape(window_strides, (-1,) + (1,) * len(out_shape))
        np.add.at(out, tuple(s + k for s, k in zip(starts, within)), source)
    return _pad(out, axes, [(-lo, -hi) for lo, hi in padding], 0)


RULES["select_and_gather_add"] = _select_and_gather_add
RULES["select_and_scatter_add"] = _select_and_scatter_add
