"""Array creation in ``irax.numpy``."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.array import Array
from irax.core import Tracer, bind1
from irax.ir.avals import ShapedArray
from irax.lax._scalars import as_operand

from ._util import check_arraylike, convert, convert_element_type, staged_as, to_inexact_dtype


def _canonical(dtype):
    return None if dtype is None else dtypes.canonicalize_dtype(dtype)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    try:
        return tuple(map(operator.index, shape))
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None


def array(object, dtype=None, copy=True, order="K", ndmin=0):
    """An array from nested sequences, scalars or arrays, with JAX's default dtypes (as ``jnp.array``:
    a sequence holding arrays becomes ``expand_dims`` and ``concatenate``; ``ndmin`` adds leading axes)."""
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    dtype = _canonical(dtype)
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    if isinstance(object, (Array, Tracer)):
        out = bind1("copy", object) if copy else object
        if dtype is not None:
            out = convert(out, dtype, False)
    elif isinstance(object, (list, tuple)) and _has_traced(object):
        out = _concatenate_leaves(object, dtype)
    else:
        out = _from_host(object, dtype)
    if ndmin > out.ndim:
        out = lax.expand_dims(out, tuple(range(ndmin - out.ndim)))
    return out


def _has_traced(seq):
    return builtins.any(isinstance(x, (Array, Tracer)) or hasattr(x, "__jax_array__")
                        or (isinstance(x, (list, tuple)) and _has_traced(x)) for x in seq)


def _leaves(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _leaves(x)
        else:
            yield x.__jax_array__() if hasattr(x, "__jax_array__") else x


def _concatenate_leaves(seq, dtype):
    leaves = list(_leaves(seq))
    if builtins.any(leaf is None for leaf in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    if dtype is None:
        dtype = dtypes.result_type(*leaves) if leaves else dtypes.default_float_dtype()
    if not seq:
        return _from_host([], dtype)
    arrays = [lax.expand_dims(array(elt, dtype=dtype, copy=False), [0]) for elt in seq]
    k = 16  # a tree of concatenations, as JAX forms it
    while len(arrays) > k:
        arrays = [lax.concatenate(arrays[i:i + k], 0) for i in range(0, len(arrays), k)]
    return convert(lax.concatenate(arrays, 0), dtype, False)


def _from_host(object, dtype):
    weak = dtype is None and type(object) in (int, float, complex)
    if dtype is None:
        host = np.asarray(object)
        if host.dtype == np.dtype("O"):
            raise TypeError(f"JAX only supports number and bool dtypes, got object dtype for {object!r}")
        dtype = dtypes.canonicalize_dtype(dtypes.dtype(object) if not isinstance(object, (list, tuple))
                                          else _infer_sequence_dtype(object, host))
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
    if type(object) is int:
        dtypes.check_int_range(object, dtype)
    with np.errstate(all="ignore"):
        host = np.array(object, dtype=dtype)
    return Array._from_host(host, ShapedArray(host.shape, dtype, weak))


def _infer_sequence_dtype(seq, host):
    if host.size == 0:
        return dtypes.default_float_dtype()
    return dtypes.result_type(*[x for x in np.asarray(seq, dtype=object).reshape(-1)])


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    if isinstance(a, (Array, Tracer)) and dtype is None and not copy:
        return a
    return array(a, dtype=dtype, copy=bool(copy))


def zeros(shape, dtype=None, *, device=None):
    return lax.full(_shape(shape), 0, _canonical(dtype) or dtypes.default_float_dtype())


def ones(shape, dtype=None, *, device=None):
    return lax.full(_shape(shape), 1, _canonical(dtype) or dtypes.default_float_dtype())


def empty(shape, dtype=None, *, device=None):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None):
    fill = as_operand(fill_value) if not isinstance(fill_value, (int, float, bool, complex)) else fill_value
    if getattr(fill, "ndim", 0):
        from ._shape import broadcast_to
        return broadcast_to(fill if dtype is None else convert(fill, _canonical(dtype)), _shape(shape))
    return lax.full(_shape(shape), fill_value, _canonical(dtype))


def _like(name, value):
    def fn(a, dtype=None, shape=None, *, device=None):
        a_shape = np.shape(a) if not hasattr(a, "shape") else a.shape
        dt = _canonical(dtype) or dtypes.dtype(a)
        return lax.full(a_shape if shape is None else _shape(shape), value, dt)
    fn.__name__ = name
    return fn


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    return zeros_like(prototype, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    a_shape = np.shape(a) if not hasattr(a, "shape") else a.shape
    return lax.full(a_shape if shape is None else _shape(shape), fill_value, _canonical(dtype) or dtypes.dtype(a))


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values from ``iota``, as ``jnp.arange`` (the bounds must be concrete)."""
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    for v in (start, stop, step):
        if v is not None:
            check_arraylike("arange", v)
    start_name = "stop" if stop is None and step is None else "start"
    for name, v in ((start_name, start), ("stop", stop), ("step", step)):
        if isinstance(v, Tracer):
            from irax.errors import ConcretizationTypeError
            raise ConcretizationTypeError(f"jnp.arange requires concrete values; got a traced value for the argument "
                                          f"'{name}' ({v!r}). Use lax.iota for traced sizes.")
    start, stop, step = (v._value[()] if isinstance(v, Array) else v for v in (start, stop, step))
    for name, val in ((start_name, start), ("stop", stop), ("step", step)):
        if val is not None and np.ndim(val) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={val}")
    if dtype is None:
        dtype = dtypes.result_type(start, *(x for x in (stop, step) if x is not None))
    dtype = dtypes.canonicalize_dtype(dtype)
    if builtins.any(np.iscomplexobj(v) for v in (start, stop, step) if v is not None):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported starting in JAX "
                         "v0.10.0.")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        if dtypes.issubdtype(dtype, np.floating) and dtypes.finfo(dtype).bits < 32:
            working_dtype = np.dtype("float32")
        else:
            working_dtype = dtype
        size = builtins.max(0, int(np.ceil((stop - start) / step)))
        return convert_element_type(
            lax.add(convert_element_type(start, working_dtype),
                    lax.mul(convert_element_type(step, working_dtype),
                            lax.broadcasted_iota(working_dtype, (size,), 0))), dtype)
    if start == 0:
        size = builtins.max(0, int(np.ceil(stop)))
        return lax.broadcasted_iota(dtype, (size,), 0)
    size = builtins.max(0, int(np.ceil(stop - start)))
    return lax.add(convert_element_type(start, dtype), lax.broadcasted_iota(dtype, (size,), 0))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``num`` points from ``start`` to ``stop``, computed as JAX does (so traced bounds work)."""
    num = operator.index(num)
    axis = operator.index(axis)
    return _linspace(start, stop, num, endpoint, retstep, dtype, axis)


@staged_as("_linspace", static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    from ._shape import reshape
    from ._util import _broadcast_to, ensure_arraylike
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = ensure_arraylike("linspace", start, stop)
    if dtype is None:
        dtype = to_inexact_dtype(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
    computation_dtype = to_inexact_dtype(dtype)
    start = start.astype(computation_dtype)
    stop = stop.astype(computation_dtype)
    bounds_shape = list(np.broadcast_shapes(start.shape, stop.shape))
    broadcast_start = _broadcast_to(start, bounds_shape)
    broadcast_stop = _broadcast_to(stop, bounds_shape)
    axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
    bounds_shape.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = convert_element_type(stop - start, computation_dtype) / asarray(div, dtype=computation_dtype)
        iota_shape = [1] * len(bounds_shape)
        iota_shape[axis] = div
        # This recovers the endpoints in float32 arithmetic, with rounding errors for integer outputs.
        real_dtype = dtypes.finfo(computation_dtype).dtype
        step = reshape(lax.iota(real_dtype, div), iota_shape) / asarray(div, real_dtype)
        step = step.astype(computation_dtype)
        out = reshape(broadcast_start, bounds_shape) * (1 - step) + reshape(broadcast_stop, bounds_shape) * step
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(broadcast_stop, (axis,))], axis)
    elif num == 1:
        delta = asarray(np.nan if endpoint else stop - start, dtype=computation_dtype)
        out = reshape(broadcast_start, bounds_shape)
    else:  # num == 0, as NumPy
        empty_shape = list(np.broadcast_shapes(start.shape, stop.shape))
        empty_shape.insert(axis, 0)
        delta = full((), np.nan, computation_dtype)
        out = empty(empty_shape, dtype)
    if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(out.dtype, np.integer):
        out = lax.floor(out)
    result = convert(out, dtype)
    return (result, delta) if retstep else result


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)``."""
    num = operator.index(num)
    axis = operator.index(axis)
    return _logspace(start, stop, num, endpoint, base, dtype, axis)


@staged_as("_logspace", static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    from ._ufuncs import power
    start, stop, dtype, _ = _log_endpoints("logspace", start, stop, dtype)
    lin = linspace(start, stop, num, endpoint=endpoint, retstep=False, dtype=None, axis=axis)
    return convert_element_type(power(base, lin), dtype)


def _log_endpoints(name, start, stop, dtype):
    """The endpoints in the computation dtype, and the result dtype (as JAX's logspace and geomspace)."""
    from ._util import ensure_arraylike
    dtype = to_inexact_dtype(dtypes.result_type(start, stop)) if dtype is None else dtypes.canonicalize_dtype(dtype)
    computation_dtype = to_inexact_dtype(dtype)
    start, stop = ensure_arraylike(name, start, stop)
    return start.astype(computation_dtype), stop.astype(computation_dtype), dtype, computation_dtype


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Points evenly spaced on a log scale between ``start`` and ``stop`` (same sign)."""
    num = operator.index(num)
    axis = operator.index(axis)
    return _geomspace(start, stop, num, endpoint, dtype, axis)


@staged_as("_geomspace", static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    from ._ufuncs import log10, sign
    from ._util import canonicalize_axis
    start, stop, dtype, computation_dtype = _log_endpoints("geomspace", start, stop, dtype)
    signs = sign(start)
    res = signs * logspace(log10(start / signs), log10(stop / signs), num, endpoint=endpoint, base=10.0,
                           dtype=computation_dtype, axis=0)
    axis = canonicalize_axis(axis, res.ndim)
    if axis != 0:
        res = lax.transpose(res, (*range(1, axis + 1), 0, *range(axis + 1, res.ndim)))
    return convert_element_type(res, dtype)


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """``i + k == j`` on index grids, as ``jnp.eye`` (``k`` may be a traced integer)."""
    from ._util import ensure_arraylike
    dtype = dtypes.canonicalize_dtype(float if dtype is None else dtype)
    if isinstance(k, int):
        k = int(np.clip(k, np.iinfo(np.int32).min, np.iinfo(np.int32).max))
    offset = ensure_arraylike("eye", k)
    if not (offset.shape == () and dtypes.issubdtype(offset.dtype, np.integer)):
        raise ValueError(f"k must be a scalar integer; got {k}")
    N_int = operator.index(N)
    M_int = N_int if M is None else operator.index(M)
    if N_int < 0 or M_int < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    i = lax.broadcasted_iota(offset.dtype, (N_int, M_int), 0)
    j = lax.broadcasted_iota(offset.dtype, (N_int, M_int), 1)
    return ((i + offset) == j).astype(dtype)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below diagonal ``k`` (float32 unless ``dtype`` says otherwise, as in JAX)."""
    dtype = np.dtype(np.float32) if dtype is None else dtypes.canonicalize_dtype(dtype)
    M = N if M is None else M
    shape = (operator.index(N), operator.index(M))
    offset = as_operand(k)
    if not dtypes.issubdtype(offset.dtype, np.integer):
        raise TypeError(f"offset must be an integer, got {k!r}")
    shape_dtype = np.dtype(np.int64 if builtins.any(d > np.iinfo(np.int32).max for d in shape) else np.int32)
    if (np.iinfo(offset.dtype).min < np.iinfo(shape_dtype).min
            or np.iinfo(offset.dtype).max > np.iinfo(shape_dtype).max):
        shape_dtype = np.dtype(np.int64)
    bool_tri = lax.ge(lax.add(lax.broadcasted_iota(shape_dtype, shape, 0), offset.astype(shape_dtype)),
                      lax.broadcasted_iota(shape_dtype, shape, 1))
    return convert_element_type(bool_tri, dtype)


def copy(a, order=None):
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def _window(name, formula):
    def fn(M):
        M = operator.index(M)
        dtype = dtypes.default_float_dtype()
        if M <= 1:
            return lax.full((M,), 1, dtype)
        return formula(lax.iota(dtype, M), M)
    fn.__name__ = name
    fn.__doc__ = f"The {name} window of ``M`` points (as ``jax.numpy.{name}``)."
    return fn


def _cos_terms(n, M, *coefficients):
    from ._ufuncs import add, cos, multiply, true_divide
    out = coefficients[0]
    for j, c in enumerate(coefficients[1:], 1):
        out = add(out, multiply(c, cos(true_divide(multiply(2 * j * np.pi, n), M - 1))))
    return out


def _bartlett(n, M):
    from ._ufuncs import abs, add, multiply, subtract, true_divide
    return subtract(1, true_divide(abs(subtract(add(multiply(2, n), 1), M)), M - 1))


bartlett = _window("bartlett", _bartlett)
blackman = _window("blackman", lambda n, M: _cos_terms(n, M, 0.42, -0.5, 0.08))
hamming = _window("hamming", lambda n, M: _cos_terms(n, M, 0.54, -0.46))
hanning = _window("hanning", lambda n, M: _cos_terms(n, M, 0.5, -0.5))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` called on index grids; JAX maps it over scalars with ``vmap``, here it gets
    broadcastable grids, which gives the same result for elementwise functions."""
    from irax import tree_util
    from ._matrix import indices
    from ._shape import broadcast_to
    shape = _shape(shape)
    out = function(*indices(shape, dtype=dtype, sparse=True), **kwargs)
    return tree_util.tree_map(lambda leaf: broadcast_to(leaf, shape), out)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return array(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return array(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable, dtype, count=-1):
    return array(np.fromiter(iterable, dtype=dtype, count=count))


def from_dlpack(x, /, *, device=None, copy=None):
    return array(np.from_dlpack(x))
