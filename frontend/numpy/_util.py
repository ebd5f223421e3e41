"""Argument checking and JAX's implicit promotion of dtypes and ranks for ``irax.numpy``."""
from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.array import Array
from irax.config import config
from irax.core import Tracer
from irax.lax._scalars import as_operand, const_like

_PY_SCALARS = (bool, int, float, complex)


def check_arraylike(name, *args):
    for i, a in enumerate(args):
        if not (isinstance(a, (Array, Tracer, np.ndarray, np.generic)) or type(a) in _PY_SCALARS
                or hasattr(a, "__jax_array__")):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at position {i}.")


def convert(x, dtype, weak_type=False):
    """JAX's ``_convert_element_type``, with its constant folding: a concrete 0-d array (a Python
    scalar made an array, say) converts on the host, so a jaxpr shows a literal, not an equation."""
    dtype = np.dtype(dtype)
    if isinstance(x, (Array, Tracer)) and x.aval.dtype == dtype and x.aval.weak_type == weak_type:
        return x
    if type(x) is Array and x.ndim == 0 and x._npy is not None:
        host = np.asarray(x._npy)
        if dtypes.issubdtype(host.dtype, np.complexfloating) and not dtypes.issubdtype(dtype, np.complexfloating):
            host = host.real
        with np.errstate(all="ignore"):
            host = host.astype(dtype)
        return lax._convert(host[()], dtype, weak_type)
    return lax._convert(x, dtype, weak_type)


def convert_element_type(x, dtype):
    """``lax.convert_element_type`` (to a strong, canonical dtype) with JAX's constant folding of scalars."""
    return convert(x, dtypes.canonicalize_dtype(dtype), False)


def promote_dtypes(*args):
    """Converts every argument to the promoted dtype (and weak type) of all of them."""
    if len(args) < 2:
        return [as_operand(a) for a in args]
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    """As ``promote_dtypes``, but booleans become int32 (JAX's ``to_numeric_dtype``)."""
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)) and args[0].aval.dtype != np.bool_:
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = np.dtype(np.int32) if dtype == np.bool_ else dtype
    return [convert(a, dtype, weak) for a in args]


# JAX's ``dtypes._dtype_to_inexact``: narrow integers (and bools) become float32 even with x64 enabled.
_DTYPE_TO_INEXACT = {np.dtype(k): np.dtype(v) for k, v in [
    ("bool", "float32"), ("uint8", "float32"), ("int8", "float32"), ("uint16", "float32"), ("int16", "float32"),
    ("uint32", "float32"), ("int32", "float32"), ("uint64", "float64"), ("int64", "float64")]}


_CANONICAL_INEXACT = {np.dtype(np.float32), np.dtype(np.complex64)}


def to_inexact_dtype(dtype):
    """JAX's ``dtypes.to_inexact_dtype`` (irax's ``dtypes.to_inexact_dtype`` gives the default float for every
    integer, which differs under x64)."""
    dtype = np.dtype(dtype)
    return _DTYPE_TO_INEXACT.get(dtype, dtype)


def promote_dtypes_inexact(*args):
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)) and args[0].dtype.kind in "fcV":
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = to_inexact_dtype(dtype)
    return [convert(a, dtype, weak) for a in args]


def promote_shapes(fun_name, *args):
    """JAX's ``promote_shapes``: equal ranks (or one non-scalar rank) stay as they are; otherwise every
    operand, scalars included, gets leading unit axes up to the result rank (which ``jax_numpy_rank_promotion``
    may warn about or refuse)."""
    if len(args) < 2:
        return [as_operand(a) for a in args]
    shapes = [np.shape(a) if not hasattr(a, "shape") else tuple(a.shape) for a in args]
    if all(len(shapes[0]) == len(s) for s in shapes[1:]):
        return [as_operand(a) for a in args]
    if len({len(s) for s in shapes if s}) < 2:
        return [as_operand(a) for a in args]
    if config.jax_numpy_rank_promotion != "allow":
        _rank_promotion_warning_or_error(fun_name, shapes)
    rank = len(np.broadcast_shapes(*shapes))
    return [broadcast_to_rank(a, rank) for a in args]


def _rank_promotion_warning_or_error(fun_name, shapes):
    shown = " ".join(map(str, shapes))
    if config.jax_numpy_rank_promotion == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes {shown}. Set the "
                      "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
                      "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    else:
        raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes {shown} and with the "
                         "config option jax_numpy_rank_promotion='raise'. For more information, see "
                         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def broadcast_to_rank(x, rank):
    x = as_operand(x)
    return x if x.ndim == rank else lax.broadcast(x, (1,) * (rank - x.ndim))


def ensure_arraylike(name, *args):
    """Checks the arguments and makes them arrays (one array for one argument)."""
    check_arraylike(name, *args)
    out = tuple(as_operand(a) for a in args)
    return out[0] if len(out) == 1 else out


def _broadcast_to(arr, shape):
    """``lax.broadcast_to``: one ``broadcast_in_dim`` onto trailing axes (unit axes stretch)."""
    arr = as_operand(arr)
    shape = (shape,) if not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0 else tuple(shape)
    shape = tuple(map(operator.index, shape))
    if tuple(arr.shape) == shape:
        return arr
    if len(shape) < arr.ndim:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={tuple(arr.shape)} "
                         f"shape={shape}")
    nlead = len(shape) - arr.ndim
    if not all(d in (1, s) for d, s in zip(arr.shape, shape[nlead:])):
        full = lambda dims: f"{arr.dtype.name}[{','.join(map(str, dims))}]"  # noqa: E731 (JAX's str of a type)
        raise ValueError(f"Incompatible types for broadcasting: input type={full(arr.shape)} and requested "
                         f"type={full(shape)}")
    if any(d < 0 for d in shape):
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got {shape}.")
    return lax.broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def _broadcast_arrays(*args):
    """JAX's ``_broadcast_arrays`` (an inlined jit, so nothing of its own shows in a jaxpr)."""
    args = [as_operand(a) for a in args]
    shapes = [tuple(a.shape) for a in args]
    if not shapes or all(s == shapes[0] for s in shapes):
        return args
    shape = tuple(np.broadcast_shapes(*shapes))
    return [_broadcast_to(a, shape) for a in args]


def lax_const(x, value):
    """``lax._const``: a constant of ``x``'s dtype, a Python scalar beside a weakly typed scalar."""
    return const_like(x, value, typed=convert)


def _where_impl(condition, x, y):
    condition, x, y = ensure_arraylike("where", condition, x, y)
    if condition.dtype != np.bool_:
        condition = lax.ne(condition, convert(0, condition.dtype))
    x, y = promote_dtypes(x, y)
    if condition.ndim == 0:
        x, y = _broadcast_arrays(x, y)
    else:
        condition, x, y = _broadcast_arrays(condition, x, y)
    if 0 in x.shape:
        return x
    return lax.select(condition, x, y)


_where_impl.__name__ = _where_impl.__qualname__ = "_where"
_where = staged(_where_impl)


def promote_args(name, *args):
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)):
        return list(args)
    if len(args) == 2:
        promoted = _promote_pair_quickly(*args)
        if promoted is not None:
            return promoted
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes(*args))


def promote_args_numeric(name, *args):
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_numeric(*args))


# The dtype kinds that a Python scalar of each type leaves unchanged when it meets an array of that kind (JAX's
# weak typing: ``x * 2`` keeps x's dtype, ``int8_array + 2.0`` does not); bfloat16 and float8 have kind "V".
_KINDS_KEPT_BY_SCALAR = {bool: "biufcV", int: "iufcV", float: "fcV"}


def _promote_pair_quickly(x, y):
    """``promote_shapes(promote_dtypes(x, y))`` for the common operator calls, ``None`` for the others: arrays of
    one dtype and rank (nothing to do), or an array and a Python scalar that takes its dtype."""
    x_array, y_array = isinstance(x, (Array, Tracer)), isinstance(y, (Array, Tracer))
    if x_array and y_array:
        a, b = x.aval, y.aval
        return [x, y] if a.dtype == b.dtype and a.weak_type == b.weak_type and a.ndim == b.ndim else None
    array, scalar = (x, y) if x_array else (y, x)
    kinds = _KINDS_KEPT_BY_SCALAR.get(type(scalar))
    if not (x_array or y_array) or kinds is None or array.aval.dtype.kind not in kinds:
        return None
    scalar = lax._convert(scalar, array.aval.dtype, array.aval.weak_type)
    return [array, scalar] if x_array else [scalar, array]


def promote_args_inexact(name, *args):
    if len(args) == 1 and isinstance(args[0], (Array, Tracer)) and args[0].dtype.kind in "fcV":
        return list(args)
    if len(args) == 1 and type(args[0]) is np.ndarray and args[0].dtype in _CANONICAL_INEXACT:
        return [as_operand(args[0])]  # eager ufuncs on NumPy arrays: nothing to promote
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def canonicalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axis}")
        return axes
    return (canonicalize_axis(axis, ndim),)


def staged_as(name, static_argnums=(), static_argnames=()):
    """``staged`` under JAX's name for the function, so a jaxpr shows ``jit[name=tril]`` where JAX's does.

    As ``jax.jit``, a static parameter is static whether it comes by position or by keyword
    (``static_argnums`` and ``static_argnames`` name the same parameters), and a static parameter
    left to its default is fine. The dynamic arguments keep JAX's order: positional ones first,
    then keyword ones by name.
    """
    def wrap(fun):
        @functools.wraps(fun)
        def named(*args, **kwargs):
            return fun(*args, **kwargs)
        named.__name__ = named.__qualname__ = name
        return staged(named, static_argnums=static_argnums, static_argnames=static_argnames)
    return wrap
