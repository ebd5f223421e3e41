"""``jnp.pad``, ported from ``jax._src.numpy.lax_numpy``: every NumPy mode that static slices and
concatenation can express, under JAX's jit named ``_pad``."""
from __future__ import annotations

import builtins

import numpy as np

from irax import lax
from irax.api import staged
from irax.core import bind1, is_tracer
from irax.lax._scalars import as_operand

from ._util import convert, ensure_arraylike

_ALLOWED_KWARGS = {
    "empty": [], "edge": [], "wrap": [], "constant": ["constant_values"], "linear_ramp": ["end_values"],
    "maximum": ["stat_length"], "mean": ["stat_length"], "median": ["stat_length"], "minimum": ["stat_length"],
    "reflect": ["reflect_type"], "symmetric": ["reflect_type"],
}


def _lax_pad(operand, padding_value, padding_config):
    """``lax.pad`` as JAX binds it: the widths keep their types (NumPy integers print as ``np.int64(1)``)."""
    operand, padding_value = as_operand(operand), as_operand(padding_value)
    return bind1("pad", operand, padding_value, padding_config=tuple(tuple(c) for c in padding_config))


def _broadcast_to_pairs(nvals, nd, name):
    if builtins.any(is_tracer(v) for v in np.ravel(np.asarray(nvals, dtype=object))):
        from irax.errors import ConcretizationTypeError
        raise ConcretizationTypeError(f"jnp.pad requires a concrete {name} argument; got a traced value.")
    try:
        nvals = np.asarray(nvals)
    except ValueError as e:
        if "inhomogeneous shape" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
        raise

    def as_scalar_dim(v):
        if not np.shape(v):
            return v
        raise TypeError(f"`{name}` entries must be the same shape: {nvals}")

    if nvals.shape == (nd, 2):
        return tuple((as_scalar_dim(nval[0]), as_scalar_dim(nval[1])) for nval in nvals)
    if nvals.shape == (1, 2):
        v1_2 = as_scalar_dim(nvals[0, 0]), as_scalar_dim(nvals[0, 1])
        return tuple(v1_2 for _ in range(nd))
    if nvals.shape == (2,):
        v1_2 = as_scalar_dim(nvals[0]), as_scalar_dim(nvals[1])
        return tuple(v1_2 for _ in range(nd))
    if nvals.shape == (1,):
        v = as_scalar_dim(nvals[0])
        return tuple((v, v) for _ in range(nd))
    if nvals.shape == ():
        v = as_scalar_dim(nvals.flat[0])
        return tuple((v, v) for _ in range(nd))
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {nvals.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _is_dim(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check_no_padding(axis_padding, mode):
    if axis_padding[0] > 0 or axis_padding[1] > 0:
        raise ValueError("Cannot apply '{}' padding to empty axis".format(mode))


def _pad_constant(array, pad_width, constant_values):
    from ._shape import broadcast_to, squeeze
    nd = array.ndim
    constant_values = convert(constant_values, array.dtype, array.weak_type)
    if constant_values.ndim == 0:
        return _lax_pad(array, constant_values, [(low, high, 0) for (low, high) in pad_width])
    if constant_values.ndim == 1:
        if constant_values.shape[-1] == 1:
            return _lax_pad(array, squeeze(constant_values), [(low, high, 0) for (low, high) in pad_width])
        if constant_values.shape[-1] != 2:
            raise ValueError(f"jnp.pad: constant_values has unsupported shape {constant_values.shape}. If the shape "
                             "is 1D or 2D, the last dimension must be of size 1 or 2.")
    constant_values = broadcast_to(constant_values, (nd, 2))
    for i in range(nd):
        widths = [(0, 0, 0)] * nd
        if pad_width[i][0] != 0:
            widths[i] = (pad_width[i][0], 0, 0)
            array = _lax_pad(array, constant_values[i, 0], widths)
        if pad_width[i][1] != 0:
            widths[i] = (0, pad_width[i][1], 0)
            array = _lax_pad(array, constant_values[i, 1], widths)
    return array


def _pad_wrap(array, pad_width):
    for i in range(array.ndim):
        if array.shape[i] == 0:
            _check_no_padding(pad_width[i], "wrap")
            continue
        size = array.shape[i]
        left_repeats, left_remainder = divmod(pad_width[i][0], size)
        right_repeats, right_remainder = divmod(pad_width[i][1], size)
        total_repeats = left_repeats + right_repeats + 1
        parts = []
        if left_remainder > 0:
            parts += [lax.slice_in_dim(array, size - left_remainder, size, axis=i)]
        parts += int(total_repeats) * [array]
        if right_remainder > 0:
            parts += [lax.slice_in_dim(array, 0, right_remainder, axis=i)]
        array = lax.concatenate(parts, i)
    return array


def _pad_symmetric_or_reflect(array, pad_width, mode, reflect_type):
    from ._shape import flip
    assert mode in ("symmetric", "reflect")
    assert reflect_type in ("even", "odd")
    for i in range(array.ndim):
        axis_size = array.shape[i]
        if axis_size == 0:
            _check_no_padding(pad_width[i], mode)
            continue
        if pad_width[i][0] == 0 and pad_width[i][1] == 0:
            continue

        def build_padding(array, padding, before):
            if before:
                edge = lax.slice_in_dim(array, 0, 1, axis=i)
            else:
                edge = lax.slice_in_dim(array, -1, None, axis=i)
            offset = 1 if (mode == "reflect" and axis_size > 1) else 0
            while padding > 0:
                curr_pad = builtins.min(padding, axis_size - offset)
                padding -= curr_pad
                if before:
                    start, stop = offset, offset + curr_pad
                else:
                    start = -(curr_pad + offset)
                    stop = None if (mode == "symmetric" or axis_size == 1) else -1
                x = lax.slice_in_dim(array, start, stop, axis=i)
                x = flip(x, axis=i)
                if reflect_type == "odd":
                    x = 2 * edge - x
                    if axis_size > 1:
                        edge = lax.slice_in_dim(x, 0, 1, axis=i) if before else lax.slice_in_dim(x, -1, None, axis=i)
                array = lax.concatenate([x, array] if before else [array, x], i)
            return array

        array = build_padding(array, pad_width[i][0], before=True)
        array = build_padding(array, pad_width[i][1], before=False)
    return array


def _pad_edge(array, pad_width):
    from ._shape import repeat
    for i in range(array.ndim):
        if array.shape[i] == 0:
            _check_no_padding(pad_width[i], "edge")
            continue
        n = array.shape[i]
        npad_before, npad_after = pad_width[i]
        pad_before = repeat(lax.slice_in_dim(array, 0, 1, axis=i), npad_before, axis=i)
        pad_after = repeat(lax.slice_in_dim(array, n - 1, n, axis=i), npad_after, axis=i)
        array = lax.concatenate([pad_before, array, pad_after], i)
    return array


def _pad_linear_ramp(array, pad_width, end_values):
    from ._creation import linspace
    from ._shape import flip, squeeze
    for axis in range(array.ndim):
        edge_before = lax.slice_in_dim(array, 0, 1, axis=axis)
        edge_after = lax.slice_in_dim(array, -1, None, axis=axis)
        ramp_before = linspace(end_values[axis][0], squeeze(edge_before, axis), num=pad_width[axis][0],
                               endpoint=False, dtype=array.dtype, axis=axis)
        ramp_before = convert(ramp_before, ramp_before.dtype, array.weak_type)
        ramp_after = linspace(end_values[axis][1], squeeze(edge_after, axis), num=pad_width[axis][1],
                              endpoint=False, dtype=array.dtype, axis=axis)
        ramp_after = convert(ramp_after, ramp_after.dtype, array.weak_type)
        ramp_after = flip(ramp_after, axis)
        array = lax.concatenate([ramp_before, array, ramp_after], axis)
    return array


def _pad_stats(array, pad_width, stat_length, stat_func):
    from ._shape import repeat
    from ._ufuncs import round
    for i in range(array.ndim):
        if stat_length is None:
            stat_before = stat_func(array, axis=i, keepdims=True)
            stat_after = stat_before
        else:
            array_length = array.shape[i]
            length_before, length_after = stat_length[i]
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            length_before = builtins.min(length_before, array_length)
            length_after = builtins.min(length_after, array_length)
            slice_before = lax.slice_in_dim(array, 0, length_before, axis=i)
            slice_after = lax.slice_in_dim(array, -length_after, None, axis=i)
            stat_before = stat_func(slice_before, axis=i, keepdims=True)
            stat_after = stat_func(slice_after, axis=i, keepdims=True)
        if np.issubdtype(array.dtype, np.integer):
            stat_before = round(stat_before)
            stat_after = round(stat_after)
        stat_before = convert(stat_before, array.dtype, array.weak_type)
        stat_after = convert(stat_after, array.dtype, array.weak_type)
        npad_before, npad_after = pad_width[i]
        pad_before = repeat(stat_before, npad_before, axis=i)
        pad_after = repeat(stat_after, npad_after, axis=i)
        array = lax.concatenate([pad_before, array, pad_after], i)
    return array


def _pad_empty(array, pad_width):
    from ._creation import empty_like
    for i in range(array.ndim):
        shape_before = array.shape[:i] + (pad_width[i][0],) + array.shape[i + 1:]
        pad_before = empty_like(array, shape=shape_before)
        shape_after = array.shape[:i] + (pad_width[i][1],) + array.shape[i + 1:]
        pad_after = empty_like(array, shape=shape_after)
        array = lax.concatenate([pad_before, array, pad_after], i)
    return array


@staged(static_argnums=(1, 2, 4, 5, 6))
def _pad(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
    from ._creation import asarray
    from ._reductions import amax, amin, mean
    array = asarray(array)
    nd = array.ndim
    if nd == 0:
        return array
    stat_funcs = {"maximum": amax, "minimum": amin, "mean": mean}
    pad_width = _broadcast_to_pairs(pad_width, nd, "pad_width")
    pad_width_arr = np.array(pad_width)
    if pad_width_arr.shape != (nd, 2):
        raise ValueError(f"Expected pad_width to have shape {(nd, 2)}; got {pad_width_arr.shape}.")
    if np.any(pad_width_arr < 0):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(array, pad_width, asarray(constant_values))
    if mode == "wrap":
        return _pad_wrap(array, pad_width)
    if mode in ("symmetric", "reflect"):
        return _pad_symmetric_or_reflect(array, pad_width, str(mode), reflect_type)
    if mode == "edge":
        return _pad_edge(array, pad_width)
    if mode == "linear_ramp":
        end_values = _broadcast_to_pairs(end_values, nd, "end_values")
        return _pad_linear_ramp(array, pad_width, end_values)
    if mode in stat_funcs:
        if stat_length is not None:
            stat_length = _broadcast_to_pairs(stat_length, nd, "stat_length")
        return _pad_stats(array, pad_width, stat_length, stat_funcs[str(mode)])
    if mode == "median":
        raise NotImplementedError("jnp.pad with mode='median' needs sort, which irax does not support yet")
    assert mode == "empty"
    return _pad_empty(array, pad_width)


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads ``array`` by ``pad_width`` (per-axis ``(before, after)``) with NumPy's padding modes.

    Raises:
      NotImplementedError: for ``mode='median'`` (needs sort) and callable modes (need vmap).
    """
    array = ensure_arraylike("pad", array)
    pad_width = _broadcast_to_pairs(pad_width, array.ndim, "pad_width")
    if pad_width and not builtins.all(_is_dim(p[0]) and _is_dim(p[1]) for p in pad_width):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode needs vmap, which irax does not support yet")
    try:
        unsupported_kwargs = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    except (KeyError, TypeError):
        raise NotImplementedError("Unimplemented padding mode '{}' for np.pad.".format(mode)) from None
    if unsupported_kwargs:
        raise ValueError("unsupported keyword arguments for mode '{}': {}".format(mode, unsupported_kwargs))
    constant_values = kwargs.get("constant_values", 0)
    stat_length = kwargs.get("stat_length", None)
    end_values = kwargs.get("end_values", 0)
    reflect_type = kwargs.get("reflect_type", "even")
    if stat_length is not None:
        stat_length = _hashable(stat_length)
    return _pad(array, pad_width, mode, constant_values, stat_length, _hashable(end_values), reflect_type)


def _hashable(v):
    """A static argument as a hashable value (nested sequences become tuples; NumPy arrays, tuples)."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_hashable(x) for x in v)
    return v
