"""The incomplete gamma and beta functions, the scaled Bessel functions and reduce_precision.

The series and continued fractions are JAX's (``jax/_src/lax/special.py``, itself XLA's ``math.cc`` after Cephes),
written once over a namespace ``m`` of elementwise functions and a ``while_loop``: ``NUMPY`` runs them here as the
reference rules (in float64, to float64's tolerances, so the oracle is at least as accurate as the compiled float32
code) and ``passes/lower_special.py`` runs the same code to emit StableHLO, so both take the same branches and
iterations. Loops carry every element to the end and freeze the finished ones with ``where`` as JAX's do.
"""
from __future__ import annotations

import types

import ml_dtypes
import numpy as np

from . import special
from .numpy_rules import RULES

VALUE, DERIVATIVE, SAMPLE_DERIVATIVE = range(3)


def _while_loop(cond, body, values):
    values = tuple(values)
    while np.any(cond(values)):
        values = tuple(body(values))
    return values


NUMPY = types.SimpleNamespace(
    where=np.where, log=np.log, exp=np.exp, log1p=np.log1p, sqrt=np.sqrt, abs=np.abs, floor=np.floor,
    isnan=np.isnan, lgamma=special.lgamma, digamma=special.digamma, while_loop=_while_loop,
    full_like=lambda x, v: np.full(np.shape(x), v, np.float64))


def _any_of(*preds):
    out = preds[0]
    for p in preds[1:]:
        out = out | p
    return out


def _igamma_series(m, ax, x, a, enabled, eps, mode):
    def body(vals):
        enabled, r0, c0, ans0, x, dc_da0, dans_da0 = vals
        r = r0 + 1.0
        dc_da = dc_da0 * (x / r) - (c0 * x) / (r * r)
        dans_da = dans_da0 + dc_da
        c = c0 * (x / r)
        ans = ans0 + c
        going = (c / ans > eps) if mode == VALUE else (m.abs(dc_da / dans_da) > eps)
        keep = lambda new, old: m.where(enabled, new, old)  # noqa: E731
        return (enabled & going, keep(r, r0), keep(c, c0), keep(ans, ans0), x, keep(dc_da, dc_da0),
                keep(dans_da, dans_da0))

    one, zero = m.full_like(a, 1.0), m.full_like(a, 0.0)
    _, _, _, ans, _, _, dans_da = m.while_loop(lambda v: v[0], body, (enabled, a, one, one, x, zero, zero))
    if mode == VALUE:
        return (ans * ax) / a
    dlogax_da = m.log(x) - m.digamma(a + 1.0)
    if mode == DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_continued_fraction(m, ax, x, a, enabled, eps, mode):
    def body(vals):
        (enabled, ans0, t0, y0, z0, c, pkm1_0, qkm1_0, pkm2_0, qkm2_0, dpkm2_0, dqkm2_0, dpkm1_0, dqkm1_0,
         dans_da0) = vals
        c = c + 1.0
        y = y0 + 1.0
        z = z0 + 2.0
        yc = y * c
        pk = pkm1_0 * z - pkm2_0 * yc
        qk = qkm1_0 * z - qkm2_0 * yc
        nonzero = qk != 0.0
        r = pk / qk
        t = m.where(nonzero, m.abs((ans0 - r) / r), m.full_like(r, 1.0))
        ans = m.where(nonzero, r, ans0)
        dpk_da = dpkm1_0 * z - pkm1_0 - dpkm2_0 * yc + pkm2_0 * c
        dqk_da = dqkm1_0 * z - qkm1_0 - dqkm2_0 * yc + qkm2_0 * c
        dans_da = m.where(nonzero, (dpk_da - ans * dqk_da) / qk, dans_da0)
        grad_conditional = m.where(nonzero, m.abs(dans_da - dans_da0), m.full_like(dans_da0, 1.0))
        rescale = m.abs(pk) > 1.0 / eps
        scaled = [m.where(rescale, v * eps, v) for v in (pkm1_0, pk, qkm1_0, qk, dpkm1_0, dqkm1_0, dpk_da, dqk_da)]
        pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1 = scaled
        going = enabled & ((t > eps) if mode == VALUE else (grad_conditional > eps))
        keep = lambda new, old: m.where(enabled, new, old)  # noqa: E731
        return (going, keep(ans, ans0), keep(t, t0), keep(y, y0), keep(z, z0), c, keep(pkm1, pkm1_0),
                keep(qkm1, qkm1_0), keep(pkm2, pkm2_0), keep(qkm2, qkm2_0), keep(dpkm2, dpkm2_0),
                keep(dqkm2, dqkm2_0), keep(dpkm1, dpkm1_0), keep(dqkm1, dqkm1_0), keep(dans_da, dans_da0))

    y = 1.0 - a
    z = x + y + 1.0
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    zero = m.full_like(x, 0.0)
    dqkm1 = -x
    dans_da = (zero - ans * dqkm1) / qkm1
    init = (enabled, ans, m.full_like(x, 1.0), y, z, zero, pkm1, qkm1, m.full_like(x, 1.0), x, zero, zero, zero,
            dqkm1, dans_da)
    vals = m.while_loop(lambda v: v[0] & (v[5] < 2000.0), body, init)
    ans, dans_da = vals[1], vals[14]
    if mode == VALUE:
        return ans * ax
    dlogax_da = m.log(x) - m.digamma(a)
    if mode == DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da)
    return -(dans_da + ans * dlogax_da) * x


def _prologue(m, a, x, finfo):
    ax = a * m.log(x) - x - m.lgamma(a)
    underflow = ax < -np.log(finfo.max)
    return m.exp(ax), underflow


def igamma(m, a, x, finfo):
    is_nan = m.isnan(a) | m.isnan(x)
    x_is_infinity = x == np.inf
    x_is_zero = x == 0.0
    domain_error = _any_of(x < 0.0, a < 0.0, (a == 0.0) & x_is_zero, is_nan)
    use_igammac = (x >= 1.0) & (x > a)
    ax, underflow = _prologue(m, a, x, finfo)
    enabled = ~_any_of(x_is_zero, domain_error, underflow, x_is_infinity)
    output = m.where(use_igammac,
                     1.0 - _igammac_continued_fraction(m, ax, x, a, enabled & use_igammac, finfo.eps, VALUE),
                     _igamma_series(m, ax, x, a, enabled & ~use_igammac, finfo.eps, VALUE))
    output = m.where(x_is_zero, m.full_like(a, 0.0), output)
    output = m.where(x_is_infinity, m.full_like(a, 1.0), output)
    return m.where(domain_error, m.full_like(a, np.nan), output)


def igammac(m, a, x, finfo):
    is_nan = m.isnan(a) | m.isnan(x)
    a_is_zero = a == 0.0
    x_is_infinity = x == np.inf
    domain_error = _any_of(x < 0.0, a < 0.0, a_is_zero & (x == 0.0), is_nan)
    use_igamma = (x < 1.0) | (x < a)
    ax, underflow = _prologue(m, a, x, finfo)
    enabled = ~_any_of(domain_error, underflow, x_is_infinity, a_is_zero)
    series = _igamma_series(m, ax, x, a, enabled & use_igamma, finfo.eps, VALUE)
    fraction = _igammac_continued_fraction(m, ax, x, a, enabled & ~use_igamma, finfo.eps, VALUE)
    output = m.where(use_igamma, 1.0 - series, fraction)
    output = m.where(x_is_infinity | a_is_zero, m.full_like(output, 0.0), output)
    return m.where(domain_error, m.full_like(a, np.nan), output)


def igamma_derivative(m, a, x, finfo, mode):
    """igamma_grad_a (mode DERIVATIVE) and random_gamma_grad (SAMPLE_DERIVATIVE)."""
    is_nan = m.isnan(a) | m.isnan(x)
    x_is_zero = x == 0.0
    domain_error = (x < 0.0) | (a <= 0.0)
    use_igammac = (x > 1.0) & (x > a)
    ax, underflow = _prologue(m, a, x, finfo)
    enabled = ~_any_of(x_is_zero, domain_error, underflow, is_nan)
    output = m.where(use_igammac,
                     -_igammac_continued_fraction(m, ax, x, a, enabled & use_igammac, finfo.eps, mode),
                     _igamma_series(m, ax, x, a, enabled & ~use_igammac, finfo.eps, mode))
    output = m.where(x_is_zero, m.full_like(output, 0.0), output)
    return m.where(domain_error | is_nan, m.full_like(a, np.nan), output)


def _lentz(m, num_iterations, small, threshold, numerator, denominator, x):
    """The Lentz-Thompson-Barnett evaluation of a continued fraction, every element iterated until all have
    converged (as JAX's: an element's result depends on how long the others take)."""
    def body(vals):
        it, _, c0, d0, h0 = vals
        pn, pd = numerator(it), denominator(it)
        c = pd + pn / c0
        c = m.where(m.abs(c) < small, m.full_like(c, small), c)
        d = pd + pn * d0
        d = 1.0 / m.where(m.abs(d) < small, m.full_like(d, small), d)
        delta = c * d
        return it + 1.0, m.abs(delta - 1.0) >= threshold, c, d, h0 * delta

    pd0 = denominator(m.full_like(x, 0.0))
    h = m.where(m.abs(pd0) < small, m.full_like(pd0, small), pd0)
    init = (m.full_like(x, 1.0), m.full_like(x, 1.0) > 0.0, h, m.full_like(h, 0.0), h)
    return m.while_loop(lambda v: (v[0] < float(num_iterations)) & v[1], body, init)[4]


def betainc(m, a, b, x, finfo, single):
    def numerator(it):
        even = it - 2.0 * m.floor(it * 0.5) == 0.0
        k = m.floor((it - 1.0) * 0.5)
        zero_numerator = -(a + b) * x / (a + 1.0)
        even_numerator = m.where(k == 0.0, zero_numerator,
                                 -(a + k) * (a + b + k) * x / ((a + 2.0 * k) * (a + 2.0 * k + 1.0)))
        odd_numerator = k * (b - k) * x / ((a + 2.0 * k - 1.0) * (a + 2.0 * k))
        return m.where(it == 1.0, m.full_like(x, 1.0), m.where(even, even_numerator, odd_numerator))

    def denominator(it):
        return m.where(it == 0.0, m.full_like(x, 0.0), m.full_like(x, 1.0))

    a_is_zero = (a == 0.0) | (b == np.inf)
    b_is_zero = (b == 0.0) | (a == np.inf)
    x_is_zero, x_is_one = x == 0.0, x == 1.0
    result_is_zero = (b_is_zero & ~x_is_one) | (a_is_zero & x_is_zero)
    result_is_one = (a_is_zero & ~x_is_zero) | (b_is_zero & x_is_one)
    result_is_nan = _any_of(a < 0.0, b < 0.0, x < 0.0, x > 1.0, a_is_zero & b_is_zero, m.isnan(a), m.isnan(b),
                            m.isnan(x))
    converges_rapidly = x < (a + 1.0) / (a + b + 2.0)
    a, b, x = (m.where(converges_rapidly, a, b), m.where(converges_rapidly, b, a),
               m.where(converges_rapidly, x, 1.0 - x))
    half_eps = float(finfo.eps) / 2
    fraction = _lentz(m, 200 if single else 600, half_eps, half_eps, numerator, denominator, x)
    lbeta_small_a = m.lgamma(b) - m.lgamma(a + b)
    lbeta = m.lgamma(a) + lbeta_small_a
    factor = m.where(a < float(finfo.tiny) * 2, m.exp(m.log1p(-x) * b - lbeta_small_a),
                     m.exp(m.log(x) * a + m.log1p(-x) * b - lbeta) / a)
    result = fraction * factor
    result = m.where(converges_rapidly, result, 1.0 - result)
    result = m.where(result_is_zero, m.full_like(a, 0.0), result)
    result = m.where(result_is_one, m.full_like(a, 1.0), result)
    return m.where(result_is_nan, m.full_like(a, np.nan), result)


# Cephes' Chebyshev coefficients of i0e and i1e on [0, 8] (A) and (8, inf) (B); float32 uses the last terms.
I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
         1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
         -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
         9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
         -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
         1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
         -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
         1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
         -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
         1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
         3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
         1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
         -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
         7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
         -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
         3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
         2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
         8.04490411014108831608E-1)
I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
         -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
         3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
         -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
         9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
         -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
         4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
         -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
         2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
         -1.76416518357834055153E-1, 2.52587186443633654823E-1)
I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
         -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
         -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
         4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
         -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
         3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
         -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
         -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
         7.78576235018280120474E-1)


def chebyshev(m, x, coefficients):
    b0, b1, b2 = m.full_like(x, 0.0), m.full_like(x, 0.0), m.full_like(x, 0.0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def bessel_i0e(m, x, single):
    """JAX's: 18 and 7 terms in float32, 30 and 25 in float64."""
    x = m.abs(x)
    small = chebyshev(m, 0.5 * x - 2.0, I0E_A[-18:] if single else I0E_A)
    large = chebyshev(m, 32.0 / x - 2.0, I0E_B[-7:] if single else I0E_B) / m.sqrt(x)
    return m.where(x <= 8.0, small, large)


def bessel_i1e(x):
    """Cephes' i1e, which XLA's chlo.bessel_i1e follows (odd in x)."""
    x = np.asarray(x, np.float64)
    z = np.abs(x)
    with np.errstate(all="ignore"):
        small = chebyshev(NUMPY, 0.5 * z - 2.0, I1E_A) * z
        large = chebyshev(NUMPY, 32.0 / z - 2.0, I1E_B) / np.sqrt(z)
    return np.where(x < 0, -1.0, 1.0) * np.where(z <= 8.0, small, large)


def reduce_precision(x, *, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the operand's own bits: mantissa rounded to nearest even, then exponents out of
    range flushed to signed zero or infinity; NaN stays NaN."""
    x = np.asarray(x)
    info = ml_dtypes.finfo(x.dtype)
    nbits, src_mant, src_exp = info.bits, info.nmant, info.bits - 1 - info.nmant
    uint = np.dtype(f"u{nbits // 8}")
    bits = x.view(uint).astype(np.uint64)
    if mantissa_bits < src_mant:
        shift = src_mant - mantissa_bits
        last_bit = np.uint64(1 << shift)
        bias = (bits & last_bit) >> np.uint64(shift)
        bias = bias + np.uint64((1 << (shift - 1)) - 1)
        bits = (bits + bias) & ~(last_bit - np.uint64(1)) & np.uint64((1 << nbits) - 1)
    if exponent_bits < src_exp:
        exp_mask = np.uint64(((1 << src_exp) - 1) << src_mant)
        bias, reduced_bias = (1 << (src_exp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        signed_zero = bits & np.uint64(1 << (nbits - 1))
        bits = np.where(exponent > np.uint64((bias + reduced_bias) << src_mant), signed_zero | exp_mask,
                        np.where(exponent <= np.uint64((bias - reduced_bias) << src_mant), signed_zero, bits))
    out = bits.astype(uint).view(x.dtype)
    return np.where(np.isnan(x), x, out)


_F64 = np.finfo(np.float64)
_wide = lambda *xs: np.broadcast_arrays(*(np.asarray(v, np.float64) for v in xs))  # noqa: E731

RULES["igamma"] = lambda a, x: igamma(NUMPY, *_wide(a, x), _F64)
RULES["igammac"] = lambda a, x: igammac(NUMPY, *_wide(a, x), _F64)
RULES["igamma_grad_a"] = lambda a, x: igamma_derivative(NUMPY, *_wide(a, x), _F64, DERIVATIVE)
RULES["regularized_incomplete_beta"] = lambda a, b, x: betainc(NUMPY, *_wide(a, b, x), _F64, single=False)
RULES["zeta"] = lambda x, q: special.zeta(x, q)
RULES["bessel_i0e"] = lambda x: bessel_i0e(NUMPY, *_wide(x), single=False)
RULES["bessel_i1e"] = bessel_i1e
RULES["reduce_precision"] = reduce_precision
