"""irax: JAX's API, traced into an MLIR dialect and compiled by IREE.

``import irax as jax`` gives ``jit``, ``make_jaxpr``, ``eval_shape``, ``numpy``,
``lax``, ``nn``, ``tree_util``, ``dtypes`` and ``errors`` with JAX's behaviour.
Importing irax loads nothing but this file: each name's module is imported on first use, the MLIR
bindings and the compiler the first time something is traced.
"""
from __future__ import annotations

import importlib

from .config import config  # eager: importing the submodule later would bind its name to the module

# Every public name and the module that defines it, imported on first use (PEP 562): ``import irax.runtime``
# must not load the tracing frontend, so that a saved artifact runs where only the runtime is installed.
_SUBMODULES = ("ad_checkpoint", "debug", "dtypes", "errors", "experimental", "export", "flatten_util", "image",
               "lax", "nn", "numpy", "ops", "profiler", "random", "scipy", "stages", "test_util", "tree", "tree_util",
               "typing")
_DEFINED_IN = {
    "ad_checkpoint": ("checkpoint", "checkpoint_policies", "remat"),
    "ad": ("closure_convert", "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "linear_transpose",
           "linearize", "value_and_grad", "vjp"),
    "api": ("ShapeDtypeStruct", "clear_caches", "eval_shape", "jit", "make_jaxpr", "named_call", "named_scope",
            "typeof"),
    "config": ("default_matmul_precision", "disable_jit", "enable_x64", "log_compiles", "numpy_rank_promotion"),
    "basearray": ("Array",),
    "batching": ("pmap", "vmap"),
    "callbacks": ("pure_callback",),
    "custom_derivatives": ("custom_gradient", "custom_jvp", "custom_vjp"),
    "core": ("Tracer", "ensure_compile_time_eval"),
    "device": ("Device", "block_until_ready", "copy_to_host_async", "default_backend", "device_count", "device_get",
               "device_put", "devices", "effects_barrier", "local_device_count", "local_devices",
               "print_environment_info", "process_count", "process_index", "process_indices"),
    "dtypes": ("float0",),
}
_MODULE_OF = {name: module for module, names in _DEFINED_IN.items() for name in names}


def __getattr__(name):
    if name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    elif name in _MODULE_OF:
        value = getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES) | set(_MODULE_OF))


__version__ = "0.1.0"

__all__ = sorted({"config", *_SUBMODULES, *_MODULE_OF})
