"""``devices``, ``device_put``, ``device_get`` and ``block_until_ready``, for the host CPU device."""
from __future__ import annotations

import numpy as np

from irax.runtime.device import get_device

from . import tree_util
from .array import Array
from .lax._scalars import as_operand


def devices(backend=None):
    return [get_device()]


local_devices = devices


def default_backend() -> str:
    return "cpu"


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Places each array leaf on the device (as ``jax.device_put``)."""
    target = device or get_device()

    def put(leaf):
        arr = as_operand(leaf)
        if isinstance(arr, Array):
            arr._device_buffer(target)
        return arr
    return tree_util.tree_map(put, x)


def device_get(x):
    """Each array leaf as a NumPy array on the host."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def block_until_ready(x):
    """Waits for every array leaf of ``x`` and returns ``x`` (as ``jax.block_until_ready``)."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x
