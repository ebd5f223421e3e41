"""Elementwise ``irax.numpy`` functions: JAX's promotion, then one ``lax`` primitive (or a few)."""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.core import is_tracer
from irax.custom_derivatives import custom_jvp

from ._util import (check_arraylike, convert, promote_args, promote_args_inexact, promote_args_numeric, promote_dtypes,
                    promote_dtypes_numeric, promote_shapes, staged_as)


def _unary_inexact(name, lax_fn):
    def fn(x, /):
        (x,) = promote_args_inexact(name, x)
        return lax_fn(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}``, promoting integers to float (as ``jax.numpy.{name}``)."
    return fn


def _unary(name, lax_fn):
    def fn(x, /):
        (x,) = promote_args(name, x)
        return lax_fn(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (as ``jax.numpy.{name}``)."
    return fn


def _binary(name, lax_fn):
    def fn(x, y, /):
        x, y = promote_args(name, x, y)
        return lax_fn(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting and JAX's type promotion."
    return fn


def _binary_inexact(name, lax_fn):
    def fn(x, y, /):
        x, y = promote_args_inexact(name, x, y)
        return lax_fn(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}``, promoting integers to float."
    return fn


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
arccosh = _unary_inexact("arccosh", lax.acosh)
arctanh = _unary_inexact("arctanh", lax.atanh)
exp = _unary_inexact("exp", lax.exp)
exp2 = _unary_inexact("exp2", lax.exp2)
expm1 = _unary_inexact("expm1", lax.expm1)
log = _unary_inexact("log", lax.log)
log1p = _unary_inexact("log1p", lax.log1p)
sqrt = _unary_inexact("sqrt", lax.sqrt)
cbrt = _unary_inexact("cbrt", lax.cbrt)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh



def add(x, y, /):
    """Elementwise sum (logical or for booleans, as JAX)."""
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if x.dtype == np.bool_ else lax.add(x, y)


subtract = _binary("subtract", lax.sub)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)


def _ordering(name, lax_fn):
    def fn(x, y, /):
        x, y = promote_args(name, x, y)
        if not dtypes.issubdtype(x.dtype, np.complexfloating):
            return lax_fn(x, y)
        # Complex numbers order lexicographically, by real part then imaginary part, as in JAX.
        same_real = lax.eq(lax.real(x), lax.real(y))
        by_imag = lax_fn(lax.imag(x), lax.imag(y))
        return lax.select_n(same_real, lax_fn(lax.real(x), lax.real(y)), by_imag)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting and JAX's type promotion."
    return fn


less = _ordering("less", lax.lt)
less_equal = _ordering("less_equal", lax.le)
greater = _ordering("greater", lax.gt)
greater_equal = _ordering("greater_equal", lax.ge)
arctan2 = _binary_inexact("arctan2", lax.atan2)
atan2 = arctan2
nextafter = _binary_inexact("nextafter", lax.nextafter)


def multiply(x, y, /):
    """Elementwise product (logical and for booleans, as JAX)."""
    x, y = promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if x.dtype == np.bool_ else lax.mul(x, y)


def true_divide(x, y, /):
    """Elementwise ``x / y``, promoting integers to float."""
    x, y = promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide


def negative(x, /):
    (x,) = promote_args("negative", x)
    return lax.neg(x)


def positive(x, /):
    (x,) = promote_args("positive", x)
    return x


def abs(x, /):
    """Absolute value; identity for booleans and unsigned integers (as JAX)."""
    (x,) = promote_args("abs", x)
    if x.dtype == np.bool_ or np.issubdtype(x.dtype, np.unsignedinteger):
        return x
    return lax.abs(x)


absolute = abs
fabs = _unary_inexact("fabs", lax.abs)


def sign(x, /):
    (x,) = promote_args("sign", x)
    return lax.sign(x)


def square(x, /):
    (x,) = promote_args("square", x)
    return lax.square(x)


def reciprocal(x, /):
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def floor(x, /):
    (x,) = promote_args("floor", x)
    return x if not dtypes.issubdtype(x.dtype, np.inexact) else lax.floor(x)


def ceil(x, /):
    (x,) = promote_args("ceil", x)
    return x if not dtypes.issubdtype(x.dtype, np.inexact) else lax.ceil(x)


def trunc(x):
    (x,) = promote_args("trunc", x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return x
    return where(lax.lt(x, convert(0, x.dtype)), lax.ceil(x), lax.floor(x))


@staged_as("rint")
def rint(x, /):
    """Rounds half to even; integers and bools become the default float dtype (as ``jnp.rint``)."""
    check_arraylike("rint", x)
    x = lax._scalars.as_operand(x)
    if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.integer):
        return convert(x, dtypes.default_float_dtype())
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0, out=None):
    """Rounds half to even to ``decimals`` digits, as ``jnp.round`` (integers are returned as they are).

    Raises:
        NotImplementedError: for ``out``, or for negative ``decimals`` with an integer array.
    """
    check_arraylike("round", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    return _round(a, operator.index(decimals))


@staged_as("round", static_argnums=(1,))
def _round(a, decimals):
    a = lax._scalars.as_operand(a)
    dtype = a.dtype
    if dtypes.issubdtype(dtype, np.integer):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals > np.log10(float(dtypes.finfo(dtype).max)):  # for bools, finfo raises as in JAX
        return a  # rounding beyond the input precision is a no-op
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(_round_float(lax.real(a), decimals), _round_float(lax.imag(a), decimals))
    return _round_float(a, decimals)


def _round_float(x, decimals):
    if decimals == 0:
        return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    dtype = x.dtype
    x = convert(x, np.float32) if dtype == np.float16 else x  # scaling in float16 loses too much
    factor = convert(10 ** decimals, x.dtype, x.weak_type)
    out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    return convert(out, dtype) if dtype == np.float16 else out


around = round
fix = trunc


def isfinite(x, /):
    (x,) = promote_args("isfinite", x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return lax.full_like(x, True, dtype=np.bool_)
    return lax.is_finite(x)


def isinf(x, /):
    (x,) = promote_args("isinf", x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return lax.full_like(x, False, dtype=np.bool_)
    return lax.eq(lax.abs(x), convert(np.inf, x.dtype))


def isnan(x, /):
    (x,) = promote_args("isnan", x)
    return lax.ne(x, x)


def isposinf(x, /, out=None):
    (x,) = promote_args("isposinf", x)
    return lax.eq(x, convert(np.inf, x.dtype))


def isneginf(x, /, out=None):
    (x,) = promote_args("isneginf", x)
    return lax.eq(x, convert(-np.inf, x.dtype))


def signbit(x, /):
    (x,) = promote_args("signbit", x)
    if np.issubdtype(x.dtype, np.integer):
        return lax.lt(x, convert(0, x.dtype))
    if x.dtype == np.bool_:
        return lax.full_like(x, False, dtype=np.bool_)
    int_type = np.dtype(f"i{x.dtype.itemsize}")
    return lax.lt(lax.bitcast_convert_type(x, int_type), convert(0, int_type))


def logical_not(x, /):
    (x,) = promote_args("logical_not", x)
    return lax.bitwise_not(x if x.dtype == np.bool_ else lax.ne(x, convert(0, x.dtype)))


def _logical(name, lax_fn):
    def fn(x, y, /):
        x, y = promote_args(name, x, y)
        to_bool = lambda v: v if v.dtype == np.bool_ else lax.ne(v, convert(0, v.dtype))
        return lax_fn(to_bool(x), to_bool(y))
    fn.__name__ = name
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def _bitwise(name, lax_fn):
    def fn(x, y, /):
        x, y = promote_args(name, x, y)
        if not (x.dtype == np.bool_ or np.issubdtype(x.dtype, np.integer)):
            raise TypeError(f"{name} requires integer or boolean arguments, got {x.dtype.name}")
        return lax_fn(x, y)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)


def left_shift(x, y, /):
    """``x << y``; booleans shift as int32 (as JAX)."""
    return lax.shift_left(*promote_args_numeric("left_shift", x, y))


def right_shift(x, y, /):
    """``x >> y``: logical for unsigned integers, arithmetic otherwise; booleans shift as int32."""
    x, y = promote_args_numeric("right_shift", x, y)
    if np.issubdtype(x.dtype, np.unsignedinteger):
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


def invert(x, /):
    (x,) = promote_args("invert", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``select(condition, x, y)`` with broadcasting; the one-argument form is ``nonzero``."""
    if x is None and y is None:
        raise NotImplementedError("jnp.where(condition) (nonzero) arrives with dynamic indexing")
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where, "
                         "got {} and {}.".format(x, y))
    return _where(condition, x, y)


@staged
def _where(condition, x, y):
    check_arraylike("where", condition, x, y)
    if not isinstance(condition, bool) and getattr(condition, "dtype", None) != np.bool_:
        condition = lax.ne(condition, convert(0, dtypes.dtype(condition)))
    x, y = promote_dtypes(x, y)
    condition = lax._scalars.as_operand(condition)
    shape = np.broadcast_shapes(condition.shape, x.shape, y.shape)
    x, y = _broadcast_to(x, shape), _broadcast_to(y, shape)
    if condition.ndim:  # select_n takes a scalar condition as it is, as JAX's _where relies on
        condition = _broadcast_to(condition, shape)
    return lax.select_n(condition, y, x)


def _broadcast_to(a, shape):
    if tuple(a.shape) == tuple(shape):
        return a
    nd = len(shape)
    kept = [i for i, d in enumerate(a.shape) if d == shape[nd - a.ndim + i]]
    squeezed = lax.reshape(a, [a.shape[i] for i in kept]) if len(kept) != a.ndim else a
    return lax.broadcast_in_dim(squeezed, shape, [nd - a.ndim + i for i in kept])


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


pow = power


def _concrete_index(x):
    if is_tracer(x):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _power(x1, x2):
    x1, x2 = promote_shapes(*(lax._scalars.as_operand(x) if isinstance(x, np.ndarray) else x for x in (x1, x2)))
    x1_, x2_ = promote_args_numeric("power", x1, x2)
    if np.issubdtype(x1_.dtype, np.integer):
        return _pow_int_int(x1_, x2_)
    d1, d2 = dtypes.dtype(x1, canonicalize=True), dtypes.dtype(x2, canonicalize=True)
    if dtypes.issubdtype(d1, np.inexact) and np.issubdtype(d2, np.integer):
        # JAX binds pow(float, int); the dialect's pow takes one dtype, so the exponent converts
        # to the base's dtype, keeping its own weak type (the result is weak only if both are).
        return lax.pow(convert(x1, d1, dtypes.is_weakly_typed(x1)), convert(x2, d1, dtypes.is_weakly_typed(x2)))
    return lax.pow(x1_, x2_)


def _pow_int_int(x1, x2):
    """Binary exponentiation in six steps (any base above 1 overflows before 2**64), as JAX."""
    zero, one = np.array(0, x2.dtype), np.array(1, x2.dtype)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def float_power(x, y, /):
    x, y = promote_args_inexact("float_power", x, y)
    return lax.pow(x, y)


@staged
def floor_divide(x1, x2, /):
    """Integer division rounding towards negative infinity; float division then floor; bools divide as int32."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dtype = x1.dtype
    if np.issubdtype(dtype, np.unsignedinteger):
        return lax.div(x1, x2)
    if np.issubdtype(dtype, np.integer):
        quotient = lax.div(x1, x2)
        select = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(lax.rem(x1, x2), convert(0, dtype)))
        return _where(select, lax.sub(quotient, 1), quotient)
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


@staged
def remainder(x1, x2, /):
    """Remainder with the sign of the divisor (Python's ``%``); bools divide as int32."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    zero = convert(0, x1.dtype)
    if np.issubdtype(x1.dtype, np.integer):
        x2 = _where(lax.eq(x2, zero), lax.full_like(x2, 1), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), trunc_mod_not_zero)
    return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, x2))


mod = remainder


def fmod(x1, x2, /):
    x1, x2 = promote_args("fmod", x1, x2)
    return lax.rem(x1, x2)


@staged
def divmod(x1, x2, /):
    """``(x1 // x2, x1 % x2)``; bools divide as int32."""
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if np.issubdtype(x1.dtype, np.integer):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _float_divmod(x1, x2):
    """CPython's ``float_divmod``; a zero divisor gives ``x1 / 0`` (signed infinity), as JAX."""
    mod = lax.rem(x1, x2)
    div = lax.div(_where(lax.eq(x2, convert(0, x2.dtype)), x1, lax.sub(x1, mod)), x2)
    ind = lax.bitwise_and(lax.ne(mod, convert(0, mod.dtype)), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select_n(ind, mod, lax.add(mod, x2))
    div = lax.select_n(ind, div, lax.sub(div, 1.0))
    return lax.round(div), mod


def logaddexp(x1, x2, /):
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


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


def log2(x, /):
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(convert(2, x.dtype)))


def log10(x, /):
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), lax.log(convert(10, x.dtype)))


def deg2rad(x, /):
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, convert(np.pi / 180, x.dtype))


def rad2deg(x, /):
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, convert(180 / np.pi, x.dtype))


radians, degrees = deg2rad, rad2deg


def hypot(x1, x2, /):
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    return lax.sqrt(lax.add(lax.mul(x1, x1), lax.mul(x2, x2)))


def copysign(x1, x2, /):
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    return where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def heaviside(x1, x2, /):
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero = convert(0, x1.dtype)
    return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), convert(1, x1.dtype), x2))


def sinc(x, /):
    (x,) = promote_args_inexact("sinc", x)
    pix = lax.mul(convert(np.pi, x.dtype), x)
    safe = where(lax.eq(x, convert(0, x.dtype)), convert(1, x.dtype), pix)
    return where(lax.eq(x, convert(0, x.dtype)), convert(1, x.dtype), lax.div(lax.sin(safe), safe))


def conjugate(x, /):
    (x,) = promote_args("conjugate", x)
    return lax.conj(x) if np.issubdtype(x.dtype, np.complexfloating) else x


conj = conjugate


def real(x, /):
    (x,) = promote_args("real", x)
    return lax.real(x) if np.issubdtype(x.dtype, np.complexfloating) else x


def imag(x, /):
    (x,) = promote_args("imag", x)
    return lax.imag(x) if np.issubdtype(x.dtype, np.complexfloating) else lax.full_like(x, 0)


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """Clamps values into ``[min, max]`` (either bound may be None)."""
    arr = a if arr is None else arr
    min = a_min if min is None else min
    max = a_max if max is None else max
    check_arraylike("clip", arr)
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return lax._scalars.as_operand(arr)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    (x,) = promote_args("nan_to_num", x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return x
    info = dtypes.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = where(isnan(x), convert(nan, x.dtype), x)
    x = where(isposinf(x), convert(posinf, x.dtype), x)
    return where(isneginf(x), convert(neginf, x.dtype), x)


@staged_as("fmax")
def fmax(x1, x2):
    """Elementwise maximum that ignores a NaN when the other operand is a number."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


@staged_as("fmin")
def fmin(x1, x2):
    """Elementwise minimum that ignores a NaN when the other operand is a number."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def logaddexp2(x1, x2, /):
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2(x1, x2)


def angle(z, deg=False):
    """The complex argument ``atan2(imag, real)``, in the default float dtype for real input."""
    check_arraylike("angle", z)
    return _angle(z, bool(deg))


@staged_as("angle", static_argnums=(1,))
def _angle(z, deg):
    re, im = real(z), imag(z)
    if not dtypes.issubdtype(re.dtype, np.inexact) or (dtypes.issubdtype(re.dtype, np.floating) and re.ndim == 0):
        re, im = convert(re, dtypes.default_float_dtype()), convert(im, dtypes.default_float_dtype())
    result = lax.atan2(im, re)
    return rad2deg(result) if deg else result


def iscomplex(x):
    i = imag(x)
    return lax.ne(i, convert(0, i.dtype))


def isreal(x):
    i = imag(x)
    return lax.eq(i, convert(0, i.dtype))


def modf(x, /, out=None):
    """``(fractional, integral)`` parts, both with the sign of ``x``."""
    (x,) = promote_args_inexact("modf", x)
    whole = where(lax.ge(x, convert(0, x.dtype)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


def bitwise_count(x, /):
    """Number of set bits in ``|x|``, as ``uint8`` (NumPy's rule)."""
    (x,) = promote_args("bitwise_count", x)
    return convert(lax.population_count(abs(x)), np.uint8)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def frexp(x, /):
    """Mantissa in ``[0.5, 1)`` and integer exponent, by splitting the float's bits."""
    (x,) = promote_args_inexact("frexp", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    info = dtypes.finfo(x.dtype)
    int_type = np.dtype(f"i{x.dtype.itemsize}")
    mask, bias = (1 << info.nexp) - 1, 1 - info.minexp
    bits, exponent = _normalize_float(x, int_type, info)
    exponent = lax.add(exponent, lax.sub(lax.bitwise_and(
        lax.shift_right_arithmetic(bits, convert(info.nmant, int_type)), convert(mask, int_type)),
        convert(bias - 1, int_type)))
    bits = lax.bitwise_and(bits, convert(~(mask << info.nmant), int_type))
    bits = lax.bitwise_or(bits, convert((bias - 1) << info.nmant, int_type))
    special = lax.bitwise_or(lax.bitwise_or(isinf(x), isnan(x)), lax.eq(x, convert(0, x.dtype)))
    exponent = where(special, convert(0, int_type), exponent)
    return where(special, x, lax.bitcast_convert_type(bits, x.dtype)), convert(exponent, np.int32)


def _normalize_float(x, int_type, info):
    """Scales subnormals up by ``2**nmant`` so their exponent bits are meaningful."""
    is_subnormal = lax.lt(lax.abs(x), convert(info.tiny, x.dtype))
    scaled = where(is_subnormal, lax.mul(x, convert(2 ** info.nmant, x.dtype)), x)
    offset = where(is_subnormal, convert(-info.nmant, int_type), convert(0, int_type))
    return lax.bitcast_convert_type(scaled, int_type), offset


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` without intermediate overflow (the exponent is applied after ``frexp``)."""
    check_arraylike("ldexp", x1, x2)
    if np.issubdtype(dtypes.dtype(x1), np.complexfloating) or dtypes.issubdtype(dtypes.dtype(x2), np.inexact):
        raise ValueError(f"ldexp not supported for input types {(dtypes.dtype(x1), dtypes.dtype(x2))}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = convert(lax._scalars.as_operand(x2), x1.dtype)
    m, e = frexp(x1)
    e = add(convert(e, x1.dtype), x2)
    m = where(lax.gt(e, convert(0, e.dtype)), lax.mul(m, convert(2, m.dtype)), m)
    e = where(lax.gt(e, convert(0, e.dtype)), lax.sub(e, convert(1, e.dtype)), e)
    x = multiply(m, power(convert(2, m.dtype), e))
    return where(lax.bitwise_or(isinf(x1), lax.eq(x1, convert(0, x1.dtype))), x1, x)


def spacing(x, /):
    """Distance to the next representable number away from zero."""
    (x,) = promote_args_inexact("spacing", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = convert(np.inf, x.dtype)
    if x.dtype == np.float16:
        return lax.sub(lax.nextafter(x, inf), x)
    result = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
    return where(lax.eq(result, convert(0, x.dtype)), copysign(dtypes.finfo(x.dtype).smallest_subnormal, x), result)
