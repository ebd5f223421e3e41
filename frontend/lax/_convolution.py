"""``lax.conv_general_dilated`` and its wrappers, and ``lax.reduce_window``, with JAX's signatures, defaults and
param canonicalisation (``jax/_src/lax/convolution.py``, ``windowed_reductions.py``), so that their jaxprs print
as JAX's do."""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes as _dtypes
from irax.core import bind1, is_tracer
from irax.ir.convolution import (ConvDimensionNumbers, canonicalize_precision, conv_dimension_numbers,
                                 conv_general_permutations, conv_shape_tuple, dilate_shape, padtype_to_pads,
                                 reduce_window_shape_tuple)

from ._scalars import as_operand

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_permutations", "conv_shape_tuple", "conv_transpose", "conv_with_general_padding",
           "padtype_to_pads", "reduce_window", "reduce_window_shape_tuple"]


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None, out_sharding=None):
    """General n-d convolution (XLA's Conv): the ``conv_general_dilated`` primitive."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    if lhs_dilation is None:
        lhs_dilation = (1,) * (lhs.ndim - 2)
    elif isinstance(padding, str) and not len(lhs_dilation) == tuple(lhs_dilation).count(1):
        raise ValueError("String padding is not implemented for transposed convolution using this op. Please "
                         "either exactly specify the required padding or use conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * (rhs.ndim - 2)
    if isinstance(padding, str):
        lhs_perm, rhs_perm, _ = dnums
        rhs_shape = np.take(rhs.shape, rhs_perm)[2:]
        effective_rhs_shape = dilate_shape(rhs_shape, rhs_dilation)
        padding = padtype_to_pads(np.take(lhs.shape, lhs_perm)[2:], effective_rhs_shape, window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError(f"padding argument to conv_general_dilated should be a string or a sequence of "
                             f"(low, high) pairs, got {padding}") from e
    if preferred_element_type is not None:
        preferred_element_type = _dtypes.canonicalize_dtype(preferred_element_type)
    return bind1("conv_general_dilated", lhs, rhs, window_strides=tuple(window_strides), padding=tuple(padding),
                 lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(rhs_dilation), dimension_numbers=dnums,
                 feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                 precision=canonicalize_precision(precision), preferred_element_type=preferred_element_type,
                 out_sharding=None)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """Before and after padding of one dimension of a transposed convolution (JAX's function of this name)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a = pads[0]
        pad_len = sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                       5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, transpose_kernel=False,
                   precision=None, preferred_element_type=None, use_consistent_padding=False):
    """A fractionally strided convolution (JAX's ``conv_transpose``; TensorFlow's layouts by default)."""
    from irax import lax
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    assert len(lhs.shape) == len(rhs.shape) and len(lhs.shape) >= 2
    ndims = len(lhs.shape)
    one = (1,) * (ndims - 2)
    if dimension_numbers is None:
        if ndims not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[ndims]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    k_sdims = np.take(rhs.shape, dn.rhs_spec)[2:]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (rhs.ndim - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        effective_k_size = dilate_shape(k_sdims, rhs_dilation)
        replicated = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(effective_k_size, strides, replicated))
    else:
        pads = padding
    if transpose_kernel:
        for axis in np.array(dn.rhs_spec)[2:]:
            rhs = lax.rev(rhs, (int(axis),))
        perm = list(range(rhs.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = lax.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dn, precision=precision,
                                preferred_element_type=preferred_element_type)


# --- reduce_window ------------------------------------------------------------------------------------------------

def _identity(kind, dtype):
    """JAX's ``_get_max_identity`` / ``_get_min_identity``."""
    dtype = np.dtype(dtype)
    if _dtypes.issubdtype(dtype, np.inexact):
        return -np.inf if kind == "max" else np.inf
    if _dtypes.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return kind == "min"


def _monoid_reducer(computation, init_value):
    """The reduce_window primitive for ``computation`` when ``init_value`` is its concrete identity (JAX's
    ``_get_monoid_window_reducer``), else None."""
    from irax import lax
    if is_tracer(init_value) or np.ndim(init_value) != 0:
        return None
    value = np.asarray(init_value)
    dtype = _dtypes.canonicalize_dtype(_dtypes.dtype(init_value))
    if computation is lax.add:
        return "reduce_window_sum" if value == 0 else None
    for kind in ("max", "min"):
        if computation is getattr(lax, kind):
            return f"reduce_window_{kind}" if value == _identity(kind, dtype) else None
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None, padding="VALID",
                  base_dilation=None, window_dilation=None):
    """Reduction over padded windows. ``lax.add``/``max``/``min`` with their identity as ``init_value`` bind
    ``reduce_window_sum``/``max``/``min`` as JAX does; irax has no generic (any computation) reduce_window."""
    operand = as_operand(operand)
    if isinstance(padding, str):
        dilated = (window_dimensions if window_dilation is None else dilate_shape(window_dimensions,
                                                                                  window_dilation))
        padding = tuple(padtype_to_pads(operand.shape, dilated, window_strides or [], padding))
    else:
        padding = tuple((x, y) for x, y in padding)
    n = len(window_dimensions)
    window_strides = (1,) * n if window_strides is None else window_strides
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    name = _monoid_reducer(computation, init_value)
    if name is None:
        raise NotImplementedError("irax's reduce_window supports lax.add, lax.max and lax.min with their identity "
                                  "(0, -inf/min, inf/max) as init_value")
    return bind1(name, operand, window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
                 padding=tuple(padding), base_dilation=tuple(base_dilation), window_dilation=tuple(window_dilation))
