"""Convolutions and windowed reductions in the dialect: JAX's ``ConvDimensionNumbers``, the precision param, and
the shape rules with JAX's error messages (``jax/_src/lax/convolution.py``, ``windowed_reductions.py``).

The types live here, not in the frontend, because params hold them: ``make_jaxpr`` prints a convolution's
``dimension_numbers`` as the ``repr`` of a ``ConvDimensionNumbers`` and its ``precision`` as a pair of
``Precision`` members. Windowed reductions share the window arithmetic (dilation, padding, strides) with
convolutions, and their gradients reuse the convolution's VJP padding, so both families are declared here.
"""
from __future__ import annotations

import enum
import operator
from typing import NamedTuple, Sequence

import numpy as np

from . import params as P
from .avals import ShapedArray
from .gather_scatter import DimensionNumbersKind
from .mlir import ir
from .shapes import issubdtype


class ConvDimensionNumbers(NamedTuple):
    """As ``jax.lax.ConvDimensionNumbers``: each spec is (batch or out-feature, feature or in-feature, spatial...)."""

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


PRECISION_NAMES = ("DEFAULT", "HIGH", "HIGHEST")
_PRECISION_STRINGS = {"highest": "HIGHEST", "float32": "HIGHEST", "high": "HIGH", "bfloat16_3x": "HIGH",
                      "tensorfloat32": "HIGH", "default": "DEFAULT", "bfloat16": "DEFAULT", "fastest": "DEFAULT"}


def _precision_name(p):
    if isinstance(p, str) and p in _PRECISION_STRINGS:
        return _PRECISION_STRINGS[p]
    if isinstance(p, enum.Enum) and p.name in PRECISION_NAMES:  # irax's lax.Precision (or JAX's)
        return p.name
    return None


def canonicalize_precision(precision):
    """JAX's ``canonicalize_precision``, as a pair of member names (``('HIGHEST', 'HIGHEST')``) or None."""
    if precision is None:
        return None
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        names = tuple(_precision_name(p) for p in precision)
        if None not in names and len({isinstance(p, str) for p in precision}) == 1:
            return names
    else:
        name = _precision_name(precision)
        if name is not None:
            return name, name
    raise ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS) + [None]},\n- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n- a lax.DotAlgorithm value;\n"
        f"but got {precision}.")


class PrecisionKind(P.ParamKind):
    """A canonical precision pair, stored as ``"HIGHEST,DEFAULT"``; printed as JAX prints its pair of enums."""

    def encode(self, value):
        return ir.StringAttr.get(",".join(value))

    def decode(self, attr):
        return tuple(ir.StringAttr(attr).value.split(","))

    def fmt(self, value):
        return "(" + ", ".join(f"Precision.{getattr(p, 'name', p)}" for p in value) + ")"

    def check(self, attr):
        return isinstance(attr, ir.StringAttr) and all(
            p in PRECISION_NAMES for p in ir.StringAttr(attr).value.split(","))


CONV_DIMS = DimensionNumbersKind(ConvDimensionNumbers)
PRECISION = PrecisionKind()
PADDING = P.PairsKind(2)


# --- dimension numbers and padding (the frontend's, also used by the autodiff and batching rules) ----------------

def conv_general_permutations(dimension_numbers):
    """JAX's function of this name: the specs of three strings as permutations relative to the Conv HLO."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = ("N", "C"), ("O", "I"), ("N", "C")
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                            f"exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, got "
                            f"{dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1])
            == set(out_spec) - set(charpairs[2])):
        raise TypeError(f"convolution dimension_numbers elements must each have the same set of spatial "
                        f"characters, got {dimension_numbers}.")

    def getperm(spec, charpair):
        spatial = (i for i, c in enumerate(spec) if c not in charpair)
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(charpair[0]), spec.index(charpair[1])) + tuple(spatial)

    return tuple(map(getperm, dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``lax.conv_dimension_numbers``: None, three spec strings, or a ``ConvDimensionNumbers``."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and "
                        f"{len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(elt, str) for elt in dimension_numbers):
            raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}.")
        for i, elt in enumerate(dimension_numbers):
            if len(elt) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and "
                                f"rhs, got {len(elt)} for lhs and rhs shapes {tuple(lhs_shape)} and "
                                f"{tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}.")


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """``lax.padtype_to_pads``: 'SAME' and 'SAME_LOWER' keep ceil(in / stride) outputs, 'VALID' pads nothing."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "SAME_LOWER", "VALID"):
            raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got "
                               f"{padding}.")
    else:
        raise TypeError(f"Unknown padding type: {padding}.")
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    in_shape, window_shape, window_strides = (np.asarray(v, np.int64) for v in (in_shape, window_shape,
                                                                                 window_strides))
    out_shape = -np.floor_divide(np.negative(in_shape), window_strides)
    pad_sizes = [max(int(d), 0) for d in (out_shape - 1) * window_strides + window_shape - in_shape]
    if mode == "SAME":
        return [(p // 2, p - p // 2) for p in pad_sizes]
    return [(p - p // 2, p // 2) for p in pad_sizes]


def dilate_shape(shape, dilation):
    """JAX's ``_dilate_shape``: ``max(0, 1 + d * (n - 1))`` per axis."""
    if not np.all(np.greater(dilation, 0)):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(n if d == 1 else max(1 + d * (n - 1), 0) for n, d in zip(shape, dilation))


def stride_dim(d, window, stride):
    return max((d - window) // stride + 1, 0)


def conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding, lhs_dilation,
                         rhs_dilation):
    """JAX's ``_conv_general_vjp_lhs_padding`` (NumPy ints, as its rules print them)."""
    lhs_dilated_shape = dilate_shape(in_shape, lhs_dilation)
    rhs_dilated_shape = dilate_shape(window_dimensions, rhs_dilation)
    out_dilated_shape = dilate_shape(out_shape, window_strides)
    pad_before = np.subtract(rhs_dilated_shape, [lo for lo, _ in padding]) - 1
    pad_after = np.add(lhs_dilated_shape, rhs_dilated_shape) - 1 - out_dilated_shape - pad_before
    return list(zip(pad_before, pad_after))


def conv_vjp_rhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding, lhs_dilation,
                         rhs_dilation):
    """JAX's ``_conv_general_vjp_rhs_padding``."""
    if len(in_shape) == 0:
        return []
    lhs_dilated_shape = dilate_shape(in_shape, lhs_dilation)
    rhs_dilated_shape = dilate_shape(window_dimensions, rhs_dilation)
    out_dilated_shape = dilate_shape(out_shape, window_strides)
    pads_lo = [lo for lo, _ in padding]
    pads_from_lhs = map(operator.sub, out_dilated_shape, lhs_dilated_shape)
    pads_from_rhs = tuple(rd - pd - 1 for rd, pd in zip(rhs_dilated_shape, pads_lo))
    pads_hi = tuple(map(operator.add, pads_from_lhs, pads_from_rhs))
    return list(zip(pads_lo, pads_hi))


# --- shape rules ------------------------------------------------------------------------------------------------

def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """JAX's function of this name: the output shape in canonical (N, C, spatial...) order."""
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, got "
                        f"{len(pads)}.")
    lhs_padded = np.add(lhs_shape[2:], np.sum(np.array(pads, np.int64).reshape(-1, 2), axis=1))
    if np.any(lhs_padded < 0):
        raise ValueError(f"Negative padding is larger than the size of the corresponding dimension: got "
                         f"padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}")
    out_space = tuple(stride_dim(int(d), int(k), int(s)) for d, k, s in zip(lhs_padded, rhs_shape[2:], strides))
    out_0 = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (int(out_0), int(rhs_shape[0])) + out_space


def conv_shape(name, avals_in, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, precision=None, preferred_element_type=None,
               out_sharding=None):
    """JAX's ``_conv_general_dilated_shape_rule`` and dtype rule, message for message."""
    lhs, rhs = avals_in
    dn = dimension_numbers
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"conv_general_dilated lhs and rhs must have the same number of dimensions, but got "
                         f"{lhs.shape} and {rhs.shape}.")
    if not feature_group_count > 0:
        raise ValueError(f"conv_general_dilated feature_group_count must be a positive integer, got "
                         f"{feature_group_count}.")
    lhs_feature_count = lhs.shape[dn.lhs_spec[1]]
    quot, rem = divmod(lhs_feature_count, feature_group_count)
    if rem:
        raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature dimension size, but "
                         f"{feature_group_count} does not divide {lhs_feature_count}.")
    if quot != rhs.shape[dn.rhs_spec[1]]:
        raise ValueError(f"conv_general_dilated lhs feature dimension size divided by feature_group_count must "
                         f"equal the rhs input feature dimension size, but {lhs_feature_count} // "
                         f"{feature_group_count} != {rhs.shape[dn.rhs_spec[1]]}.")
    if rhs.shape[dn.rhs_spec[0]] % feature_group_count:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a multiple of "
                         f"feature_group_count, but {rhs.shape[dn.rhs_spec[0]]} is not a multiple of "
                         f"{feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError(f"conv_general_dilated batch_group_count must be a positive integer, got "
                         f"{batch_group_count}.")
    lhs_batch_count = lhs.shape[dn.lhs_spec[0]]
    if batch_group_count > 1 and lhs_batch_count % batch_group_count != 0:
        raise ValueError(f"conv_general_dilated batch_group_count must divide lhs batch dimension size, but "
                         f"{batch_group_count} does not divide {lhs_batch_count}.")
    if rhs.shape[dn.rhs_spec[0]] % batch_group_count:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a multiple of "
                         f"batch_group_count, but {rhs.shape[dn.rhs_spec[0]]} is not a multiple of "
                         f"{batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be > 1, got "
                         f"batch_group_count={batch_group_count} and feature_group_count={feature_group_count}")
    if len(dn.rhs_spec[2:]) != len(window_strides):
        raise ValueError(f"conv_general_dilated window and window_strides must have the same number of "
                         f"dimensions, but got {len(dn.rhs_spec[2:])} and {len(window_strides)}")
    lhs_trans = dilate_shape(np.take(lhs.shape, dn.lhs_spec), lhs_dilation)
    rhs_trans = dilate_shape(np.take(rhs.shape, dn.rhs_spec), rhs_dilation)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding, batch_group_count)
    shape = tuple(int(d) for d in np.take(out_trans, np.argsort(dn.out_spec)))
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.conv_general_dilated requires arguments to have the same dtypes, got "
                        f"{lhs.dtype}, {rhs.dtype}.")
    dtype = lhs.dtype
    if preferred_element_type is not None:
        validate_preferred_element_type(dtype, preferred_element_type)
        dtype = np.dtype(preferred_element_type)
    return [ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)]


def validate_preferred_element_type(input_dtype, preferred):
    """JAX's ``_validate_preferred_element_type``."""
    if not (issubdtype(input_dtype, np.integer) and issubdtype(preferred, np.floating)):
        if any(issubdtype(input_dtype, t) and not issubdtype(preferred, t)
               for t in (np.integer, np.floating, np.complexfloating)):
            raise TypeError("Input type is incompatible with `preferred_element_type`. The compatible combinations "
                            "of (input_type, preferred_element_type) are (integral, integral), (integral, "
                            "floating), (floating, floating), (complex, complex.")
        if issubdtype(input_dtype, np.signedinteger) and not issubdtype(preferred, np.signedinteger):
            raise TypeError("`preferred_element_type` must have the same signedness as the original type.")
    if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _check_shapelike(fun_name, arg_name, obj, non_zero_shape=False):
    if not len(obj):
        return
    lower_bound, bound_error = (1, "strictly positive") if non_zero_shape else (0, "nonnegative")
    if not all(d >= lower_bound for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be {bound_error}, got {obj}.")


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation,
                              window_dilation):
    operand_shape = dilate_shape(operand_shape, base_dilation)
    window_dimensions = dilate_shape(window_dimensions, window_dilation)
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(operand_shape, padding))
    return tuple(int(stride_dim(d, w, s)) for d, w, s in zip(padded, window_dimensions, window_strides))


def _common_window_shape(operand, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """JAX's ``_common_reduce_window_shape_rule``."""
    _check_shapelike("reduce_window", "window_dimensions", window_dimensions, non_zero_shape=True)
    _check_shapelike("reduce_window", "window_strides", window_strides, non_zero_shape=True)
    _check_shapelike("reduce_window", "base_dilation", base_dilation)
    _check_shapelike("reduce_window", "window_dilation", window_dilation)
    if operand.ndim != len(window_dimensions):
        raise TypeError(f"reduce_window got the wrong number of window_dimensions for operand: got operand shape "
                        f"{operand.shape} with window_dimensions {window_dimensions}.")
    for what, value in (("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if len(value) != len(window_dimensions):
            raise TypeError(f"reduce_window got inconsistent {what} and window_dimensions: got {what} {value} and "
                            f"window_dimensions {window_dimensions}.")
    return reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides, padding, base_dilation,
                                     window_dilation)


def reduce_window_shape(name, avals_in, *, window_dimensions, window_strides, padding, base_dilation,
                        window_dilation):
    """``reduce_window_sum`` wants numbers; max and min take any dtype (``lax.input_dtype``)."""
    operand, = avals_in
    if name == "reduce_window_sum" and not issubdtype(operand.dtype, np.number):
        raise TypeError(f"operand to reduce_window_sum must have a number dtype, got {operand.dtype.name}")
    shape = _common_window_shape(operand, window_dimensions, window_strides, padding, base_dilation,
                                 window_dilation)
    return [ShapedArray(shape, operand.dtype, operand.weak_type)]


def select_and_gather_add_shape(name, avals_in, *, select_prim, window_dimensions, window_strides, padding,
                                base_dilation, window_dilation):
    tangents, operand = avals_in
    if tangents.shape != operand.shape:
        raise TypeError(f"select_and_gather_add tangents and operand shapes must match, got {tangents.shape} and "
                        f"{operand.shape}.")
    shape = _common_window_shape(operand, window_dimensions, window_strides, padding, base_dilation,
                                 window_dilation)
    return [ShapedArray(shape, tangents.dtype, tangents.weak_type)]


def select_and_scatter_add_shape(name, avals_in, *, select_prim, window_dimensions, window_strides, padding):
    source, operand = avals_in
    return [ShapedArray(operand.shape, source.dtype, source.weak_type)]
