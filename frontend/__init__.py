"""irax: JAX's API, traced into an MLIR dialect and compiled by IREE.

``import irax as jax`` gives ``jit``, ``make_jaxpr``, ``eval_shape``, ``numpy``,
``lax``, ``nn``, ``tree_util``, ``dtypes`` and ``errors`` with JAX's behaviour.
Importing irax loads neither the MLIR bindings nor the compiler: eager calls run
on NumPy, and the compiler is imported the first time something is traced.
"""
from __future__ import annotations

from . import dtypes, errors, tree_util
from .ad import grad, jvp, linearize, value_and_grad, vjp
from .api import ShapeDtypeStruct, eval_shape, jit, make_jaxpr
from .array import Array
from .config import config
from .core import Tracer
from .device import default_backend, device_get, device_put, devices, local_devices
from . import lax, nn, numpy

__version__ = "0.1.0"

__all__ = ["Array", "ShapeDtypeStruct", "Tracer", "config", "default_backend", "device_get", "device_put",
           "devices", "dtypes", "errors", "eval_shape", "grad", "jit", "jvp", "lax", "linearize", "local_devices",
           "make_jaxpr", "nn", "numpy", "tree_util", "value_and_grad", "vjp"]
