"""``jax.flatten_util.ravel_pytree``: a pytree of arrays as one flat vector, and the function that rebuilds it."""
from __future__ import annotations

import functools
import warnings

import numpy as np

from . import dtypes, tree_util


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves raveled and concatenated, in the dtype they promote to, and a function
    taking such a vector back to the pytree (each leaf in its own shape and dtype)."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, unravel_leaves = _ravel_list(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_leaves)


def _unravel_pytree(treedef, unravel_leaves, flat):
    return tree_util.tree_unflatten(treedef, unravel_leaves(flat))


def _ravel_list(leaves):
    """As JAX's: leaves of one dtype are only reshaped (their ``unravel`` takes any dtype), mixed ones converted
    to the dtype they promote to (their ``unravel`` takes that one only)."""
    from irax import lax
    if not leaves:
        return lax.full([0], 0, "float32"), lambda _: []
    from_dtypes = tuple(dtypes.dtype(leaf) for leaf in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes, shapes = [int(np.size(leaf)) for leaf in leaves], [np.shape(leaf) for leaf in leaves]
    if all(dtype == to_dtype for dtype in from_dtypes):
        flat = lax.concatenate([lax.reshape(leaf, (int(np.size(leaf)),)) for leaf in leaves], 0)
        return flat, functools.partial(_unravel_list_single_dtype, sizes, shapes)
    flat = lax.concatenate([lax.convert_element_type(leaf, to_dtype).ravel() for leaf in leaves], 0)
    return flat, functools.partial(_unravel_list, sizes, shapes, from_dtypes, to_dtype)


def _unravel_list_single_dtype(sizes, shapes, flat):
    from irax import lax
    return [chunk.reshape(shape) for chunk, shape in zip(lax.split(flat, sizes), shapes)]


def _unravel_list(sizes, shapes, from_dtypes, to_dtype, flat):
    from irax import lax
    if dtypes.dtype(flat) != to_dtype:
        raise TypeError(f"unravel function given array of dtype {dtypes.dtype(flat)}, but expected dtype "
                        f"{to_dtype}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex to real: the imaginary parts are zero
        return [lax.convert_element_type(chunk.reshape(shape), dtype)
                for chunk, shape, dtype in zip(lax.split(flat, sizes), shapes, from_dtypes)]


__all__ = ["ravel_pytree"]
