"""The batching rule of every primitive, each a port of JAX's (``jax/_src/interpreters/batching.py``,
``lax/lax.py``, ``slicing.py``, ``pjit.py``).

A rule binds the same primitives in the same order as JAX's, with the same
Python or NumPy integers in their params, which is what makes
``make_jaxpr(vmap(f))`` print JAX's text.
"""
from __future__ import annotations

from .batch import BATCH_RULES, ZERO_IF_MAPPED, batch_call, defbroadcasting, defreducer, defvectorized
from .builder import aval
from .funcs import lookup

# --- elementwise ------------------------------------------------------------------------------------

defvectorized("exp", "exp2", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan", "sqrt", "rsqrt",
              "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "erf", "erfc",
              "erf_inv", "lgamma", "digamma", "cbrt", "neg", "sign", "square", "stop_gradient", "abs", "round",
              "is_finite", "not", "population_count", "clz", "integer_pow", "real", "imag", "conj",
              "convert_element_type", "bitcast_convert_type", "name")

defbroadcasting("add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "nextafter", "eq", "ne", "lt",
                "le", "gt", "ge", "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
                "complex")


def _add_any_batch(b, args, dims):
    """As JAX's ``add_batched``: the unbatched operand is broadcast to the batched one's shape."""
    (x, y), (dx, dy) = args, dims
    if dx == dy:
        return b.add_any(x, y), dx
    if dx is None:
        return b.add_any(b.broadcast(x, aval(y).shape[dy], dy), y), dy
    if dy is None:
        return b.add_any(x, b.broadcast(y, aval(x).shape[dx], dx)), dx
    return b.add_any(b.moveaxis(x, dx, dy), y), dy


BATCH_RULES["add_any"] = _add_any_batch

# --- reductions ---------------------------------------------------------------------------------------

defreducer("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
           "argmax", "argmin")

# --- calls --------------------------------------------------------------------------------------------


def _call_batch(b, args, dims, *, callee, **params):
    """The callee batched as a new function for these operand dims, called in the op's place (JAX's
    ``_pjit_batcher``: the results keep the dims the callee's rules gave them)."""
    new, out_dims = batch_call(b, lookup(b.module, callee), args, dims)
    return b.call(new, args, b.primitive, **params), out_dims


BATCH_RULES["pjit"] = _call_batch


def _checkpoint_batch(b, args, dims, *, callee, **params):
    """As JAX's ``remat_vmap``: batched results of the callee at axis 0."""
    new, out_dims = batch_call(b, lookup(b.module, callee), args, dims, [ZERO_IF_MAPPED])
    return b.call(new, args, "checkpoint", **params), out_dims


BATCH_RULES["checkpoint"] = _checkpoint_batch
