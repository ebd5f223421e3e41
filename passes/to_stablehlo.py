"""``jaxpr-to-stablehlo``: one lowering rule per primitive, in one table.

A rule receives a ``Lowering`` context (which emits ops right before the jaxpr
op being replaced, at its location), the operand values and the op's params,
and returns the replacement values.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from irax.ir import avals as A
from irax.ir.dialect import aval_of_type, decode_params, tensor_type
from irax.ir.errors import unbound_axis_name
from irax.ir.jaxpr_view import body_ops
from irax.ir.mlir import ir, module_body
from irax.ir.params import dense_attr
from irax.ir.ops import OPS
from irax.ir.shapes import issubdtype, split_axes
from irax.passes import f64_math

from .funcs import function_type

LOWERINGS: dict = {}


class Lowering:
    """Emits StableHLO ops in front of one jaxpr op."""

    def __init__(self, op, symbols=None):
        self.op = op
        self.symbols = symbols or {}  # the module's functions, for calls
        self.loc = op.location
        self.ip = ir.InsertionPoint(op)
        self.result_avals = [aval_of_type(r.type) for r in op.results]

    def emit(self, name, operands, result_types, attributes=None, regions=0):
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attributes or {}, regions=regions, loc=self.loc, ip=self.ip)

    def emit1(self, name, operands, result_type=None, **attributes):
        rtype = result_type if result_type is not None else self.op.results[0].type
        return self.emit(name, operands, [rtype], {k: _attr(v) for k, v in attributes.items()}).result

    def constant(self, value, dtype, shape=()):
        array = np.full(shape, value, dtype=dtype)
        t = tensor_type(tuple(shape), np.dtype(dtype))
        return self.emit("stablehlo.constant", [], [t], {"value": dense_attr(array, t)}).result

    def broadcast(self, value, shape):
        aval = aval_of_type(value.type)
        if aval.shape == tuple(shape):
            return value
        dims = list(range(len(shape) - aval.ndim, len(shape)))
        return self.emit1("stablehlo.broadcast_in_dim", [value], tensor_type(tuple(shape), aval.dtype),
                          broadcast_dimensions=ir.DenseI64ArrayAttr.get(dims))

    def region_block(self, op, arg_types):
        with self.loc:
            return op.regions[0].blocks.append(*arg_types)


def _attr(value):
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, str):
        return ir.Attribute.parse(value)
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, (int, np.integer)):  # NumPy ints come from batching rules, as in JAX's params
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if isinstance(value, (tuple, list)):
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])
    raise TypeError(f"cannot make an attribute of {value!r}")


def lowering(*names):
    def register(fn):
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


_HALF = (np.dtype(np.float16), A.bfloat16)

# Computed in float32 for half-precision operands, as XLA's CPU backend does.
_WIDENED = {"exp", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan", "sqrt", "rsqrt", "cbrt",
            "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "erf_inv", "lgamma",
            "digamma", "polygamma", "pow", "atan2", "div", "rem"}


def _elementwise(hlo_name):
    def lower(ctx, *xs, **params):
        out = ctx.result_avals[0]
        xs = [ctx.broadcast(x, out.shape) for x in xs]
        if out.dtype in _HALF and ctx.op.name[6:] in _WIDENED:
            wide = tensor_type(out.shape, np.dtype(np.float32))
            xs = [_convert_to(ctx, x, np.dtype(np.float32)) for x in xs]
            return _convert_to(ctx, _emit_elementwise(ctx, hlo_name, xs, wide), out.dtype)
        return _emit_elementwise(ctx, hlo_name, xs)
    return lower


def _emit_elementwise(ctx, hlo_name, xs, result_type=None):
    if hlo_name in _TRIG and aval_of_type(xs[0].type).dtype == np.float32:
        return _trig_f32(ctx, hlo_name, xs[0])
    return ctx.emit1(hlo_name, xs, result_type)


# Cephes' three-part pi/2: results within ~2 ulp while |x| < ~1e4, the error growing slowly beyond.
_PIO2_PARTS = (1.5703125, 4.837512969970703125e-4, 7.54978995489188216e-8)
_TRIG = ("stablehlo.sine", "stablehlo.cosine", "stablehlo.tan")


def _trig_f32(ctx, hlo_name, x):
    """sin, cos or tan of float32: the argument reduced by pi/2 to r in [-pi/4, pi/4] and a quadrant, then one
    IREE polynomial on [0, pi/2] (cos r as sin(pi/2 - |r|)). IREE reduces by one float32 pi itself, off by ~1e-7
    |x| (sin(1e4) by 2.5e-4, sin(1e10) gave -6e21), and its polynomials are odd or even only approximately (its
    sin(-8.7e-8) is -5.7e-8)."""
    t, shape = x.type, aval_of_type(x.type).shape

    def const(value):
        return ctx.broadcast(ctx.constant(value, np.float32), shape)

    def op(name, *operands):
        return ctx.emit1(name, list(operands), t)

    def select(pred, a, b):
        return op("stablehlo.select", pred, a, b)
    # The nearest quadrant by floor(y + 0.5): IREE's round_nearest_even doubled the cost of a sin.
    quadrant = op("stablehlo.floor", op("stablehlo.add", op("stablehlo.multiply", x, const(2 / np.pi)), const(0.5)))
    r = x
    for part in _PIO2_PARTS:
        r = op("stablehlo.subtract", r, op("stablehlo.multiply", quadrant, const(part)))
    # The quadrant modulo 4 by floor (IREE's remainder is a slow fmod); cos x is sin(x + pi/2).
    q = op("stablehlo.subtract", quadrant, op("stablehlo.multiply", const(4.0), op(
        "stablehlo.floor", op("stablehlo.multiply", quadrant, const(0.25)))))
    if hlo_name == "stablehlo.cosine":
        q = op("stablehlo.add", q, const(1.0))
        q = select(compare(ctx, q, const(4.0), "GE"), op("stablehlo.subtract", q, const(4.0)), q)
    half = op("stablehlo.multiply", q, const(0.5))
    odd = compare(ctx, op("stablehlo.floor", half), half, "NE")
    r_negative, a = compare(ctx, r, const(0.0), "LT"), op("stablehlo.abs", r)
    if hlo_name == "stablehlo.tan":
        tan = op("stablehlo.tan", a)
        tan = select(r_negative, op("stablehlo.negate", tan), tan)
        result = select(odd, op("stablehlo.negate", op("stablehlo.divide", const(1.0), tan)), tan)
    else:
        pio2_hi = np.float32(np.pi / 2)
        complement = op("stablehlo.add", op("stablehlo.subtract", const(pio2_hi), a),
                        const(np.float32(np.pi / 2 - float(pio2_hi))))
        value = op("stablehlo.sine", select(odd, complement, a))
        bools = tensor_type(shape, np.dtype(np.bool_))
        even_and_negative = ctx.emit1("stablehlo.and", [r_negative, ctx.emit1("stablehlo.not", [odd], bools)], bools)
        flip = ctx.emit1("stablehlo.xor", [compare(ctx, q, const(2.0), "GE"), even_and_negative], bools)
        result = select(flip, op("stablehlo.negate", value), value)
    if hlo_name == "stablehlo.cosine":
        return result
    return select(compare(ctx, x, const(0.0), "EQ"), x, result)  # sin(-0) and tan(-0) are -0


for _name, _hlo in {
    "neg": "stablehlo.negate", "floor": "stablehlo.floor", "ceil": "stablehlo.ceil",
    "is_finite": "stablehlo.is_finite",
    "expm1": "stablehlo.exponential_minus_one", "log1p": "stablehlo.log_plus_one", "tanh": "stablehlo.tanh",
    "logistic": "stablehlo.logistic", "sin": "stablehlo.sine", "cos": "stablehlo.cosine", "tan": "stablehlo.tan",
    "rsqrt": "stablehlo.rsqrt", "abs": "stablehlo.abs",
    "asin": "chlo.asin", "acos": "chlo.acos", "atan": "chlo.atan", "sinh": "chlo.sinh", "cosh": "chlo.cosh",
    "asinh": "chlo.asinh", "acosh": "chlo.acosh", "atanh": "chlo.atanh", "erf": "chlo.erf", "erfc": "chlo.erfc",
    "erf_inv": "chlo.erf_inv", "lgamma": "chlo.lgamma", "digamma": "chlo.digamma", "polygamma": "chlo.polygamma",
    "not": "stablehlo.not",
    "population_count": "stablehlo.popcnt", "clz": "stablehlo.count_leading_zeros", "real": "stablehlo.real",
    "imag": "stablehlo.imag", "add": "stablehlo.add", "add_any": "stablehlo.add", "sub": "stablehlo.subtract",
    "mul": "stablehlo.multiply",
    "div": "stablehlo.divide", "rem": "stablehlo.remainder", "pow": "stablehlo.power", "max": "stablehlo.maximum",
    "min": "stablehlo.minimum", "nextafter": "chlo.next_after",
    "and": "stablehlo.and", "or": "stablehlo.or", "xor": "stablehlo.xor", "shift_left": "stablehlo.shift_left",
    "shift_right_arithmetic": "stablehlo.shift_right_arithmetic",
    "shift_right_logical": "stablehlo.shift_right_logical", "complex": "stablehlo.complex",
}.items():
    LOWERINGS[_name] = _elementwise(_hlo)


@lowering("pow")
def _pow(ctx, x, y):
    """Real pow in float64 by f64_math's IEEE expansion, then rounded to the result type: IREE's
    ``stablehlo.power`` is NaN for every negative base and for ``y == 0``, and an ulp off in float32."""
    out = ctx.result_avals[0]
    if issubdtype(out.dtype, np.complexfloating):
        return _elementwise("stablehlo.power")(ctx, x, y)
    wide = [_convert_to(ctx, ctx.broadcast(v, out.shape), np.dtype(np.float64)) for v in (x, y)]
    return _convert_to(ctx, f64_math.expand(ctx, "pow", np.dtype(np.float64), out.shape, wide), out.dtype)


def _signbit(ctx, x):
    aval = aval_of_type(x.type)
    int_dtype = np.dtype(f"i{aval.dtype.itemsize}")
    bits = ctx.emit1("stablehlo.bitcast_convert", [x], tensor_type(aval.shape, int_dtype))
    return compare(ctx, bits, ctx.constant(0, int_dtype, aval.shape), "LT")


def _copysign(ctx, magnitude, sign_of):
    magnitude = ctx.emit1("stablehlo.abs", [magnitude], magnitude.type)
    return ctx.emit1("stablehlo.select", [_signbit(ctx, sign_of), ctx.emit1("stablehlo.negate", [magnitude],
                                                                           magnitude.type), magnitude],
                     magnitude.type)


def _is_finite(ctx, x):
    return ctx.emit1("stablehlo.is_finite", [x], tensor_type(aval_of_type(x.type).shape, np.dtype(np.bool_)))


@lowering("cbrt")
def _cbrt(ctx, x):
    """cbrt(|x|) with x's sign; IREE's own cbrt gives NaN for negative and infinite inputs."""
    root = _elementwise("stablehlo.cbrt")(ctx, ctx.emit1("stablehlo.abs", [x]))
    return ctx.emit1("stablehlo.select", [_is_finite(ctx, x), _copysign(ctx, root, x), x])


@lowering("atan2")
def _atan2(ctx, y, x):
    """IREE's atan2 is wrong for zero and infinite pairs; those get IEEE's answers here."""
    out = ctx.result_avals[0]
    y, x = ctx.broadcast(y, out.shape), ctx.broadcast(x, out.shape)
    return _ieee_atan2(ctx, y, x, _elementwise("stablehlo.atan2")(ctx, y, x), out)


def _ieee_atan2(ctx, y, x, base, out):
    """``base`` (IREE's atan2 of ``y, x``) with IEEE's answers at zero and infinite pairs."""
    pred, value = tensor_type(out.shape, np.dtype(np.bool_)), tensor_type(out.shape, out.dtype)
    const = lambda v: ctx.constant(v, out.dtype, out.shape)
    both = lambda a, b: ctx.emit1("stablehlo.and", [a, b], pred)
    select = lambda p, a, b: ctx.emit1("stablehlo.select", [p, a, b], value)
    negative_x = _signbit(ctx, x)
    y_zero_x_number = both(compare(ctx, y, const(0), "EQ"), compare(ctx, x, x, "EQ"))
    on_axis = _copysign(ctx, select(negative_x, const(np.pi), const(0)), y)
    infinite = lambda v: compare(ctx, ctx.emit1("stablehlo.abs", [v], value), const(np.inf), "EQ")
    diagonal = _copysign(ctx, select(negative_x, const(3 * np.pi / 4), const(np.pi / 4)), y)
    x_inf_y_finite = both(infinite(x), _is_finite(ctx, y))
    result = select(ctx.emit1("stablehlo.or", [y_zero_x_number, x_inf_y_finite], pred), on_axis, base)
    return select(both(infinite(y), infinite(x)), diagonal, result)


@lowering("sign")
def _sign(ctx, x):
    """StableHLO's sign takes signed and float types only; an unsigned sign is ``x != 0``."""
    out = ctx.result_avals[0]
    if out.dtype.kind != "u":
        return _elementwise("stablehlo.sign")(ctx, x)
    nonzero = compare(ctx, x, ctx.constant(0, out.dtype, out.shape), "NE")
    return ctx.emit1("stablehlo.select", [nonzero, ctx.constant(1, out.dtype, out.shape), x])


@lowering("exp")
def _exp(ctx, x):
    """Complex exp part by part as XLA computes it, ``e^re (cos im + i sin im)``, and ``e^re + 0i`` for a zero
    ``im`` (IREE's own gives NaN for the real part of ``exp(inf + 2j)``)."""
    out = ctx.result_avals[0]
    if not issubdtype(out.dtype, np.complexfloating):
        return _elementwise("stablehlo.exponential")(ctx, x)
    part_dtype = np.finfo(out.dtype).dtype
    part = tensor_type(out.shape, part_dtype)
    re, im = _complex_parts(ctx, x)
    zero = ctx.constant(0, part_dtype, out.shape)
    real_axis = compare(ctx, im, zero, "EQ")
    scale = ctx.emit1("stablehlo.exponential", [re], part)
    cos, sin = (ctx.emit1("stablehlo.multiply", [scale, ctx.emit1(f"stablehlo.{f}", [im], part)], part)
                for f in ("cosine", "sine"))
    return ctx.emit1("stablehlo.complex", [ctx.emit1("stablehlo.select", [real_axis, scale, cos], part),
                                           ctx.emit1("stablehlo.select", [real_axis, zero, sin], part)], x.type)


@lowering("log")
def _log(ctx, x):
    """Complex log as ``log|x| + i atan2(im, re)``: IREE's own drops the sign of a negative zero imaginary part
    (``log(-1 - 0j)`` gave ``+pi j``)."""
    out = ctx.result_avals[0]
    if not issubdtype(out.dtype, np.complexfloating):
        return _elementwise("stablehlo.log")(ctx, x)
    part_aval = A.ShapedArray(out.shape, np.finfo(out.dtype).dtype)
    part = tensor_type(part_aval.shape, part_aval.dtype)
    re, im = _complex_parts(ctx, x)
    angle = _ieee_atan2(ctx, im, re, ctx.emit1("stablehlo.atan2", [im, re], part), part_aval)
    magnitude = ctx.emit1("stablehlo.log", [ctx.emit1("stablehlo.abs", [x], part)], part)
    return ctx.emit1("stablehlo.complex", [magnitude, angle], x.type)


def _complex_parts(ctx, x):
    aval = aval_of_type(x.type)
    part = tensor_type(aval.shape, np.finfo(aval.dtype).dtype)
    return [ctx.emit1(f"stablehlo.{name}", [x], part) for name in ("real", "imag")]


@lowering("sqrt")
def _sqrt(ctx, x):
    """Complex sqrt as XLA gives it: a zero part counts as +0 whatever its sign, and a NaN part makes both
    parts NaN (IREE follows C99 in both: ``sqrt(-4 - 0j) = -2j``, ``sqrt(-inf + nan j) = nan + inf j``)."""
    out = ctx.result_avals[0]
    if not issubdtype(out.dtype, np.complexfloating):
        return _elementwise("stablehlo.sqrt")(ctx, x)
    part_dtype = np.finfo(out.dtype).dtype
    part = tensor_type(out.shape, part_dtype)
    zero = ctx.constant(0, part_dtype, out.shape)
    unsigned = lambda v: ctx.emit1("stablehlo.select", [compare(ctx, v, zero, "EQ"), zero, v], part)
    re, im = _complex_parts(ctx, x)
    root = ctx.emit1("stablehlo.sqrt", [ctx.emit1("stablehlo.complex", [re, unsigned(im)])])
    root_re, root_im = _complex_parts(ctx, root)
    nan = ctx.constant(np.nan, part_dtype, out.shape)
    return ctx.emit1("stablehlo.select", [compare(ctx, x, x, "NE"), ctx.emit1("stablehlo.complex", [nan, nan]),
                                          ctx.emit1("stablehlo.complex", [unsigned(root_re), root_im])])


@lowering("div")
def _div(ctx, x, y):
    """A float division by a broadcast (softmax's by its row sums) multiplies by the reciprocals of the
    unbroadcast values: IREE then computes one reciprocal per row instead of a division per element, and no
    longer raises the pattern to its slower fused softmax."""
    out = ctx.result_avals[0]
    if out.dtype not in (np.float32, np.float64):
        return _elementwise("stablehlo.divide")(ctx, x, y)
    owner = y.owner.opview if isinstance(y.owner, (ir.Operation, ir.OpView)) else None
    if owner is not None and owner.operation.name == "stablehlo.broadcast_in_dim":
        small, dims = owner.operands[0], list(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"]))
        shape = aval_of_type(y.type).shape
    else:
        small, dims, shape = y, None, aval_of_type(y.type).shape
    small_aval = aval_of_type(small.type)
    constant = isinstance(small.owner, (ir.Operation, ir.OpView)) and small.owner.name == "stablehlo.constant"
    if small_aval.size * 8 > out.size or constant:  # x / 3.0 stays correctly rounded, as XLA's
        return _elementwise("stablehlo.divide")(ctx, x, y)
    reciprocal = ctx.emit1("stablehlo.divide", [ctx.constant(1, out.dtype, small_aval.shape), small], small.type)
    if dims is not None:
        reciprocal = ctx.emit1("stablehlo.broadcast_in_dim", [reciprocal], tensor_type(shape, out.dtype),
                               broadcast_dimensions=dims)
    return ctx.emit1("stablehlo.multiply", [ctx.broadcast(x, out.shape), ctx.broadcast(reciprocal, out.shape)])


@lowering("stop_gradient", "copy", "name")
def _identity(ctx, x, **params):
    return x


@lowering("square")
def _square(ctx, x):
    return ctx.emit1("stablehlo.multiply", [x, x])


@lowering("exp2")
def _exp2(ctx, x):
    aval = ctx.result_avals[0]
    ln2 = ctx.constant(np.log(2.0), aval.dtype, aval.shape)
    return ctx.emit1("stablehlo.exponential", [ctx.emit1("stablehlo.multiply", [x, ln2])])


@lowering("round")
def _round(ctx, x, *, rounding_method):
    return ctx.emit1("stablehlo.round_nearest_even" if rounding_method == 1 else "stablehlo.round_nearest_afz", [x])


@lowering("conj")
def _conj(ctx, x, **params):
    aval = ctx.result_avals[0]
    part = tensor_type(aval.shape, np.dtype(np.float32 if aval.dtype == np.complex64 else np.float64))
    if not issubdtype(aval_of_type(x.type).dtype, np.complexfloating):
        return ctx.emit1("stablehlo.complex", [x, ctx.constant(0, np.finfo(aval.dtype).dtype, aval.shape)])
    re = ctx.emit1("stablehlo.real", [x], part)
    im = ctx.emit1("stablehlo.negate", [ctx.emit1("stablehlo.imag", [x], part)], part)
    return ctx.emit1("stablehlo.complex", [re, im])


@lowering("integer_pow")
def _integer_pow(ctx, x, *, y):
    aval = ctx.result_avals[0]
    if y == 0:
        return ctx.constant(1, aval.dtype, aval.shape)
    acc, base, n = None, x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else ctx.emit1("stablehlo.multiply", [acc, base])
        n >>= 1
        if n:
            base = ctx.emit1("stablehlo.multiply", [base, base])
    if y < 0:
        acc = ctx.emit1("stablehlo.divide", [ctx.constant(1, aval.dtype, aval.shape), acc])
    return acc


_DIRECTIONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


def _compare_type(dtype):
    if issubdtype(dtype, np.inexact):
        return "FLOAT"
    return "UNSIGNED" if issubdtype(dtype, np.unsignedinteger) or dtype == np.bool_ else "SIGNED"


def compare(ctx, x, y, direction, total_order=False):
    """``total_order``: floats compare in IEEE's total order (StableHLO's TOTALORDER), as JAX's ``lt_to``."""
    aval = aval_of_type(x.type)
    if aval.dtype in _HALF:  # exact and order preserving, NaNs' signs included
        x, y = _convert_to(ctx, x, np.dtype(np.float32)), _convert_to(ctx, y, np.dtype(np.float32))
    kind = _compare_type(aval.dtype)
    if total_order and kind == "FLOAT":
        kind = "TOTALORDER"
    shape = ctx.result_avals[0].shape if ctx.result_avals[0].dtype == np.bool_ else aval.shape
    out = tensor_type(shape, np.dtype(np.bool_))
    return ctx.emit1("stablehlo.compare", [ctx.broadcast(x, shape), ctx.broadcast(y, shape)], out,
                     comparison_direction=f"#stablehlo<comparison_direction {direction}>",
                     compare_type=f"#stablehlo<comparison_type {kind}>")


for _name, _dir in _DIRECTIONS.items():
    LOWERINGS[_name] = (lambda d: lambda ctx, x, y: compare(ctx, x, y, d))(_dir)
for _name, _dir in (("eq_to", "EQ"), ("le_to", "LE"), ("lt_to", "LT")):
    LOWERINGS[_name] = (lambda d: lambda ctx, x, y: compare(ctx, x, y, d, total_order=True))(_dir)


@lowering("select_n")
def _select_n(ctx, which, *cases):
    if len(cases) == 1:
        return cases[0]
    which_aval = aval_of_type(which.type)
    if which_aval.dtype == np.bool_:
        return ctx.emit1("stablehlo.select", [which, cases[1], cases[0]])
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        index = ctx.constant(i, which_aval.dtype, which_aval.shape)
        pred = ctx.emit1("stablehlo.compare", [which, index], tensor_type(which_aval.shape, np.dtype(np.bool_)),
                         comparison_direction="#stablehlo<comparison_direction EQ>")
        result = ctx.emit1("stablehlo.select", [pred, cases[i], result])
    return result


@lowering("clamp")
def _clamp(ctx, lo, x, hi):
    return ctx.emit1("stablehlo.clamp", [lo, x, hi])


@lowering("convert_element_type")
def _convert(ctx, x, *, new_dtype, weak_type):
    src = aval_of_type(x.type)
    dst = np.dtype(new_dtype)
    if src.dtype == dst:
        return x
    if issubdtype(src.dtype, np.complexfloating) and not issubdtype(dst, np.complexfloating):
        x = ctx.emit1("stablehlo.real", [x], tensor_type(src.shape, np.finfo(src.dtype).dtype))
        src = aval_of_type(x.type)
    if dst == np.bool_:
        zero = ctx.constant(0, src.dtype, src.shape)
        return compare(ctx, x, zero, "NE")
    if src.dtype == np.bool_:
        return _from_bool(ctx, x, dst)
    if issubdtype(dst, np.integer) and issubdtype(src.dtype, np.floating):
        return _float_to_int(ctx, x, src, dst)
    if dst == A.bfloat16 and not issubdtype(src.dtype, np.floating):
        return _int_to_bfloat16(ctx, x, src.shape)
    return ctx.emit1("stablehlo.convert", [x])


def _float_to_int(ctx, x, src, dst):
    """XLA's saturating conversion: NaN is 0, and values past the integer's range (infinities included) are its
    extremes, even where those are not floats of ``src`` (float32 has none next to int32's maximum)."""
    info = np.iinfo(dst)
    const = lambda v, dtype: ctx.constant(v, dtype, src.shape)
    with np.errstate(over="ignore"):  # a bound past the float's range is an infinity
        lo, hi = (np.array(float(v), src.dtype) for v in (info.min, float(info.max) + 1))
        inside = ctx.emit1("stablehlo.clamp", [const(lo, src.dtype), x, const(_largest_float_below(
            info.max, src.dtype), src.dtype)], x.type)
    number = ctx.emit1("stablehlo.select", [compare(ctx, x, x, "NE"), const(0, src.dtype), inside], x.type)
    result = ctx.emit1("stablehlo.convert", [number])
    result = ctx.emit1("stablehlo.select", [compare(ctx, x, const(hi, src.dtype), "GE"), const(info.max, dst),
                                            result])
    return ctx.emit1("stablehlo.select", [compare(ctx, x, const(lo, src.dtype), "LE"), const(info.min, dst), result])


def _largest_float_below(limit, dtype):
    value = np.array(min(limit, float(ml_dtypes.finfo(dtype).max)), dtype=dtype)
    while float(value) > limit:
        value = np.nextafter(value, np.array(0, dtype))
    return value


def _from_bool(ctx, x, dst):
    """A select of ones and zeros, not a convert: IREE's data-tiled matmul (--iree-opt-data-tiling) fuses a convert
    of i1 into its operand's encoding and then fails to materialize it (IREE 3.13)."""
    shape = aval_of_type(x.type).shape
    return ctx.emit1("stablehlo.select", [x, ctx.constant(1, dst, shape), ctx.constant(0, dst, shape)],
                     tensor_type(shape, dst))


def _int_to_bfloat16(ctx, x, shape):
    """Via float32 and a round-to-nearest-even on the bits: IREE folds the plain converts
    into one integer-to-bfloat16 conversion that its llvm-cpu runtime cannot link (__truncsfbf2)."""
    u32 = tensor_type(shape, np.dtype(np.uint32))

    def const(v):
        return ctx.constant(v, np.uint32, shape)

    def op(name, *operands, rtype=u32):
        return ctx.emit1(name, list(operands), rtype)

    bits = op("stablehlo.bitcast_convert", op("stablehlo.convert", x, rtype=tensor_type(shape, np.dtype(np.float32))))
    lsb = op("stablehlo.and", op("stablehlo.shift_right_logical", bits, const(16)), const(1))
    high = op("stablehlo.shift_right_logical", op("stablehlo.add", bits, op("stablehlo.add", lsb, const(0x7FFF))),
              const(16))
    u16 = op("stablehlo.convert", high, rtype=tensor_type(shape, np.dtype(np.uint16)))
    return op("stablehlo.bitcast_convert", u16, rtype=tensor_type(shape, A.bfloat16))


@lowering("bitcast_convert_type")
def _bitcast(ctx, x, *, new_dtype):
    return ctx.emit1("stablehlo.bitcast_convert", [x])


@lowering("broadcast_in_dim")
def _broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions, sharding=None):
    return ctx.emit1("stablehlo.broadcast_in_dim", [x], broadcast_dimensions=list(broadcast_dimensions))


@lowering("squeeze")
def _squeeze(ctx, x, *, dimensions):
    return ctx.emit1("stablehlo.reshape", [x])


@lowering("reshape")
def _reshape(ctx, x, *, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None:
        aval = aval_of_type(x.type)
        transposed = tensor_type(tuple(aval.shape[d] for d in dimensions), aval.dtype)
        x = ctx.emit1("stablehlo.transpose", [x], transposed, permutation=list(dimensions))
    return ctx.emit1("stablehlo.reshape", [x])


@lowering("transpose")
def _transpose(ctx, x, *, permutation):
    return ctx.emit1("stablehlo.transpose", [x], permutation=list(permutation))


@lowering("rev")
def _rev(ctx, x, *, dimensions):
    """Unsigned integers are reversed as their signed twins: IREE fails to compile an unsigned reverse. A strided
    slice is reversed behind a barrier: IREE fails to compile the two fused (LLVM translation of an unrealized
    cast)."""
    aval = aval_of_type(x.type)
    producer = x.owner.operation if isinstance(x, ir.OpResult) else None
    if producer is not None and producer.name == "stablehlo.slice" and any(
            s != 1 for s in ir.DenseI64ArrayAttr(producer.attributes["strides"])):
        x = ctx.emit1("stablehlo.optimization_barrier", [x], x.type)
    if not issubdtype(aval.dtype, np.unsignedinteger):
        return ctx.emit1("stablehlo.reverse", [x], dimensions=list(dimensions))
    signed = tensor_type(aval.shape, np.dtype(f"i{aval.dtype.itemsize}"))
    flipped = ctx.emit1("stablehlo.reverse", [ctx.emit1("stablehlo.bitcast_convert", [x], signed)], signed,
                        dimensions=list(dimensions))
    return ctx.emit1("stablehlo.bitcast_convert", [flipped], x.type)


@lowering("pad")
def _pad(ctx, x, value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    sizes = dict(edge_padding_low=[int(v) for v in lo], edge_padding_high=[int(v) for v in hi],
                 interior_padding=[int(v) for v in interior])
    return emit_pad(ctx, x, value, ctx.result_avals[0].shape, **sizes)


def emit_pad(ctx, x, value, shape, **sizes):
    """``stablehlo.pad`` of ``x`` to ``shape``; a complex one pads the real and imaginary parts apart (IREE 3.13's
    compiler crashes, SIGSEGV, on a complex pad)."""
    dtype = aval_of_type(x.type).dtype
    if not np.issubdtype(dtype, np.complexfloating):
        return ctx.emit1("stablehlo.pad", [x, value], tensor_type(tuple(shape), dtype), **sizes)
    part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    x_aval = aval_of_type(x.type)
    parts = [ctx.emit1("stablehlo.pad", [ctx.emit1(f"stablehlo.{p}", [x], tensor_type(x_aval.shape, part)),
                                         ctx.emit1(f"stablehlo.{p}", [value], tensor_type((), part))],
                       tensor_type(tuple(shape), part), **sizes) for p in ("real", "imag")]
    return ctx.emit1("stablehlo.complex", parts, tensor_type(tuple(shape), dtype))


@lowering("concatenate")
def _concatenate(ctx, *xs, dimension):
    if all(aval_of_type(x.type).shape[dimension] == 1 for x in xs):
        return _stack_pieces(ctx, xs, dimension, list(range(ctx.result_avals[0].ndim)))
    return ctx.emit1("stablehlo.concatenate", list(xs), dimension=dimension)


@lowering("split")
def _split(ctx, x, *, sizes, axis):
    starts, limits, outs = [0] * len(ctx.result_avals[0].shape), list(aval_of_type(x.type).shape), []
    for out in ctx.result_avals:
        limits[axis] = starts[axis] + out.shape[axis]
        outs.append(ctx.emit1("stablehlo.slice", [x], tensor_type(out.shape, out.dtype), start_indices=list(starts),
                              limit_indices=list(limits), strides=[1] * len(starts)))
        starts[axis] = limits[axis]
    return outs


@lowering("threefry2x32")
def _threefry2x32(ctx, *operands):
    """Unrolled in integer ops, as JAX's ``_threefry2x32_lowering`` with ``use_rolled_loops=False``."""
    out = ctx.result_avals[0]
    u32 = tensor_type(out.shape, np.dtype(np.uint32))
    k1, k2, x1, x2 = (ctx.broadcast(v, out.shape) for v in operands)

    def op(name, *xs):
        return ctx.emit1(name, list(xs), u32)

    def const(value):
        return ctx.constant(value, np.uint32, out.shape)

    ks = [k1, k2, op("stablehlo.xor", op("stablehlo.xor", k1, k2), const(0x1BD11BDA))]
    x = [op("stablehlo.add", x1, ks[0]), op("stablehlo.add", x2, ks[1])]
    for i in range(5):
        for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
            x[0] = op("stablehlo.add", x[0], x[1])
            rotated = op("stablehlo.or", op("stablehlo.shift_left", x[1], const(r)),
                         op("stablehlo.shift_right_logical", x[1], const(32 - r)))
            x[1] = op("stablehlo.xor", x[0], rotated)
        x = [op("stablehlo.add", x[0], ks[(i + 1) % 3]),
             op("stablehlo.add", op("stablehlo.add", x[1], ks[(i + 2) % 3]), const(i + 1))]
    return x


@lowering("stack")
def _stack(ctx, *xs, axis):
    return _stack_pieces(ctx, xs, axis, [d for d in range(ctx.result_avals[0].ndim) if d != axis])


# Above this many pieces a stack is a concatenate: each select of the other form reads every piece.
_STACK_AS_SELECTS_UP_TO = 8


def _stack_pieces(ctx, xs, axis, piece_dims):
    """Pieces stacked along ``axis`` (``piece_dims``: where each piece's dimensions go) are broadcast and selected by
    position, not concatenated: IREE fuses no producer into a concatenate, and with multi-use fusion off
    (backends/targets.py) a threefry feeding one (JAX's ``random.split`` stacks its two halves) compiled to 20
    dispatches instead of 1."""
    out = ctx.result_avals[0]
    out_type = tensor_type(out.shape, out.dtype)
    if len(xs) > _STACK_AS_SELECTS_UP_TO:
        piece_shape = out.shape[:axis] + (1,) + out.shape[axis + 1:]
        pieces = [ctx.emit1("stablehlo.reshape", [x], tensor_type(piece_shape, out.dtype))
                  if aval_of_type(x.type).ndim < out.ndim else x for x in xs]
        return ctx.emit1("stablehlo.concatenate", pieces, out_type, dimension=axis)
    position = ctx.emit1("stablehlo.iota", [], tensor_type(out.shape, np.dtype(np.int32)), iota_dimension=axis)
    pieces = [ctx.emit1("stablehlo.broadcast_in_dim", [x], out_type, broadcast_dimensions=piece_dims) for x in xs]
    result = pieces[-1]
    for i in range(len(pieces) - 2, -1, -1):
        here = ctx.emit1("stablehlo.compare", [position, ctx.constant(i, np.int32, out.shape)],
                         tensor_type(out.shape, np.dtype(np.bool_)),
                         comparison_direction="#stablehlo<comparison_direction EQ>")
        result = ctx.emit1("stablehlo.select", [here, pieces[i], result])
    return result


@lowering("slice")
def _slice(ctx, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return ctx.emit1("stablehlo.slice", [x], start_indices=list(start_indices), limit_indices=list(limit_indices),
                     strides=list(strides))


@lowering("dynamic_slice")
def _dynamic_slice(ctx, x, *indices, slice_sizes):
    return ctx.emit1("stablehlo.dynamic_slice", [x, *indices], slice_sizes=list(slice_sizes))


@lowering("dynamic_update_slice")
def _dynamic_update_slice(ctx, x, update, *indices):
    """Complex operands part by part: IREE 3.13 folds a complex one of constants into an invalid arith.constant."""
    out = ctx.result_avals[0]
    if not issubdtype(out.dtype, np.complexfloating):
        return ctx.emit1("stablehlo.dynamic_update_slice", [x, update, *indices])
    part = np.finfo(out.dtype).dtype

    def dus(op):
        x_part, u_part = (ctx.emit1(op, [v], tensor_type(aval_of_type(v.type).shape, part)) for v in (x, update))
        return ctx.emit1("stablehlo.dynamic_update_slice", [x_part, u_part, *indices], tensor_type(out.shape, part))
    return ctx.emit1("stablehlo.complex", [dus("stablehlo.real"), dus("stablehlo.imag")])


@lowering("empty")
def _empty(ctx, *, dtype, shape, out_sharding=None):
    return ctx.constant(0, dtype, shape)


@lowering("empty2")
def _empty2(ctx, *, dtype, memory_space=None):
    return ctx.constant(0, dtype)


@lowering("iota")
def _iota(ctx, *, dtype, shape, dimension, sharding=None):
    return ctx.emit1("stablehlo.iota", [], iota_dimension=dimension)


def _reduce_body(ctx, op, scalar_type, body_op):
    block = ctx.region_block(op, [scalar_type, scalar_type])
    ip = ir.InsertionPoint(block)
    r = ir.Operation.create(body_op, results=[scalar_type], operands=list(block.arguments), loc=ctx.loc, ip=ip)
    ir.Operation.create("stablehlo.return", results=[], operands=[r.result], loc=ctx.loc, ip=ip)


def reduce(ctx, x, axes, body_op, init_value):
    aval = aval_of_type(x.type)
    scalar_t = tensor_type((), aval.dtype)
    init = ctx.constant(init_value, aval.dtype)
    out_t = tensor_type(tuple(d for i, d in enumerate(aval.shape) if i not in axes), aval.dtype)
    op = ctx.emit("stablehlo.reduce", [x, init], [out_t], {"dimensions": _attr(list(axes))}, regions=1)
    _reduce_body(ctx, op, scalar_t, body_op)
    return op.result


def _extreme(dtype, largest):
    if dtype == np.bool_:
        return largest
    if issubdtype(dtype, np.inexact):
        return np.inf if largest else -np.inf
    info = np.iinfo(dtype)
    return info.max if largest else info.min


_REDUCERS = {
    "reduce_sum": ("stablehlo.add", lambda dt: 0), "reduce_prod": ("stablehlo.multiply", lambda dt: 1),
    "reduce_max": ("stablehlo.maximum", lambda dt: _extreme(dt, False)),
    "reduce_min": ("stablehlo.minimum", lambda dt: _extreme(dt, True)),
    "reduce_and": ("stablehlo.and", lambda dt: True if dt == np.bool_ else -1),
    "reduce_or": ("stablehlo.or", lambda dt: 0), "reduce_xor": ("stablehlo.xor", lambda dt: 0),
}

for _name, (_op, _init) in _REDUCERS.items():
    LOWERINGS[_name] = (lambda body, init: lambda ctx, x, *, axes, **p: reduce(
        ctx, x, axes, body, _init_value(init, aval_of_type(x.type).dtype)))(_op, _init)


def _init_value(init, dtype):
    value = init(dtype)
    if value == -1 and issubdtype(dtype, np.unsignedinteger):
        return np.iinfo(dtype).max
    return value


@lowering("psum", "pmax", "pmin")
def _allreduce(ctx, x, *, axes, axis_index_groups):
    """Positional axes reduce as ``reduce_<op>`` (JAX's lowering does the same); a name is unbound here."""
    names, positional = split_axes(axes)
    if names:
        raise unbound_axis_name(names[0], "psum")
    if not positional:
        return x
    body, init = _REDUCERS["reduce_" + ctx.op.name[len("jaxpr.p"):]]
    return reduce(ctx, x, positional, body, _init_value(init, aval_of_type(x.type).dtype))


def _unbound_collective(api_name):
    def lower(ctx, *operands, axis_name, **params):
        raise unbound_axis_name(axis_name if isinstance(axis_name, str) else axis_name[0], api_name)
    return lower


for _name in ("all_gather", "reduce_scatter", "axis_index", "ppermute", "all_to_all"):
    LOWERINGS[_name] = _unbound_collective(_name)


@lowering("argmax", "argmin")
def _argminmax(ctx, x, *, axes, index_dtype):
    """A two-operand reduce over (value, index); NaN wins and ties keep the lower index."""
    aval = aval_of_type(x.type)
    axis = axes[0]
    idx_dtype = np.dtype(index_dtype)
    is_max = ctx.op.name == "jaxpr.argmax"
    indices = ctx.emit1("stablehlo.iota", [], tensor_type(aval.shape, idx_dtype), iota_dimension=axis)
    value_init = ctx.constant(_extreme(aval.dtype, not is_max), aval.dtype)
    index_init = ctx.constant(0, idx_dtype)
    out_shape = tuple(d for i, d in enumerate(aval.shape) if i != axis)
    op = ctx.emit("stablehlo.reduce", [x, indices, value_init, index_init],
                  [tensor_type(out_shape, aval.dtype), tensor_type(out_shape, idx_dtype)],
                  {"dimensions": _attr([axis])}, regions=1)
    vt, it = tensor_type((), aval.dtype), tensor_type((), idx_dtype)
    block = ctx.region_block(op, [vt, it, vt, it])
    _argminmax_body(ctx, block, vt, it, aval.dtype, is_max)
    # IREE 3.13 fails to compile ("linalg.yield ... expected number of yield values") when it fuses this
    # two-result reduce with a transposing consumer; a barrier keeps them in separate dispatches.
    return ctx.emit("stablehlo.optimization_barrier", [op.results[1]], [op.results[1].type]).results[0]


def _argminmax_body(ctx, block, vt, it, dtype, is_max, payload_types=()):
    """The comparator of argmax (argmin) pairs (value, index), a NaN winning and ties going to the lower index;
    ``payload_types``: values carried beside each pair, the winner's kept."""
    ip = ir.InsertionPoint(block)
    arguments = list(block.arguments)
    half = len(arguments) // 2
    (av, ai, *a_payload), (bv, bi, *b_payload) = arguments[:half], arguments[half:]
    bool_t = tensor_type((), np.dtype(np.bool_))

    def emit(name, operands, rtype, **attrs):
        return ir.Operation.create(name, results=[rtype], operands=operands,
                                   attributes={k: _attr(v) for k, v in attrs.items()}, loc=ctx.loc, ip=ip).result

    def cmp(x, y, d):
        kind = _compare_type(dtype)
        return emit("stablehlo.compare", [x, y], bool_t, comparison_direction=f"#stablehlo<comparison_direction {d}>",
                    compare_type=f"#stablehlo<comparison_type {kind}>")
    better = cmp(av, bv, "GT" if is_max else "LT")
    equal = cmp(av, bv, "EQ")
    if issubdtype(dtype, np.inexact):  # NaN beats a number; between NaNs, as between equals, the lower index wins
        a_nan, b_nan = cmp(av, av, "NE"), cmp(bv, bv, "NE")
        b_number = emit("stablehlo.not", [b_nan], bool_t)
        better = emit("stablehlo.or", [better, emit("stablehlo.and", [a_nan, b_number], bool_t)], bool_t)
        equal = emit("stablehlo.or", [equal, emit("stablehlo.and", [a_nan, b_nan], bool_t)], bool_t)
    lower_index = emit("stablehlo.compare", [ai, bi], bool_t,
                       comparison_direction="#stablehlo<comparison_direction LT>")
    pick_a = emit("stablehlo.or", [better, emit("stablehlo.and", [equal, lower_index], bool_t)], bool_t)
    value = emit("stablehlo.select", [pick_a, av, bv], vt)
    index = emit("stablehlo.select", [pick_a, ai, bi], it)
    payload = [emit("stablehlo.select", [pick_a, x, y], t) for x, y, t in zip(a_payload, b_payload, payload_types)]
    ir.Operation.create("stablehlo.return", results=[], operands=[value, index, *payload], loc=ctx.loc, ip=ip)


@lowering("dot_general")
def _dot_general(ctx, lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None):
    out = ctx.result_avals[0]
    lhs, rhs = (_convert_to(ctx, v, out.dtype) for v in (lhs, rhs))
    (lc, rc), (lb, rb) = dimension_numbers
    attr = (f"#stablehlo.dot<lhs_batching_dimensions = {list(lb)}, rhs_batching_dimensions = {list(rb)}, "
            f"lhs_contracting_dimensions = {list(lc)}, rhs_contracting_dimensions = {list(rc)}>")
    return ctx.emit1("stablehlo.dot_general", [lhs, rhs], dot_dimension_numbers=attr)


def _convert_to(ctx, value, dtype):
    aval = aval_of_type(value.type)
    if aval.dtype == dtype:
        return value
    if aval.dtype == np.bool_:
        return _from_bool(ctx, value, np.dtype(dtype))
    return ctx.emit1("stablehlo.convert", [value], tensor_type(aval.shape, dtype))


_CUMULATIVE = {"cumsum": "reduce_sum", "cumprod": "reduce_prod", "cummax": "reduce_max", "cummin": "reduce_min"}


@lowering("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
def _cumulative(ctx, x, *, axis, reverse):
    """A reduce_window over a window the length of the axis (what JAX emits on CPU)."""
    aval = aval_of_type(x.type)
    name = ctx.op.name[6:]
    n = aval.shape[axis]
    window = [1] * aval.ndim
    window[axis] = max(n, 1)
    padding = [[0, 0] for _ in range(aval.ndim)]
    padding[axis] = [0, max(n - 1, 0)] if reverse else [max(n - 1, 0), 0]
    if name == "cumlogsumexp":
        body, init = "logaddexp", -np.inf
    else:
        body, init_fn = _REDUCERS[_CUMULATIVE[name]]
        init = _init_value(init_fn, aval.dtype)
    init_v = ctx.constant(init, aval.dtype)
    if aval.dtype.kind == "u":  # IREE 3.13 cannot compile a padded unsigned reduce_window ("unresolved target
        padded = tuple(d + lo + hi for d, (lo, hi) in zip(aval.shape, padding))  # materialization ui8 to i8")
        x = ctx.emit1("stablehlo.pad", [x, init_v], tensor_type(padded, aval.dtype),
                      edge_padding_low=[lo for lo, _ in padding], edge_padding_high=[hi for _, hi in padding],
                      interior_padding=[0] * aval.ndim)
        padding = [[0, 0]] * aval.ndim
    pad_attr = ir.DenseElementsAttr.get(np.array(padding, np.int64).reshape(aval.ndim, 2),
                                        type=ir.RankedTensorType.get([aval.ndim, 2], ir.IntegerType.get_signless(64)))
    op = ctx.emit("stablehlo.reduce_window", [x, init_v], [ctx.op.results[0].type],
                  {"window_dimensions": _attr(window), "padding": pad_attr}, regions=1)
    scalar_t = tensor_type((), aval.dtype)
    if body == "logaddexp":
        _logaddexp_body(ctx, op, scalar_t)
    else:
        _reduce_body(ctx, op, scalar_t, body)
    return op.result


def _logaddexp_body(ctx, op, t):
    block = ctx.region_block(op, [t, t])
    ip = ir.InsertionPoint(block)
    a, b = block.arguments

    def emit(name, operands):
        return ir.Operation.create(name, results=[t], operands=operands, loc=ctx.loc, ip=ip).result
    hi, lo = emit("stablehlo.maximum", [a, b]), emit("stablehlo.minimum", [a, b])
    diff = emit("stablehlo.subtract", [lo, hi])
    total = emit("stablehlo.add", [hi, emit("stablehlo.log_plus_one", [emit("stablehlo.exponential", [diff])])])
    same = ir.Operation.create("stablehlo.compare", results=[tensor_type((), np.dtype(np.bool_))], operands=[hi, lo],
                               attributes={"comparison_direction": _attr("#stablehlo<comparison_direction EQ>")},
                               loc=ctx.loc, ip=ip).result
    result = ir.Operation.create("stablehlo.select", results=[t], operands=[same, emit("stablehlo.add", [
        hi, ir.Operation.create("stablehlo.constant", results=[t], attributes={"value": dense_attr(np.array(
            np.log(2.0), dtype=A.dtype_from_mlir_name(str(ir.RankedTensorType(t).element_type))), t)},
            loc=ctx.loc, ip=ip).result]), total], loc=ctx.loc, ip=ip).result
    ir.Operation.create("stablehlo.return", results=[], operands=[result], loc=ctx.loc, ip=ip)


@lowering("literal")
def _literal(ctx, *, value, weak_type=None, shown=None):
    t = ctx.op.results[0].type
    return ctx.emit("stablehlo.constant", [], [t], {"value": dense_attr(np.asarray(value), t)}).result


@lowering("pjit", "custom_jvp_call", "custom_vjp_call", "checkpoint")
def _call(ctx, *args, callee, **params):
    """A call of the function's own body; derivative rules and policies play no part in evaluation."""
    n_args = len(function_type(ctx.symbols[callee]).inputs)
    op = ctx.emit("func.call", list(args[:n_args]), [r.type for r in ctx.op.results],
                  {"callee": ir.FlatSymbolRefAttr.get(callee)})
    return list(op.results)


@lowering("custom_lin")
def _custom_lin(ctx, *args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


# Float64 and complex128 forms of the ops IREE would compile to unresolvable libm calls (see f64_math).
for _name in f64_math.NAMES:
    LOWERINGS[_name] = f64_math.lowering(_name, LOWERINGS[_name])


def lower_module(module):
    """Rewrites every jaxpr op of ``module`` into StableHLO (in place)."""
    symbols = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in module_body(module).operations
               if "sym_name" in f.attributes}
    for func in list(module_body(module).operations):
        if func.operation.name != "func.func":
            continue
        for op in body_ops(func):
            if not op.name.startswith("jaxpr."):
                continue
            opdef = OPS[op.name[6:]]
            rule = LOWERINGS.get(opdef.name)
            if rule is None:
                raise NotImplementedError(f"StableHLO lowering rule for 'jaxpr.{opdef.name}' is not implemented")
            results = rule(Lowering(op, symbols), *op.operands, **decode_params(opdef, op))
            results = results if isinstance(results, list) else [results]
            for old, new in zip(op.results, results):
                old.replace_all_uses_with(new)
            op.erase()
        _strip_jaxpr_attrs(func)


def _strip_jaxpr_attrs(func):
    for name in [n for n in func.attributes if n.startswith("jaxpr.")]:
        del func.attributes[name]


from . import lower_gather_scatter  # noqa: E402,F401  (fills LOWERINGS with gather and the scatters)
from . import lower_convolution  # noqa: E402,F401  (fills LOWERINGS with the convolution and windowed reductions)
from . import lower_control_flow  # noqa: E402,F401  (fills LOWERINGS with cond, while and scan)
from . import lower_solves  # noqa: E402,F401  (fills LOWERINGS with custom_linear_solve)
from . import lower_extras  # noqa: E402,F401  (fills LOWERINGS with tile and optimization_barrier)
from . import lower_sort  # noqa: E402,F401  (fills LOWERINGS with sort and top_k)
from . import lower_fft  # noqa: E402,F401  (fills LOWERINGS with fft)
from . import lower_decompositions  # noqa: E402,F401  (fills LOWERINGS with eigh, svd and qr)
from . import lower_blocked  # noqa: E402,F401  (fills LOWERINGS with lu, cholesky and triangular_solve)
from . import lower_tridiagonal  # noqa: E402,F401  (fills LOWERINGS with tridiagonal_solve)
from . import lower_special  # noqa: E402,F401  (fills LOWERINGS with igamma, betainc, the Bessel functions, zeta, ...)
from . import lower_callbacks  # noqa: E402,F401  (fills LOWERINGS with the host callbacks)
