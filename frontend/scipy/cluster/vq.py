"""``irax.scipy.cluster.vq``: JAX's ``jax.scipy.cluster.vq``."""
from __future__ import annotations

import operator

from irax import numpy as jnp
from irax.batching import vmap
from irax.numpy import linalg as jnp_linalg
from irax.numpy._util import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """The index of the nearest code (Euclidean) for each observation, and its distance: ``(code, dist)``.

    The distances are a ``vmap`` over observations, and the chosen one a ``vmap`` of indexing, as in JAX, so the
    jaxpr and the rounding are JAX's."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, cb_arr = promote_dtypes_inexact(obs, code_book)
    if obs_arr.ndim != cb_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, cb_arr = obs_arr[..., None], cb_arr[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp_linalg.norm(ob[None] - cb_arr, axis=-1))(obs_arr)
    code = jnp.argmin(dist, axis=-1)
    dist_min = vmap(operator.getitem)(dist, code)
    return code, dist_min
