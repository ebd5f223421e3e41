"""irax: JAX's API, traced into an MLIR dialect and compiled by IREE.

``import irax as jax`` gives ``jit``, ``make_jaxpr``, ``eval_shape``, ``numpy``,
``lax``, ``nn``, ``tree_util``, ``dtypes`` and ``errors`` with JAX's behaviour.
Importing irax loads neither the MLIR bindings nor the compiler: eager calls run
on NumPy, and the compiler is imported the first time something is traced.
"""
from __future__ import annotations

from . import dtypes, errors, tree_util
from . import ad_checkpoint
from .ad_checkpoint import checkpoint, checkpoint_policies, remat
from .ad import closure_convert, grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize, value_and_grad, vjp
from .api import ShapeDtypeStruct, eval_shape, jit, make_jaxpr
from .array import Array
from .batching import vmap
from .config import config
from .custom_derivatives import custom_jvp, custom_vjp
from .core import Tracer
from .device import default_backend, device_get, device_put, devices, local_devices
from . import lax, nn, numpy, random, test_util
from . import scipy

__version__ = "0.1.0"

__all__ = ["Array", "ShapeDtypeStruct", "Tracer", "ad_checkpoint", "checkpoint", "checkpoint_policies",
           "closure_convert", "config", "custom_jvp", "custom_vjp", "default_backend", "device_get", "device_put",
           "devices", "dtypes", "errors", "eval_shape", "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jit",
           "jvp", "lax", "linearize", "local_devices", "make_jaxpr", "nn", "numpy", "random", "remat", "scipy",
           "test_util", "tree_util", "value_and_grad", "vjp", "vmap"]
