"""``jnp.vectorize``, ported from ``jax/_src/numpy/vectorize.py``: NumPy's generalized-ufunc broadcasting by vmap."""
from __future__ import annotations

import functools
import re

import numpy as np

from irax.batching import vmap

__all__ = ["vectorize"]

_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = "(?:{0:}(?:,{0:})*)?".format(_DIMENSION_NAME)
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = "{0:}(?:,{0:})*".format(_ARGUMENT)
_SIGNATURE = "^{0:}->{0:}$".format(_ARGUMENT_LIST)


def _parse_gufunc_signature(signature):
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    return ([tuple(re.findall(_DIMENSION_NAME, arg)) for arg in re.findall(_ARGUMENT, arg_list)]
            for arg_list in signature.split("->"))


def _update_dim_sizes(dim_sizes, shape, core_dims, error_context="", *, is_input):
    num_core_dims = len(core_dims)
    if is_input:
        if len(shape) < num_core_dims:
            raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all core dimensions "
                             f"{core_dims!r} {error_context}")
    elif len(shape) != num_core_dims:
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core_dims!r} {error_context}")
    core_shape = shape[-num_core_dims:] if core_dims else ()
    for dim, size in zip(core_dims, core_shape):
        if dim not in dim_sizes:
            dim_sizes[dim] = size
        elif size != dim_sizes[dim]:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs {dim_sizes[dim]!r} "
                             f"{error_context}")


def _parse_input_dimensions(args, input_core_dims, error_context=""):
    if len(args) != len(input_core_dims):
        raise TypeError(f"wrong number of positional arguments: expected {len(input_core_dims)!r}, got "
                        f"{len(args)!r} {error_context}")
    shapes, dim_sizes = [], {}
    for arg, core_dims in zip(args, input_core_dims):
        _update_dim_sizes(dim_sizes, arg.shape, core_dims, error_context, is_input=True)
        shapes.append(arg.shape[:arg.ndim - len(core_dims)])
    return np.broadcast_shapes(*shapes), dim_sizes


def _check_output_dims(func, dim_sizes, expected_output_core_dims, error_context=""):
    def wrapped(*args):
        out = func(*args)
        out_shapes = [np.shape(o) for o in (out if isinstance(out, tuple) else [out])]
        if len(expected_output_core_dims) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n"
                            f"{error_context}")
        if len(out_shapes) != len(expected_output_core_dims):
            raise TypeError(f"wrong number of output arguments: expected {len(expected_output_core_dims)!r}, got "
                            f"{len(out_shapes)!r} {error_context}")
        sizes = dict(dim_sizes)
        for shape, core_dims in zip(out_shapes, expected_output_core_dims):
            _update_dim_sizes(sizes, shape, core_dims, error_context, is_input=False)
        return out
    return wrapped


def _apply_excluded(func, excluded, args, kwargs):
    if not excluded:
        return func, args, kwargs
    dynamic_args = [arg for i, arg in enumerate(args) if i not in excluded]
    dynamic_kwargs = {key: val for key, val in kwargs.items() if key not in excluded}
    static_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)]
    static_kwargs = {key: val for key, val in kwargs.items() if key in excluded}

    def new_func(*args, **kwargs):
        args = list(args)
        for i, arg in static_args:
            args.insert(i, arg)
        return func(*args, **kwargs, **static_kwargs)
    return new_func, dynamic_args, dynamic_kwargs


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` mapped over its arguments' broadcast leading axes, NumPy's ``vectorize`` semantics.

    Args:
      pyfunc: a function of arrays of the core shapes.
      excluded: positions or names of arguments passed through unvectorized.
      signature: a generalized-ufunc signature such as ``"(n),(n)->()"``; scalars by default.
    """
    import irax.numpy as jnp
    if any(not isinstance(exclude, (str, int)) for exclude in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        error_context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        excluded_func, args, kwargs = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            input_core_dims, output_core_dims = _parse_gufunc_signature(signature)
        else:
            input_core_dims, output_core_dims = [()] * len(args), None
        none_args = {i for i, arg in enumerate(args) if arg is None}
        if any(none_args):
            if any(input_core_dims[i] != () for i in none_args):
                raise ValueError(f"Cannot pass None at locations {none_args} with {signature=}")
            excluded_func, args, _ = _apply_excluded(excluded_func, none_args, args, {})
            input_core_dims = [dim for i, dim in enumerate(input_core_dims) if i not in none_args]
        args = tuple(map(jnp.asarray, args))
        broadcast_shape, dim_sizes = _parse_input_dimensions(args, input_core_dims, error_context)
        checked_func = excluded_func if output_core_dims is None else _check_output_dims(
            excluded_func, dim_sizes, output_core_dims, error_context)
        squeezed_args, rev_filled_shapes = [], []
        for arg, core_dims in zip(args, input_core_dims):
            noncore_shape = arg.shape[:arg.ndim - len(core_dims)]
            filled_shape = (len(broadcast_shape) - len(noncore_shape)) * (1,) + noncore_shape
            rev_filled_shapes.append(filled_shape[::-1])
            squeeze_indices = tuple(i for i, size in enumerate(noncore_shape) if size == 1)
            squeezed_args.append(jnp.squeeze(arg, axis=squeeze_indices))
        vectorized_func = checked_func
        dims_to_expand = []
        for negdim, axis_sizes in enumerate(zip(*rev_filled_shapes)):
            in_axes = tuple(None if size == 1 else 0 for size in axis_sizes)
            if all(axis is None for axis in in_axes):
                dims_to_expand.append(len(broadcast_shape) - 1 - negdim)
            else:
                vectorized_func = vmap(vectorized_func, in_axes)
        result = vectorized_func(*squeezed_args)
        if not dims_to_expand:
            return result
        if isinstance(result, tuple):
            return tuple(jnp.expand_dims(r, axis=dims_to_expand) for r in result)
        return jnp.expand_dims(result, axis=dims_to_expand)
    return wrapped
