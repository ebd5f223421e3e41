"""NumPy rules of the host callbacks: the callback called at once (eager mode, and the interpreter)."""
from __future__ import annotations

from irax.ir.callbacks import checked_call, print_callback

from .numpy_rules import RULES


def _call(*arrays, callback, result_avals=(), **params):
    return checked_call(callback, result_avals, *arrays)


RULES.update({"pure_callback": _call, "io_callback": _call, "debug_callback": _call,
              "debug_print": lambda *arrays, **params: print_callback(params)(*arrays)})
