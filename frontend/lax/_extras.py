"""``jax.lax``'s small primitives: ``tile``, ``unstack``, ``mulhi``, ``optimization_barrier`` and ``approx_top_k`` (as
``approx_max_k``/``approx_min_k``), binding the ops of ``ir/extras.py``."""
from __future__ import annotations

import operator

from irax import tree_util
from irax.core import bind, bind1

from ._scalars import as_operand


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each axis ``i`` (``jax.lax.tile``)."""
    return bind1("tile", as_operand(operand), reps=tuple(map(operator.index, reps)))


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple (``jax.lax.unstack``)."""
    from irax.numpy._util import canonicalize_axis
    x = as_operand(x)
    return tuple(bind("unstack", x, axis=canonicalize_axis(axis, x.ndim)))


def mulhi(x, y, /):
    """The high N bits of each 2N-bit product of N-bit integers (``jax.lax.mulhi``)."""
    return bind1("mulhi", as_operand(x), as_operand(y))


def optimization_barrier(operand, /):
    """The identity on a pytree of arrays, which the compiler may not move computations across (for
    rematerialisation; ``jax.lax.optimization_barrier``)."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree.unflatten(bind("optimization_barrier", *[as_operand(x) for x in leaves]) if leaves else [])


def _approx_top_k(operand, k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
                  aggregate_to_topk):
    return tuple(bind("approx_top_k", as_operand(operand), k=operator.index(k),
                      reduction_dimension=operator.index(reduction_dimension), recall_target=float(recall_target),
                      is_max_k=is_max_k, reduction_input_size_override=operator.index(reduction_input_size_override),
                      aggregate_to_topk=bool(aggregate_to_topk)))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices (``jax.lax.approx_max_k``; exact
    here, as on XLA's CPU)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True, reduction_input_size_override,
                         aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (``jax.lax.approx_min_k``)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                         aggregate_to_topk)
