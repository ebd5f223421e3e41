"""``Device``, ``devices``, ``device_put``, ``device_get``, ``block_until_ready`` and ``effects_barrier``.

The CPU is the default device; GPUs (CUDA, ROCm/HIP, Vulkan) are used where the program puts arrays on them with
``device_put``, as with JAX's committed arrays.
"""
from __future__ import annotations

import numpy as np

from irax.runtime.device import Device, get_device

from . import core, tree_util
from .array import Array
from .lax._scalars import as_operand

__all__ = ["Device", "block_until_ready", "copy_to_host_async", "default_backend", "device_count", "device_get",
           "device_put", "devices", "effects_barrier", "local_device_count", "local_devices", "print_environment_info",
           "process_count", "process_index", "process_indices"]

# JAX's platform names, and the IREE drivers that serve them (the first that starts).
_PLATFORMS = {"cpu": ("local-sync",), "gpu": ("cuda", "hip", "vulkan"), "cuda": ("cuda",), "rocm": ("hip",),
              "vulkan": ("vulkan",), "metal": ("metal",)}


def devices(backend=None):
    """The devices of ``backend`` (``cpu``, ``gpu``, ``cuda``, ``rocm``, ``vulkan`` or ``metal``): one each."""
    if backend is None:
        backend = "cpu"
    drivers = _PLATFORMS.get(backend)
    if drivers is None:
        raise RuntimeError(f"Unknown backend {backend}. Available backends are {sorted(_PLATFORMS)}")
    failures = []
    for driver in drivers:
        try:
            return [get_device(driver)]
        except RuntimeError as e:
            failures.append(str(e))
    raise RuntimeError(f"Unknown backend: {backend!r} requested, but no platforms that are instances of {backend} "
                       f"are present. Platforms present are: cpu\n" + "\n".join(failures))


local_devices = devices


def default_backend() -> str:
    return "cpu"


def device_count(backend=None) -> int:
    return len(devices(backend))


local_device_count = device_count


def process_count(backend=None) -> int:
    return 1


def process_index(backend=None) -> int:
    return 0


def process_indices(backend=None) -> list:
    return [0]


def copy_to_host_async(x):
    """Starts copying every array leaf of ``x`` to the host (``jax.copy_to_host_async``); returns ``x``."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()
    return x


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Places each array leaf on ``device``, committing it there (as ``jax.device_put``); with no device, arrays
    stay where they are and other values go to the CPU, uncommitted. Under a trace, one ``device_put`` equation
    of all the leaves, as JAX records."""
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if not isinstance(core.current_trace(), core.EvalTrace):
        leaves, tree = tree_util.tree_flatten(x)
        if not leaves:
            return x
        semantics = ("DONATE_INPUT" if donate else "REUSE_INPUT") if may_alias is None else (
            "REUSE_INPUT" if may_alias else "ALWAYS_COPY")
        n = len(leaves)
        outs = core.bind("device_put", *[as_operand(leaf) for leaf in leaves], devices=(_jax_text(device),) * n,
                         srcs=(_jax_text(src),) * n, copy_semantics=(f"ArrayCopySemantics.{semantics}",) * n)
        return tree_util.tree_unflatten(tree, outs)
    if device is not None and not device.is_gpu:
        device = get_device()

    def put(leaf):
        arr = as_operand(leaf)
        if not isinstance(arr, Array) or device is None or arr._dev is device:
            return arr
        if not device.is_gpu:
            return Array._from_host(arr._value, arr.aval, device)
        return Array._from_device(device.put(arr._value), arr.aval, device)
    return tree_util.tree_map(put, x)


def _jax_text(device) -> str:
    """How JAX prints ``device`` in a jaxpr: ``CpuDevice(id=0)``, ``None``."""
    return "None" if device is None else f"{'Cpu' if not device.is_gpu else type(device).__name__[:-6]}Device(id=0)"


def device_get(x):
    """Each array leaf as a NumPy array on the host."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def block_until_ready(x):
    """Waits for every array leaf of ``x`` and returns ``x`` (as ``jax.block_until_ready``)."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


def effects_barrier():
    """Waits for the host callbacks of earlier calls (JAX's): irax runs them during the call, so none is pending."""


def print_environment_info(return_string: bool = False):
    """The versions and devices a bug report needs, as ``jax.print_environment_info`` (irax and IREE in place of
    jax and jaxlib)."""
    import platform
    import sys
    from importlib import metadata

    import irax

    def version(package):
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"
    cpus = devices()
    info = (f"irax:    {irax.__version__}\n"
            f"iree-base-compiler: {version('iree-base-compiler')}\n"
            f"iree-base-runtime:  {version('iree-base-runtime')}\n"
            f"numpy:  {np.__version__}\n"
            f"python: {sys.version.replace(chr(10), ' ')}\n"
            f"device info: {cpus[0].device_kind}-{len(cpus)}, {len(cpus)} local devices\n"
            f"process_count: {process_count()}\n"
            f"platform: {platform.uname()}\n")
    if return_string:
        return info
    print(info)
