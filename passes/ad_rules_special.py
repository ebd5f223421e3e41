"""JVP rules of the incomplete gamma and beta functions, the scaled Bessel functions, zeta and reduce_precision,
ports of JAX's (``jax/_src/lax/special.py``, ``lax.py``), bound in JAX's order so that ``make_jaxpr(grad(f))``
prints JAX's text; reduce_precision is linear (its transpose is itself)."""
from __future__ import annotations

import numpy as np

from . import ad_util as U
from .builder import aval
from .jvp import JVP_RULES, deflinear, defjvp, defjvp2
from .transpose import TRANSPOSE_RULES


def _raise(exc, message):
    def rule(b, *args, **params):
        raise exc(message)
    return rule


def _igamma_gradx(b, g, a, x):
    exponent = b.add(b.neg(x), b.mul(b.sub(a, b.full_like(a, 1)), b.log(x)))
    return b.mul(g, b.exp(b.sub(exponent, b.lgamma(a))))


def _igamma_grada(b, g, a, x):
    return b.mul(g, b.igamma_grad_a(a, x))


defjvp("igamma", _igamma_grada, _igamma_gradx)
defjvp("igammac", lambda b, g, a, x: b.neg(_igamma_grada(b, g, a, x)),
       lambda b, g, a, x: b.neg(_igamma_gradx(b, g, a, x)))
for _name in ("igamma_grad_a", "zeta"):
    JVP_RULES[_name] = _raise(NotImplementedError, f"Differentiation rule for '{_name}' not implemented")


def _betainc_gradx(b, g, a, b_, x):
    lbeta = b.sub(b.add(b.lgamma(a), b.lgamma(b_)), b.lgamma(b.add(a, b_)))
    log_terms = b.add(b.mul(b.sub(b_, 1), b.log1p(b.neg(x))), b.mul(b.sub(a, 1), b.log(x)))
    return b.mul(b.exp(b.sub(log_terms, lbeta)), g)


_betainc_ab = _raise(ValueError, "Betainc gradient with respect to a and b not supported.")
defjvp("regularized_incomplete_beta", _betainc_ab, _betainc_ab, _betainc_gradx)

defjvp2("bessel_i0e", lambda b, g, y, x: b.mul(g, b.sub(b.bessel_i1e(x), b.mul(b.sign(x), y))))


def _bessel_i1e_jvp(b, g, y, x):
    eps = np.finfo(aval(x).dtype).eps
    x_is_not_tiny = b.gt(b.abs(x), eps)
    safe_x = U.select(b, x_is_not_tiny, x, b.full_like(x, eps))
    dy_dx = b.sub(b.bessel_i0e(safe_x), b.mul(y, b.add(b.sign(safe_x), b.integer_pow(safe_x, y=-1))))
    dy_dx = U.select(b, x_is_not_tiny, dy_dx, b.full_like(x, 0.5))
    return b.mul(g, dy_dx)


defjvp2("bessel_i1e", _bessel_i1e_jvp)
deflinear("reduce_precision")
TRANSPOSE_RULES["reduce_precision"] = lambda b, ct, x, **params: [b.reduce_precision(ct, **params)]
