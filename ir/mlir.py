"""The MLIR Python bindings bundled with iree-base-compiler, imported lazily.

``import irax`` must not load the compiler: eager NumPy use and loading a saved
artifact never need it. Everything in irax reaches the bindings through ``ir``
and ``context()`` here, which import them on first use.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading


def _import_package_lazily(name: str):
    """Puts package ``name`` in ``sys.modules`` without running its ``__init__`` until an attribute it would
    define is asked for. ``iree.compiler``'s ``__init__`` imports the compiler driver's tools (subprocess,
    logging, shlex: 9 ms of a warm first call), which building and lowering modules never use."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    package = importlib.util.module_from_spec(spec)

    def run_init(attr):
        del package.__getattr__
        spec.loader.exec_module(package)
        return getattr(package, attr)
    package.__getattr__ = run_init
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    setattr(importlib.import_module(parent), child, package)


class _Lazy:
    """A module imported on first attribute access; each attribute is then kept on the instance, so that later
    reads (thousands in a trace) skip ``__getattr__``."""

    def __init__(self, module: str):
        self._module_name = module
        self._module = None

    def __getattr__(self, name):
        if self._module is None:
            _import_package_lazily("iree.compiler")
            self._module = importlib.import_module(self._module_name)
        value = getattr(self._module, name)
        setattr(self, name, value)
        return value


ir = _Lazy("iree.compiler.ir")
passmanager = _Lazy("iree.compiler.passmanager")

_context = None
_context_lock = threading.Lock()


# The dialects whose ops irax's Python creates. A context loads these alone: the bindings' default loads every
# dialect IREE registers (10 ms of a warm first call), and the parser and pass manager load others as they need
# them. An op created by name in a registered dialect that is not loaded comes out unregistered, unverified.
LOADED_DIALECTS = ("builtin", "func", "stablehlo", "chlo")


def context():
    """The one MLIR context irax builds its modules in (jaxpr ops unregistered in C++)."""
    global _context
    if _context is None:
        with _context_lock:  # threads tracing their first functions at once make one context
            if _context is None:
                from .dialect import register_dialect
                register_dialect()  # first: loading a dialect into the context looks up its Python module
                ctx = ir.Context(load_on_create_dialects=LOADED_DIALECTS)
                ctx.allow_unregistered_dialects = True
                _context = ctx
    return _context


def func_op(name: str, arg_types, result_types=(), *, ip, declaration=False):
    """``func.func @name`` and its entry block (None for a ``declaration``), built as a generic op: the ``func``
    dialect's Python module (OpView classes irax never uses, and typing_extensions with them) cost ~5 ms of a
    fresh process's first call."""
    op = ir.Operation.create("func.func", regions=1, ip=ip, attributes={
        "sym_name": ir.StringAttr.get(name),
        "function_type": ir.TypeAttr.get(ir.FunctionType.get(list(arg_types), list(result_types)))})
    return op, None if declaration else op.regions[0].blocks.append(*arg_types)


def module_body(module):
    """The block of ``module``: an ``ir.Module``, or its ``builtin.module`` op (a generic OpView: irax does not load
    the builtin dialect's Python module either)."""
    return module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]


def return_op(values, *, ip):
    return ir.Operation.create("func.return", operands=list(values), ip=ip)


def scope():
    """Enters irax's context with an unknown default location (the bindings need both)."""
    return ir.Location.unknown(context=context())
