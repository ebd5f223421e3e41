"""``irax.debug``: ``print`` and ``callback`` on concrete values, as JAX's run eagerly. Under ``jit``, ``grad`` or
``vmap`` they would need a host callback from compiled code, which irax does not have yet: a traced argument
raises ``NotImplementedError`` naming the feature, never a silent skip of the print."""
from __future__ import annotations

import builtins

from . import core, tree_util


def _check_concrete(name, args, kwargs):
    if any(isinstance(x, core.Tracer) for x in tree_util.tree_leaves((args, kwargs))):
        raise NotImplementedError(f"jax.debug.{name} of traced values (under jit, grad or vmap) needs a host "
                                  "callback from compiled code, which irax does not support yet")


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Calls ``callback`` with the arguments as arrays."""
    _check_concrete("callback", args, kwargs)
    from .lax._scalars import as_operand
    args, kwargs = tree_util.tree_map(as_operand, (args, kwargs))
    callback(*args, **kwargs)


def print(fmt, *args, ordered=False, partitioned=False, skip_format_check=False, **kwargs):
    """Prints ``fmt.format(*args, **kwargs)``."""
    _check_concrete("print", args, kwargs)
    builtins.print(fmt.format(*args, **kwargs))


__all__ = ["callback", "print"]
