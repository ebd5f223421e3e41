"""Shape manipulation in ``irax.numpy``."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.lax._scalars import as_operand

from irax.core import is_tracer

from ._util import (_broadcast_arrays, _broadcast_to, canonicalize_axes, canonicalize_axis, check_arraylike,
                    convert_element_type, ensure_arraylike, promote_dtypes, staged_as)


def shape(a):
    return tuple(np.shape(a)) if not hasattr(a, "shape") else tuple(a.shape)


def ndim(a):
    return len(shape(a))


def size(a, axis=None):
    s = shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def _resolve_shape(newshape, size):
    newshape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(map(operator.index, newshape))
    if builtins.sum(d == -1 for d in newshape) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in newshape:
        known = int(np.prod([d for d in newshape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {newshape}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    if int(np.prod(newshape, dtype=np.int64)) != size:
        raise TypeError(f"cannot reshape array of size {size} into shape {newshape}")
    return newshape


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Row-major reshape; one dimension may be -1."""
    check_arraylike("reshape", a)
    a = as_operand(a)
    shape = _resolve_shape(newshape if shape is None else shape, a.size)
    if order == "C":
        return lax.reshape(a, shape)
    if order == "F":
        # Column-major: reverse the axes, reshape row-major to the reversed shape, reverse back.
        # (JAX binds reshape[dimensions=...]; the dialect's reshape has no dimensions, so the
        # first reversal is an explicit transpose.)
        reverse = lambda x: lax.transpose(x, tuple(range(x.ndim))[::-1])
        return reverse(lax.reshape(reverse(a), shape[::-1]))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C"):
    """The array as 1-D, in row-major (``order='C'``) or column-major (``order='F'``) order."""
    check_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    a = as_operand(a)
    return reshape(a, (a.size,), order)


def _view(x, dtype=None, type=None):
    """``Array.view``: the same bytes as ``dtype``, the last axis scaled by the ratio of item sizes (as JAX)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    x = as_operand(x)
    if dtype is None:
        return x
    dtype = dtypes.canonicalize_dtype(dtype)
    bits_in, bits_out = x.dtype.itemsize * 8, dtype.itemsize * 8
    if x.ndim == 0:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
        return lax.squeeze(_view(lax.expand_dims(x, (0,)), dtype), (0,))
    if (x.shape[-1] * bits_in) % bits_out != 0:
        raise ValueError("When changing to a larger dtype, its size must be a divisor "
                         "of the total size in bytes of the last axis of the array.")
    if x.dtype == dtype:
        return x
    if x.dtype == np.bool_:
        return _view(_astype(x, np.uint8), dtype)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        parts = stack([lax.real(x), lax.imag(x)], axis=-1)  # interleaved (real, imag) pairs
        return _view(lax.reshape(parts, (*x.shape[:-1], x.shape[-1] * 2)), dtype)
    if dtype == np.bool_:
        return _astype(_view(x, np.uint8), np.bool_)
    if dtypes.issubdtype(dtype, np.complexfloating):
        from ._ufuncs import add, multiply
        out = _astype(_view(x, dtypes.finfo(dtype).dtype), dtype)
        return add(out[..., 0::2], multiply(1j, out[..., 1::2]))
    if bits_in < bits_out:
        factor = bits_out // bits_in
        return lax.bitcast_convert_type(lax.reshape(x, (*x.shape[:-1], x.shape[-1] // factor, factor)), dtype)
    out = lax.bitcast_convert_type(x, dtype)
    if bits_in > bits_out:
        return lax.reshape(out, (*out.shape[:-2], out.shape[-2] * out.shape[-1]))
    return out


def transpose(a, axes=None):
    check_arraylike("transpose", a)
    a = as_operand(a)
    axes = tuple(range(a.ndim - 1, -1, -1)) if axes is None else tuple(canonicalize_axis(i, a.ndim) for i in axes)
    return lax.transpose(a, axes)


def permute_dims(a, axes):
    return transpose(a, axes)


def matrix_transpose(x):
    x = as_operand(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={x.ndim}")
    return lax.transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def moveaxis(a, source, destination):
    a = as_operand(a)
    source = canonicalize_axes(source, a.ndim) if not isinstance(source, int) else (canonicalize_axis(source, a.ndim),)
    destination = canonicalize_axes(destination, a.ndim) if not isinstance(destination, int) else \
        (canonicalize_axis(destination, a.ndim),)
    if len(source) != len(destination):
        raise ValueError("Inconsistent number of elements: {} vs {}".format(len(source), len(destination)))
    perm = [i for i in range(a.ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        perm.insert(dest, src)
    return lax.transpose(a, perm)


def swapaxes(a, axis1, axis2):
    a = as_operand(a)
    perm = list(range(a.ndim))
    i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def squeeze(a, axis=None):
    a = as_operand(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = canonicalize_axes(axis, a.ndim)
        for i in axes:
            if a.shape[i] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, "
                                 f"got shape={a.shape} and dimensions={axes}")
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    a = as_operand(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return lax.expand_dims(a, axes)


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_to(array, shape, *, out_sharding=None):
    """Broadcasts with NumPy's rules: one ``broadcast_in_dim`` (as ``jnp.broadcast_to``)."""
    array = ensure_arraylike("broadcast_to", array)
    shape = (shape,) if not isinstance(shape, tuple) and np.ndim(shape) == 0 else shape
    try:
        shape = tuple(map(operator.index, shape))
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None
    return _broadcast_to(array, shape)


def broadcast_arrays(*args):
    args = [ensure_arraylike("broadcast_arrays", a) for a in args]
    return _broadcast_arrays(*args)


def _atleast(arys, ndmin):
    from ._creation import array
    check_arraylike(f"atleast_{ndmin}d", *arys)
    if len(arys) == 1:
        return array(arys[0], copy=False, ndmin=ndmin)
    return [array(arr, copy=False, ndmin=ndmin) for arr in arys]


@staged_as("atleast_1d")
def atleast_1d(*arys):
    return _atleast(arys, 1)


@staged_as("atleast_2d")
def atleast_2d(*arys):
    return _atleast(arys, 2)


@staged_as("atleast_3d")
def atleast_3d(*arys):
    check_arraylike("atleast_3d", *arys)
    if len(arys) == 1:
        arr = as_operand(arys[0])
        if arr.ndim == 0:
            arr = lax.expand_dims(arr, (0, 1, 2))
        elif arr.ndim == 1:
            arr = lax.expand_dims(arr, (0, 2))
        elif arr.ndim == 2:
            arr = lax.expand_dims(arr, (2,))
        return arr
    return [atleast_3d(arr) for arr in arys]


def concatenate(arrays, axis=0, dtype=None):
    """Joins arrays along an existing axis (``axis=None`` flattens first)."""
    if not isinstance(arrays, (list, tuple)) and hasattr(arrays, "shape"):
        arrays = [arrays[i] for i in range(arrays.shape[0])]
    if not len(arrays):
        raise ValueError("Need at least one array to concatenate.")
    check_arraylike("concatenate", *arrays)
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        arrays = [convert_element_type(a, dtype) for a in arrays]
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, arrays[0].ndim)
    return lax.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """Joins arrays along a new axis (JAX's ``stack`` primitive)."""
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    check_arraylike("stack", *arrays)
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        arrays = [convert_element_type(a, dtype) for a in arrays]
    shape0 = arrays[0].shape
    if builtins.any(a.shape != shape0 for a in arrays):
        raise ValueError("All input arrays must have the same shape.")
    return lax.stack(arrays, canonicalize_axis(axis, len(shape0) + 1))


def vstack(tup, dtype=None):
    if hasattr(tup, "shape"):
        tup = [tup[i] for i in range(tup.shape[0])]  # JAX maps atleast_2d over the leading axis
    check_arraylike("vstack", *tup)
    return concatenate([atleast_2d(m) for m in tup], axis=0, dtype=dtype)


def hstack(tup, dtype=None):
    if hasattr(tup, "shape"):
        tup = [tup[i] for i in range(tup.shape[0])]
    check_arraylike("hstack", *tup)
    arrs = [atleast_1d(m) for m in tup]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, dtype=dtype)


def dstack(tup, dtype=None):
    if hasattr(tup, "shape"):
        tup = [tup[i] for i in range(tup.shape[0])]
    check_arraylike("dstack", *tup)
    tup = [as_operand(t) for t in tup]
    return concatenate([atleast_3d(m) for m in tup], axis=2, dtype=dtype)


def column_stack(tup):
    if hasattr(tup, "shape") and tup.ndim >= 3:
        arrs = tup
    else:
        if hasattr(tup, "shape"):
            tup = [tup[i] for i in range(tup.shape[0])]
        check_arraylike("column_stack", *tup)
        arrs = [transpose(atleast_2d(arr)) if arr.ndim < 2 else arr for arr in map(as_operand, tup)]
    return concatenate(arrs, axis=1)


def _split(op, ary, indices_or_sections, axis):
    """One ``lax.split`` with NumPy-int sizes, as JAX's ``jnp.split`` binds it."""
    ary = as_operand(ary)
    axis = canonicalize_axis(operator.index(axis), ary.ndim)
    size = ary.shape[axis]
    if isinstance(indices_or_sections, (tuple, list)) or getattr(indices_or_sections, "ndim", 0) > 0:
        sizes = list(np.diff(np.asarray([0] + [operator.index(i) for i in indices_or_sections] + [size])))
    else:
        part, rest = builtins.divmod(size, operator.index(indices_or_sections))
        if rest and op == "split":
            raise ValueError(f"array split does not result in an equal division: rest is {rest}")
        sections = operator.index(indices_or_sections)
        sizes = [part + 1] * rest + [part] * (sections - rest)
    return list(lax.split(ary, [np.int64(s) for s in sizes], axis=axis))


def split(ary, indices_or_sections, axis=0):
    """Splits into equal sections or at the given indices."""
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=1 if as_operand(ary).ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def flip(m, axis=None):
    m = as_operand(m)
    return _flip(m, axis if not isinstance(axis, list) else tuple(axis))


@staged(static_argnums=(1,))
def _flip(m, axis):
    return lax.rev(m, canonicalize_axes(axis, m.ndim))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    arr = ensure_arraylike("roll", a)
    if axis is None:
        return reshape(roll(ravel(arr), shift, 0), arr.shape)
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axis = tuple(canonicalize_axis(ax, arr.ndim) for ax in axis)
    if is_tracer(shift):
        return _roll_dynamic(arr, shift, axis)
    try:
        shift = (operator.index(shift),) if np.ndim(shift) == 0 else tuple(map(operator.index, shift))
    except TypeError:  # an array of a dtype other than an integer one
        return _roll_dynamic(arr, as_operand(shift), axis)
    return _roll_static(arr, shift, axis)


@staged(static_argnums=(2,))
def _roll_dynamic(a, shift, axis):
    """Each axis rolled by a traced shift: a dynamic slice of the array concatenated with itself."""
    from ._ufuncs import remainder
    b_shape = lax.broadcast_shapes(shift.shape, np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    for x, i in zip(broadcast_to(shift, b_shape), np.broadcast_to(axis, b_shape)):
        i = int(i)
        size = lax.convert_element_type(a.shape[i], np.int32)
        x = remainder(lax.convert_element_type(x, np.int32), lax.max(size, np.int32(1)))
        a = lax.dynamic_slice_in_dim(lax.concatenate((a, a), i), size - x, a.shape[i], axis=i)
    return a


@staged(static_argnums=(1, 2))
def _roll_static(a, shift, axis):
    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        ax = int(ax)
        if a.shape[ax] == 0:
            continue
        i = int(-s) % a.shape[ax]
        a = lax.concatenate([lax.slice_in_dim(a, i, a.shape[ax], axis=ax), lax.slice_in_dim(a, 0, i, axis=ax)], ax)
    return a


def tile(A, reps):
    """``A`` repeated ``reps`` times along its (left-padded) axes: one ``tile`` (as ``jnp.tile``)."""
    A = ensure_arraylike("tile", A)
    try:
        reps = tuple(map(operator.index, reps))
    except TypeError:
        reps = (operator.index(reps),)
    reps = (1,) * (A.ndim - len(reps)) + reps
    if len(reps) > A.ndim:
        A = lax.expand_dims(A, tuple(range(len(reps) - A.ndim)))
    return lax.tile(A, reps)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a = as_operand(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("jnp.repeat with array repeats arrives with dynamic indexing")
    r = int(repeats)
    shape_ = list(a.shape)
    expanded = shape_[:axis + 1] + [r] + shape_[axis + 1:]
    bcast = lax.broadcast_in_dim(a, expanded, [i if i <= axis else i + 1 for i in range(a.ndim)])
    shape_[axis] *= r
    return lax.reshape(bcast, shape_)


def astype(x, dtype, /, *, copy=False, device=None):
    return _astype(x, dtype)


def _astype(x, dtype):
    from ._util import convert
    x = as_operand(x)
    return convert(x, dtypes.canonicalize_dtype(dtype))


def rot90(m, k=1, axes=(0, 1)):
    """Rotates by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the second)."""
    check_arraylike("rot90", m)
    return _rot90(m, operator.index(k), tuple(axes))


@staged_as("rot90", static_argnums=(1, 2))
def _rot90(m, k, axes):
    m = as_operand(m)
    if m.ndim < 2:
        raise ValueError(f"rot90 requires its first argument to have ndim at least two, but got first argument of "
                         f"shape {m.shape}, which has ndim {m.ndim}")
    ax1, ax2 = (canonicalize_axis(a, m.ndim) for a in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return transpose(flip(m, ax2), perm) if k == 1 else flip(transpose(m, perm), ax2)


def dsplit(ary, indices_or_sections):
    if as_operand(ary).ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, axis=2)


def append(arr, values, axis=None):
    return _append(arr, values, axis)


@staged_as("append", static_argnums=(2,))
def _append(arr, values, axis):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


def rollaxis(a, axis, start=0):
    """``moveaxis`` with NumPy's legacy meaning of ``start`` (the axis lands before ``start``)."""
    check_arraylike("rollaxis", a)
    return _rollaxis(a, operator.index(axis), operator.index(start))


@staged_as("rollaxis", static_argnums=(1, 2))
def _rollaxis(a, axis, start):
    a = as_operand(a)
    axis = canonicalize_axis(axis, a.ndim)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"start={start} must satisfy {-a.ndim}<=start<={a.ndim}")
    start = start + a.ndim if start < 0 else start
    return moveaxis(a, axis, start - 1 if start > axis else start)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    return lax.unstack(ensure_arraylike("unstack", x), axis=axis)


def resize(a, new_shape):
    """``a`` flattened, repeated cyclically and reshaped to ``new_shape``."""
    check_arraylike("resize", a)
    new_shape = (operator.index(new_shape),) if isinstance(new_shape, (int, np.integer)) else \
        tuple(map(operator.index, new_shape))
    if builtins.any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = ravel(a)
    new_size = int(np.prod(new_shape, dtype=np.int64))
    if arr.size == 0 or new_size == 0:
        return lax.full(new_shape, 0, arr.dtype)
    arr = tile(arr, -(-new_size // arr.size))
    return lax.reshape(lax.slice_in_dim(arr, 0, new_size), new_shape)


@staged_as("block")
def block(arrays):
    """Assembles an array from nested lists of blocks (the innermost list joins along the last axis)."""
    out, _ = _block(arrays)
    return out


def _block(xs):
    if isinstance(xs, tuple):
        raise ValueError("jax.numpy.block does not allow tuples, got {}".format(xs))
    if not isinstance(xs, list):
        return as_operand(xs), 1
    if len(xs) == 0:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts, depths = zip(*(_block(x) for x in xs))
    if builtins.any(d != depths[0] for d in depths[1:]):
        raise ValueError("Mismatched list depths in jax.numpy.block")
    rank = builtins.max(depths[0], builtins.max(p.ndim for p in parts))
    parts = [lax.broadcast(p, (1,) * (rank - p.ndim)) if p.ndim < rank else p for p in parts]
    return concatenate(parts, axis=-depths[0]), depths[0] + 1
