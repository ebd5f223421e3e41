"""NumPy indexing (``x[idx]``), ``x.at[idx]`` updates, ``take``, ``take_along_axis``, ``put`` and
``put_along_axis``, ported from JAX's ``numpy/indexing.py`` and ``ops/scatter.py``.

The algorithm and its choices (which index becomes a static ``slice``, a ``dynamic_slice`` or a ``gather``, which
values stay NumPy arrays and which become literals) follow JAX's line by line, so that a printed jaxpr is JAX's.
"""
from __future__ import annotations

import enum
import operator
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from irax import dtypes, errors, lax
from irax.array import Array
from irax.core import Tracer
from irax.ir.avals import ShapedArray
from irax.lax._scalars import as_operand, const_like

from ._util import (_broadcast_arrays, _broadcast_to, _where, canonicalize_axis, ensure_arraylike, lax_const,
                    promote_dtypes, staged_as)

_ARRAYS = (Array, Tracer, np.ndarray)


class IndexType(enum.Enum):
    NONE = "none"
    SLICE = "slice"
    ELLIPSIS = "ellipsis"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ARRAY = "array"

    @classmethod
    def from_index(cls, idx) -> IndexType:
        if idx is None:
            return cls.NONE
        if idx is Ellipsis:
            return cls.ELLIPSIS
        if isinstance(idx, slice):
            return cls.SLICE
        if _is_integer_index(idx):
            return cls.INTEGER
        if _is_boolean_index(idx):
            return cls.BOOLEAN
        if isinstance(idx, _ARRAYS):
            if dtypes.issubdtype(idx.dtype, np.integer):
                return cls.ARRAY
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {idx.dtype}")
        if isinstance(idx, str):
            raise TypeError(f"JAX does not support string indexing; got {idx=}")
        if isinstance(idx, Sequence):
            if not idx:  # an empty list would default to float
                return cls.ARRAY
            idx_dtype = _asarray(idx).dtype
            if idx_dtype == np.bool_:
                return cls.BOOLEAN
            if dtypes.issubdtype(idx_dtype, np.integer):
                return cls.ARRAY
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {idx_dtype}")
        if isinstance(idx, (float, complex, np.generic)):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {np.dtype(type(idx))}")
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`)"
                         f" and integer or boolean arrays are valid indices. Got {idx}")


class ParsedIndex(NamedTuple):
    index: Any
    typ: IndexType
    consumed_axes: tuple


def _asarray(x):
    from ._creation import asarray
    return asarray(x)


def _typeof(x):
    """``core.typeof``: the abstract value of anything that can be an operand, or ``TypeError``."""
    if isinstance(x, (Array, Tracer)):
        return x.aval
    if isinstance(x, (np.ndarray, np.generic)) or type(x) in (bool, int, float, complex):
        return ShapedArray(np.shape(x), dtypes.dtype(x))
    raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")


def _aval_str(aval):
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _is_concrete(x):
    return not isinstance(x, Tracer) or x.concrete is not None


def _host(x):
    return x.concrete if isinstance(x, Tracer) else np.asarray(x)


def _parse_indices(indices, shape):
    dimensions_consumed, ellipses_indices, index_types = [], [], []
    for i, idx in enumerate(indices):
        typ = IndexType.from_index(idx)
        index_types.append(typ)
        if typ == IndexType.NONE:
            dimensions_consumed.append(0)
        elif typ == IndexType.ELLIPSIS:
            dimensions_consumed.append(0)
            ellipses_indices.append(i)
        elif typ == IndexType.BOOLEAN:
            dimensions_consumed.append(np.ndim(idx))
        else:
            dimensions_consumed.append(1)
    if len(ellipses_indices) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    total_consumed = sum(dimensions_consumed)
    if total_consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total_consumed} were indexed")
    if ellipses_indices:
        dimensions_consumed[ellipses_indices[0]] = len(shape) - total_consumed
    result, current_dim = [], 0
    for index, typ, n_consumed in zip(indices, index_types, dimensions_consumed):
        consumed_axes = tuple(range(current_dim, current_dim + n_consumed))
        current_dim += n_consumed
        result.append(ParsedIndex(index=index, typ=typ, consumed_axes=consumed_axes))
    return result


def _canonicalize_slice(s, size):
    start, stop, step = s.indices(size)
    return start, step, len(range(start, stop, step))


def _convert_index(i, dtype):
    """``lax.convert_element_type`` as JAX traces it: a known value folds to a constant (JAX's const-fold rule for
    ``convert_element_type``), only a traced one emits the op."""
    if isinstance(i, Tracer):
        return lax.convert_element_type(i, dtype)
    host = np.asarray(i, dtype)
    if isinstance(i, np.ndarray):
        return host
    return Array._from_host(host, ShapedArray(host.shape, host.dtype))


def _int_dtype_for_shape(shape):
    """``lax_utils.int_dtype_for_shape(shape, signed=True)``: int32 unless some axis needs 64 bits."""
    if all(d <= np.iinfo(np.int32).max for d in shape):
        return np.dtype(np.int32)
    return dtypes.canonicalize_dtype(np.int64)


class NDIndexer:
    """A user index parsed against an array shape: JAX's ``NDIndexer``, less sharding and pytree flattening."""

    __slots__ = ("shape", "indices")

    def __init__(self, shape, indices):
        self.shape = tuple(shape)
        self.indices = list(indices)

    @classmethod
    def from_raw_indices(cls, indices, shape):
        return cls(shape, _parse_indices(eliminate_deprecated_list_indexing(indices), shape))

    def validate_static_indices(self, normalize_indices=True):
        for idx in self.indices:
            if idx.typ == IndexType.INTEGER:
                i = operator.index(idx.index)
                axis, = idx.consumed_axes
                size = self.shape[axis]
                normed_idx = i + size if normalize_indices and i < 0 else i
                if not 0 <= normed_idx < size:
                    raise IndexError(f"index {i} out of bounds for axis {axis} with size {size}"
                                     f" ({normalize_indices=})")

    def validate_slices(self):
        for position, idx in enumerate(self.indices):
            if idx.typ == IndexType.SLICE and not all(
                    v is None or _is_concrete(v) for v in (idx.index.start, idx.index.stop, idx.index.step)):
                raise IndexError(f"Slice entries must be static integers. Got {idx.index} at position {position}")

    def expand_bool_indices(self):
        """Boolean masks become the integer arrays of their ``True`` positions; scalar booleans stay."""
        expanded = []
        for position, idx in enumerate(self.indices):
            if idx.typ != IndexType.BOOLEAN:
                expanded.append(idx)
                continue
            if not _is_concrete(idx.index):
                raise errors.NonConcreteBooleanIndexError(
                    f"Array boolean indices must be concrete; got {_aval_str(idx.index.aval)}\n")
            if np.ndim(idx.index) == 0:
                expanded.append(ParsedIndex(index=bool(idx.index), typ=idx.typ, consumed_axes=()))
                continue
            idx_shape = np.shape(_host(idx.index))
            expected_shape = [self.shape[i] for i in idx.consumed_axes]
            if not all(s1 in (0, s2) for s1, s2 in zip(idx_shape, expected_shape)):
                raise IndexError("boolean index did not match shape of indexed array in index"
                                 f" {position}: got {idx_shape}, expected {expected_shape}")
            expanded.extend(ParsedIndex(index=i, typ=IndexType.ARRAY, consumed_axes=(axis,))
                            for i, axis in zip(np.where(_host(idx.index)), idx.consumed_axes))
        return NDIndexer(self.shape, expanded)

    def expand_scalar_bool_indices(self):
        new_shape, new_indices, current_dim = list(self.shape), list(self.indices), 0
        for i, idx in enumerate(self.indices):
            if idx.typ == IndexType.BOOLEAN and np.ndim(idx.index) == 0:
                new_shape.insert(i, 1)
                new_indices[i] = ParsedIndex(np.arange(int(idx.index)), typ=IndexType.ARRAY,
                                             consumed_axes=(current_dim,))
                current_dim += 1
            else:
                n_consumed = len(idx.consumed_axes)
                new_indices[i] = ParsedIndex(idx.index, idx.typ, tuple(range(current_dim, current_dim + n_consumed)))
                current_dim += n_consumed
        return NDIndexer(new_shape, new_indices)

    def convert_sequences_to_arrays(self):
        return NDIndexer(self.shape, [ParsedIndex(_asarray(i.index), i.typ, i.consumed_axes)
                                      if isinstance(i.index, Sequence) else i for i in self.indices])

    def expand_ellipses(self):
        """Ellipsis and the implicit trailing axes become explicit full slices."""
        expanded, consumed = [], 0
        for idx in self.indices:
            consumed += len(idx.consumed_axes)
            if idx.typ == IndexType.ELLIPSIS:
                expanded.extend(ParsedIndex(slice(None), IndexType.SLICE, (axis,)) for axis in idx.consumed_axes)
            else:
                expanded.append(idx)
        expanded.extend(ParsedIndex(slice(None), IndexType.SLICE, (axis,)) for axis in range(consumed, len(self.shape)))
        return NDIndexer(self.shape, expanded)

    def normalize_indices(self):
        new_indices = []
        for idx in self.indices:
            if idx.typ == IndexType.INTEGER:
                axis, = idx.consumed_axes
                if isinstance(idx.index, np.unsignedinteger):
                    normed = idx.index
                else:
                    normed = idx.index + self.shape[axis] if idx.index < 0 else idx.index
                new_indices.append(ParsedIndex(normed, idx.typ, idx.consumed_axes))
            elif idx.typ == IndexType.ARRAY:
                axis, = idx.consumed_axes
                if dtypes.issubdtype(idx.index.dtype, np.unsignedinteger):
                    normed = idx.index
                else:
                    size = const_like(idx.index, self.shape[axis])
                    normed = lax.select(idx.index < 0, lax.add(idx.index, size), idx.index)
                new_indices.append(ParsedIndex(normed, idx.typ, idx.consumed_axes))
            else:
                new_indices.append(idx)
        return NDIndexer(self.shape, new_indices)

    def to_static_slice(self, *, normalize_indices=True, mode):
        parsed_mode = lax.GatherScatterMode.from_any(mode) if mode is not None else \
            lax.GatherScatterMode.PROMISE_IN_BOUNDS
        if parsed_mode not in (lax.GatherScatterMode.PROMISE_IN_BOUNDS, lax.GatherScatterMode.CLIP):
            raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
        if parsed_mode == lax.GatherScatterMode.PROMISE_IN_BOUNDS:
            self.validate_static_indices(normalize_indices=normalize_indices)
        self.validate_slices()
        for position, pidx in enumerate(self.indices):
            if pidx.typ in (IndexType.ARRAY, IndexType.BOOLEAN):
                raise TypeError("static_slice: indices must be static scalars or slices."
                                f" Got index of type {type(pidx.index)} at position {position}")
        starts, limits, strides, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], [], []
        for pidx in self.expand_ellipses().indices:
            if pidx.typ == IndexType.NONE:
                newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
            elif pidx.typ == IndexType.INTEGER:
                axis, = pidx.consumed_axes
                if self.shape[axis] == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                start = int(pidx.index)
                if normalize_indices and start < 0:
                    start += self.shape[axis]
                start = min(max(start, 0), self.shape[axis] - 1)
                starts.append(start), limits.append(start + 1), strides.append(1), squeeze_axes.append(axis)
            else:
                axis, = pidx.consumed_axes
                size = self.shape[axis]
                start, stop, stride = pidx.index.indices(size)
                if stride < 0:
                    new_start = min(size, stop + 1 + abs(start - stop - 1) % abs(stride))
                    starts.append(new_start), limits.append(max(new_start, start + 1)), strides.append(abs(stride))
                    rev_axes.append(axis)
                else:
                    starts.append(start), limits.append(max(start, stop)), strides.append(stride)
        return _StaticSliceIndexer(starts, limits, None if all(s == 1 for s in strides) else strides, rev_axes,
                                   squeeze_axes, newaxis_dims)

    def to_dynamic_slice(self, *, normalize_indices=True, mode):
        if mode is not None and lax.GatherScatterMode.from_any(mode) not in (
                lax.GatherScatterMode.PROMISE_IN_BOUNDS, lax.GatherScatterMode.CLIP):
            raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
        for position, pidx in enumerate(self.indices):
            if pidx.typ == IndexType.SLICE and pidx.index.step is not None and pidx.index.step not in (-1, 1):
                raise TypeError(f"dynamic_slice: only unit steps supported in slice. Got {pidx.index} at position "
                                f"{position}")
            if pidx.typ == IndexType.ARRAY and (isinstance(pidx.index, Sequence) or np.shape(pidx.index) != ()):
                raise TypeError("dynamic_slice: only scalar indices allowed."
                                f" Got index of type {type(pidx.index)} at position {position}")
            if pidx.typ == IndexType.BOOLEAN:
                raise TypeError("dynamic_slice: indices must be scalars or slices."
                                f" Got index of type {type(pidx.index)} at position {position}")
        starts, slice_sizes, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], []
        trivial_slicing = True
        for pidx in self.expand_ellipses().indices:
            if pidx.typ == IndexType.NONE:
                newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
            elif pidx.typ in (IndexType.INTEGER, IndexType.ARRAY):
                trivial_slicing = False
                axis, = pidx.consumed_axes
                if self.shape[axis] == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                starts.append(_asarray(pidx.index)), slice_sizes.append(1), squeeze_axes.append(axis)
            else:
                if pidx.index != slice(None):
                    trivial_slicing = False
                axis, = pidx.consumed_axes
                start, stop, stride = pidx.index.indices(self.shape[axis])
                if stride < 0:
                    new_start = stop + 1 + abs(start - stop - 1) % abs(stride)
                    starts.append(new_start), slice_sizes.append(max(0, start + 1 - new_start))
                    rev_axes.append(axis)
                else:
                    starts.append(start), slice_sizes.append(max(0, stop - start))
        if len(starts) > 1:  # dynamic_slice needs one dtype for all its start indices
            dt = _int_dtype_for_shape(self.shape)
            starts = [_convert_index(i, dt) for i in starts]
        return _DynamicSliceIndexer(starts, slice_sizes, rev_axes, squeeze_axes, newaxis_dims, trivial_slicing,
                                    normalize_indices)

    def is_advanced_int_indexer(self):
        return any(idx.typ in (IndexType.ARRAY, IndexType.BOOLEAN) and np.ndim(idx.index) > 0
                   for idx in self.indices)


def _is_integer_index(idx):
    return isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_))


def rewriting_take(arr, idx, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
                   normalize_indices=True):
    """``arr[idx]``: a static slice where it can be one, then a dynamic slice, else a gather (JAX's AUTO)."""
    arr = as_operand(arr)
    indexer = NDIndexer.from_raw_indices(idx, arr.shape)
    try:
        static = indexer.to_static_slice(normalize_indices=normalize_indices, mode=mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _static_slice(arr, static)
    try:
        dynamic = indexer.to_dynamic_slice(normalize_indices=normalize_indices, mode=mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _dynamic_slice(arr, dynamic)
    return _gather(arr, indexer.expand_bool_indices(), indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                   normalize_indices=normalize_indices)


def _getitem(x, index):
    return rewriting_take(x, index)


def _finish_slice(result, indexer):
    if indexer.rev_axes:
        result = lax.rev(result, indexer.rev_axes)
    if indexer.squeeze_axes:
        result = lax.squeeze(result, indexer.squeeze_axes)
    if indexer.newaxis_dims:
        result = lax.expand_dims(result, indexer.newaxis_dims)
    return result


def _static_slice(arr, indexer):
    result = arr
    if not indexer.is_trivial_slice(arr.shape):
        result = lax.slice(arr, indexer.start_indices, indexer.limit_indices, indexer.strides)
    return _finish_slice(result, indexer)


def _dynamic_slice(arr, indexer):
    result = arr
    if not indexer.trivial_slicing:
        result = lax.dynamic_slice(arr, indexer.start_indices, indexer.slice_sizes,
                                   allow_negative_indices=indexer.normalize_indices)
    return _finish_slice(result, indexer)


def _check_fill_value(fill_value):
    if fill_value is None:
        return None
    if not _is_concrete(fill_value):
        raise errors.ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: fill_value argument to indexed "
            "get()")
    if np.ndim(fill_value) != 0:
        raise ValueError("fill_value argument to indexed get() must be a scalar")
    if isinstance(fill_value, (np.ndarray, Array, Tracer)):
        return _host(fill_value).item()
    return fill_value


def _gather(arr, parsed_idx, *, indices_are_sorted, unique_indices, mode, fill_value, normalize_indices):
    indexer = _index_to_gather(parsed_idx, normalize_indices=normalize_indices)
    y = arr
    fill_value = _check_fill_value(fill_value)
    if indexer.scalar_bool_dims:
        y = lax.expand_dims(y, indexer.scalar_bool_dims)
    # No gather for an empty result: it is also how zeros(0)[array([], int32)] works.
    if 0 in indexer.slice_shape:
        return lax.full_like(y, 0, shape=indexer.slice_shape)
    if 0 not in np.shape(indexer.gather_indices):
        y = lax.gather(y, indexer.gather_indices, indexer.dnums, indexer.gather_slice_shape,
                       unique_indices=unique_indices or indexer.unique_indices,
                       indices_are_sorted=indices_are_sorted or indexer.indices_are_sorted,
                       mode=mode, fill_value=fill_value)
    if indexer.reversed_y_dims:
        y = lax.rev(y, indexer.reversed_y_dims)
    return lax.expand_dims(y, indexer.newaxis_dims)


class _StaticSliceIndexer(NamedTuple):
    start_indices: Sequence[int]
    limit_indices: Sequence[int]
    strides: Sequence[int] | None
    rev_axes: Sequence[int]
    squeeze_axes: Sequence[int]
    newaxis_dims: Sequence[int]

    def is_trivial_slice(self, arr_shape):
        if self.strides is not None or len(arr_shape) != len(self.start_indices):
            return False
        return all((start, stop) == (0, size)
                   for start, stop, size in zip(self.start_indices, self.limit_indices, arr_shape))


class _DynamicSliceIndexer(NamedTuple):
    start_indices: Sequence[Any]
    slice_sizes: Sequence[int]
    rev_axes: Sequence[int]
    squeeze_axes: Sequence[int]
    newaxis_dims: Sequence[int]
    trivial_slicing: bool
    normalize_indices: bool


class _GatherIndexer(NamedTuple):
    slice_shape: Sequence[int]
    gather_slice_shape: Sequence[int]
    gather_indices: Any
    dnums: lax.GatherDimensionNumbers
    # Only advanced (array) indices can repeat or be out of order.
    unique_indices: bool
    indices_are_sorted: bool
    reversed_y_dims: Sequence[int]
    newaxis_dims: Sequence[int]
    scalar_bool_dims: Sequence[int]


def _index_to_gather(indexer, *, normalize_indices=True):
    indexer.validate_slices()
    indexer = indexer.convert_sequences_to_arrays()
    is_advanced = np.nonzero(np.array([idx.typ in (IndexType.ARRAY, IndexType.INTEGER) for idx in indexer.indices]))
    advanced_axes_are_contiguous = np.all(np.diff(is_advanced) == 1)
    indexer = indexer.expand_ellipses()
    scalar_bool_dims = [n for n, i in enumerate(indexer.indices) if i.typ == IndexType.BOOLEAN]
    indexer = indexer.expand_scalar_bool_indices()
    if normalize_indices:
        indexer = indexer.normalize_indices()

    advanced_indexes, idx_advanced_axes, x_advanced_axes = (), (), ()
    if indexer.is_advanced_int_indexer():
        idx_without_none = [(i, d) for i, d in enumerate(indexer.indices) if d.typ != IndexType.NONE]
        advanced_pairs = [(_asarray(e.index), i, j) for j, (i, e) in enumerate(idx_without_none)
                          if e.typ in (IndexType.ARRAY, IndexType.INTEGER)]
        advanced_indexes, idx_advanced_axes, x_advanced_axes = zip(*advanced_pairs)

    x_axis = y_axis = collapsed_y_axis = 0
    offset_dims, collapsed_slice_dims, start_index_map = [], [], []
    index_dtype = _int_dtype_for_shape(indexer.shape)
    gather_indices, gather_indices_shape = [], []
    slice_shape, newaxis_dims, reversed_y_dims, gather_slice_shape = [], [], [], []

    for idx_pos, index in enumerate(indexer.indices):
        if advanced_indexes and (advanced_axes_are_contiguous and idx_pos == idx_advanced_axes[0]
                                 or not advanced_axes_are_contiguous and idx_pos == 0):
            advanced_index_arrs = _broadcast_arrays(*advanced_indexes)
            shape = tuple(advanced_index_arrs[0].shape)
            start_dim = len(gather_indices_shape)
            gather_indices.extend((_convert_index(a, index_dtype), start_dim) for a in advanced_index_arrs)
            gather_indices_shape += shape
            start_index_map.extend(x_advanced_axes)
            collapsed_slice_dims.extend(x_advanced_axes)
            slice_shape.extend(shape)
            y_axis += len(shape)
            collapsed_y_axis += len(shape)

        if idx_pos in idx_advanced_axes:
            x_axis += 1
            gather_slice_shape.append(1)
            continue

        if index.typ in (IndexType.INTEGER, IndexType.ARRAY) and np.ndim(index.index) == 0:
            if indexer.shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            gather_indices.append((_convert_index(index.index, index_dtype), len(gather_indices_shape)))
            collapsed_slice_dims.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
            x_axis += 1
        elif index.typ == IndexType.NONE:
            slice_shape.append(1)
            newaxis_dims.append(y_axis)
            y_axis += 1
        elif index.typ == IndexType.SLICE:
            start, step, slice_size = _canonicalize_slice(index.index, indexer.shape[x_axis])
            slice_shape.append(slice_size)
            if step == 1:
                if slice_size != indexer.shape[x_axis]:  # a full slice needs no index
                    gather_indices.append((_convert_index(start, index_dtype), len(gather_indices_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(slice_size)
                offset_dims.append(collapsed_y_axis)
            else:
                from ._creation import array
                indices = lax.add(array(start, dtype=index_dtype),
                                  lax.mul(array(step, dtype=index_dtype), lax.iota(index_dtype, slice_size)))
                if step < 0:
                    reversed_y_dims.append(collapsed_y_axis)
                    indices = lax.rev(indices, dimensions=(0,))
                gather_slice_shape.append(1)
                gather_indices.append((indices, len(gather_indices_shape)))
                start_index_map.append(x_axis)
                gather_indices_shape.append(slice_size)
                collapsed_slice_dims.append(x_axis)
            collapsed_y_axis += 1
            y_axis += 1
            x_axis += 1
        else:
            raise IndexError(f"Got unsupported indexer at position {idx_pos}: {index!r}")

    if not gather_indices:
        gather_indices_array = np.zeros((0,), dtype=index_dtype)
    elif len(gather_indices) == 1:
        g, _ = gather_indices[0]
        gather_indices_array = lax.expand_dims(g, (g.ndim,))
    else:
        last_dim = len(gather_indices_shape)
        gather_indices_shape.append(1)
        gather_indices_array = lax.concatenate([
            lax.broadcast_in_dim(g, gather_indices_shape, tuple(range(i, i + g.ndim))) for g, i in gather_indices],
            last_dim)

    dnums = lax.GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                       collapsed_slice_dims=tuple(sorted(collapsed_slice_dims)),
                                       start_index_map=tuple(start_index_map))
    return _GatherIndexer(slice_shape=slice_shape, gather_slice_shape=gather_slice_shape,
                          gather_indices=gather_indices_array, dnums=dnums, unique_indices=not advanced_indexes,
                          indices_are_sorted=not advanced_indexes, reversed_y_dims=reversed_y_dims,
                          newaxis_dims=tuple(newaxis_dims), scalar_bool_dims=scalar_bool_dims)


def _should_unpack_list_index(x):
    return (isinstance(x, _ARRAYS) and np.ndim(x) != 0 or isinstance(x, (Sequence, slice))
            or x is Ellipsis or x is None)


def eliminate_deprecated_list_indexing(idx):
    """NumPy's heuristics for a non-tuple sequence index are not followed: JAX raises for all of them."""
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, Sequence) and not isinstance(idx, (Array, np.ndarray, str)):
        use = "arr[tuple(seq)]" if any(_should_unpack_list_index(i) for i in idx) else "arr[array(seq)]"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; "
                        f"use `{use}` instead of `arr[seq]`. "
                        "See https://github.com/jax-ml/jax/issues/4564 for more information.")
    return (idx,)


def _is_scalar(x):
    return np.isscalar(x) or (isinstance(x, _ARRAYS) and np.ndim(x) == 0)


def _is_boolean_index(i):
    try:
        abstract_i = _typeof(i)
    except TypeError:
        abstract_i = None
    return (abstract_i is not None and abstract_i.dtype == np.bool_
            or isinstance(i, list) and bool(i) and all(_is_scalar(e) and dtypes.dtype(e) == np.bool_ for e in i))


# --- x.at[idx] updates (JAX's ops/scatter.py) ---------------------------------------------------------------------

def _scatter_update(x, idx, y, scatter_op, indices_are_sorted, unique_indices, mode=None, normalize_indices=True):
    """``x[idx] op= y`` without mutation: the scatter that transposes the gather ``x[idx]`` would be."""
    from ._creation import asarray
    x = asarray(x)
    if (isinstance(y, int) and not isinstance(y, bool) and np.issubdtype(x.dtype, np.integer)
            and np.iinfo(x.dtype).min <= y <= np.iinfo(x.dtype).max):
        y = asarray(y, dtype=x.dtype)
    else:
        y = asarray(y)
    indexer = NDIndexer.from_raw_indices(idx, x.shape).expand_bool_indices()
    return _scatter_impl(x, y, indexer, scatter_op=scatter_op, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode, normalize_indices=normalize_indices)


def _scatter_impl(x, y, general_indexer, *, scatter_op, indices_are_sorted, unique_indices, mode, normalize_indices):
    from ._shape import broadcast_to, squeeze
    dtype, weak_type = x.dtype, x.weak_type
    if y.dtype != x.dtype and dtypes.result_type(y, x.dtype) != x.dtype:  # JAX's dtypes.safe_to_cast(y, x)
        warnings.warn("scatter inputs have incompatible types: cannot safely cast value "
                      f"from dtype={y.dtype} to dtype={x.dtype} with jax_numpy_dtype_promotion=standard. "
                      "In future JAX releases this will result in an error.", FutureWarning, stacklevel=4)
    indexer = _index_to_gather(general_indexer, normalize_indices=normalize_indices)
    if 0 in indexer.slice_shape:
        return x
    x, y = promote_dtypes(x, y)
    y = broadcast_to(y, tuple(indexer.slice_shape))
    y = squeeze(y, axis=indexer.newaxis_dims)
    if indexer.reversed_y_dims:
        y = lax.rev(y, indexer.reversed_y_dims)
    if indexer.scalar_bool_dims:
        x = lax.expand_dims(x, indexer.scalar_bool_dims)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=indexer.dnums.offset_dims, inserted_window_dims=indexer.dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=indexer.dnums.start_index_map,
        operand_batching_dims=indexer.dnums.operand_batching_dims,
        scatter_indices_batching_dims=indexer.dnums.start_indices_batching_dims)
    out = scatter_op(x, indexer.gather_indices, y, dnums,
                     indices_are_sorted=indexer.indices_are_sorted or indices_are_sorted,
                     unique_indices=indexer.unique_indices or unique_indices, mode=mode)
    if indexer.scalar_bool_dims:
        out = lax.squeeze(out, indexer.scalar_bool_dims)
    return lax._convert(out, dtype, weak_type)


class _IndexUpdateHelper:
    """``x.at``: functional updates ``x.at[idx].set(v)`` and friends."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            wrap_negative_indices=True):
        return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                              normalize_indices=wrap_negative_indices)

    def _scatter(self, x, values, op, indices_are_sorted, unique_indices, mode, wrap_negative_indices):
        return _scatter_update(x, self.index, values, op, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode, normalize_indices=wrap_negative_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        return self._scatter(self.array, values, lax.scatter, indices_are_sorted, unique_indices, mode,
                             wrap_negative_indices)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        def scatter_apply(x, indices, y, dims, **kwargs):
            return lax.scatter_apply(x, indices, func, dims, update_shape=y.shape, **kwargs)
        return self._scatter(self.array, lax.full((), 0, self.array.dtype), scatter_apply, indices_are_sorted,
                             unique_indices, mode, wrap_negative_indices)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        return self._scatter(self.array, values, lax.scatter_add, indices_are_sorted, unique_indices, mode,
                             wrap_negative_indices)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        return self._scatter(self.array, values, lax.scatter_sub, indices_are_sorted, unique_indices, mode,
                             wrap_negative_indices)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        return self._scatter(self.array, values, lax.scatter_mul, indices_are_sorted, unique_indices, mode,
                             wrap_negative_indices)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        from ._creation import ones_like
        from ._ufuncs import divide
        return divide(self.array, self._scatter(ones_like(self.array), values, lax.scatter_mul, indices_are_sorted,
                                                unique_indices, mode, wrap_negative_indices))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        from ._creation import ones_like
        from ._ufuncs import power
        return power(self.array, self._scatter(ones_like(self.array), values, lax.scatter_mul, indices_are_sorted,
                                               unique_indices, mode, wrap_negative_indices))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        return self._scatter(self.array, values, lax.scatter_min, indices_are_sorted, unique_indices, mode,
                             wrap_negative_indices)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        return self._scatter(self.array, values, lax.scatter_max, indices_are_sorted, unique_indices, mode,
                             wrap_negative_indices)


# --- take, take_along_axis (JAX's numpy/indexing.py) ---------------------------------------------------------------

def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    return _take(a, indices, None if axis is None else operator.index(axis), out, mode,
                 unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, fill_value=fill_value)


@staged_as("_take", static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"))
def _take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
          fill_value=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a, indices = ensure_arraylike("take", a, indices)
    if axis is None:
        a = a.ravel()
        axis_idx = 0
    else:
        axis_idx = canonicalize_axis(axis, np.ndim(a))
    if mode is None or mode == "fill":
        gather_mode = lax.GatherScatterMode.FILL_OR_DROP
        # lax.gather() does not wrap negative indices
        indices = _where(indices < 0, indices + a.shape[axis_idx], indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        from ._ufuncs import mod
        indices = mod(indices, lax_const(indices, a.shape[axis_idx]))
        gather_mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = lax.GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    index_dims = len(np.shape(indices))
    slice_sizes = list(np.shape(a))
    if slice_sizes[axis_idx] == 0:
        if indices.size != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if indices.size == 0:
        out_shape = slice_sizes[:axis_idx] + list(indices.shape) + slice_sizes[axis_idx + 1:]
        return lax.full_like(a, 0, shape=out_shape)
    slice_sizes[axis_idx] = 1
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(list(range(axis_idx)) + list(range(axis_idx + index_dims, len(a.shape) + index_dims - 1))),
        collapsed_slice_dims=(axis_idx,), start_index_map=(axis_idx,))
    return lax.gather(a, indices[..., None], dimension_numbers=dnums, slice_sizes=tuple(slice_sizes),
                      mode=gather_mode, unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      fill_value=fill_value)


def _normalize_index(index, axis_size):
    """An index in [-N, N) moved to [0, N)."""
    if dtypes.issubdtype(dtypes.dtype(index), np.unsignedinteger):
        return index
    axis_size_val = lax_const(index, axis_size)
    if isinstance(index, (int, np.integer)):
        return lax.add(index, axis_size_val) if index < 0 else index
    return lax.select(index < 0, lax.add(index, axis_size_val), index)


@staged_as("take_along_axis", static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=None):
    a, indices = ensure_arraylike("take_along_axis", arr, indices)
    index_dtype = indices.dtype
    idx_shape = np.shape(indices)
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}")
        a = a.ravel()
        axis = 0
    rank = a.ndim
    if rank != np.ndim(indices):
        raise ValueError(f"indices and arr must have the same number of dimensions; {np.ndim(indices)} vs. {a.ndim}")
    axis_int = canonicalize_axis(axis, rank)

    def replace(tup, val):
        lst = list(tup)
        lst[axis_int] = val
        return tuple(lst)

    axis_size = a.shape[axis_int]
    arr_shape = replace(a.shape, 1)
    out_shape = tuple(np.broadcast_shapes(idx_shape, arr_shape))
    if axis_size == 0:
        return lax.full(out_shape, 0, a.dtype)
    if wrap_negative_indices is None:  # JAX's legacy default: tied to the mode
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        index_dtype = np.dtype(np.int64) if axis_size > np.iinfo(np.int32).max else np.dtype(np.int32)
    indices = lax.convert_element_type(indices, index_dtype)
    if wrap_negative_indices:
        indices = _normalize_index(indices, axis_size)
    if mode == "one_hot":
        raise NotImplementedError("take_along_axis with mode='one_hot' is not supported by irax")

    index_dims = [i for i, idx in enumerate(idx_shape) if i == axis_int or idx != 1]
    gather_index_shape = tuple(np.array(out_shape)[index_dims]) + (1,)
    gather_indices = lax.reshape(indices, gather_index_shape)
    slice_sizes, offset_dims, start_index_map, collapsed_slice_dims = [], [], [], []
    operand_batching_dims, start_indices_batching_dims, dims_to_squeeze = [], [], []
    # i indexes the unsqueezed shape, new_i the squeezed one, j the gather indices
    new_i = j = 0
    for i in range(rank):
        if i == axis_int:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed_slice_dims.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:
            # the whole axis of arr is taken: no iota index is needed
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:
            dims_to_squeeze.append(i)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching_dims.append(new_i)
            start_indices_batching_dims.append(j)
            new_i += 1
            j += 1
    a = lax.squeeze(a, dims_to_squeeze)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims))
    return lax.gather(a, gather_indices, dnums, tuple(slice_sizes), mode="fill" if mode is None else mode,
                      fill_value=fill_value)


def _make_along_axis_idx(shape, indices, axis):
    from ._matrix import indices as grid
    if axis < 0:
        axis += len(shape)
    idx = list(grid(shape, sparse=True))
    idx[axis] = indices
    return tuple(idx)


@staged_as("put_along_axis", static_argnames=("axis", "inplace", "mode"))
def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
                         "are immutable. Pass inplace=False to instead return an updated array.")
    arr, indices, values = ensure_arraylike("put_along_axis", arr, indices, values)
    original_axis, original_arr_shape = axis, arr.shape
    if axis is None:
        arr = arr.ravel()
        axis = 0
    if not arr.ndim == indices.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                         f"arr.ndim={arr.ndim} and indices.ndim={indices.ndim}.")
    try:
        values = _broadcast_to(values, indices.shape)
    except ValueError:
        raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
                         f"values.shape={values.shape} and indices.shape={indices.shape}.") from None
    result = arr.at[_make_along_axis_idx(arr.shape, indices, axis)].set(values, mode=mode)
    if original_axis is None:
        result = result.reshape(original_arr_shape)
    return result


def put(a, ind, v, mode=None, *, inplace=True):
    from ._matrix import _tile_to_size
    from ._selection import unravel_index
    from ._shape import ravel
    from ._ufuncs import clip
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")
    arr, ind_arr, _ = ensure_arraylike("put", a, ind, v)
    ind_arr = ind_arr.ravel()
    v_arr = ravel(v)
    if not arr.size or not ind_arr.size or not v_arr.size:
        return arr
    v_arr = _tile_to_size(v_arr, len(ind_arr))
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = clip(ind_arr, 0, arr.size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = ind_arr % arr.size
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    return arr.at[unravel_index(ind_arr, arr.shape)].set(v_arr, mode=scatter_mode)
