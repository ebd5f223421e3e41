"""Programs run on every device kind (llvm-cpu, Vulkan on lavapipe, CUDA where a GPU is lent) with the same
answers expected, and how the tests find those devices."""
import ctypes
import glob
import os

import numpy as np

import irax
import irax.numpy as jnp


def lavapipe_icd():
    """Mesa's software Vulkan driver's manifest, if the ``mesa-vulkan-drivers`` package is installed."""
    icds = glob.glob("/usr/share/vulkan/icd.d/lvp_icd.*.json")
    return icds[0] if icds else None


def gpu_platforms():
    """The GPU platforms this machine can run: Vulkan (a real driver or lavapipe) and CUDA (with a GPU)."""
    found = []
    if lavapipe_icd() or os.environ.get("VK_ICD_FILENAMES") or os.environ.get("VK_DRIVER_FILES"):
        found.append("vulkan")
    try:
        ctypes.CDLL("libcuda.so.1")
        found.append("cuda")
    except OSError:
        pass
    return found


def _training_step(params, x, y):
    def loss(params):
        w, b = params
        return jnp.mean((jnp.tanh(x @ w + b) - y) ** 2)
    value, grads = irax.value_and_grad(loss)(params)
    return value, irax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


GPU_PROGRAMS = {
    "elementwise": (lambda x: jnp.exp(jnp.sin(x)) * 2 - jnp.sqrt(jnp.abs(x)), (np.linspace(-2, 2, 33),)),
    "reductions": (lambda x: (jnp.sum(x, 0), jnp.max(x, 1), jnp.argmin(x, 1), jnp.mean(x)),
                   (np.cos(np.arange(60.0)).reshape(6, 10),)),
    "matmul": (lambda a, b: a @ b, (np.sin(np.arange(96.0)).reshape(8, 12), np.cos(np.arange(60.0)).reshape(12, 5))),
    "control_flow": (lambda x: (irax.lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, x),
                                irax.lax.cond(x[0] > 0, lambda v: v + 1, lambda v: v - 1, x),
                                irax.lax.while_loop(lambda c: c[1] < 7, lambda c: (c[0] * 1.5, c[1] + 1), (x, 0))[0],
                                irax.lax.fori_loop(0, 20, lambda i, c: irax.lax.cond(c > 3, lambda v: v - 1.0,
                                                                                     lambda v: v * 1.3, c), x[1])),
                     (np.linspace(0.5, 1.5, 4),)),
    "training_step": (_training_step, (((np.linspace(-1, 1, 15).reshape(5, 3), np.zeros(3))),
                                       np.linspace(0, 1, 20).reshape(4, 5), np.linspace(-1, 1, 12).reshape(4, 3))),
}
