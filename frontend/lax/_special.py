"""``lax``'s incomplete gamma and beta functions, zeta, the scaled Bessel functions and ``reduce_precision``.

Each binds its primitive, as JAX's do, except ``random_gamma_grad``: JAX 0.10 has no primitive for it and traces
its series and continued fraction into ``while`` loops at the call site, which is what this port does too, so that
``make_jaxpr`` prints the same equations.
"""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes as _dtypes
from irax.core import bind1

from ._scalars import as_operand, const_like

__all__ = ["bessel_i0e", "bessel_i1e", "betainc", "igamma", "igamma_grad_a", "igammac", "random_gamma_grad",
           "reduce_precision", "zeta"]


def _nary(name, *args):
    from . import _match_scalars
    return bind1(name, *_match_scalars(*args))


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _nary("igamma", a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _nary("igammac", a, x)


def igamma_grad_a(a, x):
    """The derivative of ``igamma(a, x)`` with respect to ``a``."""
    return _nary("igamma_grad_a", a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return _nary("regularized_incomplete_beta", a, b, x)


def zeta(x, q):
    """The Hurwitz zeta function."""
    return _nary("zeta", x, q)


def bessel_i0e(x):
    """exp(-|x|) I0(x)."""
    return bind1("bessel_i0e", as_operand(x))


def bessel_i1e(x):
    """exp(-|x|) I1(x)."""
    return bind1("bessel_i1e", as_operand(x))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Rounds ``operand`` to the float format with ``exponent_bits`` and ``mantissa_bits`` (same dtype out)."""
    exponent_bits = operator.index(exponent_bits)
    mantissa_bits = operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    return bind1("reduce_precision", as_operand(operand), exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)


def random_gamma_grad(a, x):
    """The derivative of a Gamma(a, 1) sample ``x`` with respect to ``a`` (JAX's ``_up_and_broadcast`` of
    ``random_gamma_grad_impl``)."""
    from irax import lax
    a, x = lax._match_scalars(a, x)
    shape = np.broadcast_shapes(a.shape, x.shape)
    a, x = (lax.broadcast_in_dim(v, shape, list(range(v.ndim))) for v in (a, x))
    dtype = a.dtype
    upcast = dtype in (np.dtype(np.float16), _dtypes.bfloat16)
    if upcast:
        a, x = lax.convert_element_type(a, np.float32), lax.convert_element_type(x, np.float32)
    out = _random_gamma_grad_impl(a, x, np.dtype(np.float32) if upcast else dtype)
    return lax.convert_element_type(out, dtype) if upcast else out


def _random_gamma_grad_impl(a, x, dtype):
    from irax import lax
    is_nan = lax.bitwise_or(lax.ne(a, a), lax.ne(x, x))
    x_is_zero = lax.eq(x, lax.full_like(x, 0))
    domain_error = lax.bitwise_or(lax.lt(x, lax.full_like(x, 0)), lax.le(a, lax.full_like(a, 0)))
    use_igammac = lax.bitwise_and(lax.gt(x, lax.full_like(x, 1)), lax.gt(x, a))
    ax = a * lax.log(x) - x - lax.lgamma(a)
    underflow = lax.lt(ax, -lax.log(const_like(a, np.finfo(dtype).max)))
    ax = lax.exp(ax)
    enabled = lax.bitwise_not(lax.bitwise_or(lax.bitwise_or(lax.bitwise_or(x_is_zero, domain_error), underflow),
                                             is_nan))
    eps = np.finfo(dtype).eps
    output = lax.select(use_igammac,
                        -_igammac_continued_fraction(ax, x, a, lax.bitwise_and(enabled, use_igammac), eps),
                        _igamma_series(ax, x, a, lax.bitwise_and(enabled, lax.bitwise_not(use_igammac)), eps))
    output = lax.select(x_is_zero, lax.full_like(output, 0), output)
    return lax.select(lax.bitwise_or(domain_error, is_nan), lax.full_like(a, float("nan")), output)



def _any(predicates):
    from irax import lax
    return lax.reduce_or(predicates, tuple(range(predicates.ndim)))


def _igamma_series(ax, x, a, enabled, eps):
    from irax import lax

    def body_fn(vals):
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = r + const_like(r, 1.)
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        conditional = lax.bitwise_and(enabled, abs(dc_da / dans_da) > eps)
        return (conditional, lax.select(enabled, r, vals[1]), lax.select(enabled, c, vals[2]),
                lax.select(enabled, ans, vals[3]), lax.select(enabled, x, vals[4]),
                lax.select(enabled, dc_da, vals[5]), lax.select(enabled, dans_da, vals[6]))

    init = (enabled, a, lax.full_like(a, 1), lax.full_like(a, 1), x, lax.full_like(a, 0), lax.full_like(a, 0))
    vals = lax.while_loop(lambda vals: _any(vals[0]), body_fn, init)
    ans, dans_da = vals[3], vals[6]
    dlogax_da = lax.log(x) - lax.digamma(a + const_like(a, 1))
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_continued_fraction(ax, x, a, enabled, eps):
    from irax import lax

    def cond_fn(vals):
        c = vals[5]
        return lax.bitwise_and(c < const_like(c, 2000), _any(vals[0]))

    def body_fn(vals):
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = c + const_like(c, 1)
        y = y + const_like(y, 1)
        z = z + const_like(z, 2)
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        qk_is_nonzero = lax.ne(qk, const_like(qk, 0))
        r = pk / qk
        t = lax.select(qk_is_nonzero, abs(lax.div(lax.sub(ans, r), r)), lax.full_like(r, 1))
        ans = lax.select(qk_is_nonzero, r, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = lax.select(qk_is_nonzero, lax.div(dpk_da - ans * dqk_da, qk), dans_da)
        grad_conditional = lax.select(qk_is_nonzero, abs(dans_da_new - dans_da), lax.full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = lax.gt(abs(pk), lax.reciprocal(const_like(pk, eps)))
        pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
            lax.select(rescale, lax.mul(v, const_like(v, eps)), v)
            for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))
        conditional = lax.bitwise_and(enabled, grad_conditional > const_like(grad_conditional, eps))
        new = (ans, t, y, z)
        rest = (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        return ((conditional,) + tuple(lax.select(enabled, v, vals[i + 1]) for i, v in enumerate(new)) + (c,)
                + tuple(lax.select(enabled, v, vals[i + 6]) for i, v in enumerate(rest)))

    y = const_like(a, 1) - a
    z = x + y + const_like(x, 1)
    c = const_like(x, 0)
    pkm2 = lax.full_like(x, 1)
    qkm2 = x
    pkm1 = x + const_like(x, 1)
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = lax.full_like(x, 1)
    dpkm2_da = lax.full_like(x, 0)
    dqkm2_da = lax.full_like(x, 0)
    dpkm1_da = lax.full_like(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    init = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
    vals = lax.while_loop(cond_fn, body_fn, init)
    ans, dans_da = vals[1], vals[14]
    dlogax_da = lax.log(x) - lax.digamma(a)
    return lax.neg(lax.add(dans_da, lax.mul(ans, dlogax_da)) * x)
