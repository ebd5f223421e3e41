"""``jax.pure_callback`` and ``jax.experimental.io_callback``: the user's Python function, called on the host with
arrays, from eager code and from compiled code alike (``irax.runtime.host_callbacks``)."""
from __future__ import annotations

import numpy as np

from irax.ir.avals import ShapedArray

from . import dtypes, tree_util
from .array import Array
from .core import bind, user_source_line
from .errors import JaxRuntimeError

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")


def host_array(x: np.ndarray) -> Array:
    """An operand as the callback sees it: an ``Array``, as JAX hands its callbacks."""
    x = np.asarray(x)
    return Array._from_host(x, ShapedArray(x.shape, x.dtype))


def call_user(fn, args, kwargs, where):
    """``fn(*args, **kwargs)``; what it raises becomes the call's ``JaxRuntimeError``, chained to it and naming
    the user's line that staged the callback (an exception cannot cross compiled code; this one is raised again
    where the program was called)."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        raise JaxRuntimeError(f"INTERNAL: host callback {_name(fn)} (staged at {where}) failed: "
                              f"{type(e).__name__}: {e}") from e


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class _FlatCallback:
    """The user's callback on flat operands, its results flattened (their shapes and dtypes are checked against
    the op's, which vmap may have changed: ``irax.ir.callbacks.checked_call``)."""

    def __init__(self, callback_func, in_tree, out_tree):
        self.callback_func = callback_func
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.where = user_source_line()

    def __repr__(self):
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"

    def __call__(self, *arrays):
        args, kwargs = self.in_tree.unflatten([host_array(a) for a in arrays])
        out = call_user(self.callback_func, args, kwargs, self.where)
        leaves, tree = tree_util.tree_flatten(out)
        if tree != self.out_tree:
            raise JaxRuntimeError(f"INTERNAL: host callback {_name(self.callback_func)} (staged at {self.where}) "
                                  f"returned a value of structure {tree}, but result_shape_dtypes has the "
                                  f"structure {self.out_tree}")
        return [_canonical(leaf) for leaf in leaves]


def _canonical(value) -> np.ndarray:
    """A result as a NumPy array of its canonical dtype (64-bit ones narrowed without x64, as JAX's)."""
    value = np.asarray(value)
    return value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)


def _result_avals(result_shape_dtypes):
    avals, tree = tree_util.tree_flatten(tree_util.tree_map(
        lambda x: ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype)), result_shape_dtypes))
    return tuple(avals), tree


def _call(primitive, callback, result_shape_dtypes, args, kwargs, **params):
    from .lax._scalars import as_operand
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    flat = _FlatCallback(callback, in_tree, out_tree)
    outs = bind(primitive, *[as_operand(x) for x in leaves], callback=flat, result_avals=result_avals, **params)
    return tree_util.tree_unflatten(out_tree, outs)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls ``callback(*args, **kwargs)`` on the host; its results have ``result_shape_dtypes``' shapes and
    dtypes. Being pure, an unused call may be dropped; under ``vmap`` it follows ``vmap_method``."""
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {[*_VMAP_METHODS, None]}, but got: "
                         f"{vmap_method}")
    return _call("pure_callback", callback, result_shape_dtypes, args, kwargs, vmap_method=vmap_method)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` on the host for its effect and results; never dropped."""
    return _call("io_callback", callback, result_shape_dtypes, args, kwargs, ordered=ordered)


__all__ = ["io_callback", "pure_callback"]
