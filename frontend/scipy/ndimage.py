"""``irax.scipy.ndimage``: JAX's ``jax.scipy.ndimage``, ported from ``jax/_src/scipy/ndimage.py``.

Boundary modes follow SciPy's documentation, not its implementation (JAX's fix of scipy/scipy#2640): 'constant'
is SciPy's 'grid-constant' and 'wrap' its 'grid-wrap'.
"""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.numpy._util import staged_as

__all__ = ["map_coordinates"]


def _nonempty_prod(arrs):
    return functools.reduce(operator.mul, arrs)


def _nonempty_sum(arrs):
    return sum(arrs[1:], arrs[0])


def _mirror_index_fixer(index, size):
    s = size - 1  # half-wavelength of the triangular wave |x - round(x)|, scaled to integers
    return jnp.abs((index + s) % (2 * s) - s)


def _reflect_index_fixer(index, size):
    return jnp.floor_divide(_mirror_index_fixer(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index_fixer,
    "reflect": _reflect_index_fixer,
}


def _round_half_away_from_zero(a):
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest_indices_and_weights(coordinate):
    index = _round_half_away_from_zero(coordinate).astype(np.int32)
    weight = coordinate.dtype.type(1)
    return [(index, weight)]


def _linear_indices_and_weights(coordinate):
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    lower_weight = 1 - upper_weight
    index = lower.astype(np.int32)
    return [(index, lower_weight), (index + 1, upper_weight)]


@staged_as("_map_coordinates", static_argnums=(2, 3, 4))
def _map_coordinates(input, coordinates, order, mode, cval):
    input_arr = jnp.asarray(input)
    coordinate_arrs = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, input_arr.dtype)

    if len(coordinates) != input_arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         "{} != {}".format(len(coordinates), input_arr.ndim))

    index_fixer = _INDEX_FIXERS.get(mode)
    if index_fixer is None:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates does not yet support mode {}. "
                                  "Currently supported modes are {}.".format(mode, set(_INDEX_FIXERS)))

    if mode == "constant":
        def is_valid(index, size):
            return (0 <= index) & (index < size)
    else:
        def is_valid(index, size):
            return True

    if order == 0:
        interp_fun = _nearest_indices_and_weights
    elif order == 1:
        interp_fun = _linear_indices_and_weights
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    valid_1d_interpolations = []
    for coordinate, size in zip(coordinate_arrs, input_arr.shape):
        valid_1d_interpolations.append([(index_fixer(index, size), is_valid(index, size), weight)
                                        for index, weight in interp_fun(coordinate)])

    outputs = []
    for items in itertools.product(*valid_1d_interpolations):
        indices, validities, weights = zip(*items)
        if all(valid is True for valid in validities):
            contribution = input_arr[indices]
        else:
            all_valid = functools.reduce(operator.and_, validities)
            contribution = jnp.where(all_valid, input_arr[indices], cval)
        outputs.append(_nonempty_prod(weights) * contribution)
    result = _nonempty_sum(outputs)
    if dtypes.issubdtype(input_arr.dtype, np.integer):
        result = _round_half_away_from_zero(result)
    return result.astype(input_arr.dtype)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """``input`` interpolated (``order`` 0: nearest, 1: linear) at ``coordinates``, one array per axis."""
    return _map_coordinates(input, coordinates, order, mode, cval)
