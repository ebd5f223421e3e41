"""Host-side helpers of ``irax.numpy``: printing, files and dtype kinds, delegated to NumPy."""
from __future__ import annotations

import numpy as np

from irax import dtypes

from ._creation import asarray

get_printoptions = np.get_printoptions
printoptions = np.printoptions
set_printoptions = np.set_printoptions
save = np.save
savez = np.savez


def finfo(dtype):
    return dtypes.finfo(dtype)


def iinfo(int_type):
    return dtypes.iinfo(int_type)


def issubdtype(arg1, arg2):
    return dtypes.issubdtype(arg1, arg2)


def isdtype(dtype, kind):
    return dtypes.isdtype(dtype, kind)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def load(file, *args, **kwargs):
    """``np.load``, with arrays returned as irax arrays."""
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) else out


def apply_over_axes(func, a, axes):
    """Applies ``func(a, axis)`` for each axis in turn, keeping the rank (as NumPy)."""
    from ._shape import expand_dims
    a = asarray(a)
    for axis in [axes] if isinstance(axes, int) else axes:
        b = func(a, axis)
        if b.ndim == a.ndim - 1:
            b = expand_dims(b, axis)
        elif b.ndim != a.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a
