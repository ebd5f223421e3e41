"""``jax.lax``'s convolution helpers on ``conv_general_dilated``: ``conv_general_dilated_patches`` (a grouped
convolution with a one-hot filter), ``conv_general_shape_tuple`` and ``conv_transpose_shape_tuple``."""
from __future__ import annotations

import math

import numpy as np

from . import Precision, _convert, add, broadcast_in_dim, broadcasted_iota, eq, reshape, transpose
from ._convolution import (_conv_transpose_padding, conv_dimension_numbers, conv_general_dilated,
                           conv_general_permutations, conv_shape_tuple, padtype_to_pads)
from ._scalars import as_operand


def _eye(dtype, shape):
    """JAX's ``lax._eye``: an iota comparison, converted."""
    rows = add(broadcasted_iota(np.int32, shape, 0), np.int32(0))
    return _convert(eq(rows, broadcasted_iota(np.int32, shape, 1)), dtype, False)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None, preferred_element_type=None):
    """The patches ``conv_general_dilated`` would see, flattened into the output's feature axis (``"c"`` then the
    filter's spatial axes), by a grouped convolution with a one-hot filter
    (``jax.lax.conv_general_dilated_patches``)."""
    lhs = as_operand(lhs)
    filter_shape = tuple(filter_shape)
    dimension_numbers = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dimension_numbers
    spatial_size = math.prod(filter_shape)
    n_channels = lhs.shape[lhs_spec[1]]
    rhs = broadcast_in_dim(_eye(lhs.dtype, (spatial_size, spatial_size)), (n_channels, spatial_size, spatial_size),
                           (1, 2))
    rhs = reshape(rhs, (n_channels * spatial_size, 1, *filter_shape))
    if (rhs_spec[0], rhs_spec[1]) != (0, 1):
        perm = [i for i in range(rhs.ndim) if i not in (0, 1)]
        for d, s in sorted(zip((rhs_spec[0], rhs_spec[1]), (0, 1))):
            perm.insert(d, s)
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                                precision=None if precision is None else (precision, Precision.DEFAULT),
                                feature_group_count=n_channels, preferred_element_type=preferred_element_type)


def _conv_specs_taken(lhs_shape, rhs_shape, dimension_numbers):
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    return np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm), out_perm


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of ``conv_general_dilated`` for string dimension numbers
    (``jax.lax.conv_general_shape_tuple``)."""
    lhs_trans, rhs_trans, out_perm = _conv_specs_taken(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = padtype_to_pads(lhs_trans[2:], rhs_trans[2:], window_strides, padding)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding)
    return tuple(np.take(out_trans, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of ``conv_transpose`` (``jax.lax.conv_transpose_shape_tuple``)."""
    lhs_trans, rhs_trans, out_perm = _conv_specs_taken(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_trans[2:], window_strides)]
    padding = [np.sum(p) for p in padding]
    unpad_out_space = [(i - 1) * s - k + 2 for i, k, s in zip(lhs_trans[2:], rhs_trans[2:], window_strides)]
    out_space = np.sum([unpad_out_space, padding], axis=0).tolist()
    out_trans = tuple((lhs_trans[0], rhs_trans[0]) + tuple(out_space))
    return tuple(np.take(out_trans, np.argsort(out_perm)))
