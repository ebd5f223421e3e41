"""``mgrid``, ``ogrid``, ``r_``, ``c_``, ``s_`` and ``index_exp``, ported from ``jax/_src/numpy/index_tricks.py``."""
from __future__ import annotations

import numpy as np

from irax.core import Tracer

from ._util import promote_dtypes

__all__ = ["c_", "index_exp", "mgrid", "ogrid", "r_", "s_"]


def _jnp():
    import irax.numpy as jnp
    return jnp


def _concrete(value, what):
    if isinstance(value, Tracer) and value.concrete is None:
        from irax import errors
        raise errors.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {value._describe()}\n"
            f"The problem arose with the {what}.{value._context_message()}\n")
    return value


def _make_1d_grid_from_slice(s: slice, op_name: str):
    start = _concrete(s.start, f"slice start of jnp.{op_name}") or 0
    stop = _concrete(s.stop, f"slice stop of jnp.{op_name}")
    step = _concrete(s.step, f"slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return _jnp().linspace(start, stop, int(abs(step)))
    return _jnp().arange(start, stop, step)


class _Mgrid:
    """Dense coordinate arrays from slices (``jnp.mgrid[0:3, 0:4]``); a complex step is a point count."""

    def __getitem__(self, key):
        jnp = _jnp()
        if isinstance(key, slice):
            return _make_1d_grid_from_slice(key, op_name="mgrid")
        output = promote_dtypes(*(_make_1d_grid_from_slice(k, op_name="mgrid") for k in key))
        output_arr = jnp.meshgrid(*output, indexing="ij", sparse=False)
        if len(output_arr) == 0:
            return jnp.arange(0)
        return jnp.stack(output_arr, 0)


class _Ogrid:
    """Open (broadcastable) coordinate arrays from slices (``jnp.ogrid[0:3, 0:4]``)."""

    def __getitem__(self, key):
        jnp = _jnp()
        if isinstance(key, slice):
            return _make_1d_grid_from_slice(key, op_name="ogrid")
        output = promote_dtypes(*(_make_1d_grid_from_slice(k, op_name="ogrid") for k in key))
        return jnp.meshgrid(*output, indexing="ij", sparse=True)


class _AxisConcat:
    """Concatenation by indexing: arrays, scalars and slices (as ``arange``/``linspace``), with NumPy's
    optional leading string directive ``"axis,ndmin,trans1d"``, ``"r"`` or ``"c"``."""

    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key):
        jnp = _jnp()
        key_tup = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = key_tup[0]
        if isinstance(directive, str):
            key_tup = key_tup[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                k = len(vec)
                vec = vec + params[k:] if k < 4 else vec[:3] + [params[-1]]
                try:
                    params = list(map(int, vec))
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in key_tup:
            if isinstance(item, slice):
                newobj = _make_1d_grid_from_slice(item, op_name=self.op_name)
                item_ndim = 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                newobj = jnp.array(item, copy=False)
                item_ndim = newobj.ndim
            newobj = jnp.array(newobj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shape_obj = tuple(range(ndmin))
                num_lshifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                newobj = jnp.transpose(newobj, tuple(shape_obj[num_lshifts:] + shape_obj[:num_lshifts]))
            output.append(newobj)
        res = jnp.concatenate(tuple(output), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = jnp.expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """``jnp.r_``: concatenation along the first axis."""

    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """``jnp.c_``: concatenation along the last axis, 1-D inputs as columns."""

    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = RClass()
c_ = CClass()
s_ = np.s_
index_exp = np.index_exp
