"""``jnp.ufunc`` and ``frompyfunc``, ported from JAX's ``jax/_src/numpy/ufunc_api.py``, and the ufunc objects that
JAX makes of ``add``, ``multiply``, ``subtract``, ``minimum``, ``maximum``, the bitwise and logical binary functions,
``logaddexp``, ``logaddexp2`` and ``negative``: each calls the plain function, and its ``reduce``, ``accumulate`` and
``at`` are JAX's fast paths (``sum``, ``cumsum``, ``.at[].add``, ...) where JAX has one, else a loop as in JAX."""
from __future__ import annotations

import math
import operator

import numpy as np

from irax import dtypes, lax
from irax.api import eval_shape
from irax.batching import vmap
from irax.lax._scalars import as_operand

from . import _reductions as red
from . import _ufuncs
from ._util import _broadcast_to, _where, canonicalize_axis, check_arraylike, promote_dtypes_inexact, staged_as

__all__ = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "frompyfunc", "logaddexp", "logaddexp2", "logical_and",
           "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative", "subtract", "ufunc"]

_AT_INPLACE_WARNING = """\
Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like
np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.
>>> arr = jnp.add.at(arr, ind, val, inplace=False)
"""


def _one(x):
    return lax.full_like(as_operand(x), 1, shape=())


def _result_dtype(fn, *args):
    return eval_shape(fn, *(_one(a) for a in args)).dtype


class ufunc:
    """A universal function: elementwise over broadcast arguments, with ``reduce``, ``accumulate``, ``at``,
    ``outer`` and ``reduceat`` for the binary ones (``frompyfunc`` makes one of any scalar function)."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._props = {"func": func, "nin": operator.index(nin), "nout": operator.index(nout),
                       "nargs": operator.index(nargs or nin), "identity": identity, "call": call, "reduce": reduce,
                       "accumulate": accumulate, "at": at, "reduceat": reduceat}

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def _key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        call = self._props["call"] or self._call_vectorized
        return call(*args)

    def _call_vectorized(self, *args):
        return _call_vectorized(self, *args)

    def _check_binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """``a`` reduced along ``axis`` (None: all axes) by this binary function."""
        return _reduce(self, a, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction of ``a`` along ``axis``."""
        return _accumulate(self, a, axis, dtype, out)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of ``a`` with this function applied at ``indices`` (with ``b`` as second operand), repeated
        indices applying again.

        Raises:
          NotImplementedError: unless ``inplace=False`` (JAX arrays are immutable).
        """
        if inplace:
            raise NotImplementedError(_AT_INPLACE_WARNING)
        return _at(self, a, indices, b)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of ``a`` over the runs ``indices[i]:indices[i + 1]`` along ``axis``."""
        return _reduceat(self, a, indices, axis, dtype, out)

    def outer(self, A, B, /):
        """This function of every pair of entries of ``A`` and ``B``: shape ``A.shape + B.shape``."""
        return _outer(self, A, B)


@staged_as("_call_vectorized", static_argnums=(0,))
def _call_vectorized(self, *args):
    from ._vectorize import vectorize
    return vectorize(self._func)(*args)


@staged_as("reduce", static_argnames=("self", "axis", "dtype", "out", "keepdims"))
def _reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
    check_arraylike(f"{self.__name__}.reduce", a)
    self._check_binary("reduce")
    if out is not None:
        raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
    if initial is not None:
        check_arraylike(f"{self.__name__}.reduce", initial)
    if where is not None:
        check_arraylike(f"{self.__name__}.reduce", where)
        if self.identity is None and initial is None:
            raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                             "so to use a where mask one has to specify 'initial'.")
        if dtypes.dtype(where) != bool:
            raise ValueError(f"where argument must have dtype=bool; got dtype={dtypes.dtype(where)}")
    reduce = self._props["reduce"] or _reduce_via_loop
    if reduce is _reduce_via_loop:
        return reduce(self, a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
    return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _final_shape(arr, axis, keepdims):
    if axis is None:
        return (1,) * arr.ndim if keepdims else ()
    return (*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims else (*arr.shape[:axis], *arr.shape[axis + 1:])


def _reduce_via_loop(self, arr, axis=0, dtype=None, keepdims=False, initial=None, where=None):
    """A ``fori_loop`` applying the function entry by entry along ``axis``."""
    from ._shape import moveaxis
    arr = as_operand(arr)
    initial = self.identity if initial is None else initial
    dtype = _result_dtype(self._func, arr, arr) if dtype is None else dtype
    where = None if where is None else _broadcast_to(where, arr.shape)
    if isinstance(axis, tuple):
        raise NotImplementedError("tuple of axes")
    if axis is not None:
        axis = canonicalize_axis(axis, arr.ndim)
    final_shape = _final_shape(arr, axis, keepdims)
    if axis is None:
        arr, where, axis = arr.ravel(), None if where is None else where.ravel(), 0
    if axis != 0:
        arr = moveaxis(arr, axis, 0)
        where = None if where is None else moveaxis(where, axis, 0)
    if arr.shape[0] == 0:
        if initial is None:
            raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
        return lax.full(final_shape, initial, dtype)

    def body_fun(i, val):
        if where is None:
            return self(val, arr[i].astype(dtype))
        return _where(where[i], self(val, arr[i].astype(dtype)), val)
    start_index, start_value = (1, arr[0]) if initial is None else (0, initial)
    start_value = _broadcast_to(as_operand(start_value).astype(dtype), arr.shape[1:])
    result = lax.fori_loop(start_index, arr.shape[0], body_fun, start_value)
    return result.reshape(final_shape) if keepdims else result


@staged_as("accumulate", static_argnames=("self", "axis", "dtype"))
def _accumulate(self, a, axis=0, dtype=None, out=None):
    self._check_binary("accumulate")
    if out is not None:
        raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
    accumulate = self._props["accumulate"]
    if accumulate is None:
        return _accumulate_via_scan(self, a, axis=axis, dtype=dtype)
    return accumulate(a, axis=axis, dtype=dtype)


def _accumulate_via_scan(self, arr, axis=0, dtype=None):
    from ._shape import moveaxis
    check_arraylike(f"{self.__name__}.accumulate", arr)
    arr = as_operand(arr)
    dtype = _result_dtype(self._func, arr, arr) if dtype is None else dtype
    if axis is None or isinstance(axis, tuple):
        raise ValueError("accumulate does not allow multiple axes")
    axis = canonicalize_axis(axis, np.ndim(arr))
    if arr.size == 0:
        return lax.full(arr.shape, 0, dtype)
    arr = moveaxis(arr, axis, 0)

    def scan_fun(carry, _):
        i, x = carry
        y = _where(i == 0, arr[0].astype(dtype), self(x.astype(dtype), arr[i].astype(dtype)))
        return (i + 1, y), y
    _, result = lax.scan(scan_fun, (0, arr[0].astype(dtype)), None, length=arr.shape[0])
    return moveaxis(result, 0, axis)


@staged_as("at", static_argnums=(0,))
def _at(self, a, indices, b):
    at = self._props["at"]
    a = as_operand(a)  # as JAX's jit makes it
    if at is None:
        return _at_via_scan(self, a, indices, *(() if b is None else (b,)))
    return at(a, indices) if b is None else at(a, indices, b)


def _at_via_scan(self, a, indices, *args):
    from ._indexing import eliminate_deprecated_list_indexing
    check_arraylike(f"{self.__name__}.at", a, *args)
    dtype = _result_dtype(self._func, a, *args)
    a = as_operand(a).astype(dtype)
    args = tuple(as_operand(arg).astype(dtype) for arg in args)
    indices = eliminate_deprecated_list_indexing(indices)
    if not indices:
        return a
    shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
    shape = shapes and np.broadcast_shapes(*shapes)
    if not shape:
        return a.at[indices].set(self(a.at[indices].get(), *args))
    if args:
        arg = _broadcast_to(args[0], (*shape, *args[0].shape[len(shape):]))
        args = (arg.reshape(math.prod(shape), *args[0].shape[len(shape):]),)
    indices = [idx if isinstance(idx, slice) else _broadcast_to(idx, shape).ravel() for idx in indices]

    def scan_fun(carry, x):
        i, a = carry
        idx = tuple(ind if isinstance(ind, slice) else ind[i] for ind in indices)
        a = a.at[idx].set(self(a.at[idx].get(), *(arg[i] for arg in args)))
        return (i + 1, a), x
    carry, _ = lax.scan(scan_fun, (0, a), None, len(indices[0]))
    return carry[1]


@staged_as("reduceat", static_argnames=("self", "axis", "dtype"))
def _reduceat(self, a, indices, axis=0, dtype=None, out=None):
    self._check_binary("reduceat")
    if out is not None:
        raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
    reduceat = self._props["reduceat"]
    if reduceat is None:
        return _reduceat_via_loop(self, a, indices, axis=axis, dtype=dtype)
    return reduceat(a, indices, axis=axis, dtype=dtype)


def _reduceat_via_loop(self, a, indices, axis=0, dtype=None):
    from ._indexing import eliminate_deprecated_list_indexing, take
    from ._shape import append
    check_arraylike(f"{self.__name__}.reduceat", a, indices)
    a = as_operand(a)
    idx_tuple = eliminate_deprecated_list_indexing(indices)
    indices = as_operand(idx_tuple[0])
    if a.ndim == 0:
        raise ValueError(f"reduceat: a must have 1 or more dimension, got {a.shape=}")
    if indices.ndim != 1:
        raise ValueError(f"reduceat: indices must be one-dimensional, got {indices.shape=}")
    if axis is None or isinstance(axis, (tuple, list)):
        raise ValueError("reduceat requires a single integer axis.")
    axis = canonicalize_axis(axis, a.ndim)
    out = take(a, indices, axis=axis)
    ind = lax.expand_dims(append(indices, a.shape[axis]), list(np.delete(np.arange(out.ndim), axis)))
    ind_start = lax.slice_in_dim(ind, 0, ind.shape[axis] - 1, axis=axis)
    ind_end = lax.slice_in_dim(ind, 1, ind.shape[axis], axis=axis)

    def loop_body(i, out):
        return _where((i > ind_start) & (i < ind_end), self(out, take(a, lax.expand_dims(i, (0,)), axis=axis)), out)
    return lax.fori_loop(0, a.shape[axis], loop_body, out)


@staged_as("outer", static_argnums=(0,))
def _outer(self, A, B):
    self._check_binary("outer")
    check_arraylike(f"{self.__name__}.outer", A, B)
    ravel = lambda x: lax.reshape(x, (np.size(x),))  # noqa: E731
    result = vmap(vmap(self, (None, 0)), (0, None))(ravel(A), ravel(B))
    return result.reshape(*np.shape(A), *np.shape(B))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``ufunc`` of a scalar function (vectorized over its arguments when called)."""
    return ufunc(func, nin, nout, identity=identity)


def _bool_as_int32_at(method):
    """JAX's ``_add_at`` and ``_multiply_at``: booleans combined as int32, then cast back."""
    def at(a, indices, b):
        if a.dtype == bool:
            a = a.astype("int32")
            b = lax.convert_element_type(b, bool).astype("int32")
            return getattr(a.at[indices], method)(b).astype(bool)
        return getattr(a.at[indices], method)(b)
    return at


def _named_reduction(name, op, init_val, preproc):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        arr = as_operand(a)
        init = np.array(init_val).astype(dtype or arr.dtype) if name == "reduce_bitwise_and" else init_val
        return red._reduction(arr, name, op, init, preproc=preproc, axis=red._ensure_optional_axes(axis),
                              dtype=dtype, out=out, keepdims=keepdims, initial=initial, where_=where)
    return reduce


def _reduce_extremum(name, op, init_val):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return red._reduction(a, name, op, init_val, has_identity=False, axis=axis, dtype=dtype, out=out,
                              keepdims=keepdims, initial=initial, where_=where)
    return reduce


def _logsumexp(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """JAX's ``reductions._logsumexp``: the reduction of ``logaddexp``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp.reduce is not supported.")
    a = as_operand(a)
    where = red._check_where("logsumexp", where)
    a_arr, = promote_dtypes_inexact(a)
    pos_dims = red._reduction_dims(a_arr, axis)
    amax = red.max(_ufuncs.real(a_arr), axis=pos_dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(lax.is_finite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, pos_dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(a_arr.dtype)))
    sumexp = exp_a.sum(axis=pos_dims, keepdims=keepdims, where=where)
    result = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    return result if initial is None else _ufuncs.logaddexp(initial, result)


def _logsumexp2(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``logaddexp2``'s reduction, through ``_logsumexp`` in units of ln 2."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp2.reduce is not supported.")
    ln2 = float(np.log(2))
    if initial is not None:
        initial *= ln2
    return _logsumexp(as_operand(a) * ln2, axis=axis, dtype=dtype, keepdims=keepdims, where=where,
                      initial=initial) / ln2


def _binary(func, identity, reduce=None, accumulate=None, at=None):
    return ufunc(func, name=func.__name__, nin=2, nout=1, call=func, identity=identity, reduce=reduce,
                 accumulate=accumulate, at=at)


negative = ufunc(_ufuncs.negative, name="negative", nin=1, nout=1, call=_ufuncs.negative)
add = _binary(_ufuncs.add, 0, red.sum, red.cumsum, _bool_as_int32_at("add"))
multiply = _binary(_ufuncs.multiply, 1, red.prod, red.cumprod, _bool_as_int32_at("multiply"))
bitwise_and = _binary(_ufuncs.bitwise_and, -1, _named_reduction("reduce_bitwise_and", "and", -1,
                                                                red._require_integer))
bitwise_or = _binary(_ufuncs.bitwise_or, 0, _named_reduction("reduce_bitwise_or", "or", 0, red._require_integer))
bitwise_xor = _binary(_ufuncs.bitwise_xor, 0, _named_reduction("reduce_bitwise_xor", "xor", 0, red._require_integer))
subtract = _binary(_ufuncs.subtract, None, at=lambda a, indices, b: a.at[indices].subtract(b))
minimum = _binary(_ufuncs.minimum, None, _reduce_extremum("min", "min", np.inf))
maximum = _binary(_ufuncs.maximum, None, _reduce_extremum("max", "max", -np.inf))
logical_and = _binary(_ufuncs.logical_and, True, _named_reduction("reduce_logical_and", "and", True,
                                                                  red._cast_to_bool))
logical_or = _binary(_ufuncs.logical_or, False, _named_reduction("reduce_logical_or", "or", False, red._cast_to_bool))
logical_xor = _binary(_ufuncs.logical_xor, False, _named_reduction("reduce_logical_xor", "xor", False,
                                                                   red._cast_to_bool))
logaddexp = _binary(_ufuncs.logaddexp, -np.inf, _logsumexp)
logaddexp2 = _binary(_ufuncs.logaddexp2, -np.inf, _logsumexp2)
