"""``irax.scipy.interpolate``: JAX's ``jax.scipy.interpolate``, ported from
``jax/_src/third_party/scipy/interpolate.py``."""
from __future__ import annotations

from itertools import product

import numpy as np

from irax.numpy import asarray, broadcast_arrays, empty, searchsorted, where, zeros
from irax.numpy._util import check_arraylike, promote_dtypes_inexact
from irax.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _ndim_coords_from_arrays(points, ndim=None):
    """A tuple of coordinate arrays (or one array) as one ``(..., ndim)`` array."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        p = broadcast_arrays(*points)
        for p_other in p[1:]:
            if p_other.shape != p[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        points = empty(p[0].shape + (len(points),), dtype=float)
        for j, item in enumerate(p):
            points = points.at[..., j].set(item)
    else:
        check_arraylike("_ndim_coords_from_arrays", points)
        points = asarray(points)
        if points.ndim == 1:
            if ndim is None:
                points = points.reshape(-1, 1)
            else:
                points = points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Linear or nearest interpolation on a rectilinear grid, ``fill_value`` (NaN by default) outside it.

    Unlike SciPy, each axis of ``points`` must be strictly increasing (a decreasing one gives wrong values
    silently), and ``bounds_error`` is not supported: a bounds check cannot raise under ``jit``. The interpolator
    is a pytree (grid, values and fill value its leaves), so it can be passed through ``jit``.
    """

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")

        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {values.ndim} dimensions")

        values, = promote_dtypes_inexact(values)

        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill_value

        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")

        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim=ndim)
        if xi.shape[-1] != len(self.grid):
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, but this "
                             f"RegularGridInterpolator has dimension {ndim}")

        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])

        indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if not self.bounds_error and self.fill_value is not None:
            bc_shp = result.shape[:1] + (1,) * (result.ndim - 1)
            result = where(out_of_bounds.reshape(bc_shp), self.fill_value, result)

        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices, norm_distances):
        vslice = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        edges = product(*[[i, i + 1] for i in indices])  # each i, i + 1 an edge of the cell
        values = asarray(0.)
        for edge_indices in edges:
            weight = asarray(1.)
            for ei, i, yi in zip(edge_indices, indices, norm_distances):
                weight *= where(ei == i, 1 - yi, yi)
            values += self.values[edge_indices] * weight[vslice]
        return values

    def _evaluate_nearest(self, indices, norm_distances):
        idx_res = [where(yi <= .5, i, i + 1) for i, yi in zip(indices, norm_distances)]
        return self.values[tuple(idx_res)]

    def _find_indices(self, xi):
        """Per dimension: the lower edge of each point's cell, the distance from it in cell widths, and whether
        the point is outside the grid."""
        indices = []
        norm_distances = []
        out_of_bounds = zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = searchsorted(g, x) - 1
            i = where(i < 0, 0, i)
            i = where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                out_of_bounds += x < g[0]
                out_of_bounds += x > g[-1]
        return indices, norm_distances, out_of_bounds


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]),
)
