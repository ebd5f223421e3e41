"""``irax.debug``: ``print`` and ``callback`` as JAX's, eagerly and from compiled code (a host callback).

The arguments are split as JAX splits them: array leaves are the op's operands, anything else (strings, None)
is kept static in the params and put back for the call."""
from __future__ import annotations

import string

import numpy as np

from . import tree_util
from .core import Tracer, bind, user_source_line
from .callbacks import call_user, host_array
from .array import Array
from irax.ir.callbacks import merge_args


def _is_dynamic(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex))


def _split_args(args, kwargs):
    """(tree, dynamic leaves, static ``(position, leaf)`` pairs), as JAX's ``_split_callback_args``."""
    from .lax._scalars import as_operand
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    dynamic = [as_operand(x) for x in leaves if _is_dynamic(x)]
    static = tuple((i, x) for i, x in enumerate(leaves) if not _is_dynamic(x))
    return tree, dynamic, static


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` with the arguments as arrays, for its effect; never dropped."""
    tree, dynamic, static = _split_args(args, kwargs)
    where = user_source_line()

    def _flat_callback(*arrays):
        call_args, call_kwargs = merge_args(tree, [host_array(a) for a in arrays], static)
        call_user(callback, call_args, call_kwargs, where)
        return []
    _flat_callback.__qualname__ = "debug_callback.<locals>._debug_callback.<locals>._flat_callback"
    bind("debug_callback", *dynamic, callback=_flat_callback, effect="OrderedDebug" if ordered else "Debug",
         partitioned=partitioned)


class _FormatChecker(string.Formatter):
    """JAX's check of a format string against the arguments: every argument used, nothing formatted."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be passing "
                             "an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass in a "
                             "regular string.")


def print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, **kwargs):
    """Prints ``fmt.format(*args, **kwargs)`` when the values are known, under NumPy's print options of the call.
    Without ``fmt``, returns the printing function (JAX's two-call form)."""
    def _debug_print(fmt, *args, **kwargs):
        if not skip_format_check:
            _FormatChecker().format(fmt, *args, **kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
        tree, dynamic, static = _split_args(args, kwargs)
        bind("debug_print", *dynamic, fmt=fmt, ordered=ordered, partitioned=partitioned, in_tree=tree,
             static_args=static, np_printoptions=tuple(np.get_printoptions().items()),
             has_placeholders=has_placeholders)

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return _debug_print


__all__ = ["callback", "print"]
