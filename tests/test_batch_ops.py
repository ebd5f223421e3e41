"""``vmap`` of every primitive with a batching rule: against stacked per-example results, IREE and JAX.

Each case is one primitive (or one configuration of it) as a function of ``lax`` (irax's or JAX's) and its
per-example operands. Each runs under several ``in_axes``: every operand batched at 0, every operand at -1,
each operand alone batched (the others shared), operands batched at different axes, and batch sizes 0 and 1.

* eagerly: ``irax.vmap(f)`` equals the per-example results of ``f`` (irax's NumPy rules) stacked, and
  ``jax.vmap`` of the same JAX function (where JAX is installed);
* under ``irax.jit``: one configuration per case (operands batched at different axes) and the batch of 0,
  every case of a family in one jitted function, so an IREE compile covers many rules;
* ``make_jaxpr(vmap(f))`` prints JAX's text: in every configuration for the rules ported from JAX in
  passes/batch_rules.py (shape ops, slicing, dot_general, select_n, clamp, cumulative reductions, sort and
  top_k), in one for the generic ones (elementwise, reductions).
  ``dynamic_slice``/``dynamic_update_slice`` (batched into gather and scatter, as JAX does), gather and the
  scatters are compared in every configuration.

``test_every_rule_has_a_case`` keeps the table complete: a new rule in ``BATCH_RULES`` needs a case here.
"""
from __future__ import annotations

import dataclasses
import functools
import re
import zlib
from typing import Callable

import numpy as np
import pytest

import irax
from irax import lax
from irax.ir.ops import OPS, jax_name
from irax.passes import batch

try:
    import jax
    from jax._src import ad_util as jax_ad_util
except ImportError:  # JAX is an optional oracle
    jax = None

B = 3  # the batch size of most configurations


@dataclasses.dataclass(frozen=True)
class Arg:
    """An operand's per-example shape and how to draw its values (uniform in [lo, hi))."""

    shape: tuple = (2, 3)
    dtype: str = "float32"
    lo: float = -2.0
    hi: float = 2.0
    whole: bool = False  # floats with whole values (polygamma's order)

    def draw(self, rng, n):
        shape = (n,) + tuple(self.shape)
        dtype = np.dtype(self.dtype)
        if self.whole:
            return rng.integers(self.lo, self.hi, shape).astype(dtype)
        if dtype == np.bool_:
            return rng.random(shape) < 0.5
        if np.issubdtype(dtype, np.integer):
            return rng.integers(self.lo, self.hi, shape).astype(dtype)
        if np.issubdtype(dtype, np.complexfloating):
            return (rng.uniform(self.lo, self.hi, shape) + 1j * rng.uniform(self.lo, self.hi, shape)).astype(dtype)
        return rng.uniform(self.lo, self.hi, shape).astype(dtype)


@dataclasses.dataclass(frozen=True, eq=False)
class Case:
    id: str
    primitive: str
    fn: Callable                 # fn(lax, *operands): the op of ``lax`` (irax.lax or jax.lax)
    args: tuple                  # an ``Arg`` per operand
    family: str                  # the jitted group
    tol: float = 1e-5            # rtol and atol against the per-example results (eager and jitted)
    jax_fn: Callable | None = None  # fn for JAX where its lax differs
    text: str = "one"            # make_jaxpr(vmap(f)) prints JAX's text: in "all" configurations, "one", or none
    jax_fails: tuple = ()        # in_axes where JAX's own rule raises (irax's does not)
    jax_wrong: bool = False      # JAX's values are wrong (XLA clamps the start in its own narrow dtype)
    jit: bool = True             # in its family's jitted function
    jit_empty: bool = False      # there also the batch of 0

    def call(self, module, *operands):
        fn = self.jax_fn if module is not lax and self.jax_fn is not None else self.fn
        return fn(module, *operands)


def _op(name, attr=None, **params):
    return functools.partial(lambda attr, params, lax_, *xs: getattr(lax_, attr)(*xs, **params), attr or name, params)


F, POS, UNIT = Arg(), Arg(lo=0.1, hi=4.0), Arg(lo=-0.9, hi=0.9)
I32, BOOL, C64 = Arg(dtype="int32", lo=-100, hi=100), Arg(dtype="bool"), Arg(dtype="complex64")

_UNARY = [("exp", F), ("exp2", F), ("log", POS), ("expm1", F), ("log1p", POS), ("tanh", F), ("logistic", F),
          ("sin", F), ("cos", F), ("tan", Arg(lo=-1.2, hi=1.2)), ("sqrt", POS), ("rsqrt", POS), ("asin", UNIT),
          ("acos", UNIT), ("atan", F), ("sinh", F), ("cosh", F), ("asinh", F), ("acosh", Arg(lo=1.1, hi=4.0)),
          ("atanh", UNIT), ("floor", F), ("ceil", F), ("erf", F), ("erfc", F), ("erf_inv", UNIT), ("lgamma", POS),
          ("digamma", POS), ("cbrt", F), ("neg", F), ("sign", F), ("square", F), ("stop_gradient", F), ("abs", F),
          ("round", F), ("is_finite", F), ("population_count", I32), ("clz", I32), ("real", C64), ("imag", C64),
          ("conj", C64), ("bessel_i0e", F), ("bessel_i1e", F)]
_LOOSE = {"tan": 1e-4, "erfc": 1e-4, "erf_inv": 1e-4, "lgamma": 1e-4, "digamma": 1e-4, "polygamma": 1e-4,
          "igamma": 1e-4, "igammac": 1e-4, "igamma_grad_a": 1e-4}

_BINARY = [("add", F, F), ("sub", F, F), ("mul", F, F), ("div", F, Arg(lo=0.5, hi=3.0)),
           ("rem", F, Arg(lo=0.5, hi=3.0)), ("max", F, F), ("min", F, F), ("pow", POS, F), ("atan2", F, F),
           ("nextafter", F, F), ("polygamma", Arg(lo=0, hi=4, whole=True), POS),
           ("eq", I32, Arg(dtype="int32", lo=-2, hi=2)), ("ne", BOOL, BOOL), ("lt", F, F), ("le", F, F),
           ("gt", F, F), ("ge", F, F), ("complex", F, F), ("igamma", POS, POS), ("igammac", POS, POS),
           ("igamma_grad_a", POS, POS), ("zeta", Arg(lo=1.5, hi=4.0), POS)]
_BITWISE = [("and", "bitwise_and", BOOL), ("or", "bitwise_or", I32), ("xor", "bitwise_xor", I32)]
_SHIFTS = ["shift_left", "shift_right_arithmetic", "shift_right_logical"]


def _add_any(lax_, x, y):
    if lax_ is lax:
        return irax.core.bind1("add_any", x, y)
    return jax_ad_util.add_jaxvals_p.bind(x, y)


def _bind(name):
    """A primitive that both laxes have as an object only (``lax.lt_to_p``)."""
    return lambda lax_, *xs: getattr(lax_, f"{name}_p").bind(*xs)


def _elementwise_cases():
    cases = [Case(name, name, _op(name), (arg,), "unary", tol=_LOOSE.get(name, 1e-5),
                  text="" if name == "conj" else "one")  # irax's conj lacks JAX's input_dtype param
             for name, arg in _UNARY]
    cases += [
        Case("not", "not", _op("not", "bitwise_not"), (I32,), "unary"),
        Case("not_bool", "not", _op("not", "bitwise_not"), (BOOL,), "unary"),
        Case("integer_pow", "integer_pow", _op("integer_pow", y=3), (F,), "unary"),
        Case("convert_element_type", "convert_element_type", _op("convert_element_type", new_dtype=np.int32),
             (Arg(lo=-50, hi=50),), "unary"),
        Case("bitcast_convert_type", "bitcast_convert_type", _op("bitcast_convert_type", new_dtype=np.int32),
             (F,), "unary"),
        Case("add_any", "add_any", _add_any, (F, F), "binary"),
        *[Case(name, name, _bind(name), (F, F), "binary") for name in ("eq_to", "le_to", "lt_to")],
        Case("copy", "copy", lambda lax_, x: (irax.numpy if lax_ is lax else jax.numpy).copy(x), (F,), "unary"),
        Case("device_put", "device_put", lambda lax_, x: (irax if lax_ is lax else jax).device_put(x), (F,), "unary"),
        Case("reduce_precision", "reduce_precision", _op("reduce_precision", exponent_bits=5, mantissa_bits=10),
             (F,), "unary"),
        Case("betainc", "regularized_incomplete_beta", _op("betainc"), (POS, POS, Arg(lo=0.05, hi=0.95)), "binary",
             tol=1e-4),
        # operands of other shapes: a scalar, and size-1 axes (lax's n-ary ops broadcast both)
        Case("add_scalar", "add", _op("add"), (F, Arg(())), "binary"),
        Case("mul_unit_axis", "mul", _op("mul"), (Arg((2, 1, 3)), Arg((2, 4, 3))), "binary"),
    ]
    cases += [Case(name, name, _op(name), (x, y), "binary", tol=_LOOSE.get(name, 1e-5)) for name, x, y in _BINARY]
    cases += [Case(name, name, _op(name, attr), (arg, arg), "binary") for name, attr, arg in _BITWISE]
    cases += [Case(name, name, _op(name), (I32, Arg(dtype="int32", lo=0, hi=34)), "binary") for name in _SHIFTS]
    return cases


def _reduction_cases():
    x234 = Arg((2, 3, 4))
    return [
        Case("reduce_sum", "reduce_sum", _op("reduce_sum", axes=(1,)), (x234,), "reduce"),
        Case("reduce_sum_all", "reduce_sum", _op("reduce_sum", axes=(0, 1, 2)), (x234,), "reduce"),
        Case("reduce_max", "reduce_max", _op("reduce_max", axes=(0, 2)), (x234,), "reduce"),
        Case("reduce_min", "reduce_min", _op("reduce_min", axes=(2,)), (x234,), "reduce"),
        Case("reduce_prod", "reduce_prod", _op("reduce_prod", axes=(1,)), (x234,), "reduce"),
        Case("reduce_and", "reduce_and", _op("reduce_and", axes=(1,)), (Arg((2, 3), "bool"),), "reduce"),
        Case("reduce_or", "reduce_or", _op("reduce_or", axes=(0,)), (Arg((2, 3), "bool"),), "reduce"),
        Case("reduce_xor", "reduce_xor", _op("reduce_xor", axes=(0, 1)), (I32,), "reduce"),
        Case("argmax", "argmax", _op("argmax", axis=1, index_dtype=np.int32), (x234,), "argminmax"),
        Case("argmin", "argmin", _op("argmin", axis=0, index_dtype=np.int32), (x234,), "argminmax"),
        Case("cumsum", "cumsum", _op("cumsum", axis=1), (x234,), "reduce", text="all"),
        Case("cumsum_int", "cumsum", _op("cumsum", axis=0, reverse=True), (I32,), "reduce", text="all"),
        Case("cumprod", "cumprod", _op("cumprod", axis=2, reverse=True), (x234,), "reduce", text="all"),
        Case("cummax", "cummax", _op("cummax", axis=0), (x234,), "reduce", text="all"),
        Case("cummin", "cummin", _op("cummin", axis=1, reverse=True), (x234,), "reduce", text="all"),
        Case("cumlogsumexp", "cumlogsumexp", _op("cumlogsumexp", axis=2), (x234,), "reduce", text="all"),
    ]


def _stack(axis):
    return lambda lax_, *xs: lax_.stack(xs, axis=axis)


def _dynamic_slice(lax_, x, *starts, sizes):
    return lax_.dynamic_slice(x, starts, sizes)


def _dynamic_update_slice(lax_, x, update, *starts):
    return lax_.dynamic_update_slice(x, update, starts)


def _structural_cases():
    x234, idx = Arg((2, 3, 4)), Arg((), "int32", -8, 9)  # starts past both ends: the primitives clamp them
    low, high = Arg(lo=-2.0, hi=-0.5), Arg(lo=0.5, hi=2.0)
    d = dict(family="structural", jit_empty=True)
    s, sl = dict(d, text="all"), dict(family="slicing", jit_empty=True, text="all")
    return [
        Case("select_n_bool", "select_n", _op("select_n"), (BOOL, F, F), **s),
        Case("select_n_scalar_which", "select_n", _op("select_n"), (Arg((), "bool"), F, F), **s),
        Case("select_n_int", "select_n", _op("select_n"), (Arg((2, 3), "int32", 0, 3), F, F, F), **s),
        Case("select_n_scalars", "select_n", _op("select_n"), (Arg((), "bool"), Arg(()), Arg(())), **s),
        Case("clamp", "clamp", _op("clamp"), (low, F, high), **s),
        Case("clamp_scalar_bounds", "clamp", _op("clamp"), (Arg((), lo=-2.0, hi=-0.5), F, Arg((), lo=0.5, hi=2.0)),
             **s),
        Case("clamp_scalar_lo", "clamp", _op("clamp"), (Arg((), lo=-2.0, hi=-0.5), F, high), **s),
        # JAX's rule leaves a shared scalar x unbroadcast against a batched bound, and clamp rejects the shapes
        Case("clamp_scalars", "clamp", _op("clamp"), (Arg((), lo=-2.0, hi=-0.5), Arg(()), Arg((), lo=0.5, hi=2.0)),
             jax_fails=((None, None, 0),), **s),
        Case("broadcast_in_dim", "broadcast_in_dim", _op("broadcast_in_dim", shape=(2, 3, 4),
                                                         broadcast_dimensions=(1,)), (Arg((3,)),), **s),
        Case("broadcast_in_dim_scalar", "broadcast_in_dim", _op("broadcast_in_dim", shape=(2, 3),
                                                                broadcast_dimensions=()), (Arg(()),), **s),
        Case("reshape", "reshape", _op("reshape", new_sizes=(6, 4)), (x234,), **s),
        Case("reshape_scalar", "reshape", _op("reshape", new_sizes=(1, 1)), (Arg(()),), **s),
        Case("reshape_dimensions", "reshape", _op("reshape", new_sizes=(4, 6), dimensions=(2, 0, 1)), (x234,), **s),
        Case("squeeze", "squeeze", _op("squeeze", dimensions=(1, 3)), (Arg((2, 1, 3, 1)),), **s),
        Case("transpose", "transpose", _op("transpose", permutation=(2, 0, 1)), (x234,), **s),
        Case("rev", "rev", _op("rev", dimensions=(0, 2)), (x234,), **s),
        Case("pad", "pad", _op("pad", padding_config=((1, 2, 1), (-1, 0, 0))), (Arg((3, 4)), Arg(())), **s),
        Case("concatenate", "concatenate",
             lambda lax_, x, y, z: lax_.concatenate([x, y, z], 1), (F, Arg((2, 1)), Arg((2, 2))), **s),
        Case("stack", "stack", _stack(1), (F, F, F), text="all", **d),
        Case("stack_front", "stack", _stack(0), (F, F), text="all", **d),
        Case("stack_back", "stack", _stack(2), (F, F), text="all", **d),
        Case("slice", "slice", _op("slice", start_indices=(1, 0), limit_indices=(4, 6), strides=(2, 3)),
             (Arg((5, 6)),), **sl),
        Case("slice_unit_strides", "slice", _op("slice", start_indices=(1, 2), limit_indices=(4, 3)),
             (Arg((5, 6)),), **sl),
        Case("split", "split", _op("split", sizes=(1, 2, 3), axis=1), (Arg((2, 6)),), **sl),
        Case("dynamic_slice", "dynamic_slice", functools.partial(_dynamic_slice, sizes=(2, 3)),
             (Arg((5, 6)), idx, idx), **sl),
        Case("dynamic_slice_whole_axis", "dynamic_slice", functools.partial(_dynamic_slice, sizes=(5, 1)),
             (Arg((5, 6)), idx, idx), **sl),
        Case("dynamic_slice_1d", "dynamic_slice", functools.partial(_dynamic_slice, sizes=(4,)),
             (Arg((9,)), Arg((), "int32", -12, 12)), **sl),
        # a start whose dtype cannot reach the largest start (uint8 against 297): its clamp has no upper bound.
        # XLA clamps in uint8 (297 wraps to 41): JAX writes a uint8 start of 181 at 41, or (vmapped) nowhere.
        # Not jitted: eight rotations cost IREE 1-2 s to compile, and the other cases jit the same ops.
        Case("dynamic_slice_uint8", "dynamic_slice", functools.partial(_dynamic_slice, sizes=(3,)),
             (Arg((300,)), Arg((), "uint8", 0, 256)), jit=False, **sl),
        Case("dynamic_update_slice_uint8", "dynamic_update_slice", _dynamic_update_slice,
             (Arg((300,)), Arg((3,)), Arg((), "uint8", 0, 256)), jax_wrong=True, jit=False, **sl),
        Case("dynamic_update_slice", "dynamic_update_slice", _dynamic_update_slice,
             (Arg((5, 6)), Arg((2, 3)), idx, idx), **sl),
        Case("dynamic_update_slice_int", "dynamic_update_slice", _dynamic_update_slice,
             (Arg((9,), "int32", -9, 9), Arg((4,), "int32", -9, 9), Arg((), "int32", -12, 12)), **sl),
        Case("dynamic_update_slice_bool", "dynamic_update_slice", _dynamic_update_slice,
             (Arg((4, 3), "bool"), Arg((4, 2), "bool"), idx, idx), **sl),
    ]


def _dot_cases():
    def dot(dims):
        return functools.partial(lambda dims, lax_, x, y: lax_.dot_general(x, y, dims), dims)
    d = dict(family="dot", text="all", jit_empty=True)
    return [
        Case("dot_matmul", "dot_general", dot((((1,), (0,)), ((), ()))), (Arg((2, 3)), Arg((3, 4))), **d),
        Case("dot_batch", "dot_general", dot((((2,), (1,)), ((0,), (0,)))), (Arg((2, 3, 4)), Arg((2, 4, 5))),
             **d),
        Case("dot_vector", "dot_general", dot((((0,), (0,)), ((), ()))), (Arg((3,)), Arg((3,))), **d),
        Case("dot_outer", "dot_general", dot((((), ()), ((), ()))), (Arg((2,)), Arg((3,))), **d),
        Case("dot_transposed", "dot_general", dot((((0,), (1,)), ((2,), (0,)))), (Arg((3, 2, 4)), Arg((4, 3))),
             **d),
    ]


def _gather_scatter_cases():
    """Indices reach past both ends (the modes' out-of-bounds rules); a plain scatter writes one window per example,
    since which of two overlapping updates wins is unspecified."""
    def gather(dims, sizes, mode):
        return lambda lax_, x, i: lax_.gather(x, i, lax_.GatherDimensionNumbers(*dims), sizes, mode=mode)

    def scatter(name, dims, mode):
        return lambda lax_, x, i, u: getattr(lax_, name)(x, i, u, lax_.ScatterDimensionNumbers(*dims), mode=mode)
    rows, idx = ((1,), (0,), (0,)), Arg((4, 1), "int32", -2, 7)
    d = dict(family="gather_scatter", text="all", jit_empty=True)
    return [
        Case("gather", "gather", gather(rows, (1, 3), "clip"), (Arg((5, 3)), idx), **d),
        Case("gather_fill", "gather", gather(rows, (1, 2), "fill"), (Arg((5, 3)), idx), **d),
        Case("gather_batching_dims", "gather", gather(((2,), (1,), (1,), (0,), (0,)), (1, 1, 3), "clip"),
             (Arg((2, 5, 3)), Arg((2, 4, 1), "int32", -2, 7)), **d),
        Case("scatter", "scatter", scatter("scatter", rows, "fill"),
             (Arg((5, 3)), Arg((1, 1), "int32", -1, 6), Arg((1, 3))), **d),
        Case("scatter_add", "scatter_add", scatter("scatter_add", rows, "fill"), (Arg((5, 3)), idx, Arg((4, 3))), **d),
        Case("scatter_add_partial", "scatter_add", scatter("scatter_add", rows, "clip"),
             (Arg((5, 4)), idx, Arg((4, 2))), **d),
        Case("scatter_sub", "scatter_sub", scatter("scatter_sub", rows, "clip"), (Arg((5, 3)), idx, Arg((4, 3))), **d),
        Case("scatter_mul", "scatter_mul", scatter("scatter_mul", rows, "fill"), (Arg((5, 3)), idx, Arg((4, 3))), **d),
        Case("scatter_min", "scatter_min", scatter("scatter_min", rows, "clip"), (Arg((5, 3)), idx, Arg((4, 3))), **d),
        Case("scatter_max", "scatter_max", scatter("scatter_max", rows, "fill"), (Arg((5, 3)), idx, Arg((4, 3))), **d),
    ]


def _sort_cases():
    """Values with ties (the positions of equal keys are part of the result)."""
    x234, i234 = Arg((2, 3, 4), lo=-2, hi=2, whole=True), Arg((2, 3, 4), "int32", -3, 3)
    d = dict(family="sort", text="all", jit_empty=True)
    return [
        Case("sort", "sort", _op("sort", dimension=1), (x234,), **d),
        Case("sort_key_val", "sort", _op("sort_key_val", dimension=0), (x234, i234), **d),
        Case("sort_num_keys", "sort", lambda lax_, x, y: lax_.sort((y, x, y), dimension=2, num_keys=2),
             (x234, i234), **d),
        Case("top_k", "top_k", _op("top_k", k=2), (x234,), **d),
        Case("top_k_axis", "top_k", _op("top_k", k=3, axis=1), (x234,), **d),
    ]


def _select_and(name, select_prim, **window):
    """The select_and_* primitives have no lax wrapper: bound directly (JAX's through its private helpers)."""
    def fn(lax_, x, y):
        if lax_ is lax:
            return irax.core.bind1(name, x, y, select_prim=select_prim, **window)
        from jax._src.lax import windowed_reductions as wr
        prim = jax.lax.ge_p if select_prim == "ge" else jax.lax.le_p
        return getattr(wr, f"_{name}")(x, y, prim, *window.values())
    return fn


def _convolution_cases():
    """The convolutions' batching rules reshape with ``dimensions=``, as JAX's do."""
    def conv(**kw):
        return lambda lax_, x, w: lax_.conv_general_dilated(x, w, **kw)

    def pool(comp, init, window, strides, padding, **kw):
        return lambda lax_, x: lax_.reduce_window(x, init, getattr(lax_, comp), window, strides, padding, **kw)
    c, d = dict(family="conv", text="all", jit_empty=True), dict(family="window", text="all", jit_empty=True)
    return [
        Case("conv", "conv_general_dilated", conv(window_strides=(1, 2), padding="SAME"),
             (Arg((2, 3, 5, 5)), Arg((4, 3, 3, 3))), tol=1e-4, **c),
        Case("conv_feature_groups", "conv_general_dilated", conv(window_strides=(1,), padding=[(1, 0)],
                                                                 feature_group_count=2),
             (Arg((2, 4, 5)), Arg((4, 2, 2))), tol=1e-4, **c),
        Case("conv_batch_groups", "conv_general_dilated", conv(window_strides=(1,), padding="VALID",
                                                               batch_group_count=2),
             (Arg((4, 3, 5)), Arg((4, 3, 2))), tol=1e-4, **c),
        Case("conv_nhwc_dilated", "conv_general_dilated",
             conv(window_strides=(2, 1), padding=[(1, 1), (0, 2)], lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                  dimension_numbers=("NHWC", "HWIO", "NHWC")), (Arg((1, 5, 4, 2)), Arg((2, 2, 2, 3))), tol=1e-4, **c),
        Case("reduce_window_max", "reduce_window_max", pool("max", -np.inf, (1, 2, 2), (1, 2, 1), "SAME"),
             (Arg((2, 5, 4)),), **d),
        Case("reduce_window_min", "reduce_window_min", pool("min", np.inf, (2, 3), (1, 1), ((1, 0), (0, 2))),
             (Arg((4, 5)),), **d),
        Case("reduce_window_sum", "reduce_window_sum", pool("add", 0.0, (2, 2), (1, 2), "VALID", base_dilation=(2, 1),
                                                           window_dilation=(1, 2)), (Arg((3, 6)),), tol=1e-4, **d),
        Case("select_and_gather_add", "select_and_gather_add",
             _select_and("select_and_gather_add", "ge", window_dimensions=(2, 2), window_strides=(1, 2),
                         padding=((0, 1), (1, 0)), base_dilation=(1, 1), window_dilation=(1, 1)),
             (Arg((4, 5)), Arg((4, 5))), **d),
        Case("select_and_scatter_add", "select_and_scatter_add",
             _select_and("select_and_scatter_add", "le", window_dimensions=(2, 2), window_strides=(1, 2),
                         padding=((0, 0), (0, 1))), (Arg((3, 3)), Arg((4, 5))), **d),
    ]


CASES = (_elementwise_cases() + _reduction_cases() + _structural_cases() + _dot_cases() + _gather_scatter_cases()
         + _sort_cases() + _convolution_cases())


# --- configurations and references ------------------------------------------------------------------------


def _configs(case):
    """``(in_axes, batch size)`` pairs, without repeats (axes compared canonically)."""
    ranks = [len(a.shape) for a in case.args]
    configs = [(tuple(0 for _ in ranks), B), (tuple(-1 for _ in ranks), B)]
    if len(ranks) > 1:  # one operand batched, the others shared
        configs += [(tuple((r + 1) // 2 if p == q else None for q, r in enumerate(ranks)), B)
                    for p in range(len(ranks))]
    configs += [(_mixed_axes(ranks), B), (tuple(0 for _ in ranks), 0), (tuple(-1 for _ in ranks), 1)]
    seen, unique = set(), []
    for axes, size in configs:
        key = (tuple(None if a is None else a % (r + 1) for a, r in zip(axes, ranks)), size)
        if key not in seen:
            seen.add(key)
            unique.append((axes, size))
    return unique


def _mixed_axes(ranks):
    """Each operand batched at its own axis: the rules' moves and broadcasts between operands."""
    return tuple((p + 1) % (r + 1) for p, r in enumerate(ranks))


def _rng(*key):
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


def _operands(case, axes, size):
    rng = _rng(case.id, axes, size)
    return [arg.draw(rng, 1)[0] if axis is None else np.moveaxis(arg.draw(rng, size), 0, axis)
            for arg, axis in zip(case.args, axes)]


def _leaves(out):
    return [np.asarray(x) for x in (out if isinstance(out, (list, tuple)) else [out])]


def _expected(case, axes, size, operands):
    """The per-example results of irax's eager (NumPy) evaluation, stacked along axis 0."""
    if size == 0:
        example = [arg.draw(_rng(case.id), 1)[0] for arg in case.args]
        return [np.zeros((0,) + x.shape, x.dtype) for x in _leaves(case.call(lax, *example))]
    per_example = [_leaves(case.call(lax, *[x if a is None else np.take(x, i, axis=a) for x, a in zip(operands, axes)]))
                   for i in range(size)]
    return [np.stack(results) for results in zip(*per_example)]


def _assert_close(actual, expected, tol, what):
    actual = _leaves(actual)
    assert len(actual) == len(expected), f"{what}: {len(actual)} results, expected {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        where = f"{what}, result {k}"
        assert a.dtype == e.dtype, f"{where}: dtype {a.dtype} != {e.dtype}"
        assert a.shape == e.shape, f"{where}: shape {a.shape} != {e.shape}"
        if np.issubdtype(a.dtype, np.inexact):
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(a, e, err_msg=where)


def _vmapped(case, module, axes):
    return (irax if module is lax else jax).vmap(functools.partial(case.call, module), in_axes=axes)


def _all_of(plan, module):
    """One function of every ``(case, axes, size, operands)`` of ``plan``'s operands, flattened: one compile."""
    def run(*flat):
        outs, k = [], 0
        for case, axes, size, operands in plan:
            outs.append(_vmapped(case, module, axes)(*flat[k:k + len(operands)]))
            k += len(operands)
        return outs
    return run


PARAMS = [pytest.param(case, axes, size, id=f"{case.id}-{axes}-n{size}".replace(" ", ""))
          for case in CASES for axes, size in _configs(case)]

# --- tests ------------------------------------------------------------------------------------------------


def test_every_rule_has_a_case():
    """Calls, names and rules owned by other modules (collectives, custom derivatives, control flow, linalg, fft,
    the lax extras, host callbacks) are tested there, and threefry2x32 in tests/test_random.py (vmap over batches
    of keys, against JAX); mulhi's elementwise rule in tests/test_lax_extras.py, against NumPy (XLA's CPU backend
    cannot run some batched layouts of it)."""
    foreign = {"irax.passes.batch_collectives", "irax.passes.batch_custom", "irax.passes.batch_control_flow",
               "irax.passes.batch_rules_linalg", "irax.passes.batch_rules_fft", "irax.passes.batch_rules_extras",
               "irax.passes.batch_rules_callbacks"}
    wanted = {name for name, rule in batch.BATCH_RULES.items()
              if name not in ("pjit", "checkpoint", "name", "threefry2x32", "mulhi") and not name.startswith("custom_")
              and name not in batch.AXIS_NAME_PARAMS and getattr(rule, "__module__", None) not in foreign}
    missing = wanted - {case.primitive for case in CASES}
    assert not missing, f"batching rules without a case in {__file__}: {sorted(missing)}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_binds_its_primitive(case):
    """A lax wrapper that folds the op away (an identity reshape ...) would leave its rule untested."""
    example = [arg.draw(_rng(case.id), 1)[0] for arg in case.args]
    text = str(irax.make_jaxpr(functools.partial(case.call, lax))(*example))
    assert re.search(rf"= {jax_name(OPS[case.primitive])}[\[ ]", text), text


def _jax_configs(case):
    """Where ``jax.vmap`` is compared: every configuration of the rules that are irax's own (JAX gathers,
    scatters, has no stack), one of the rest (their JAX text is compared instead, and irax's eager
    op-by-op values against JAX's in tests/test_ops.py)."""
    if case.jax_wrong:
        return []
    if case.primitive in ("dynamic_slice", "dynamic_update_slice", "stack"):
        configs = _configs(case)
    else:
        configs = [(_mixed_axes([len(a.shape) for a in case.args]), B)]
    return [(axes, size) for axes, size in configs if axes not in case.jax_fails]


@functools.lru_cache(maxsize=None)
def _jax_results(family):
    """``jax.vmap`` of the family's cases in one ``jax.jit`` (eager JAX compiles every op it runs)."""
    plan = [(case, axes, size, _operands(case, axes, size)) for case in CASES if case.family == family
            for axes, size in _jax_configs(case)]

    outs = jax.jit(_all_of(plan, jax.lax))(*[x for *_, operands in plan for x in operands])
    return {(case.id, axes, size): out for (case, axes, size, _), out in zip(plan, outs)}


@pytest.mark.parametrize("case,axes,size", PARAMS)
def test_vmap(case, axes, size):
    operands = _operands(case, axes, size)
    expected = _expected(case, axes, size, operands)
    _assert_close(_vmapped(case, lax, axes)(*operands), expected, case.tol, f"irax.vmap {case.id} {axes}")
    if jax is None:
        return
    if axes in case.jax_fails:
        with pytest.raises(TypeError):
            _vmapped(case, jax.lax, axes)(*operands)
    elif (axes, size) in _jax_configs(case):
        _assert_close(_jax_results(case.family)[case.id, axes, size], expected, max(case.tol, 1e-4),
                      f"jax.vmap {case.id} {axes}")


FAMILIES = sorted({case.family for case in CASES})


def _jit_configs(case):
    mixed = (_mixed_axes([len(a.shape) for a in case.args]), B)
    if case.jit_empty:
        return [mixed, (tuple(0 for _ in case.args), 0)]
    return [mixed]


@pytest.mark.parametrize("family", FAMILIES)
def test_jit_vmap(family):
    """Every case of the family in one jitted function (one IREE compile): operands batched at different axes,
    and for the shape ops the batch of 0."""
    plan = [(case, axes, size, _operands(case, axes, size)) for case in CASES if case.family == family and case.jit
            for axes, size in _jit_configs(case)]

    outs = irax.jit(_all_of(plan, lax))(*[x for *_, operands in plan for x in operands])
    failures = []
    for (case, axes, size, operands), out in zip(plan, outs):
        try:
            _assert_close(out, _expected(case, axes, size, operands), max(case.tol, 1e-4),
                          f"jit(vmap) {case.id} {axes} n{size}")
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def _text_configs(case):
    """Where ``make_jaxpr(vmap(f))`` is compared with JAX's: every configuration of the rules ported here,
    operands batched at different axes for the generic ones."""
    configs = {"all": _configs(case), "one": [(_mixed_axes([len(a.shape) for a in case.args]), B)], "": []}
    return [(axes, size) for axes, size in configs[case.text] if axes not in case.jax_fails]


@pytest.mark.skipif(jax is None, reason="JAX is the oracle of the text")
@pytest.mark.parametrize("case,axes,size", [p for p in PARAMS if tuple(p.values[1:]) in _text_configs(p.values[0])])
def test_vmap_jaxpr_text(case, axes, size):
    operands = _operands(case, axes, size)
    ours = str(irax.make_jaxpr(_vmapped(case, lax, axes))(*operands))
    theirs = str(jax.make_jaxpr(_vmapped(case, jax.lax, axes))(*operands))
    assert ours == theirs, f"irax:\n{ours}\njax:\n{theirs}"
