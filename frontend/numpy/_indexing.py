"""Static NumPy indexing (ints, slices, ``None``, ``...``) and ``x.at[...]`` updates.

Indexing with arrays or traced values (gather/scatter) arrives with the indexing
issue; until then it raises ``NotImplementedError`` naming the feature.
"""
from __future__ import annotations

import operator

import numpy as np

from irax import lax
from irax.array import Array
from irax.core import Tracer
from irax.lax._scalars import as_operand

from ._util import convert, promote_dtypes


def _is_static_int(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _normalize(index, shape):
    """Per-axis plan: ``('int', i)``, ``('slice', start, stop, step)`` or ``('new',)``."""
    index = index if isinstance(index, tuple) else (index,)
    for i in index:
        if isinstance(i, (Array, Tracer, np.ndarray, list)) or (not _is_static_int(i) and not isinstance(
                i, slice) and i is not None and i is not Ellipsis):
            raise NotImplementedError(
                f"indexing with {type(i).__name__} ({i!r}) needs gather/scatter (advanced or dynamic indexing), "
                "which irax does not support yet; use static ints, slices, None and ... for now")
        if isinstance(i, slice) and any(isinstance(v, (Array, Tracer)) for v in (i.start, i.stop, i.step)):
            raise NotImplementedError("slices with traced bounds need dynamic indexing, which irax does not "
                                      "support yet; use lax.dynamic_slice")
    n_ellipsis = sum(i is Ellipsis for i in index)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"Too many indices: {len(shape)}-dimensional array, but {consumed} were indexed")
    if n_ellipsis:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(shape) - consumed) + index[at + 1:]
    else:
        index = index + (slice(None),) * (len(shape) - consumed)
    plan, axis = [], 0
    for i in index:
        if i is None:
            plan.append(("new",))
            continue
        size = shape[axis]
        if _is_static_int(i):
            i = operator.index(i)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
            plan.append(("int", i + size if i < 0 else i))
        else:
            plan.append(("slice",) + i.indices(size))
        axis += 1
    return plan


def _getitem(x, index):
    x = as_operand(x)
    plan = _normalize(index, x.shape)
    starts, limits, strides, squeeze_axes, reverse_axes, axis = [], [], [], [], [], 0
    for entry in plan:
        if entry[0] == "new":
            continue
        if entry[0] == "int":
            starts.append(entry[1]), limits.append(entry[1] + 1), strides.append(1)
            squeeze_axes.append(axis)
        else:
            start, stop, step = entry[1:]
            if step < 0:
                reverse_axes.append(axis)
                count = len(range(start, stop, step))
                start, stop, step = (start - (count - 1) * -step, start + 1, -step) if count else (0, 0, 1)
            starts.append(start), limits.append(max(start, stop)), strides.append(step)
        axis += 1
    out = x
    if tuple(starts) != (0,) * x.ndim or tuple(limits) != tuple(x.shape) or any(s != 1 for s in strides):
        out = lax.slice(out, starts, limits, strides)
    if reverse_axes:
        out = lax.rev(out, reverse_axes)
    if squeeze_axes:
        out = lax.squeeze(out, squeeze_axes)
    new_axes = [i for i, e in enumerate([e for e in plan if e[0] != "int"]) if e[0] == "new"]
    if new_axes:
        out = lax.expand_dims(out, new_axes)
    return out


def _scatter_plan(x, index):
    """Where ``x[index]`` sits in ``x``: pad config placing the indexed block back, and its shape."""
    plan = [e for e in _normalize(index, x.shape) if e[0] != "new"]
    config, block_shape, reverse_axes = [], [], []
    for axis, entry in enumerate(plan):
        size = x.shape[axis]
        if entry[0] == "int":
            i = entry[1]
            config.append((i, size - i - 1, 0))
            block_shape.append(1)
            continue
        start, stop, step = entry[1:]
        count = len(range(start, stop, step))
        if step < 0:
            reverse_axes.append(axis)
            start, step = start + (count - 1) * step, -step
        last = start + (count - 1) * step if count else 0
        config.append((start, size - last - 1, step - 1) if count else (0, size, 0))
        block_shape.append(count)
    return config, block_shape, reverse_axes


def _placed(x, index, values, fill):
    config, block_shape, reverse_axes = _scatter_plan(x, index)
    block_indexed_shape = _getitem(Array._from_host(np.zeros(x.shape, np.bool_), _bool_aval(x.shape)),
                                   index).shape
    (values,) = promote_dtypes(values) if not hasattr(values, "dtype") else (values,)
    values = convert(values, x.dtype) if getattr(values, "dtype", None) != x.dtype else values
    from ._shape import broadcast_to
    values = lax.reshape(broadcast_to(values, block_indexed_shape), block_shape)
    if reverse_axes:
        values = lax.rev(values, reverse_axes)
    if any(b == 0 for b in block_shape):
        return None, None
    placed = lax.pad(values, convert(fill, x.dtype), config)
    mask = np.zeros(x.shape, np.bool_)
    mask[tuple(_host_index(index, x.shape))] = True
    return placed, Array._from_host(mask, _bool_aval(x.shape))


def _host_index(index, shape):
    return [slice(e[1], e[1] + 1) if e[0] == "int" else slice(*e[1:]) for e in _normalize(index, shape)
            if e[0] != "new"]


def _bool_aval(shape):
    from irax.ir.avals import ShapedArray
    return ShapedArray(shape, np.bool_)


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
        self.array = as_operand(array)
        self.index = index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        return _getitem(self.array, self.index)

    def _update(self, values, fill, combine):
        x = self.array
        placed, mask = _placed(x, self.index, values, fill)
        if placed is None:
            return x
        return lax.select_n(mask, x, combine(x, placed))

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, 0, lambda x, v: v)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, 0, lax.add)

    def subtract(self, values, **kwargs):
        return self._update(values, 0, lax.sub)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, 1, lax.mul)

    mul = multiply

    def divide(self, values, **kwargs):
        return self._update(values, 1, lax.div)

    def power(self, values, **kwargs):
        return self._update(values, 1, lax.pow)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, 0, lax.min)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, 0, lax.max)

    def apply(self, func, **kwargs):
        return self._update(func(self.get()), 0, lambda x, v: v)
