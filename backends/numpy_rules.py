"""The NumPy reference rule of every primitive: eager mode and the test oracle.

A rule takes host arrays and the op's params and returns the result(s); the
caller casts to the dtype the shape rule says, so rules only need JAX's values.
Half-precision floats are computed in float32, as XLA's CPU backend does.
"""
from __future__ import annotations

import numpy as np

from irax.ir.errors import unbound_axis_name
from irax.ir.shapes import issubdtype, split_axes

from . import special

RULES: dict = {}

_HALF = (np.dtype(np.float16), np.dtype("bfloat16"))


def rule(*names):
    def register(fn):
        for name in names:
            RULES[name] = fn
        return fn
    return register


def _widen(x):
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype in _HALF else x


def stack_of_matrices(x):
    """``x`` as a stack of matrices (batch dimensions flattened), in its computing dtype: how the linear-algebra
    rules see their operands."""
    x = _widen(x)
    return x.reshape((int(np.prod(x.shape[:-2], dtype=np.int64)),) + x.shape[-2:])


def elementwise(name, fn):
    def unary(x):
        return fn(_widen(x))

    def binary(x, y):
        return fn(_widen(x), _widen(y))
    RULES[name] = binary if getattr(fn, "nin", 1) == 2 else unary


for _name, _fn in {
    "neg": np.negative, "floor": np.floor, "ceil": np.ceil, "is_finite": np.isfinite,
    "exp2": np.exp2, "expm1": np.expm1, "log1p": np.log1p, "tanh": np.tanh,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "cbrt": np.cbrt, "square": np.square, "stop_gradient": np.asarray, "copy": np.array,
    "real": np.real, "imag": np.imag, "conj": np.conj,
    "erf": special.erf, "erfc": special.erfc, "erf_inv": special.erf_inv, "lgamma": special.lgamma,
    "digamma": special.digamma,
    "add": np.add, "add_any": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
    "atan2": np.arctan2,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}.items():
    elementwise(_name, _fn)


def _total_order_key(x):
    """Integers that compare as IEEE's total order of the floats ``x`` (negative floats' magnitude bits flipped);
    integers and bools are their own keys."""
    x = np.asarray(x)
    if not issubdtype(x.dtype, np.floating):
        return x
    bits = x.view(np.dtype(f"int{8 * x.dtype.itemsize}"))
    return np.where(bits < 0, bits ^ np.iinfo(bits.dtype).max, bits)


for _name, _fn in {"eq_to": np.equal, "le_to": np.less_equal, "lt_to": np.less}.items():
    RULES[_name] = (lambda fn: lambda x, y: fn(_total_order_key(x), _total_order_key(y)))(_fn)
RULES["polygamma"] = lambda m, x: special.polygamma(_widen(m), _widen(x))
RULES["conj"] = lambda x, input_dtype=None: np.conj(x).astype(np.result_type(x.dtype, np.complex64))


def _from_parts(re, im, dtype):
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


@rule("complex")
def _complex(x, y):
    """Built part by part: ``x + 1j * y`` would make ``0 * inf`` a NaN real part."""
    x, y = np.broadcast_arrays(x, y)
    return _from_parts(x, y, np.result_type(x, np.complex64))


@rule("abs")
def _abs(x):
    """XLA's complex abs is NaN when either part is NaN, even beside an infinity (NumPy's hypot gives inf)."""
    x = _widen(x)
    if not issubdtype(x.dtype, np.complexfloating):
        return np.abs(x)
    return np.where(np.isnan(x.real) | np.isnan(x.imag), np.nan, np.abs(x)).astype(np.abs(x).dtype)


@rule("sign")
def _sign(x):
    """XLA's complex sign is ``x / abs(x)`` part by part (NaN parts at infinities), 0 at 0."""
    x = _widen(x)
    if not issubdtype(x.dtype, np.complexfloating):
        return np.sign(x)
    magnitude = _abs(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = _from_parts(x.real / magnitude, x.imag / magnitude, x.dtype)
    return np.where(magnitude == 0, np.zeros((), x.dtype), unit)


@rule("exp")
def _exp(x):
    """Complex exp as XLA computes it, ``e^re (cos im + i sin im)``, NaN parts where C99's cexp has limits
    (``exp(-inf + nan j)`` is 0 there), and ``e^re + 0i`` for a zero ``im``."""
    x = _widen(x)
    if not issubdtype(x.dtype, np.complexfloating):
        return np.exp(x)
    real_axis = x.imag == 0
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.exp(x.real)
        return _from_parts(np.where(real_axis, scale, scale * np.cos(x.imag)),
                           np.where(real_axis, 0, scale * np.sin(x.imag)), x.dtype)


@rule("sqrt")
def _sqrt(x):
    """Complex sqrt as XLA gives it: a zero part counts as +0 whatever its sign, and a NaN part makes both
    parts NaN (NumPy follows C99: ``sqrt(-4 - 0j) = -2j``, ``sqrt(-inf + nan j) = nan + inf j``)."""
    x = _widen(x)
    if not issubdtype(x.dtype, np.complexfloating):
        return np.sqrt(x)
    root = np.sqrt(_from_parts(x.real, x.imag + 0.0, x.dtype))
    return np.where(np.isnan(x), np.array(complex(np.nan, np.nan), x.dtype), _from_parts(root.real + 0.0, root.imag,
                                                                                      x.dtype))


@rule("log")
def _log(x):
    """As XLA: a NaN part makes both parts NaN (C99 has ``log(inf + nan j) = inf + nan j``)."""
    x = _widen(x)
    if not issubdtype(x.dtype, np.complexfloating):
        return np.log(x)
    return np.where(np.isnan(x), np.array(complex(np.nan, np.nan), x.dtype), np.log(x))


RULES["nextafter"] = np.nextafter  # in the operands' own type: a widened step rounds back to the same half float
RULES["logistic"] = lambda x: 1 / (1 + _exp(-x))
RULES["rsqrt"] = lambda x: 1 / _sqrt(x)


@rule("not")
def _not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


@rule("div")
def _div(x, y):
    if issubdtype(x.dtype, np.integer):
        safe = np.where(y == 0, 1, y)
        with np.errstate(over="ignore"):  # min // -1 wraps to min, as in XLA (|x| would overflow at min)
            q = (x - np.fmod(x, safe)) // safe
        return np.where(y == 0, -1 if issubdtype(x.dtype, np.signedinteger) else np.iinfo(x.dtype).max, q)
    return np.divide(_widen(x), _widen(y))


@rule("rem")
def _rem(x, y):
    if issubdtype(x.dtype, np.integer):
        return np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y)))
    return np.fmod(_widen(x), _widen(y))


@rule("pow")
def _pow(x, y):
    return np.power(_widen(x), _widen(y))


@rule("round")
def _round(x, *, rounding_method):
    x = _widen(x)
    if rounding_method == 1:
        return np.round(x)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


@rule("integer_pow")
def _integer_pow(x, *, y):
    x = _widen(x)
    if y == 0:
        return np.ones_like(x)
    result = x
    for _ in range(abs(y) - 1):
        result = result * x
    return 1 / result if y < 0 else result


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


@rule("shift_left")
def _shift_left(x, y):
    big = (y < 0) | (y >= _bits(x.dtype))
    return np.where(big, 0, np.left_shift(x, np.where(big, 0, y).astype(x.dtype)))


@rule("shift_right_logical")
def _shift_right_logical(x, y):
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    big = (y < 0) | (y >= _bits(x.dtype))
    shifted = np.right_shift(unsigned, np.where(big, 0, y).astype(unsigned.dtype))
    return np.where(big, 0, shifted).astype(unsigned.dtype).view(x.dtype)


@rule("shift_right_arithmetic")
def _shift_right_arithmetic(x, y):
    n = _bits(x.dtype)
    amount = np.where((y < 0) | (y >= n), n - 1, y).astype(x.dtype)
    if issubdtype(x.dtype, np.unsignedinteger):
        signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
        return np.right_shift(signed, amount.view(signed.dtype)).view(x.dtype)
    return np.right_shift(x, amount)


_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


@rule("threefry2x32")
def _threefry2x32(k1, k2, x1, x2):
    """JAX's unrolled ``_threefry2x32_lowering``: five groups of four rounds, each group then adding a key."""
    k1, k2, x1, x2 = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (k1, k2, x1, x2)))
    with np.errstate(over="ignore"):  # the cipher's additions wrap around by design
        ks = [k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA)]
        x = [x1 + ks[0], x2 + ks[1]]
        for i in range(5):
            for r in _THREEFRY_ROTATIONS[i % 2]:
                x[0] = x[0] + x[1]
                x[1] = x[0] ^ ((x[1] << np.uint32(r)) | (x[1] >> np.uint32(32 - r)))
            x = [x[0] + ks[(i + 1) % 3], x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)]
    return x


@rule("population_count")
def _popcount(x):
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    count = np.zeros(x.shape, np.int64)
    for i in range(_bits(x.dtype)):
        count += (unsigned >> np.asarray(i, unsigned.dtype)) & 1
    return count


@rule("clz")
def _clz(x):
    n = _bits(x.dtype)
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    count = np.full(x.shape, n, np.int64)
    for i in range(n):
        count = np.where((unsigned >> np.uint64(i)) & np.uint64(1), n - 1 - i, count)
    return count


@rule("select_n")
def _select_n(which, *cases):
    if which.dtype == np.bool_:
        which = which.astype(np.int32)
    return np.choose(which, np.broadcast_arrays(*cases)) if len(cases) > 1 else cases[0]


@rule("clamp")
def _clamp(lo, x, hi):
    return np.minimum(np.maximum(_widen(x), _widen(lo)), _widen(hi))


@rule("convert_element_type")
def _convert_element_type(x, *, new_dtype, weak_type):
    new_dtype = np.dtype(new_dtype)
    if issubdtype(x.dtype, np.complexfloating) and not issubdtype(new_dtype, np.complexfloating):
        x = np.real(x)
    if new_dtype == np.bool_:
        return x != 0
    if issubdtype(new_dtype, np.integer) and issubdtype(x.dtype, np.floating):
        info = np.iinfo(new_dtype)
        wide = np.nan_to_num(x.astype(np.float64), nan=0.0)
        return np.clip(np.trunc(wide), info.min, info.max).astype(new_dtype)
    return x.astype(new_dtype)


@rule("bitcast_convert_type")
def _bitcast_convert_type(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    x = np.ascontiguousarray(x)
    if new_dtype.itemsize == x.dtype.itemsize:
        return x.view(new_dtype)
    if new_dtype.itemsize < x.dtype.itemsize:
        return x.view(new_dtype).reshape(x.shape + (x.dtype.itemsize // new_dtype.itemsize,))
    return x.view(new_dtype).reshape(x.shape[:-1])


@rule("broadcast_in_dim")
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding=None):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


@rule("reshape")
def _reshape(x, *, new_sizes, dimensions=None, sharding=None):
    return np.reshape(x if dimensions is None else np.transpose(x, dimensions), new_sizes)


@rule("squeeze")
def _squeeze(x, *, dimensions):
    return np.squeeze(x, tuple(dimensions)) if dimensions else x


@rule("transpose")
def _transpose(x, *, permutation):
    return np.transpose(x, permutation)


@rule("rev")
def _rev(x, *, dimensions):
    return np.flip(x, tuple(dimensions)) if dimensions else x


@rule("pad")
def _pad(x, value, *, padding_config):
    for axis, (lo, hi, interior) in enumerate(padding_config):
        x = _pad_axis(x, value, axis, lo, hi, interior)
    return x


def _pad_axis(x, value, axis, lo, hi, interior):
    n = x.shape[axis]
    if interior and n > 1:
        shape = list(x.shape)
        shape[axis] = n + (n - 1) * interior
        spread = np.full(shape, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, interior + 1)
        spread[tuple(index)] = x
        x = spread
    widths = [(0, 0)] * x.ndim
    widths[axis] = (max(lo, 0), max(hi, 0))
    x = np.pad(x, widths, constant_values=value)
    index = [slice(None)] * x.ndim
    index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
    return x[tuple(index)]


@rule("split")
def _split(x, *, sizes, axis):
    return np.split(x, np.cumsum(sizes[:-1], dtype=np.int64), axis=axis)


@rule("concatenate")
def _concatenate(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


@rule("stack")
def _stack(*xs, axis):
    return np.stack(xs, axis=axis)


@rule("slice")
def _slice(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(lo, hi, s) for lo, hi, s in zip(start_indices, limit_indices, strides))]


def _clamped_starts(shape, sizes, indices):
    return [int(min(max(int(i), 0), d - s)) for i, d, s in zip(indices, shape, sizes)]


@rule("dynamic_slice")
def _dynamic_slice(x, *indices, slice_sizes):
    starts = _clamped_starts(x.shape, slice_sizes, indices)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


@rule("dynamic_update_slice")
def _dynamic_update_slice(x, update, *indices):
    starts = _clamped_starts(x.shape, update.shape, indices)
    out = np.array(x)
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


@rule("empty")
def _empty(*, dtype, shape, out_sharding=None):
    return np.zeros(shape, dtype)


@rule("empty2")
def _empty2(*, dtype, memory_space=None):
    return np.zeros((), dtype)


@rule("iota")
def _iota(*, dtype, shape, dimension, sharding=None):
    ramp = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(ramp.reshape(expanded), shape)


def _identity(ufunc, dtype):
    if ufunc is np.maximum:
        return -np.inf if issubdtype(dtype, np.inexact) else (False if dtype == np.bool_ else np.iinfo(dtype).min)
    return np.inf if issubdtype(dtype, np.inexact) else (True if dtype == np.bool_ else np.iinfo(dtype).max)


@rule("reduce_sum")
def _reduce_sum(x, *, axes, out_sharding=None):
    x = _widen(x)
    return np.add.reduce(x, axis=tuple(axes), dtype=x.dtype)


@rule("reduce_prod")
def _reduce_prod(x, *, axes):
    x = _widen(x)
    return np.multiply.reduce(x, axis=tuple(axes), dtype=x.dtype)


def _reduce_extremum(ufunc):
    def reduce(x, *, axes):
        x = _widen(x)
        if x.dtype == np.bool_:
            return (np.any if ufunc is np.maximum else np.all)(x, axis=tuple(axes))
        return ufunc.reduce(x, axis=tuple(axes), initial=_identity(ufunc, x.dtype))
    return reduce


RULES["reduce_max"] = _reduce_extremum(np.maximum)
RULES["reduce_min"] = _reduce_extremum(np.minimum)
RULES["reduce_and"] = lambda x, *, axes: np.bitwise_and.reduce(x, axis=tuple(axes), initial=_all_ones(x.dtype))
RULES["reduce_or"] = lambda x, *, axes: np.bitwise_or.reduce(x, axis=tuple(axes), initial=_zero(x.dtype))
RULES["reduce_xor"] = lambda x, *, axes: np.bitwise_xor.reduce(x, axis=tuple(axes), initial=_zero(x.dtype))


def _all_ones(dtype):
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


def _zero(dtype):
    return False if dtype == np.bool_ else np.zeros((), dtype)


RULES["argmax"] = lambda x, *, axes, index_dtype: np.argmax(_widen(x), axis=axes[0])
RULES["argmin"] = lambda x, *, axes, index_dtype: np.argmin(_widen(x), axis=axes[0])


@rule("dot_general")
def _dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = np.result_type(_widen(lhs).dtype, _widen(rhs).dtype)
    if preferred_element_type is not None:
        dtype = np.result_type(dtype, _widen(np.zeros((), preferred_element_type)).dtype)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for i, j in zip(lc + lb, rc + rb):
        rhs_sub[j] = lhs_sub[i]
    batch = [lhs_sub[i] for i in lb]
    lfree = [s for i, s in enumerate(lhs_sub) if i not in lc and i not in lb]
    rfree = [s for j, s in enumerate(rhs_sub) if j not in rc and j not in rb]
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(batch + lfree + rfree)}"
    if dtype == np.bool_:
        return np.einsum(spec, lhs.astype(np.int32), rhs.astype(np.int32)) != 0
    return np.einsum(spec, lhs.astype(dtype), rhs.astype(dtype))


def _cumulative(ufunc):
    def scan(x, *, axis, reverse):
        x = _widen(x)
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype) if x.shape[axis] else x
        return np.flip(out, axis) if reverse else out
    return scan


RULES["cumsum"] = _cumulative(np.add)
RULES["cumprod"] = _cumulative(np.multiply)
RULES["cummax"] = _cumulative(np.maximum)
RULES["cummin"] = _cumulative(np.minimum)
RULES["cumlogsumexp"] = _cumulative(np.logaddexp)


def _positional_axes(axes, api_name):
    names, positional = split_axes(axes)
    if names:
        raise unbound_axis_name(names[0], api_name)
    return positional


RULES["psum"] = lambda x, *, axes, axis_index_groups=None: _reduce_sum(x, axes=_positional_axes(axes, "psum"))
RULES["pmax"] = lambda x, *, axes, axis_index_groups=None: RULES["reduce_max"](x, axes=_positional_axes(axes, "psum"))
RULES["pmin"] = lambda x, *, axes, axis_index_groups=None: RULES["reduce_min"](x, axes=_positional_axes(axes, "psum"))


def _unbound_collective(api_name):
    """These collectives always name their axes, so any that reaches evaluation is over an unbound name."""
    def rule(*operands, axis_name, **params):
        raise unbound_axis_name(axis_name if isinstance(axis_name, str) else axis_name[0], api_name)
    return rule


for _name in ("all_gather", "reduce_scatter", "axis_index", "all_to_all"):
    RULES[_name] = _unbound_collective(_name)


@rule("ppermute")
def _ppermute(x, *, axis_name, perm):
    raise NotImplementedError("Evaluation rule for 'ppermute' not implemented")  # JAX's words, outside a vmap


@rule("literal")
def _literal(*, value, weak_type=None, shown=None):
    return np.asarray(value)


@rule("name")
def _name(x, *, name):
    return x


@rule("custom_lin")
def _custom_lin(*operands, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


try:  # NumPy 2's context variable behind np.errstate: setting it directly costs a tenth as much
    from numpy._core._ufunc_config import _extobj_contextvar as _FP_ERRORS
    from numpy._core.umath import _make_extobj
    _IGNORE_FP_ERRORS = _make_extobj(all="ignore")
except ImportError:
    _FP_ERRORS = None


def evaluate(name, arrays, params, avals_out):
    """Runs ``name``'s rule, ignoring floating-point errors, and casts each result to its aval's dtype and shape."""
    if _FP_ERRORS is None:
        with np.errstate(all="ignore"):
            out = RULES[name](*arrays, **params)
    else:
        token = _FP_ERRORS.set(_IGNORE_FP_ERRORS)
        try:
            out = RULES[name](*arrays, **params)
        finally:
            _FP_ERRORS.reset(token)
    outs = out if isinstance(out, (list, tuple)) else (out,)
    return [_exactly(o, a) for o, a in zip(outs, avals_out)]


def _exactly(value, aval):
    if type(value) is np.ndarray and value.dtype == aval.dtype and value.shape == aval.shape:
        return value
    value = np.asarray(value)
    if value.dtype != aval.dtype:
        with np.errstate(all="ignore"):  # a float64 result past the dtype's range is its inf, as XLA's
            value = value.astype(aval.dtype)
    if value.shape != aval.shape:
        value = value.reshape(aval.shape)
    return value


from . import numpy_gather_scatter  # noqa: E402,F401  (fills RULES with gather and the scatters)
from . import numpy_convolution  # noqa: E402,F401  (fills RULES with the convolution and windowed reductions)
from . import numpy_sort  # noqa: E402,F401  (fills RULES with sort and top_k)
from . import numpy_extras  # noqa: E402,F401  (fills RULES with tile and optimization_barrier)
from . import numpy_fft  # noqa: E402,F401  (fills RULES with fft)
from . import numpy_linalg  # noqa: E402,F401  (fills RULES with cholesky, triangular_solve and lu)
from . import numpy_decompositions  # noqa: E402,F401  (fills RULES with eigh, svd and qr)
from . import numpy_special  # noqa: E402,F401  (fills RULES with igamma, betainc, the Bessel functions, zeta, ...)
from . import numpy_callbacks  # noqa: E402,F401  (fills RULES with the host callbacks)
from . import numpy_eig  # noqa: E402,F401  (fills RULES with eig)
from . import numpy_schur  # noqa: E402,F401  (fills RULES with schur)
from . import numpy_tridiagonal  # noqa: E402,F401  (fills RULES with tridiagonal_solve)
