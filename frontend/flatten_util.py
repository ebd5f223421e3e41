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
    import irax.numpy as jnp
    if not leaves:
        return jnp.array([], jnp.float32), lambda _: []
    from_dtypes = tuple(dtypes.dtype(leaf) for leaf in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    shapes = [np.shape(leaf) for leaf in leaves]
    indices = tuple(int(i) for i in np.cumsum([int(np.prod(shape, dtype=np.int64)) for shape in shapes]))
    flat = jnp.concatenate([jnp.ravel(jnp.asarray(leaf).astype(to_dtype)) for leaf in leaves])
    return flat, functools.partial(_unravel_list, indices, shapes, from_dtypes, to_dtype)


def _unravel_list(indices, shapes, from_dtypes, to_dtype, flat):
    import irax.numpy as jnp
    from irax import lax
    if np.shape(flat) != (indices[-1],):
        raise ValueError(f"The unravel function expected an array of shape {(indices[-1],)}, got shape "
                         f"{np.shape(flat)}.")
    if dtypes.dtype(flat) != to_dtype:
        raise TypeError(f"unravel function given array of dtype {dtypes.dtype(flat)}, but expected dtype "
                        f"{to_dtype}")
    chunks = jnp.split(flat, indices[:-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex to real: the imaginary parts are zero
        return [lax.convert_element_type(chunk.reshape(shape), dtype)
                for chunk, shape, dtype in zip(chunks, shapes, from_dtypes)]


__all__ = ["ravel_pytree"]
