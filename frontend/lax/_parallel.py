"""Collectives over named axes, as ``jax.lax``'s (``jax/_src/lax/parallel.py``).

A name is bound by an enclosing ``vmap(..., axis_name=...)`` while its function
is traced. Each collective binds a primitive naming the axis, which the
``jaxpr-batch`` pass of that name rewrites into ordinary ops
(``passes/batch_collectives.py``). As in JAX, a ``psum`` of values known at trace
time is folded at once (``axis_size * x``), so ``psum(1, name)`` is the axis size,
and a name no vmap binds raises JAX's NameError, in the words JAX uses at that point.
"""
from __future__ import annotations

import math

import numpy as np

from irax import batching, dtypes, tree_util
from irax.core import bind1, current_trace, is_tracer

from . import _canonical_axis, convert_element_type, expand_dims, reduce_sum, squeeze
from ._scalars import as_operand, const_like


def _axes(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _names(axis_name) -> tuple:
    """``all_gather`` and ``psum_scatter`` take a tuple of names or one name (JAX wraps a list as one name)."""
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _no_groups(axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. Please open a feature "
                                  "request!")


def _check_bound(axes, api_name):
    """JAX checks the names of a collective bound on traced values as it binds it."""
    for axis in axes:
        if not isinstance(axis, int):
            batching.axis_size(axis, api_name)


def _folded_axis_size(name) -> int:
    """A name's size for a psum folded at trace time; JAX's axis env words an unbound name differently there."""
    try:
        return batching.axis_size(name)
    except NameError:
        raise NameError(f"unbound axis name: {name}") from None


def _bind(primitive, *operands, named=True, **params):
    """Binds a collective. Over a named axis its value is not what the NumPy rule gives for one example (the
    rule cannot see axis sizes), so a trace that evaluates as it records (an eager ``grad`` inside a vmap)
    records it without a value, as it does a value that depends on the mapped arguments."""
    trace = current_trace()
    if not (named and getattr(trace, "concrete", False)):
        return bind1(primitive, *operands, **params)
    trace.concrete = False
    try:
        return bind1(primitive, *operands, **params)
    finally:
        trace.concrete = True



def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` over the named axes (and positional ones, given as ints), for every leaf of a pytree."""
    _no_groups(axis_index_groups)
    axes = _axes(axis_name)
    if not axes:
        return x
    leaves, treedef = tree_util.tree_flatten(x)
    leaves = [convert_element_type(leaf, np.int32) if dtypes.dtype(leaf) == np.bool_ else leaf for leaf in leaves]
    if not any(is_tracer(leaf) for leaf in leaves):
        names = [a for a in axes if not isinstance(a, int)]
        positional = [a for a in axes if isinstance(a, int)]
        size = math.prod(_folded_axis_size(name) for name in names)
        out = [const_like(leaf, size) * (reduce_sum(leaf, positional) if positional else leaf) for leaf in leaves]
    else:
        _check_bound(axes, "psum")
        named = any(not isinstance(a, int) for a in axes)
        out = [_bind("psum", as_operand(leaf), named=named, axes=axes, axis_index_groups=None) for leaf in leaves]
    return tree_util.tree_unflatten(treedef, out)


def pmean(x, axis_name, *, axis_index_groups=None):
    """``psum`` divided by the number of examples summed."""
    x = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_util.tree_map(lambda v: v / n, x)


def _extremum(primitive):
    def collective(x, axis_name, *, axis_index_groups=None):
        _no_groups(axis_index_groups)
        axes = _axes(axis_name)
        named = any(not isinstance(a, int) for a in axes)

        def bind(leaf):
            _check_bound(axes, "psum")  # JAX's pmax and pmin share psum's check, and its words
            return _bind(primitive, as_operand(leaf), named=named, axes=axes, axis_index_groups=None)
        return tree_util.tree_map(bind, x)
    collective.__name__ = primitive
    collective.__doc__ = f"All-reduce {primitive[1:]} over the named axes (and positional ones, given as ints)."
    return collective


pmax = _extremum("pmax")
pmin = _extremum("pmin")


def axis_size(axis_name) -> int:
    """The size of the named axis (the product of the sizes, for a tuple of names)."""
    return psum(1, axis_name)


def axis_index(axis_name):
    """The index of the current example along the named axis (row-major over a tuple of names)."""
    if not isinstance(axis_name, (tuple, list)):
        batching.axis_size(axis_name, "axis_index")
        return _bind("axis_index", axis_name=axis_name)
    inner_size = 1
    index = as_operand(0)
    for name in reversed(axis_name):
        index += axis_index(name) * inner_size
        inner_size *= axis_size(name)
    return index


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Each example's ``x`` cut along ``split_axis`` into one chunk per example of the named axis; chunk ``k`` goes
    to example ``k``, which stacks what it receives along ``concat_axis`` (concatenates, when ``tiled``)."""
    _no_groups(axis_index_groups)
    names = _axes(axis_name)

    def bind(leaf, split_axis=split_axis, concat_axis=concat_axis):
        size = axis_size(names)
        if tiled:
            if leaf.shape[split_axis] % size != 0:
                raise ValueError(f"The size of all_to_all split_axis ({leaf.shape[split_axis]}) has to be divisible "
                                 f"by the size of the named axis {axis_name} ({size})")
        else:
            if size != leaf.shape[split_axis]:
                raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to equal "
                                 f"x.shape[split_axis], but they are {size} and {leaf.shape[split_axis]} respectively.")
            if split_axis < concat_axis:
                concat_axis += 1  # a position after split_axis is removed
                leaf = expand_dims(leaf, (concat_axis,))
            elif concat_axis < split_axis:
                leaf = expand_dims(leaf, (concat_axis,))
                split_axis += 1
        out = _bind("all_to_all", leaf, axis_name=names, split_axis=split_axis, concat_axis=concat_axis,
                    axis_size=size, tiled=bool(tiled), axis_index_groups=None)
        if not tiled and split_axis != concat_axis:
            out = squeeze(out, (split_axis,))
        return out
    return tree_util.tree_map(lambda leaf: bind(as_operand(leaf)), x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """The named axis swapped with the array axis ``axis`` (an ``all_to_all`` splitting and stacking ``axis``)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def ppermute(x, axis_name, perm):
    """Each example's ``x`` sent along the named axis by ``perm``, ``(source, destination)`` index pairs."""
    names = _axes(axis_name)
    perm = tuple(tuple(int(i) for i in pair) for pair in perm)
    return tree_util.tree_map(lambda leaf: _bind("ppermute", as_operand(leaf), axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """``ppermute`` with ``perm[i]`` the source of example ``i``."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Every example's ``x`` along the named axis, stacked at ``axis`` (concatenated along it when ``tiled``)."""
    if to != "varying":
        raise NotImplementedError(f"all_gather(..., to={to!r}) needs shard_map's axis types, which irax lacks")

    def bind(leaf, names, size):
        dimension = _canonical_axis(axis, leaf.ndim if tiled else leaf.ndim + 1)
        return _bind("all_gather", leaf, all_gather_dimension=dimension, axis_name=names, axis_index_groups=None,
                     axis_size=size, tiled=bool(tiled))
    return _over_named_axes(x, axis_name, axis_index_groups, bind)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum`` over the named axis, each example keeping its slice of ``scatter_dimension`` (the JAX primitive
    ``reduce_scatter``)."""

    def bind(leaf, names, size):
        return _bind("reduce_scatter", leaf, axis_name=names, scatter_dimension=_canonical_axis(
            scatter_dimension, leaf.ndim), axis_index_groups=None, axis_size=size, tiled=bool(tiled))
    return _over_named_axes(x, axis_name, axis_index_groups, bind)


def _over_named_axes(x, axis_name, axis_index_groups, bind):
    """``bind(leaf, names, size)`` on each leaf of ``x``; no names leave ``x`` as it is (as JAX's
    all_gather and psum_scatter)."""
    _no_groups(axis_index_groups)
    names = _names(axis_name)
    if not names:
        return x
    size = axis_size(names)
    return tree_util.tree_map(lambda leaf: bind(as_operand(leaf), names, size), x)
