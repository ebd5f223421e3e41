"""``mode``, ``rankdata`` and ``sem``, ported from ``jax/_src/scipy/stats/_core.py`` so that jaxprs print as JAX's
(all three are jitted there, with the same static arguments, so ``pjit`` calls here too)."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.array import Array
from irax.batching import vmap
from irax.numpy._util import canonicalize_axis, check_arraylike, promote_args_inexact, staged_as

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    """The modal values and their counts."""
    mode: Array
    count: Array


def _check_nan_policy(nan_policy, name):
    if nan_policy not in ["propagate", "omit", "raise"]:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {{'propagate', 'omit', 'raise'}}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
                                  f"Please check if nans exist in `x` outside of the `{name}` function.")


def _mode_output_shape(input_shape, axis, keepdims):
    if keepdims:
        return tuple(1 for _ in input_shape) if axis is None else tuple(
            1 if i == axis else s for i, s in enumerate(input_shape))
    return () if axis is None else tuple(s for i, s in enumerate(input_shape) if i != axis)


def _mode_helper(x):
    """The mode of a vector and its count: ``unique`` padded to a static size keeps it jittable."""
    if x.size == 0:
        return (jnp.array(np.nan, dtype=dtypes.default_float_dtype()),
                jnp.array(0, dtype=dtypes.default_float_dtype()))
    vals, counts = jnp.unique(x, return_counts=True, size=x.size)
    return vals[jnp.argmax(counts)], counts.max()


@staged_as("mode", static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along ``axis`` (the smallest of equally common ones) and its count.

    Args:
      a: array-like input.
      axis: the axis reduced, or None for the flattened array.
      nan_policy: only ``"propagate"`` is supported.
      keepdims: keep the reduced axes with size 1.

    Returns:
      A ``ModeResult(mode, count)``.

    Raises:
      ValueError: for an unknown ``nan_policy``.
      NotImplementedError: for ``nan_policy`` ``"omit"`` or ``"raise"``.
    """
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy(nan_policy, "mode")
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim)
    output_shape = _mode_output_shape(x.shape, axis, keepdims)
    if axis is None:
        axis = 0
        x = x.ravel()
    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    vals, counts = vmap(_mode_helper, in_axes=1)(x)
    return ModeResult(vals.reshape(output_shape), counts.reshape(output_shape))


def invert_permutation(i):
    """The inverse of the permutation ``i``."""
    return jnp.empty_like(i).at[i].set(jnp.arange(i.size, dtype=i.dtype))


def _rank_sorted(a, method, out_dtype):
    """The ranks of ``a`` (without NaN) by ``method`` (a valid one; "average" is the last case), from its sort
    order and the starts of its runs of ties."""
    arr, sorter = lax.sort_key_val(a, jnp.arange(a.size))
    inv = invert_permutation(sorter)
    if method == "ordinal":
        return (inv + 1).astype(out_dtype)
    obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
    dense = obs.cumsum()[inv]
    if method == "dense":
        return dense.astype(out_dtype)
    count = jnp.nonzero(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
    if method == "max":
        return count[dense]
    if method == "min":
        return count[dense - 1] + 1
    return .5 * (count[dense] + count[dense - 1] + 1)


@staged_as("rankdata", static_argnames=("method", "axis", "nan_policy"))
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks of the data, from 1, ties resolved by ``method``; all NaN where the data hold a NaN.

    Args:
      a: array-like input.
      method: ``"average"``, ``"min"``, ``"max"``, ``"dense"`` or ``"ordinal"``.
      axis: rank along this axis, or over the flattened array if None.
      nan_policy: only ``"propagate"`` is supported.

    Returns:
      The ranks, in the default float dtype.

    Raises:
      ValueError: for an unknown ``method`` or ``nan_policy``.
      NotImplementedError: for ``nan_policy`` ``"omit"`` or ``"raise"``.
    """
    check_arraylike("rankdata", a)
    _check_nan_policy(nan_policy, "rankdata")
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    out_dtype = dtypes.default_float_dtype()
    return lax.cond(jnp.any(jnp.isnan(a)), lambda a: jnp.full_like(a, jnp.nan, out_dtype),
                    lambda a: _rank_sorted(a, method, out_dtype), a)


@staged_as("sem", static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: the standard deviation (``ddof`` degrees of freedom) over sqrt(count).

    Args:
      a: array-like input.
      axis: the axis reduced, or None for the flattened array.
      ddof: delta degrees of freedom.
      nan_policy: ``"propagate"``, or ``"omit"`` to leave NaNs out of both the deviation and the count.
      keepdims: keep the reduced axes with size 1.

    Raises:
      ValueError: for any other ``nan_policy``.
    """
    b, = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
