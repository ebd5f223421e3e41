"""``jnp.pad``: every NumPy mode that static slices and concatenation can express."""
from __future__ import annotations

import builtins

import numpy as np

from irax import lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._util import check_arraylike, convert

_ALLOWED_KWARGS = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "mean": ("stat_length",), "minimum": ("stat_length",),
    "median": ("stat_length",), "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads ``array`` by ``pad_width`` (per-axis ``(before, after)``) with NumPy's padding modes.

    Raises:
      NotImplementedError: for ``mode='median'`` (needs sort) and callable modes (need vmap).
    """
    check_arraylike("pad", array)
    array = as_operand(array)
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode needs vmap, which irax does not support yet")
    if mode not in _ALLOWED_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode == "median":
        raise NotImplementedError("jnp.pad with mode='median' needs sort, which irax does not support yet")
    pad_width = _pairs(pad_width, array.ndim, "pad_width")
    if builtins.any(not isinstance(v, (int, np.integer)) for p in pad_width for v in p):
        raise TypeError("`pad_width` must be of integral type.")
    if builtins.any(v < 0 for p in pad_width for v in p):
        raise ValueError("index can't contain negative values")
    stat_length = kwargs.get("stat_length")
    stat_length = None if stat_length is None else _pairs(stat_length, array.ndim, "stat_length")
    end_values = _pairs(kwargs.get("end_values", 0), array.ndim, "end_values")
    return _pad(array, tuple((int(a), int(b)) for a, b in pad_width), mode, kwargs.get("constant_values", 0),
                stat_length, end_values, kwargs.get("reflect_type", "even"))


def _pairs(values, nd, name):
    values = np.asarray(values)
    if values.shape == (nd, 2):
        return tuple((v[0].item(), v[1].item()) for v in values)
    if values.shape in ((1, 2), (2,)):
        flat = values.reshape(2)
        return ((flat[0].item(), flat[1].item()),) * nd
    if values.shape in ((1,), ()):
        v = values.reshape(()).item()
        return ((v, v),) * nd
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {values.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


@staged(static_argnums=(1, 2, 4, 5, 6))
def _pad(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
    if array.ndim == 0:
        return array
    if mode == "constant":
        from ._creation import asarray
        return _pad_constant(array, pad_width, asarray(constant_values))
    if mode == "wrap":
        return _per_axis(array, pad_width, mode, _wrap_axis)
    if mode in ("symmetric", "reflect"):
        return _per_axis(array, pad_width, mode, lambda a, i, w: _reflect_axis(a, i, w, mode, reflect_type))
    if mode == "edge":
        return _per_axis(array, pad_width, mode, _edge_axis)
    if mode == "linear_ramp":
        return _per_axis(array, pad_width, mode, lambda a, i, w: _ramp_axis(a, i, w, end_values[i]))
    if mode == "empty":
        return _pad_constant(array, pad_width, convert(0, array.dtype))
    return _per_axis(array, pad_width, mode, lambda a, i, w: _stat_axis(a, i, w, mode, stat_length))


def _pad_constant(array, pad_width, values):
    values = convert(values, array.dtype, array.weak_type)
    if values.ndim == 0 or values.shape == (1,):
        return lax.pad(array, lax.reshape(values, ()), [(lo, hi, 0) for lo, hi in pad_width])
    if values.ndim == 1 and values.shape[-1] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape {values.shape}. If the shape is 1D or 2D, "
                         "the last dimension must be of size 1 or 2.")
    from ._shape import broadcast_to
    values = broadcast_to(values, (array.ndim, 2))
    for i, (lo, hi) in enumerate(pad_width):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * array.ndim
                config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                value = lax.reshape(lax.slice(values, (i, side), (i + 1, side + 1)), ())
                array = lax.pad(array, value, config)
    return array


def _per_axis(array, pad_width, mode, pad_axis):
    for i, widths in enumerate(pad_width):
        if array.shape[i] == 0:
            if builtins.any(widths) and mode not in ("constant", "empty", "linear_ramp"):
                raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
            continue
        if builtins.any(widths):
            array = pad_axis(array, i, widths)
    return array


def _wrap_axis(array, i, widths):
    size = array.shape[i]
    (left_repeats, left_rem), (right_repeats, right_rem) = divmod(widths[0], size), divmod(widths[1], size)
    parts = [lax.slice_in_dim(array, size - left_rem, size, axis=i)] if left_rem else []
    parts += [array] * (left_repeats + right_repeats + 1)
    parts += [lax.slice_in_dim(array, 0, right_rem, axis=i)] if right_rem else []
    return lax.concatenate(parts, i)


def _reflect_axis(array, i, widths, mode, reflect_type):
    size = array.shape[i]
    offset = 1 if mode == "reflect" and size > 1 else 0
    for before, padding in ((True, widths[0]), (False, widths[1])):
        edge = _edge(array, i, before)
        while padding > 0:
            cur = builtins.min(padding, size - offset)
            padding -= cur
            n = array.shape[i]
            if before:
                x = lax.slice_in_dim(array, offset, offset + cur, axis=i)
            else:
                stop = n if mode == "symmetric" or size == 1 else n - 1
                x = lax.slice_in_dim(array, n - cur - offset, stop, axis=i)
            x = lax.rev(x, (i,))
            if reflect_type == "odd":
                x = lax.sub(lax.mul(convert(2, edge.dtype), _broadcast_along(edge, x.shape)), x)
                if size > 1:
                    edge = _edge(x, i, before)
            array = lax.concatenate([x, array] if before else [array, x], i)
    return array


def _edge(array, i, first):
    n = array.shape[i]
    return lax.slice_in_dim(array, 0, 1, axis=i) if first else lax.slice_in_dim(array, n - 1, n, axis=i)


def _broadcast_along(x, shape):
    from ._shape import broadcast_to
    return broadcast_to(x, shape)


def _edge_axis(array, i, widths):
    from ._shape import repeat
    before, after = (repeat(_edge(array, i, first), w, axis=i) for first, w in ((True, widths[0]),
                                                                                  (False, widths[1])))
    return lax.concatenate([before, array, after], i)


def _stat_axis(array, i, widths, mode, stat_length):
    from ._reductions import max, mean, min
    from ._shape import repeat
    from ._ufuncs import round
    stat = {"maximum": max, "minimum": min, "mean": mean}[mode]
    n = array.shape[i]
    if stat_length is None:
        before = after = stat(array, axis=i, keepdims=True)
    else:
        length_before, length_after = stat_length[i]
        if length_before == 0 or length_after == 0:
            raise ValueError("stat_length of 0 yields no value for padding")
        before = stat(lax.slice_in_dim(array, 0, builtins.min(length_before, n), axis=i), axis=i, keepdims=True)
        after = stat(lax.slice_in_dim(array, n - builtins.min(length_after, n), n, axis=i), axis=i, keepdims=True)
    if np.issubdtype(array.dtype, np.integer):
        before, after = round(before), round(after)
    before, after = (convert(s, array.dtype, array.weak_type) for s in (before, after))
    return lax.concatenate([repeat(before, widths[0], axis=i), array, repeat(after, widths[1], axis=i)], i)


def _ramp_axis(array, i, widths, end_values):
    from ._creation import linspace
    ramps = []
    for first, width, end in ((True, widths[0], end_values[0]), (False, widths[1], end_values[1])):
        edge = lax.squeeze(_edge(array, i, first), (i,))
        ramp = linspace(end, edge, width, endpoint=False, dtype=array.dtype, axis=i)
        ramps.append(convert(ramp, array.dtype, array.weak_type) if first else
                     lax.rev(convert(ramp, array.dtype, array.weak_type), (i,)))
    return lax.concatenate([ramps[0], array, ramps[1]], i)
