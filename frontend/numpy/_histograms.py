"""``histogramdd`` and ``histogram2d``, ported from JAX's ``jax/_src/numpy/lax_numpy.py``: each sample's bin along
every dimension by ``searchsorted``, one flat index per sample by ``ravel_multi_index``, and the counts by
``bincount`` (so the bins must be static, as in JAX)."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ._util import ensure_arraylike, promote_dtypes_inexact

__all__ = ["histogram2d", "histogramdd"]


def _jnp():
    import irax.numpy as jnp
    return jnp


def _check_range(range, shape):
    n, d = shape
    if range is not None and (len(range) != d or builtins.any(r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; got {range=}")


def _bins_per_dimension(bins, d):
    try:
        per_dimension = list(bins)
    except TypeError:  # one number of bins for every dimension
        return d * [bins]
    if len(per_dimension) != d:
        raise ValueError("should be a bin for each dimension.")
    return per_dimension


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """The counts (or weight sums) of the ``(N, D)`` samples in a ``D``-dimensional grid of bins, and the edges along
    each dimension; the last bin along each includes its right edge."""
    jnp = _jnp()
    if weights is None:
        sample = ensure_arraylike("histogramdd", sample)
        sample, = promote_dtypes_inexact(sample)
    else:
        sample, weights = ensure_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(sample, weights)
    n, d = np.shape(sample)
    _check_range(range, (n, d))
    bins_per_dimension = _bins_per_dimension(bins, d)
    bin_idx_by_dim, bin_edges_by_dim = [], []
    for i in builtins.range(d):
        range_i = None if range is None else range[i]
        bin_edges = jnp.histogram_bin_edges(sample[:, i], bins_per_dimension[i], range_i, weights)
        bin_idx = jnp.searchsorted(bin_edges, sample[:, i], side="right")
        bin_idx = jnp.where(sample[:, i] == bin_edges[-1], bin_idx - 1, bin_idx)
        bin_idx_by_dim.append(bin_idx)
        bin_edges_by_dim.append(bin_edges)
    nbins = tuple(len(bin_edges) + 1 for bin_edges in bin_edges_by_dim)
    dedges = [jnp.diff(bin_edges) for bin_edges in bin_edges_by_dim]
    xy = jnp.ravel_multi_index(tuple(bin_idx_by_dim), nbins, mode="clip")
    hist = jnp.bincount(xy, weights, length=math.prod(nbins))
    hist = jnp.reshape(hist, nbins)[d * (slice(1, -1),)]
    if density:
        hist = hist.astype(sample.dtype)
        hist /= hist.sum()
        for norm in jnp.ix_(*dedges):
            hist /= norm
    return hist, bin_edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """``histogramdd`` of the points ``(x[i], y[i])``: the counts and the edges along ``x`` and along ``y``."""
    jnp = _jnp()
    x, y = ensure_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:  # one array of edges, for both dimensions
        x_edges = y_edges = jnp.asarray(bins)
        bins = [x_edges, y_edges]
    sample = jnp.transpose(jnp.asarray([x, y]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]
