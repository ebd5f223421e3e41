"""A loaded ``.vmfb`` module: its VM context on a device and direct calls to its functions."""
from __future__ import annotations

from irax.ir.errors import ArtifactError

from .device import Device, get_device
from .host_callbacks import HostModule
from .waiting import from_low_priority_thread


class Executable:
    """One IREE module loaded on one device; ``call`` takes and returns buffer views."""

    def __init__(self, vmfb: bytes, device: Device | None = None, *, name: str = "<module>", host_functions=()):
        from ._native import rt
        self._rt = rt
        self.device = device or get_device()
        instance = self.device.vm_instance
        try:
            self.vm_module = rt.VmModule.copy_buffer(instance, vmfb)
        except (RuntimeError, ValueError) as e:
            raise ArtifactError(f"{name}: not a valid IREE module: {e}") from None
        modules = [rt.create_hal_module(instance, self.device.hal_device)]
        self.host = None
        if host_functions:
            self.host = HostModule(list(host_functions), self.device)
            modules.append(self.host.vm_module)
        try:
            self.context = rt.VmContext(instance, modules=modules + [self.vm_module])
        except RuntimeError as e:
            raise ArtifactError(f"{name}: compiled for a device or CPU this runtime cannot run "
                                f"({str(e).split(';')[0]})") from None
        # ``VmContext.invoke``, waited on away from the calling thread on the task driver (see ``waiting``); a
        # program calling back into Python runs on the caller's thread, whose context its callbacks see
        self.invoke_context = (from_low_priority_thread(self.context.invoke)
                               if self.device.driver == "local-task" and self.host is None else self.context.invoke)
        self._functions = {}

    def function(self, name: str = "main"):
        fn = self._functions.get(name)
        if fn is None:
            fn = self.vm_module.lookup_function(name)
            if fn is None:
                raise KeyError(f"the module has no function {name!r}")
            self._functions[name] = fn
        return fn

    def invoke(self, fn, args, results):
        """``VmContext.invoke``; a host callback's exception is raised as itself."""
        try:
            self.invoke_context(fn, args, results)
        except RuntimeError as e:
            if self.host is None:
                raise
            self.host.raise_pending(e)

    def call(self, fn, buffer_views, num_results: int):
        rt = self._rt
        args = rt.VmVariantList(len(buffer_views))
        for bv in buffer_views:
            args.push_ref(bv)
        results = rt.VmVariantList(num_results)
        self.invoke(fn, args, results)
        view_type = rt.HalBufferView
        return [results.get_as_object(i, view_type) for i in range(num_results)]
