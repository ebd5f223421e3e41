"""The JVP rule of every primitive, each a port of JAX's (``jax/_src/lax/lax.py``).

A rule binds the same primitives in the same order as JAX's, which is what makes
``make_jaxpr(grad(f))`` print JAX's text.
"""
from __future__ import annotations

import numpy as np

from . import ad_util as U
from .builder import aval
from irax.ir.jaxpr_view import num_consts

from .funcs import lookup
from .jvp import JVP_RULES, deflinear, defjvp, defjvp2, defjvp_zero, jvp_function


def _is_complex(x) -> bool:
    return np.issubdtype(aval(x).dtype, np.complexfloating)


# --- non-differentiable: the result's tangent is zero ---------------------------------------------

defjvp_zero("sign", "floor", "ceil", "round", "is_finite", "not", "and", "or", "xor", "population_count", "clz",
            "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge",
            "argmax", "argmin", "bitcast_convert_type", "iota", "stop_gradient", "nextafter",
            "reduce_and", "reduce_or", "reduce_xor")

# --- linear -----------------------------------------------------------------------------------------

for _name in ("neg", "reduce_sum", "reshape", "squeeze", "transpose", "rev", "pad", "concatenate", "stack",
              "real", "imag", "complex", "conj", "cumsum", "add_any", "slice"):
    deflinear(_name)


def _add_jvp(b, primals, tangents, **params):
    out, = b.primal()
    xdot, ydot = tangents
    shape = aval(out).shape
    if xdot is None:
        return [out], [U.maybe_broadcast(b, shape, ydot)]
    if ydot is None:
        return [out], [U.maybe_broadcast(b, shape, xdot)]
    return [out], [b.add(xdot, ydot)]


def _sub_jvp(b, primals, tangents, **params):
    out, = b.primal()
    xdot, ydot = tangents
    shape = aval(out).shape
    if xdot is None:
        return [out], [U.maybe_broadcast(b, shape, b.neg(ydot))]
    if ydot is None:
        return [out], [U.maybe_broadcast(b, shape, xdot)]
    return [out], [b.sub(xdot, ydot)]


JVP_RULES["add"] = _add_jvp
JVP_RULES["sub"] = _sub_jvp
defjvp("mul", lambda b, xdot, x, y: b.mul(xdot, y), lambda b, ydot, x, y: b.mul(x, ydot))
defjvp("div", lambda b, g, x, y: b.div(g, y),
       lambda b, g, x, y: b.mul(b.mul(b.neg(g), x), b.integer_pow(y, y=-2)))
defjvp2("max", lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, x, ans, y)),
        lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, y, ans, x)))
defjvp2("min", lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, x, ans, y)),
        lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, y, ans, x)))

# --- elementwise transcendental --------------------------------------------------------------------

defjvp2("exp", lambda b, g, ans, x: b.mul(g, ans))
defjvp("log", lambda b, g, x: b.div(g, x))
defjvp("sin", lambda b, g, x: b.mul(g, b.cos(x)))
defjvp("cos", lambda b, g, x: b.neg(b.mul(g, b.sin(x))))
defjvp2("tanh", lambda b, g, ans, x: b.mul(b.add(g, b.mul(g, ans)), b.sub(1, ans)))
defjvp2("logistic", lambda b, g, ans, x: b.mul(g, b.mul(ans, b.sub(1, ans))))
defjvp2("sqrt", lambda b, g, ans, x: b.mul(g, b.div(0.5, ans)))
defjvp2("rsqrt", lambda b, g, ans, x: b.mul(g, b.mul(-0.5, b.div(ans, x))))
defjvp2("square", lambda b, g, ans, x: b.mul(g, b.mul(2, x)))


def _integer_pow_jvp(b, g, x, *, y):
    if y == 0:
        return b.zeros_like(g)
    if y == 1:
        return g
    if y == 2:
        return b.mul(g, b.mul(y, x))
    return b.mul(g, b.mul(y, b.integer_pow(x, y=y - 1)))


defjvp("integer_pow", _integer_pow_jvp)

# --- structural --------------------------------------------------------------------------------------


def _broadcast_in_dim_jvp(b, primals, tangents, **params):
    out, = b.primal()
    operand_dot = tangents[0]
    if operand_dot is None:
        return [out], [None]
    return [out], [b.broadcast_in_dim(operand_dot, **params)]


JVP_RULES["broadcast_in_dim"] = _broadcast_in_dim_jvp


def _convert_element_type_jvp(b, g, ans, operand, *, new_dtype, weak_type):
    if not np.issubdtype(new_dtype, np.inexact):
        return None
    return b.convert_element_type(g, new_dtype=new_dtype, weak_type=weak_type)


defjvp2("convert_element_type", _convert_element_type_jvp)


def _select_n_jvp(b, primals, tangents, **params):
    which, *cases = primals
    case_tangents = tangents[1:]
    out, = b.primal()
    if all(t is None for t in case_tangents):
        return [out], [None]
    z = b.zeros_like(next(t for t in case_tangents if t is not None))
    return [out], [b.select_n(which, *[z if t is None else t for t in case_tangents])]


JVP_RULES["select_n"] = _select_n_jvp
defjvp("dot_general", lambda b, g, x, y, **p: b.dot_general(g, y, **p),
       lambda b, g, x, y, **p: b.dot_general(x, g, **p))


def _pjit_jvp(b, primals, tangents, *, name, callee):
    """The callee's JVP as a new function, called with the nonzero tangents (as JAX's ``_pjit_jvp``)."""
    source = lookup(b.module, callee)
    nonzero = [t is not None for t in tangents]
    new, has_tangent = jvp_function(b.module, source, nonzero, f"{callee}_jvp", instantiate_outputs=False)
    n_params = len(primals) - num_consts(source)
    operands = primals[:n_params] + [t for t in tangents if t is not None] + primals[n_params:]
    outs = b.call(new, operands, name=name)
    n = len(b.op.results)
    return outs[:n], _spread(outs[n:], has_tangent)


def _spread(values, mask):
    it = iter(values)
    return [next(it) if m else None for m in mask]


JVP_RULES["pjit"] = _pjit_jvp
