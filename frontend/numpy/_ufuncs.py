"""Elementwise ``irax.numpy`` functions, ported from ``jax._src.numpy.ufuncs`` (and the elementwise
functions of ``lax_numpy``) with the same promotions, ``lax`` calls and ``jit`` boundaries: where JAX
uses ``@jit`` the function is ``staged`` under JAX's name; JAX's ``@jit(inline=True)`` leaves nothing
in a jaxpr, so those are plain functions here."""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes, lax
from irax.core import is_tracer
from irax.custom_derivatives import custom_jvp
from irax.lax._scalars import as_operand

from ._util import (_where, check_arraylike, convert, convert_element_type, ensure_arraylike, lax_const, promote_args,
                    promote_args_inexact, promote_args_numeric, promote_dtypes_inexact, promote_dtypes_numeric,
                    promote_shapes, staged_as)

_INT_DTYPES = {16: np.int16, 32: np.int32, 64: np.int64}
_constant_like = lax_const


def _to_bool(x):
    return x if x.dtype == np.bool_ else lax.ne(x, lax_const(x, 0))


def _iscomplexobj(x):
    return dtypes.issubdtype(dtypes.dtype(x), np.complexfloating)


def _unary_inexact(name, lax_fn):
    def fn(x, /):
        return lax_fn(*promote_args_inexact(name, x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}``, promoting integers to float (as ``jax.numpy.{name}``)."
    return fn


def fabs(x, /):
    x = ensure_arraylike("fabs", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(*promote_args_inexact("fabs", x))


def invert(x, /):
    return lax.bitwise_not(*promote_args("invert", x))


def bitwise_not(x, /):
    return lax.bitwise_not(*promote_args("bitwise_not", x))


def bitwise_invert(x, /):
    return lax.bitwise_not(*promote_args("bitwise_invert", x))


def negative(x, /):
    return lax.neg(*promote_args("negative", x))


def positive(x, /):
    return promote_args("positive", x)[0]


def sign(x, /):
    return lax.sign(*promote_args("sign", x))


def floor(x, /):
    x = ensure_arraylike("floor", x)
    if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.integer):
        return x
    return lax.floor(*promote_args_inexact("floor", x))


def ceil(x, /):
    x = ensure_arraylike("ceil", x)
    if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.integer):
        return x
    return lax.ceil(*promote_args_inexact("ceil", x))


sin = _unary_inexact("sin", lax.sin)
cos = _unary_inexact("cos", lax.cos)
tan = _unary_inexact("tan", lax.tan)
arcsin = _unary_inexact("arcsin", lax.asin)
arccos = _unary_inexact("arccos", lax.acos)
arctan = _unary_inexact("arctan", lax.atan)
sinh = _unary_inexact("sinh", lax.sinh)
cosh = _unary_inexact("cosh", lax.cosh)
tanh = _unary_inexact("tanh", lax.tanh)
arcsinh = _unary_inexact("arcsinh", lax.asinh)
arctanh = _unary_inexact("arctanh", lax.atanh)
exp = _unary_inexact("exp", lax.exp)
exp2 = _unary_inexact("exp2", lax.exp2)
expm1 = _unary_inexact("expm1", lax.expm1)
log = _unary_inexact("log", lax.log)
log1p = _unary_inexact("log1p", lax.log1p)
sqrt = _unary_inexact("sqrt", lax.sqrt)
cbrt = _unary_inexact("cbrt", lax.cbrt)


@staged_as("arccosh")
def arccosh(x, /):
    # arccosh is multi-valued for complex input; lax.acosh's convention differs from NumPy's.
    result = lax.acosh(*promote_args_inexact("arccosh", x))
    if dtypes.issubdtype(result.dtype, np.complexfloating):
        result = _where(lax.lt(real(result), lax_const(lax.real(result), 0)), lax.neg(result), result)
    return result


def acos(x, /):
    return arccos(*promote_args("acos", x))


def acosh(x, /):
    return arccosh(*promote_args("acosh", x))


def asin(x, /):
    return arcsin(*promote_args("asin", x))


def asinh(x, /):
    return arcsinh(*promote_args("asinh", x))


def atan(x, /):
    return arctan(*promote_args("atan", x))


def atanh(x, /):
    return arctanh(*promote_args("atanh", x))


def add(x, y, /):
    """Elementwise sum (logical or for booleans, as JAX)."""
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if x.dtype == np.bool_ else lax.add(x, y)


def multiply(x, y, /):
    """Elementwise product (logical and for booleans, as JAX)."""
    x, y = promote_args("multiply", x, y)
    return lax.mul(x, y) if x.dtype != np.bool_ else lax.bitwise_and(x, y)


def bitwise_and(x, y, /):
    return lax.bitwise_and(*promote_args("bitwise_and", x, y))


def bitwise_or(x, y, /):
    return lax.bitwise_or(*promote_args("bitwise_or", x, y))


def bitwise_xor(x, y, /):
    return lax.bitwise_xor(*promote_args("bitwise_xor", x, y))


def left_shift(x, y, /):
    """``x << y``; booleans shift as int32 (as JAX)."""
    return lax.shift_left(*promote_args_numeric("left_shift", x, y))


def bitwise_left_shift(x, y, /):
    return lax.shift_left(*promote_args_numeric("bitwise_left_shift", x, y))


def equal(x, y, /):
    return lax.eq(*promote_args("equal", x, y))


def not_equal(x, y, /):
    return lax.ne(*promote_args("not_equal", x, y))


def subtract(x, y, /):
    return lax.sub(*promote_args("subtract", x, y))


def arctan2(x1, x2, /):
    return lax.atan2(*promote_args_inexact("arctan2", x1, x2))


def minimum(x, y, /):
    return lax.min(*promote_args("minimum", x, y))


def maximum(x, y, /):
    return lax.max(*promote_args("maximum", x, y))


def float_power(x, y, /):
    return lax.pow(*promote_args_inexact("float_power", x, y))


def nextafter(x, y, /):
    return lax.nextafter(*promote_args_inexact("nextafter", x, y))


def spacing(x, /):
    """Distance to the next representable number away from zero."""
    (arr,) = promote_args_inexact("spacing", x)
    if dtypes.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = lax_const(arr, np.inf)
    # (JAX passes finfo's NumPy scalar; as an array it has the same signature as ``inf``, so the two
    # copysign calls share one traced function, as JAX's do.)
    smallest_subnormal = lax_const(arr, dtypes.finfo(arr.dtype).smallest_subnormal)
    if arr.dtype == np.float16:
        return subtract(lax.nextafter(arr, inf), arr)
    result = subtract(lax.nextafter(arr, copysign(inf, arr)), arr)
    return _where(equal(result, 0), copysign(smallest_subnormal, arr), result)


def logical_and(x, y, /):
    return lax.bitwise_and(*map(_to_bool, promote_args("logical_and", x, y)))


def logical_or(x, y, /):
    return lax.bitwise_or(*map(_to_bool, promote_args("logical_or", x, y)))


def logical_xor(x, y, /):
    return lax.bitwise_xor(*map(_to_bool, promote_args("logical_xor", x, y)))


def logical_not(x, /):
    return lax.bitwise_not(*map(_to_bool, promote_args("logical_not", x)))


def _complex_comparison(lax_op, x, y):
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.select(lax.eq(lax.real(x), lax.real(y)), lax_op(lax.imag(x), lax.imag(y)),
                          lax_op(lax.real(x), lax.real(y)))
    return lax_op(x, y)


def greater_equal(x, y, /):
    return _complex_comparison(lax.ge, *promote_args("greater_equal", x, y))


def greater(x, y, /):
    return _complex_comparison(lax.gt, *promote_args("greater", x, y))


def less_equal(x, y, /):
    return _complex_comparison(lax.le, *promote_args("less_equal", x, y))


def less(x, y, /):
    return _complex_comparison(lax.lt, *promote_args("less", x, y))


def atan2(x1, x2, /):
    return arctan2(*promote_args("atan2", x1, x2))


@staged_as("bitwise_count")
def bitwise_count(x, /):
    """Number of set bits in ``|x|``, as ``uint8`` (NumPy's rule)."""
    (x,) = promote_args_numeric("bitwise_count", x)
    return convert(lax.population_count(abs(x)), np.uint8)


def right_shift(x1, x2, /):
    """``x >> y``: logical for unsigned integers, arithmetic otherwise; booleans shift as int32."""
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    lax_fn = lax.shift_right_logical if np.issubdtype(x1.dtype, np.unsignedinteger) else \
        lax.shift_right_arithmetic
    return lax_fn(x1, x2)


def bitwise_right_shift(x1, x2, /):
    return right_shift(x1, x2)


def absolute(x, /):
    """Absolute value; identity for booleans and unsigned integers (as JAX)."""
    x = ensure_arraylike("absolute", x)
    dt = x.dtype
    return x if dt == np.bool_ or dtypes.issubdtype(dt, np.unsignedinteger) else lax.abs(x)


def abs(x, /):
    return absolute(x)


@staged_as("rint")
def rint(x, /):
    """Rounds half to even; integers and bools become the default float dtype (as ``jnp.rint``)."""
    x = ensure_arraylike("rint", x)
    dtype = x.dtype
    if dtype == np.bool_ or dtypes.issubdtype(dtype, np.integer):
        return convert_element_type(x, dtypes.default_float_dtype())
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@staged_as("copysign")
def copysign(x1, x2, /):
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        raise TypeError("copysign does not support complex-valued inputs")
    return _where(signbit(x2).astype(np.bool_), negative(lax.abs(x1)), lax.abs(x1))


def true_divide(x1, x2, /):
    """Elementwise ``x / y``, promoting integers to float."""
    x1, x2 = promote_args_inexact("true_divide", x1, x2)
    return lax.div(x1, x2)


def divide(x1, x2, /):
    return true_divide(x1, x2)


@staged_as("floor_divide")
def floor_divide(x1, x2, /):
    """Integer division rounding towards negative infinity; float division then floor; bools divide as int32."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dtype = x1.dtype
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return lax.div(x1, x2)
    if dtypes.issubdtype(dtype, np.integer):
        quotient = lax.div(x1, x2)
        select = logical_and(not_equal(lax.sign(x1), lax.sign(x2)), not_equal(lax.rem(x1, x2), 0))
        return _where(select, subtract(quotient, 1), quotient)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


@staged_as("divmod")
def divmod(x1, x2, /):
    """``(x1 // x2, x1 % x2)``; bools divide as int32."""
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.integer):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _float_divmod(x1, x2):
    """CPython's ``float_divmod``; a zero divisor gives ``x1 / 0`` (signed infinity), as JAX."""
    mod = lax.rem(x1, x2)
    x1_corrected = _where(equal(x2, 0), x1, lax.sub(x1, mod))
    div = lax.div(x1_corrected, x2)
    ind = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(ind, add(mod, x2), mod)
    div = lax.select(ind, subtract(div, 1.0), div)
    return lax.round(div), mod


def power(x1, x2, /):
    """``x1 ** x2``, as ``jnp.power``.

    A concrete integer exponent (a Python, NumPy or unstaged irax integer, or a bool) becomes
    ``integer_pow``; integer and boolean bases with array exponents use binary exponentiation in
    int32 or wider; float and complex bases keep their dtype under an integer exponent array.
    """
    check_arraylike("power", x1, x2)
    x1, x2 = (x.__jax_array__() if hasattr(x, "__jax_array__") else x for x in (x1, x2))
    exponent = _concrete_index(x2)
    if exponent is not None:
        (x1,) = promote_dtypes_numeric(x1)
        return lax.integer_pow(x1, exponent)
    return _power(x1, x2)


def pow(x1, x2, /):
    return power(x1, x2)


def _concrete_index(x):
    if is_tracer(x):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _power(x1, x2):
    x1, x2 = (as_operand(x) if isinstance(x, (np.ndarray, np.generic)) else x for x in (x1, x2))
    if np.ndim(x1) != np.ndim(x2) and np.ndim(x1) and np.ndim(x2):
        x1, x2 = promote_shapes("power", x1, x2)  # not dtypes
    # (Python scalars stay as they are: JAX's lax.asarray(2) folds into a literal once converted.)
    x1_, x2_ = promote_args_numeric("power", x1, x2)
    if dtypes.issubdtype(x1_.dtype, np.integer) or x1_.dtype == np.bool_:
        return _pow_int_int(x1_, x2_)
    d1, d2 = dtypes.dtype(x1, canonicalize=True), dtypes.dtype(x2, canonicalize=True)
    if dtypes.issubdtype(d1, np.inexact) and dtypes.issubdtype(d2, np.integer):
        # JAX binds pow(float, int); the dialect's pow takes one dtype, so the exponent converts
        # to the base's dtype, keeping its own weak type (the result is weak only if both are).
        return lax.pow(convert(x1, d1, dtypes.is_weakly_typed(x1)), convert(x2, d1, dtypes.is_weakly_typed(x2)))
    return lax.pow(x1_, x2_)


def _pow_int_int(x1, x2):
    """Binary exponentiation in six steps (any base above 1 overflows before 2**64), as JAX."""
    zero, one = _constant_like(x2, 0), _constant_like(x2, 1)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def logaddexp(x1, x2, /):
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


def logaddexp2(x1, x2, /):
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2(x1, x2)


def log2(x, /):
    (x,) = promote_args_inexact("log2", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(_constant_like(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(x), lax.log(_constant_like(x, 2)))


def log10(x, /):
    (x,) = promote_args_inexact("log10", x)
    one_over_log10 = convert(0.4342944819032518, dtypes.finfo(x.dtype).dtype)  # exactly 1 / log(10)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        r = lax.log(x)
        return lax.complex(lax.mul(lax.real(r), one_over_log10), lax.mul(lax.imag(r), one_over_log10))
    return lax.mul(lax.log(x), one_over_log10)


@staged_as("signbit")
def signbit(x, /):
    (x,) = promote_args("signbit", x)
    dtype = x.dtype
    if dtypes.issubdtype(dtype, np.integer):
        return lax.lt(x, _constant_like(x, 0))
    if dtype == np.bool_:
        return lax.full_like(x, False, dtype=np.bool_)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError("jax.numpy.signbit is not well defined for %s" % dtype)
    info = dtypes.finfo(dtype)
    if info.bits not in _INT_DTYPES:
        raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
    x = lax.bitcast_convert_type(x, _INT_DTYPES[info.bits])
    return convert_element_type(right_shift(x, info.nexp + info.nmant), np.bool_)


def _normalize_float(x):
    info = dtypes.finfo(x.dtype)
    int_type = np.dtype(_INT_DTYPES[info.bits])
    cond = less(lax.abs(x), info.tiny)
    x1 = _where(cond, multiply(x, lax_const(x, 1 << info.nmant)), x)
    # (JAX passes NumPy scalars; as arrays they have the signature of other int32 scalars, so the traced
    # ``_where`` is shared as JAX shares it.)
    x2 = _where(cond, convert(-info.nmant, int_type), convert(0, int_type))
    return lax.bitcast_convert_type(x1, int_type), x2


@staged_as("ldexp")
def ldexp(x1, x2, /):
    """``x1 * 2**x2`` without intermediate overflow (the exponent is applied after ``frexp``)."""
    x1, x2 = ensure_arraylike("ldexp", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating) or dtypes.issubdtype(x2.dtype, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = add(e.astype(x2.dtype), x2).astype(x1.dtype)
    m = _where(greater(e, 0), multiply(m, 2), m)
    e = _where(greater(e, 0), subtract(e, 1), e)
    x = multiply(m, power(2, e.astype(m.dtype)))
    return _where(bitwise_or(isinf(x1), equal(x1, 0)), x1, x)


@staged_as("frexp")
def frexp(x, /):
    """Mantissa in ``[0.5, 1)`` and integer exponent, by splitting the float's bits."""
    x = ensure_arraylike("frexp", x)
    (x,) = promote_dtypes_inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


def _frexp_impl(x):
    dtype = x.dtype
    info = dtypes.finfo(dtype)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    x1, x2 = _normalize_float(x)
    x2 = add(x2, add(subtract(bitwise_and(right_shift(x1, info.nmant), mask), bias), 1))
    x1 = bitwise_and(x1, ~(mask << info.nmant))
    x1 = bitwise_or(x1, (bias - 1) << info.nmant)
    x1 = lax.bitcast_convert_type(x1, dtype)
    cond = bitwise_or(bitwise_or(isinf(x), isnan(x)), equal(x, 0))
    x2 = _where(cond, lax.full_like(x2, 0), x2)
    return _where(cond, x, x1), convert_element_type(x2, np.int32)


_frexp_impl.__name__ = _frexp_impl.__qualname__ = "_frexp"
_frexp = custom_jvp(_frexp_impl)


def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    m, e = frexp(x)
    mdot = multiply(t, exp2(negative(e.astype(t.dtype))))
    edot = lax.full_like(e, 0)  # JAX: float0 zeros; irax takes integer zeros as a symbolic-zero tangent
    return (m, e), (mdot, edot)


_frexp.defjvp(_frexp_jvp)


@staged_as("remainder")
def remainder(x1, x2, /):
    """Remainder with the sign of the divisor (Python's ``%``); bools divide as int32."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    zero = _constant_like(x1, 0)
    if dtypes.issubdtype(x2.dtype, np.integer):
        x2 = _where(equal(x2, 0), lax.full_like(x2, 1), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


def mod(x1, x2, /):
    return remainder(x1, x2)


@staged_as("fmod")
def fmod(x1, x2, /):
    x1, x2 = ensure_arraylike("fmod", x1, x2)
    if dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer):
        x2 = _where(equal(x2, 0), lax.full_like(x2, 1), x2)
    return lax.rem(*promote_args_numeric("fmod", x1, x2))


def square(x, /):
    x = ensure_arraylike("square", x)
    (x,) = promote_dtypes_numeric(x)
    return lax.square(x)


def deg2rad(x, /):
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, lax_const(x, np.pi / 180))


def rad2deg(x, /):
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, lax_const(x, 180 / np.pi))


def degrees(x, /):
    return rad2deg(x)


def radians(x, /):
    return deg2rad(x)


def conjugate(x, /):
    x = ensure_arraylike("conjugate", x)
    return lax.conj(x) if _iscomplexobj(x) else x


def conj(x, /):
    return conjugate(x)


def imag(val, /):
    val = ensure_arraylike("imag", val)
    return lax.imag(val) if _iscomplexobj(val) else lax.full_like(val, 0)


def real(val, /):
    val = ensure_arraylike("real", val)
    return lax.real(val) if _iscomplexobj(val) else val


@staged_as("modf")
def modf(x, /, out=None):
    """``(fractional, integral)`` parts, both with the sign of ``x``."""
    x = ensure_arraylike("modf", x)
    (x,) = promote_dtypes_inexact(x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = _where(lax.ge(x, lax_const(x, 0)), floor(x), ceil(x))
    return subtract(x, whole), whole


def isfinite(x, /):
    x = ensure_arraylike("isfinite", x)
    dtype = x.dtype
    if dtypes.issubdtype(dtype, np.floating):
        return lax.is_finite(x)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.bitwise_and(lax.is_finite(real(x)), lax.is_finite(imag(x)))
    return lax.full_like(x, True, dtype=np.bool_)


@staged_as("isinf")
def isinf(x, /):
    x = ensure_arraylike("isinf", x)
    dtype = x.dtype
    if dtypes.issubdtype(dtype, np.floating):
        return lax.eq(lax.abs(x), _constant_like(x, np.inf))
    if dtypes.issubdtype(dtype, np.complexfloating):
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), _constant_like(re, np.inf)),
                              lax.eq(lax.abs(im), _constant_like(im, np.inf)))
    return lax.full_like(x, False, dtype=np.bool_)


def _isposneginf(infinity, x, out):
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    dtype = x.dtype
    if dtypes.issubdtype(dtype, np.floating):
        return lax.eq(x, _constant_like(x, infinity))
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax.full_like(x, False, dtype=np.bool_)


def isposinf(x, /, out=None):
    return _isposneginf(np.inf, ensure_arraylike("isposinf", x), out)


def isneginf(x, /, out=None):
    return _isposneginf(-np.inf, ensure_arraylike("isneginf", x), out)


def isnan(x, /):
    x = ensure_arraylike("isnan", x)
    return lax.ne(x, x)


@staged_as("heaviside")
def heaviside(x1, x2, /):
    x1, x2 = ensure_arraylike("heaviside", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2)
    zero = lax_const(x1, 0)
    return _where(lax.lt(x1, zero), zero,
                  _where(lax.gt(x1, zero), lax_const(x1, 1), _where(lax.ne(x1, x1), x1, x2)))


@staged_as("hypot")
def hypot(x1, x2, /):
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. "
                         "Please convert to real values first, such as by using abs(x)")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    idx_inf = lax.bitwise_or(isposinf(x1), isposinf(x2))
    x1, x2 = maximum(x1, x2), minimum(x1, x2)
    x = _where(equal(x1, 0), x1, multiply(x1, lax.sqrt(add(1, lax.square(
        lax.div(x2, _where(equal(x1, 0), lax.full_like(x1, 1), x1)))))))
    return _where(idx_inf, lax_const(x, np.inf), x)


def reciprocal(x, /):
    x = ensure_arraylike("reciprocal", x)
    (x,) = promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


@staged_as("sinc")
def sinc(x, /):
    x = ensure_arraylike("sinc", x)
    (x,) = promote_dtypes_inexact(x)
    eq_zero = lax.eq(x, lax_const(x, 0))
    pi_x = lax.mul(lax_const(x, np.pi), x)
    safe_pi_x = _where(eq_zero, lax_const(x, 1), pi_x)
    return _where(eq_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))


def _sinc_maclaurin_impl(k, x):
    # The k-th derivative of sin(x)/x at zero (the jvp rule supplies the monomial terms).
    if k % 2:
        return multiply(x, 0)
    return add(multiply(x, 0), lax_const(x, (-1) ** (k // 2) / (k + 1)))


_sinc_maclaurin_impl.__name__ = _sinc_maclaurin_impl.__qualname__ = "_sinc_maclaurin"
_sinc_maclaurin = custom_jvp(_sinc_maclaurin_impl, nondiff_argnums=(0,))


# irax traces a custom_jvp's rule when the function is called (JAX, when it is differentiated), so the
# chain k -> k + 1 -> ... must end: past this order the coefficient is a plain function (exact values
# for derivatives of sinc at 0 up to this order).
_SINC_MAX_ORDER = 4


def _sinc_maclaurin_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    nxt = _sinc_maclaurin if k + 1 < _SINC_MAX_ORDER else _sinc_maclaurin_impl
    return _sinc_maclaurin(k, x), multiply(nxt(k + 1, x), t)


_sinc_maclaurin.defjvp(_sinc_maclaurin_jvp)


# --- elementwise functions of jax._src.numpy.lax_numpy ---

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``select(condition, x, y)`` with broadcasting; the one-argument form is ``nonzero``."""
    if x is None and y is None:
        check_arraylike("where", condition)
        from ._misc import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    check_arraylike("where", condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where function.")
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where, "
                         "got {} and {}.".format(x, y))
    return _where(condition, x, y)


@staged_as("fmin")
def fmin(x1, x2):
    """Elementwise minimum that ignores a NaN when the other operand is a number."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


@staged_as("fmax")
def fmax(x1, x2):
    """Elementwise maximum that ignores a NaN when the other operand is a number."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


@staged_as("trunc")
def trunc(x):
    x = ensure_arraylike("trunc", x)
    if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.integer):
        return x
    return where(lax.lt(x, lax_const(x, 0)), ceil(x), floor(x))


fix = trunc


@staged_as("iscomplex")
def iscomplex(x):
    i = imag(x)
    return lax.ne(i, lax_const(i, 0))


@staged_as("isreal")
def isreal(x):
    i = imag(x)
    return lax.eq(i, lax_const(i, 0))


def angle(z, deg=False):
    """The complex argument ``atan2(imag, real)``, in the default float dtype for real input."""
    return _angle(z, deg=deg)


@staged_as("angle", static_argnames=("deg",))
def _angle(z, deg=False):
    z = ensure_arraylike("angle", z)
    re, im = real(z), imag(z)
    dtype = re.dtype
    if not dtypes.issubdtype(dtype, np.inexact) or (dtypes.issubdtype(z.dtype, np.floating) and z.ndim == 0):
        dtype = dtypes.default_float_dtype()
        re, im = convert_element_type(re, dtype), convert_element_type(im, dtype)
    result = lax.atan2(im, re)
    return degrees(result) if deg else result


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """Clamps values into ``[min, max]`` (either bound may be None), as ``jnp.clip`` (a jit named ``clip``)."""
    arr = a if arr is None else arr
    min = a_min if min is None else min
    max = a_max if max is None else max
    return _clip(arr, min, max)


@staged_as("clip")
def _clip(arr=None, /, min=None, max=None):
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if builtins_any(t is not None and _iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError("Clip received a complex value either through the input or the min/max keywords. Complex "
                         "values have no ordering and cannot be clipped. Please convert to a real value or array by "
                         "taking the real or imaginary components via jax.numpy.real/imag respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return ensure_arraylike("clip", arr)


def round(a, decimals=0, out=None):
    """Rounds half to even to ``decimals`` digits, as ``jnp.round`` (integers are returned as they are).

    Raises:
        NotImplementedError: for ``out``, or for negative ``decimals`` with an integer array.
    """
    return _round(a, decimals=decimals, out=out)


@staged_as("round", static_argnames=("decimals",))
def _round(a, decimals=0, out=None):
    a = ensure_arraylike("round", a)
    decimals = operator.index(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dtype = a.dtype
    if dtypes.issubdtype(dtype, np.integer):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a  # no-op on integer types

    def _round_float(x):
        if decimals == 0:
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        # Scaling in float16 loses too much, so it happens in float32.
        x = convert_element_type(x, np.float32) if dtype == np.float16 else x
        factor = lax_const(x, 10 ** decimals)
        out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
        return convert_element_type(out, dtype) if dtype == np.float16 else out

    if decimals > np.log10(float(dtypes.finfo(dtype).max)):  # for bools, finfo raises as in JAX
        return a  # rounding beyond the input precision is a no-op
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(_round_float(lax.real(a)), _round_float(lax.imag(a)))
    return _round_float(a)


def around(a, decimals=0, out=None):
    return _around(a, decimals=decimals, out=out)


@staged_as("around", static_argnames=("decimals",))
def _around(a, decimals=0, out=None):
    return round(a, decimals, out)


@staged_as("nan_to_num")
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    del copy
    x = ensure_arraylike("nan_to_num", x)
    dtype = x.dtype
    if not dtypes.issubdtype(dtype, np.inexact):
        return x
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), _asarray(nan, dtype), x)
    out = where(isposinf(out), _asarray(posinf, dtype), out)
    return where(isneginf(out), _asarray(neginf, dtype), out)


def _asarray(x, dtype):
    from ._creation import asarray
    return asarray(x, dtype=dtype)


def builtins_any(it):
    for v in it:
        if v:
            return True
    return False


# --- logaddexp (lax_other.logaddexp / logaddexp2, custom_jvp functions) ---

def _wrap_between(x, a):
    """``x`` wrapped into ``[-a, a]``."""
    rem = lax.rem(lax.add(x, convert(a, x.dtype)), convert(2 * a, x.dtype))
    rem = lax.select(lax.lt(rem, convert(0, x.dtype)), lax.add(rem, convert(2 * a, x.dtype)), rem)
    return lax.sub(rem, convert(a, x.dtype))


def _replace_inf(x):
    re_x = lax.real(x) if dtypes.issubdtype(x.dtype, np.complexfloating) else x
    return lax.select(lax.eq(re_x, convert(np.inf, re_x.dtype)), lax.full_like(x, 0), x)


def _logaddexp_by(exp, scale, wrap):
    """JAX's logaddexp (``exp``, ``scale`` = 1) or logaddexp2 (``exp2``, ``scale`` = 1/log 2), with its custom
    JVP: at ties the derivative splits evenly, where differentiating ``max`` and ``abs`` would not."""
    def fun(x1, x2):
        amax = lax.max(x1, x2)
        if dtypes.issubdtype(x1.dtype, np.floating):
            delta = lax.sub(x1, x2)
            is_nan, both = lax.ne(delta, delta), lax.add(x1, x2)
            log1p_term = lax.log1p(exp(lax.neg(lax.abs(delta))))
            if scale != 1:
                log1p_term = lax.mul(convert(scale, amax.dtype), log1p_term)
            return lax.select(is_nan, both, lax.add(amax, log1p_term))
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, convert(2, amax.dtype)))
        log1p_term = lax.log1p(exp(delta))
        if scale != 1:
            log1p_term = lax.mul(convert(scale, amax.dtype), log1p_term)
        out = lax.add(amax, log1p_term)
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), wrap))
    return fun


def _custom_logaddexp(name, exp, scale, wrap):
    """The custom_jvp function ``name`` (JAX's names show in jaxprs: ``name``, ``_{name}_jvp``)."""
    fun = custom_jvp(_logaddexp_by(exp, scale, wrap))
    fun.__name__ = name

    def jvp(primals, tangents):
        (x1, x2), (t1, t2) = primals, tangents
        primal_out = fun(x1, x2)
        return primal_out, lax.add(lax.mul(t1, exp(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
                                   lax.mul(t2, exp(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
    jvp.__name__ = f"_{name}_jvp"
    fun.defjvp(jvp)
    return fun


_logaddexp = _custom_logaddexp("logaddexp", lax.exp, 1, np.pi)
_logaddexp2 = _custom_logaddexp("logaddexp2", lax.exp2, 1 / np.log(2), np.pi / np.log(2))
