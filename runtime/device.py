"""IREE HAL devices and device buffers.

This module, like all of ``irax.runtime``, imports neither the compiler nor the
rest of irax, so a saved ``.vmfb`` runs with ``iree-base-runtime`` alone.
Two CPU drivers are used side by side: ``local-sync`` runs small programs on
the calling thread (a few microseconds a call), ``local-task`` spreads big ones
over the cores. Both allocate host memory, so a buffer from one is a valid
argument to the other. The caching allocator keeps freed buffers for reuse:
a fresh multi-megabyte buffer costs page faults that made memory-bound calls
~30% slower than JAX's.
"""
from __future__ import annotations

import numpy as np

# By dtype name: importing ml_dtypes for bfloat16's dtype object costs half a second (NumPy registers its many
# loops one by one), which a program loading an artifact without bfloat16 arrays should not pay.
_ELEMENT_TYPES = {
    "bool": "BOOL_8", "int8": "SINT_8", "int16": "SINT_16", "int32": "SINT_32", "int64": "SINT_64",
    "uint8": "UINT_8", "uint16": "UINT_16", "uint32": "UINT_32", "uint64": "UINT_64",
    "float16": "FLOAT_16", "bfloat16": "BFLOAT_16", "float32": "FLOAT_32", "float64": "FLOAT_64",
    "complex64": "COMPLEX_64", "complex128": "COMPLEX_128",
}


def _rt():
    from ._native import rt
    return rt


class Device:
    """One HAL device of a driver, with its VM instance."""

    id = 0
    process_index = 0
    platform = "cpu"
    device_kind = "cpu"
    is_gpu = False

    def __init__(self, driver: str):
        self._create(driver, allocators=["caching"])
        rt = self._rt
        self._memory_type = int(rt.MemoryType.DEVICE_LOCAL) | int(rt.MemoryType.HOST_VISIBLE)
        self._usage = int(rt.BufferUsage.DEFAULT) | int(rt.BufferUsage.MAPPING)

    def _create(self, driver, allocators):
        rt = _rt()
        try:
            hal_driver = rt.get_cached_hal_driver(driver)
            hal_device = (hal_driver.create_default_device(allocators=allocators) if allocators
                          else hal_driver.create_default_device())
        except (ValueError, RuntimeError) as e:
            available = ", ".join(rt.HalDriver.query())
            raise RuntimeError(f"IREE driver {driver!r} cannot be used here ({e}); drivers built in: "
                               f"{available}") from None
        self.driver = driver
        self._rt = rt
        self.hal_device = hal_device
        self.vm_instance = rt.VmInstance()
        self._allocator = self.hal_device.allocator
        self._element_types = {dt: int(getattr(rt.HalElementType, name)) for dt, name in _ELEMENT_TYPES.items()}
        self._element_types_by_dtype = {}  # the same, found by dtype object: reading dtype.name takes microseconds

    def put(self, array: np.ndarray):
        """Copies a host array into a new device buffer view. A C-contiguous array is copied as it is, IREE making
        the view (a third of the cost of a byte copy wrapped in a view: a microsecond a jit argument); an empty one
        gets one element of storage."""
        array = np.asarray(array, order="C")
        element_type = self._element_types_by_dtype.get(array.dtype)
        if element_type is None:
            element_type = self._element_types_by_dtype[array.dtype] = self._element_types[array.dtype.name]
        if array.size:
            return self._allocator.allocate_buffer_copy(self._memory_type, self._usage, self.hal_device, array,
                                                        element_type)
        buffer = self._allocator.allocate_buffer_copy(self._memory_type, self._usage, self.hal_device,
                                                      np.zeros(max(array.dtype.itemsize, 1), np.uint8))
        return self._rt.HalBufferView(buffer, list(array.shape), element_type)

    def to_host(self, buffer_view, shape, dtype) -> np.ndarray:
        return to_host(buffer_view, shape, dtype)

    def __repr__(self):
        return f"CpuDevice(id=0, driver={self.driver!r})"

    def __str__(self):
        return "cpu:0"


class GpuDevice(Device):
    """A Vulkan, CUDA or HIP device. Its buffers live in device memory: IREE's caching allocator cannot allocate
    Vulkan buffers for dispatches (INVALID_ARGUMENT), so the plain one is used, and results are read back
    through a host-visible staging buffer (mapping the result itself fails on lavapipe: imported host pointers
    must be 4096-aligned)."""

    platform = "gpu"
    is_gpu = True

    def __init__(self, driver: str):
        self._create(driver, allocators=None)
        found = self._rt.get_cached_hal_driver(driver).query_available_devices()
        self.device_kind = found[0]["name"] if found else driver
        rt = self._rt
        self._memory_type = int(rt.MemoryType.DEVICE_LOCAL)
        self._usage = int(rt.BufferUsage.DEFAULT)

    def to_host(self, buffer_view, shape, dtype) -> np.ndarray:
        rt = self._rt
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return np.zeros(shape, dtype)
        source = buffer_view.get_buffer()
        staging = self._allocator.allocate_buffer(
            memory_type=int(rt.MemoryType.HOST_LOCAL) | int(rt.MemoryType.DEVICE_VISIBLE),
            allowed_usage=int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.MAPPING),
            allocation_size=source.byte_length())
        done = self.hal_device.create_semaphore(0)
        self.hal_device.queue_copy(source, staging, [], [(done, 1)])
        done.wait(1)
        view = rt.HalBufferView(staging, list(shape), self._element_types[np.dtype(dtype).name])
        return to_host(view, shape, dtype)

    def __repr__(self):
        return f"GpuDevice(id=0, driver={self.driver!r})"

    def __str__(self):
        return f"{self.driver}:0"


def to_host(buffer_view, shape, dtype) -> np.ndarray:
    """Copies a device buffer view into a new host array of ``shape`` and ``dtype``."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.zeros(shape, dtype)
    mapped = buffer_view.map()
    raw = mapped.asarray((count * dtype.itemsize,), np.dtype(np.uint8))
    return np.array(raw).view(dtype).reshape(shape)


CPU_DRIVERS = ("local-sync", "local-task")


_DEVICES: dict = {}


def get_device(driver: str = "local-sync") -> Device:
    """The one device of ``driver`` in this process."""
    device = _DEVICES.get(driver)
    if device is None:
        device = _DEVICES[driver] = Device(driver) if driver in CPU_DRIVERS else GpuDevice(driver)
    return device


def release_device(driver: str):
    """Forgets this process's device of a GPU ``driver``: IREE destroys it, with its threads, once no array or
    executable holds it. IREE's Vulkan driver on Mesa's lavapipe keeps two threads polling while a device lives
    (half a core measured on an idle process); a CPU device, which the compiled code of every jit holds, stays."""
    if driver not in CPU_DRIVERS:
        _DEVICES.pop(driver, None)
