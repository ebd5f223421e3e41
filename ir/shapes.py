"""Result shape and dtype rules of the primitives, with JAX's error messages.

Each rule takes the operands' ``ShapedArray``s and the op's params and returns
the results' ``ShapedArray``s; it raises ``TypeError``/``ValueError`` as JAX's
``lax`` does for the same mistake.
"""
from __future__ import annotations

import functools

import numpy as np

from .avals import ShapedArray, bfloat16

BOOL = np.dtype(np.bool_)


def _all_weak(avals_in) -> bool:
    return all(a.weak_type for a in avals_in)


def _kind_names(kinds) -> str:
    """As JAX names them: ``inexact`` is spelled ``floating, complexfloating``."""
    names = [("floating, complexfloating" if k is np.inexact else k.__name__) for k in kinds]
    return ", ".join(names)


def remembered(query):
    """``query(a, b)`` with its answers kept: the dtype questions every eager operation asks a few times. Unhashable
    arguments are answered afresh."""
    answers = {}

    @functools.wraps(query)
    def ask(a, b):
        try:
            return answers[a, b]
        except (KeyError, TypeError):
            pass
        answer = query(a, b)
        try:
            answers[a, b] = answer
        except TypeError:
            pass
        return answer
    return ask


@remembered
def issubdtype(dtype, kind) -> bool:
    """``np.issubdtype`` that counts bfloat16 (an ml_dtypes type) as floating."""
    if dtype == bfloat16:
        return kind in (np.floating, np.inexact, np.number, np.generic)
    return np.issubdtype(dtype, kind)


def check_dtypes(name, avals_in, kinds, *, name_position=False):
    """JAX's dtype check (``kinds`` for every operand, or a list of them, one per operand); its message names the
    operand's position for an n-ary op or (``name_position``) always, as ``linalg_primitive``'s does."""
    per_operand = kinds if isinstance(kinds, list) else [kinds] * len(avals_in)
    for i, (a, kinds) in enumerate(zip(avals_in, per_operand)):
        if not any(issubdtype(a.dtype, k) for k in kinds):
            at = f" at position {i}" if len(avals_in) > 1 or name_position else ""
            raise TypeError(f"{name} does not accept dtype {a.dtype.name}{at}. "
                            f"Accepted dtypes{at} are subtypes of {_kind_names(kinds)}.")


def broadcasting_shape(name, avals_in):
    """lax's n-ary shape rule: equal ranks whose sizes agree or are 1; rank-0 operands broadcast."""
    shapes = [a.shape for a in avals_in if a.shape != ()]
    if not shapes:
        return ()
    if any(len(s) != len(shapes[0]) for s in shapes):
        ranks = ", ".join(str(len(a.shape)) for a in avals_in)
        raise TypeError(f"{name}: arrays must have same number of dimensions, got {ranks}.")
    result = []
    for sizes in zip(*shapes):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            got = ", ".join(str(a.shape) for a in avals_in)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {got}.")
        result.append(big.pop() if big else 1)
    return tuple(result)


def same_dtypes(name, avals_in):
    dtypes = [a.dtype for a in avals_in]
    if any(d != dtypes[0] for d in dtypes):
        got = ", ".join(d.name for d in dtypes)
        raise TypeError(f"{name} requires arguments to have the same dtypes, got {got}. "
                        f"(Tip: jnp.{name} is a similar function that does automatic type promotion on inputs).")
    return dtypes[0]


def nary(kinds, result_dtype=None):
    """Elementwise rule: operands share a dtype from ``kinds``; shapes broadcast."""
    def rule(name, avals_in, **params):
        check_dtypes(name, avals_in, kinds)
        dtype = same_dtypes(name, avals_in)
        shape = broadcasting_shape(name, avals_in)
        out_dtype = dtype if result_dtype is None else result_dtype(dtype)
        weak = _all_weak(avals_in)
        return [ShapedArray(shape, out_dtype, weak)]
    return rule


def threefry2x32(name, avals_in):
    """Two uint32 results of the operands' broadcast shape, as JAX's ``threefry2x32_p``."""
    if any(a.dtype != np.uint32 for a in avals_in):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {list(avals_in)}")
    shape = broadcasting_shape(name, avals_in)
    return [ShapedArray(shape, np.dtype(np.uint32), False)] * 2


def real_dtype(dtype):
    return np.finfo(dtype).dtype if issubdtype(dtype, np.complexfloating) else dtype


def complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _check_axes(name, axes, ndim):
    for ax in axes:
        if not 0 <= ax < ndim:
            raise ValueError(f"{name}: axis {ax} is out of bounds for array of dimension {ndim}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axes': {axes}")


def reduce(kinds=None, result_dtype=None):
    def rule(name, avals_in, *, axes, **params):
        (x,) = avals_in
        if kinds is not None:
            check_dtypes(name, avals_in, kinds)
        _check_axes(name, axes, x.ndim)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        dtype = x.dtype if result_dtype is None else params[result_dtype]
        return [ShapedArray(shape, dtype, x.weak_type and result_dtype is None)]
    return rule


def argminmax(name, avals_in, *, axes, index_dtype):
    (x,) = avals_in
    _check_axes(name, axes, x.ndim)
    if x.shape[axes[0]] == 0:
        raise ValueError(f"{name} requires a non-empty reduction dimension, got shape {x.shape}")
    return [ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), index_dtype)]


def cumulative(name, avals_in, *, axis, reverse):
    (x,) = avals_in
    if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
    return [x]


def same_as_first(name, avals_in, **params):
    return [avals_in[0]]


def integer_pow(name, avals_in, *, y):
    (x,) = avals_in
    check_dtypes(name, avals_in, (np.integer, np.inexact))
    if y < 0 and issubdtype(x.dtype, np.integer):
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x.dtype.name}, {y})")
    return [x]


def select_n(name, avals_in):
    which, *cases = avals_in
    if not cases:
        raise ValueError("select_n requires at least one case")
    if which.dtype != BOOL and not issubdtype(which.dtype, np.integer):
        raise TypeError(f"select_n `which` must be boolean or integer type, got {which.dtype.name}")
    if which.dtype == BOOL and len(cases) > 2:
        raise TypeError("select_n with boolean `which` cannot have more than two cases")
    if any(c.shape != cases[0].shape for c in cases):
        raise TypeError(f"select_n cases must have the same shapes, got {[c.shape for c in cases]}.")
    if any(c.dtype != cases[0].dtype for c in cases):
        raise TypeError(f"select_n cases must have the same dtypes, got {[c.dtype.name for c in cases]}.")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select_n `which` must be scalar or have the same shape as cases, "
                        f"got `which` shape {which.shape} but case shape {cases[0].shape}.")
    return [ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))]


def clamp(name, avals_in):
    lo, x, hi = avals_in
    for bound, which in ((lo, "min"), (hi, "max")):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"Arguments to clamp must have the same shapes or be scalars, "
                            f"got {which} {bound.shape} for operand {x.shape}")
    same_dtypes(name, avals_in)
    return [x]


def convert_element_type(name, avals_in, *, new_dtype, weak_type):
    (x,) = avals_in
    return [ShapedArray(x.shape, new_dtype, weak_type)]


def bitcast_convert_type(name, avals_in, *, new_dtype):
    (x,) = avals_in
    old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
    if old == new:
        return [ShapedArray(x.shape, new_dtype)]
    if old > new and old % new == 0:
        return [ShapedArray(x.shape + (old // new,), new_dtype)]
    if new > old and x.shape and x.shape[-1] == new // old:
        return [ShapedArray(x.shape[:-1], new_dtype)]
    raise TypeError(f"bitcast_convert_type: cannot convert {x.dtype.name}{list(x.shape)} to {np.dtype(new_dtype).name}")


def broadcast_in_dim(name, avals_in, *, shape, broadcast_dimensions, sharding=None):
    (x,) = avals_in
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
                        f"got broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}.")
    if len(shape) < x.ndim:
        raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher rank to the "
                        f"operand shape; got operand ndim {x.ndim} and target broadcast ndim {len(shape)}.")
    if any(not 0 <= d < len(shape) for d in broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing and in range; "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                            f"corresponding dimensions in the target broadcast shape; got operand of shape "
                            f"{x.shape}, target broadcast shape {tuple(shape)}, broadcast_dimensions "
                            f"{tuple(broadcast_dimensions)} ")
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def reshape(name, avals_in, *, new_sizes, dimensions=None, sharding=None):
    (x,) = avals_in
    if dimensions is not None and sorted(dimensions) != list(range(len(x.shape))):
        raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, got dimensions "
                        f"{tuple(dimensions)} for shape {x.shape}.")
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {tuple(new_sizes)} "
                        f"(of total size {int(np.prod(new_sizes, dtype=np.int64))}) for shape {x.shape} "
                        f"(of total size {x.size}).")
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


def squeeze(name, avals_in, *, dimensions):
    (x,) = avals_in
    _check_axes(name, dimensions, x.ndim)
    if any(x.shape[d] != 1 for d in dimensions):
        raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={x.shape} and dimensions={tuple(dimensions)}")
    return [ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in dimensions), x.dtype, x.weak_type)]


def transpose(name, avals_in, *, permutation):
    (x,) = avals_in
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {tuple(permutation)} for operand shape {x.shape}.")
    return [x.update(shape=tuple(x.shape[p] for p in permutation))]


def rev(name, avals_in, *, dimensions):
    (x,) = avals_in
    _check_axes(name, dimensions, x.ndim)
    return [x]


def pad(name, avals_in, *, padding_config):
    x, value = avals_in
    if value.shape != ():
        raise TypeError(f"pad operand padding_value must be a scalar, got shape {value.shape}")
    same_dtypes(name, avals_in)
    if len(padding_config) != x.ndim:
        raise ValueError(f"length of padding_config must equal the number of axes of operand, got "
                         f"padding_config {padding_config} for operand shape {x.shape}")
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ValueError(f"interior padding in padding_config must be nonnegative, got {padding_config}")
        size = lo + hi + d + max(d - 1, 0) * interior
        if size < 0:
            raise ValueError(f"Dimension size after padding is not at least 0, got result shape with size {size}")
        shape.append(size)
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def concatenate(name, avals_in, *, dimension):
    if not avals_in:
        raise TypeError("concatenate requires a non-empty sequence of operands")
    first = avals_in[0]
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(a.shape) for a in avals_in)}.")
    same_dtypes(name, avals_in)
    for a in avals_in:
        if a.ndim != first.ndim or any(x != y for i, (x, y) in enumerate(zip(a.shape, first.shape)) if i != dimension):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                            f"being concatenated: concatenating along dimension {dimension} for shapes "
                            f"{', '.join(str(b.shape) for b in avals_in)}.")
    shape = list(first.shape)
    shape[dimension] = sum(a.shape[dimension] for a in avals_in)
    return [ShapedArray(shape, first.dtype, _all_weak(avals_in))]


def split(name, avals_in, *, sizes, axis):
    x, = avals_in
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != np.sum(sizes):
        raise ValueError(f"Sum of sizes {np.sum(sizes)} must be equal to dimension {axis} of the operand shape "
                         f"{list(x.shape)}")
    return [ShapedArray(x.shape[:axis] + (int(s),) + x.shape[axis + 1:], x.dtype, x.weak_type) for s in sizes]


def stack(name, avals_in, *, axis):
    if not avals_in:
        raise TypeError("stack requires at least one operand")
    first = avals_in[0]
    if not 0 <= axis <= first.ndim:
        raise ValueError(f"stack axis {axis} is out of bounds for operands of rank {first.ndim}")
    if any(a.shape != first.shape for a in avals_in):
        raise TypeError(f"stack operands must have equal shapes, got {[a.shape for a in avals_in]}")
    same_dtypes(name, avals_in)
    shape = list(first.shape)
    shape.insert(axis, len(avals_in))
    return [ShapedArray(shape, first.dtype, _all_weak(avals_in))]


def slice_rule(name, avals_in, *, start_indices, limit_indices, strides):
    (x,) = avals_in
    strides = strides or (1,) * x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise TypeError(f"slice start_indices, limit_indices and strides must have length equal to the operand's "
                        f"rank, got {start_indices}, {limit_indices}, {strides} for shape {x.shape}")
    for lo, hi, d in zip(start_indices, limit_indices, x.shape):
        if not 0 <= lo <= hi <= d:
            raise TypeError(f"slice indices must satisfy 0 <= start <= limit <= shape, got start_indices "
                            f"{tuple(start_indices)}, limit_indices {tuple(limit_indices)} for shape {x.shape}")
    shape = [(hi - lo + s - 1) // s if hi > lo else 0 for lo, hi, s in zip(start_indices, limit_indices, strides)]
    return [x.update(shape=shape)]


def _check_indices(name, indices, ndim):
    if len(indices) != ndim:
        raise TypeError(f"{name}: the number of start indices must equal the operand rank {ndim}, got {len(indices)}")
    for i in indices:
        if i.shape != () or not issubdtype(i.dtype, np.integer):
            raise TypeError(f"{name}: start indices must be integer scalars, got {i.str_short()}")


def dynamic_slice(name, avals_in, *, slice_sizes):
    x, *indices = avals_in
    _check_indices(name, indices, x.ndim)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= d for s, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice slice_sizes must be non-negative and fit the operand, got "
                        f"slice_sizes {tuple(slice_sizes)} for operand shape {x.shape}")
    return [x.update(shape=slice_sizes)]


def dynamic_update_slice(name, avals_in):
    x, update, *indices = avals_in
    _check_indices(name, indices, x.ndim)
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand shape, got "
                        f"update shape {update.shape} for operand shape {x.shape}.")
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice update must have the same dtype as the operand, got "
                        f"{update.dtype.name} and {x.dtype.name}")
    return [x.update(weak_type=x.weak_type and update.weak_type)]


def empty(name, avals_in, *, dtype, shape, out_sharding=None):
    return [ShapedArray(shape, dtype)]


def empty2(name, avals_in, *, dtype, memory_space=None):
    return [ShapedArray((), dtype)]


def iota(name, avals_in, *, dtype, shape, dimension, sharding=None):
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dimension} "
                         f"for shape {tuple(shape)}")
    return [ShapedArray(shape, dtype)]


def dot_general(name, avals_in, *, dimension_numbers, precision=None, preferred_element_type=None):
    lhs, rhs = avals_in
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of lhs and rhs contracting and batch dimensions, "
                        f"got dimension_numbers {dimension_numbers}.")
    for dims, a, side in ((lc + lb, lhs, "lhs"), (rc + rb, rhs, "rhs")):
        if any(not 0 <= d < a.ndim for d in dims) or len(set(dims)) != len(dims):
            raise TypeError(f"dot_general requires {side} dimension numbers to be distinct and in range, "
                            f"got {dimension_numbers} for {side} of rank {a.ndim}.")
    if any(lhs.shape[i] != rhs.shape[j] for i, j in zip(lb, rb)):
        raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
                        f"shape, got {tuple(lhs.shape[i] for i in lb)} and {tuple(rhs.shape[j] for j in rb)}.")
    if any(lhs.shape[i] != rhs.shape[j] for i, j in zip(lc, rc)):
        raise TypeError(f"dot_general requires contracting dimensions to have the same shape, got "
                        f"{tuple(lhs.shape[i] for i in lc)} and {tuple(rhs.shape[j] for j in rc)}.")
    if lhs.dtype != rhs.dtype and preferred_element_type is None:
        same_dtypes(name, avals_in)
    batch = tuple(lhs.shape[i] for i in lb)
    lfree = tuple(d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb)
    rfree = tuple(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return [ShapedArray(batch + lfree + rfree, dtype, lhs.weak_type and rhs.weak_type)]


def literal(name, avals_in, *, value, weak_type=None, shown=None):
    return [ShapedArray(np.shape(value), np.asarray(value).dtype, bool(weak_type))]


# --- collectives over named axes ---------------------------------------------------------------------

def split_axes(axes):
    """``(names, positional axes)`` of a collective's ``axes``, each in its given order."""
    return tuple(a for a in axes if not isinstance(a, int)), tuple(a for a in axes if isinstance(a, int))


def collective_reduce(kinds):
    """``psum``/``pmax``/``pmin`` reduce the positional axes; over a named axis each example keeps its shape.
    The result is never weakly typed: JAX's abstract eval builds a fresh ShapedArray."""
    positional = reduce(kinds)

    def rule(name, avals_in, *, axes, axis_index_groups=None):
        out, = positional(name, avals_in, axes=split_axes(axes)[1])
        return [out.update(weak_type=False)]
    return rule


def _check_collective_dim(dim, ndim):
    if not 0 <= dim < ndim:
        raise ValueError(f"axis {dim} is out of bounds for array of dimension {ndim}")


def all_gather(name, avals_in, *, all_gather_dimension, axis_name, axis_size, tiled, axis_index_groups=None):
    (x,) = avals_in
    shape = list(x.shape)
    _check_collective_dim(all_gather_dimension, x.ndim if tiled else x.ndim + 1)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)]


def reduce_scatter(name, avals_in, *, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None):
    (x,) = avals_in
    _check_collective_dim(scatter_dimension, x.ndim)
    shape = list(x.shape)
    size = x.shape[scatter_dimension]
    if tiled:
        if size % axis_size != 0:
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size {size} must be divisible by "
                             f"shard_count {axis_size}")
        shape[scatter_dimension] = size // axis_size
    else:
        if size != axis_size:
            raise ValueError(f"reduce_scatter operand scatter dimension size {size} must match shard count "
                             f"{axis_size}")
        del shape[scatter_dimension]
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)]


def all_to_all(name, avals_in, *, axis_name, split_axis, concat_axis, axis_size, tiled, axis_index_groups=None):
    """JAX's ``_all_to_all_effectful_abstract_eval``: ``split_axis`` split into the named axis's ``axis_size``
    chunks, one per example, and the chunks received stacked along ``concat_axis``."""
    (x,) = avals_in
    _check_collective_dim(split_axis, x.ndim)
    _check_collective_dim(concat_axis, x.ndim)
    shape = list(x.shape)
    if shape[split_axis] % axis_size:
        raise ValueError(f"all_to_all split_axis size {shape[split_axis]} is not divisible by the size of the named "
                         f"axis {axis_size}")
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return [ShapedArray(tuple(shape), x.dtype)]


def axis_index(name, avals_in, *, axis_name):
    return [ShapedArray((), np.dtype(np.int32))]


# --- sorting ---------------------------------------------------------------------------------------------

def sort(name, avals_in, *, dimension, is_stable, num_keys):
    """JAX's ``_sort_abstract_eval`` with ``lax.sort``'s checks: the results are the operands' avals."""
    if not avals_in:
        raise TypeError("Sort requires at least one operand")
    if any(a.shape != avals_in[0].shape for a in avals_in[1:]):
        shapes = " ".join(str(a.shape) for a in avals_in)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
    if not 1 <= num_keys <= len(avals_in):
        raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(avals_in)}")
    if not 0 <= dimension < avals_in[0].ndim:
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {avals_in[0].ndim}")
    return list(avals_in)


def top_k(name, avals_in, *, k, axis):
    """JAX's ``_top_k_abstract_eval``: the indices keep the operand's weak type, as ``aval.update`` does."""
    (x,) = avals_in
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if x.ndim == 0:
        raise TypeError(f"top_k operand must have >= 1 dimension, got {x.shape}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={x.shape}")
    shape = list(x.shape)
    if shape[axis] < k:
        raise ValueError("k argument to top_k must be no larger than size along axis;"
                         f" got k={k} with shape={shape} and axis={axis}")
    shape[axis] = k
    return [x.update(shape=tuple(shape)), x.update(shape=tuple(shape), dtype=np.dtype(np.int32))]
