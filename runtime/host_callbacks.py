"""Python functions that compiled code calls: the host callbacks of a program (``pure_callback``, ``io_callback``,
``jax.debug.print``), as an IREE module of Python functions (``PyModuleInterface``) loaded beside the program's.

The program imports ``irax_host.callback_<i>`` with tensor arguments and results; IREE hands each call buffer
views, synchronously, once its operands are computed. A Python exception cannot cross IREE's C stack: it is kept
here, IREE's call fails, and the caller raises it (``HostModule.raise_pending``).
"""
from __future__ import annotations

import weakref

import numpy as np

MODULE_NAME = "irax_host"


def import_name(index: int) -> str:
    return f"callback_{index}"


class HostFunction:
    """``fn(*arrays) -> list of arrays``: NumPy arrays of ``results`` ((shape, dtype) pairs) in and out."""

    def __init__(self, fn, operands, results):
        self.fn = fn
        self.operands = [(tuple(s), np.dtype(d)) for s, d in operands]
        self.results = [(tuple(s), np.dtype(d)) for s, d in results]

    @property
    def calling_convention(self) -> str:
        return f"0{'r' * len(self.operands) or 'v'}_{'r' * len(self.results) or 'v'}"


class HostModule:
    """The ``irax_host`` module of one loaded program on one device. IREE's module holds the exported functions,
    which reach this object only through a weak reference: a strong one would close a cycle through IREE's C++
    objects that Python's collector cannot see, and the module would outlive the program."""

    def __init__(self, functions: list[HostFunction], device):
        from ._native import rt
        self._device = device
        self._view_type = rt.HalBufferView
        self._functions = functions
        self.pending: BaseException | None = None
        interface = rt.PyModuleInterface(MODULE_NAME, lambda _: None)
        this = weakref.ref(self)
        for i, function in enumerate(functions):
            interface.export(import_name(i), function.calling_convention,
                             lambda _, *refs, i=i: this()._call(i, refs))
        self.vm_module = interface.create()

    def _call(self, index, refs):
        function = self._functions[index]
        try:
            arrays = [self._device.to_host(ref.deref(self._view_type), shape, dtype)
                      for ref, (shape, dtype) in zip(refs, function.operands)]
            outs = [self._device.put(np.asarray(x)).ref for x in function.fn(*arrays)]
        except BaseException as e:
            self.pending = e
            raise RuntimeError("irax host callback failed") from None
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def raise_pending(self, error: RuntimeError):
        """After IREE's call failed with ``error``: the callback's exception, if a callback raised."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.__suppress_context__ = True
            raise pending
        raise error
