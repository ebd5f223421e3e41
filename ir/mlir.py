"""The MLIR Python bindings bundled with iree-base-compiler, imported lazily.

``import irax`` must not load the compiler: eager NumPy use and loading a saved
artifact never need it. Everything in irax reaches the bindings through ``ir``
and ``context()`` here, which import them on first use.
"""
from __future__ import annotations

import importlib
import threading


class _Lazy:
    def __init__(self, module: str):
        self._module_name = module
        self._module = None

    def __getattr__(self, name):
        if self._module is None:
            self._module = importlib.import_module(self._module_name)
        return getattr(self._module, name)


ir = _Lazy("iree.compiler.ir")
passmanager = _Lazy("iree.compiler.passmanager")

_state = threading.local()
_context = None


def context():
    """The one MLIR context irax builds its modules in (jaxpr ops unregistered in C++)."""
    global _context
    if _context is None:
        from .dialect import register_dialect
        ctx = ir.Context()
        ctx.allow_unregistered_dialects = True
        register_dialect()
        _context = ctx
    return _context


def scope():
    """Enters irax's context with an unknown default location (the bindings need both)."""
    return ir.Location.unknown(context=context())
