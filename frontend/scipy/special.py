"""``irax.scipy.special``, ported from ``jax/_src/scipy/special.py`` (and ``third_party/scipy/betaln.py``) so that
each function binds JAX's primitives in JAX's order, custom JVPs included, and ``make_jaxpr`` prints JAX's text."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.api import jit
from irax.ad import jvp
from irax.custom_derivatives import custom_jvp
from irax.dtypes import dtype as _dtype, issubdtype
from irax.nn import log_softmax as _nn_log_softmax, logsumexp, softmax as _nn_softmax
from irax.numpy._util import promote_args_inexact

__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn", "digamma",
           "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn", "factorial", "fresnel", "gamma",
           "gammainc", "gammaincc", "gammaln", "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div",
           "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t",
           "poch", "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py", "xlogy",
           "zeta"]


def _lax_const(example, val):
    """JAX's ``lax._const``: ``val`` as a NumPy value of ``example``'s dtype (a literal when traced)."""
    if type(example) in (bool, int, float, complex):
        val = type(example)(val)
        return val if _dtype(example) == _dtype(val) else np.array(val, _dtype(example))
    return np.array(val, _dtype(example))


def gammaln(x):
    """Log of the absolute value of the gamma function."""
    x, = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


@jit
def gammasgn(x):
    """The sign of the gamma function (NaN at its poles)."""
    x, = promote_args_inexact("gammasgn", x)
    typ = x.dtype.type
    floor_x = lax.floor(x)
    x_negative = x < 0
    return jnp.select([(x_negative & (x == floor_x)) | jnp.isnan(x),
                       (x_negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))],
                      [typ(np.nan), typ(-1.0)], typ(1.0))


def gamma(x):
    """The gamma function (real arguments)."""
    x, = promote_args_inexact("gamma", x)
    if issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("gamma of complex arguments is not supported by irax")
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def _algdiv(a, b):
    """log(gamma(a)) - log(gamma(a + b)) for b >= 8 (cdflib's algdiv, a <= b assumed)."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def _betaln_impl(a, b):
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def betaln(a, b):
    """Log of the absolute value of the beta function, accurate for large arguments."""
    a, b = promote_args_inexact("betaln", a, b)
    return _betaln_impl(a, b)


def beta(a, b):
    """The beta function."""
    a, b = promote_args_inexact("beta", a, b)
    if issubdtype(a.dtype, np.complexfloating):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax.betainc(a, b, x)


def digamma(x):
    """The digamma function."""
    x, = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def gammainc(a, x):
    """The regularized lower incomplete gamma function."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def erf(x):
    """The error function."""
    x, = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x):
    """The complementary error function."""
    x, = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """The inverse error function."""
    x, = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


@custom_jvp
def logit(x):
    """log(x / (1 - x))."""
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_lax_const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_lax_const(x, 1), x))))


def expit(x):
    """The logistic sigmoid."""
    x, = promote_args_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (NaN in y propagates)."""
    x, y = promote_args_inexact("xlogy", x, y)
    x_ok = x != 0.
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (NaN in y propagates)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    x_ok = x != 0.
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


def _xlogx_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x):
    """-x log x for x >= 0, -inf below."""
    x, = promote_args_inexact("entr", x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, _lax_const(x, 0)), lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    """``p log(p / q)`` for positive p and q, 0 for p = 0 and q >= 0, inf elsewhere."""
    p, q = promote_args_inexact("rel_entr", p, q)
    if issubdtype(p.dtype, np.complexfloating):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    zero = _lax_const(p, 0.0)
    positive = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    from_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    p_ok, q_ok = jnp.where(positive, p, 1), jnp.where(positive, q, 1)
    inside = lax.sub(_xlogx(p_ok), xlogy(p_ok, q_ok))
    return jnp.where(positive, inside, jnp.where(from_zero, zero, np.inf))


def kl_div(p, q):
    """``rel_entr(p, q) - p + q``."""
    p, q = promote_args_inexact("kl_div", p, q)
    if issubdtype(p.dtype, np.complexfloating):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return rel_entr(p, q) - p + q


def factorial(n, exact=False):
    """``Gamma(n + 1)`` as a float (0 below 0); like JAX, no exact integer factorials."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):
    """The float binomial coefficient from ``gammaln``; 0 where N < 0, k < 0 or (without repetition) k > N."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k, repetition=False))
    valid = (k <= N) & (N >= 0) & (k >= 0)
    n_ok, k_ok = jnp.where(valid, N, 0.0), jnp.where(valid, k, 0.0)
    result = lax.exp(gammaln(n_ok + 1) - gammaln(k_ok + 1) - gammaln(n_ok + 1 - k_ok))
    return jnp.where(valid, result, 0.0)


@custom_jvp
def poch(z, m):
    """The rising factorial ``Gamma(z + m) / Gamma(z)`` (1 for m = 0), real arguments only."""
    z, m = promote_args_inexact("poch", z, m)
    if issubdtype(z.dtype, np.complexfloating):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return jnp.where(m == 0., jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, primal_out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, primal_out, z, m: digamma(z + m) * poch(z, m) * m_dot)


def _boxcox(name, log, x, lmbda):
    x, lmbda = promote_args_inexact(name, x, lmbda)
    zero_power = lmbda == 0
    lmbda_ok = jnp.where(zero_power, jnp.ones_like(lmbda), lmbda)
    logs = log(x)
    return jnp.where(zero_power, logs, jnp.expm1(lmbda_ok * logs) / lmbda_ok)


def boxcox(x, lmbda):
    """``(x**lmbda - 1) / lmbda``, ``log(x)`` for lmbda = 0."""
    return _boxcox("boxcox", jnp.log, x, lmbda)


def boxcox1p(x, lmbda):
    """``((1 + x)**lmbda - 1) / lmbda``, ``log1p(x)`` for lmbda = 0."""
    return _boxcox("boxcox1p", jnp.log1p, x, lmbda)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (a static integer)."""
    try:
        d = int(d)
    except Exception as e:
        raise type(e)(f"{e}\nThe problem arose with the d argument of multigammaln.") from None
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(lax.mul(lax.mul(_lax_const(a, 0.25), d_), lax.sub(d_, _lax_const(a, 1))),
                       lax.log(_lax_const(a, np.pi)))
    b = lax.div(jnp.arange(d, dtype=d_.dtype), _lax_const(a, 2))
    res = jnp.sum(gammaln(jnp.expand_dims(a, axis=-1) - jnp.expand_dims(b, axis=tuple(range(a.ndim)))), axis=-1)
    return res + constant


_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600, -10670622842880000 / 3617,
    5109094217170944000 / 43867, -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147, 759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217,
])


@custom_jvp
def zeta(x, q=None):
    """The Hurwitz zeta function (``q`` is required: the Riemann zeta function is not implemented)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


def _zeta_series_expansion(x, q=None):
    """Johansson's formula (5), differentiable in both arguments: zeta's derivative is this one's."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function.")
    s, a = promote_args_inexact("zeta", x, q)
    dtype = _dtype(a).type
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    N = M = dtype(8) if _dtype(a) == np.float32 else dtype(16)
    k = jnp.expand_dims(np.arange(N, dtype=N.dtype), tuple(range(a.ndim)))
    S = jnp.sum((a_ + k) ** -s_, -1)
    I = lax.div((a + N) ** (dtype(1) - s), s - dtype(1))  # noqa: E741
    T0 = (a + N) ** -s
    m = jnp.expand_dims(np.arange(2 * M, dtype=M.dtype), tuple(range(s.ndim)))
    s_over_a = (s_ + m) / (a_ + N)
    T1 = jnp.cumprod(s_over_a, -1)[..., ::2]
    T1 = jnp.clip(T1, max=np.finfo(dtype).max)
    coefs = np.expand_dims(np.array(_BERNOULLI_COEFS[:T1.shape[-1]], dtype=dtype), tuple(range(a.ndim)))
    T1 = T1 / coefs
    T = T0 * (dtype(0.5) + T1.sum(-1))
    return S + I + T


zeta.defjvp(partial(jvp, _zeta_series_expansion))


def polygamma(n, x):
    """The n-th derivative of digamma (``n`` of an integer dtype)."""
    if not issubdtype(_dtype(n), np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {_dtype(n)}.")
    n_arr, x_arr = promote_args_inexact("polygamma", n, x)
    if issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(n_arr, x_arr)


def ndtr(x):
    """The standard normal cumulative distribution function (float32 or float64)."""
    x = jnp.asarray(x)
    dtype = _dtype(x)
    if dtype not in (np.float32, np.float64):
        raise TypeError("x.dtype={} is not supported, see docstring for supported types.".format(dtype))
    return _ndtr(x)


def _ndtr(x):
    dtype = _dtype(x).type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2., dtype=dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2), dtype(1.) + lax.erf(w),
                   lax.select(lax.gt(w, dtype(0.)), dtype(2.) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


def ndtri(p):
    """The inverse of ``ndtr`` (float32 or float64)."""
    dtype = _dtype(p)
    if dtype not in (np.float32, np.float64):
        raise TypeError("x.dtype={} is not supported, see docstring for supported types.".format(dtype))
    return _ndtri(p)


# Cephes' rational approximations of ndtri: for p > exp(-2) (0), and for z = sqrt(-2 log p) below 8 (1) and above (2).
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def _ndtri(p):
    dtype = _dtype(p).type
    shape = np.shape(p)
    p0, q0, p1, q1, p2, q2 = (np.array(c, dtype=dtype) for c in (_NDTRI_P0, _NDTRI_Q0, _NDTRI_P1, _NDTRI_Q1,
                                                                  _NDTRI_P2, _NDTRI_Q2))
    maybe_complement_p = jnp.where(p > dtype(-np.expm1(-2.)), dtype(1.) - p, p)
    sanitized_mcp = jnp.where(maybe_complement_p == dtype(0.), jnp.full(shape, dtype(0.5)), maybe_complement_p)
    w = sanitized_mcp - dtype(0.5)
    ww = lax.square(w)
    x_for_big_p = w + w * ww * (jnp.polyval(p0, ww) / jnp.polyval(q0, ww))
    x_for_big_p *= -dtype(np.sqrt(2. * np.pi))
    z = lax.sqrt(dtype(-2.) * lax.log(sanitized_mcp))
    first_term = z - lax.log(z) / z
    second_term_small_p = jnp.polyval(p2, 1 / z) / jnp.polyval(q2, 1 / z) / z
    second_term_otherwise = jnp.polyval(p1, 1 / z) / jnp.polyval(q1, 1 / z) / z
    x_for_small_p = first_term - second_term_small_p
    x_otherwise = first_term - second_term_otherwise
    x = jnp.where(sanitized_mcp > dtype(np.exp(-2.)), x_for_big_p,
                  jnp.where(z >= dtype(8.0), x_for_small_p, x_otherwise))
    x = jnp.where(p > dtype(1. - np.exp(-2.)), x, -x)
    infinity = jnp.full(shape, dtype(np.inf))
    return jnp.where(p == dtype(0.0), -infinity, jnp.where(p == dtype(1.0), infinity, x))


_LOGNDTR_FLOAT64_LOWER = np.array(-20, np.float64)
_LOGNDTR_FLOAT32_LOWER = np.array(-10, np.float32)
_LOGNDTR_FLOAT64_UPPER = np.array(8, np.float64)
_LOGNDTR_FLOAT32_UPPER = np.array(5, np.float32)
_norm_logpdf_constant = np.log(np.sqrt(2 * np.pi))


@partial(custom_jvp, nondiff_argnums=(1,))
def log_ndtr(x, series_order=3):
    """log(ndtr(x)), by an asymptotic series far in the lower tail (float32 or float64)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x_arr = jnp.asarray(x)
    dtype = _dtype(x_arr)
    if dtype == np.float64:
        lower_segment, upper_segment = _LOGNDTR_FLOAT64_LOWER, _LOGNDTR_FLOAT64_UPPER
    elif dtype == np.float32:
        lower_segment, upper_segment = _LOGNDTR_FLOAT32_LOWER, _LOGNDTR_FLOAT32_UPPER
    else:
        raise TypeError(f"x.dtype={np.dtype(dtype)} is not supported.")
    x_arr_gt_upper_segment = lax.gt(x_arr, upper_segment)
    ndtr_arg = jnp.where(x_arr_gt_upper_segment, -x_arr, lax.max(x_arr, lower_segment))
    ndtr_res = _ndtr(ndtr_arg)
    return jnp.where(x_arr_gt_upper_segment, -ndtr_res,
                     jnp.where(lax.gt(x_arr, lower_segment), lax.log(ndtr_res),
                               _log_ndtr_lower(lax.min(x_arr, lower_segment), series_order)))


def _norm_logpdf(x):
    neg_half = _lax_const(x, -0.5)
    log_normalizer = _lax_const(x, _norm_logpdf_constant)
    return lax.sub(lax.mul(neg_half, lax.square(x)), log_normalizer)


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = log_ndtr(x, series_order=series_order)
    t_out = lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))
    return ans, t_out


log_ndtr.defjvp(_log_ndtr_jvp)


def _log_ndtr_lower(x, series_order):
    dtype = _dtype(x).type
    x_2 = lax.square(x)
    log_scale = -dtype(0.5) * x_2 - lax.log(-x) - dtype(0.5 * np.log(2. * np.pi))
    return log_scale + lax.log(_log_ndtr_asymptotic_series(x, series_order))


def _log_ndtr_asymptotic_series(x, series_order):
    dtype = _dtype(x).type
    if series_order <= 0:
        return np.array(1, dtype)
    x_2 = lax.square(x)
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return dtype(1.) + even_sum - odd_sum


def i0e(x):
    """exp(-|x|) I0(x)."""
    x, = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x):
    """The modified Bessel function of order 0."""
    x, = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
    """exp(-|x|) I1(x)."""
    x, = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x):
    """The modified Bessel function of order 1."""
    x, = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


def softmax(x, /, *, axis=None):
    """``irax.nn.softmax`` over ``axis`` (all axes by default)."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """``irax.nn.log_softmax`` over ``axis`` (all axes by default)."""
    return _nn_log_softmax(x, axis=axis)


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (Chowla and Hartung's series, as JAX computes them)."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    m = jnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1. / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = jnp.arange(2, 50, dtype=bn.dtype)  # 2 ** -50 < 1e-15
    q2 = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))


def _spence_poly(w):
    a = jnp.array([4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
                   8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
                   3.29771340985225106936E0, 1.00000000000000000126E0], dtype=w.dtype)
    b = jnp.array([6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
                   1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
                   3.54771340985225096217E0, 9.99999999999999998740E-1], dtype=w.dtype)
    return -w * jnp.polyval(a, w) / jnp.polyval(b, w)


def _spence_calc(x):
    above_2 = x > 2.0
    x = jnp.piecewise(x, [above_2], [lambda x: 1.0 / x, lambda x: x])
    above_1_5, below_0_5 = x > 1.5, x < 0.5
    inverted = above_2 | above_1_5
    w = jnp.piecewise(x, [above_1_5, below_0_5], [lambda x: 1.0 / x - 1.0, lambda x: -x, lambda x: x - 1.0])
    y = _spence_poly(w)
    y = jnp.where(below_0_5, np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y, y)
    return jnp.where(inverted, -0.5 * jnp.log(x) ** 2 - y, y)


def spence(x):
    """Spence's function (the dilogarithm) for real x >= 0 (NaN below), float32 or float64 only, as JAX's."""
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0], [np.nan, 0, np.pi ** 2 / 6, _spence_calc])


def _horner(coeffs, t):
    """``polyval(coeffs, t)`` with the coefficients as Python floats (weak literals in t's dtype): a function with
    custom rules that call it may not close over arrays."""
    y = lax.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        y = y * t + float(c)
    return y


def _in_float32(impl, x):
    """``impl(x)`` for float32 and float64; half precision computed in float32."""
    if x.dtype in (np.float32, np.float64):
        return impl(x)
    return impl(x.astype(np.float32)).astype(x.dtype)


def _erfcx_impl(x):
    """exp(x^2) erfc(x) directly, or by its asymptotic series where exp(x^2) would overflow."""
    coeffs = [7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, .75, -.5, 1.]
    nterms = 9 if x.dtype == np.float64 else 5
    large = x > float(np.sqrt(np.log(np.finfo(x.dtype).max)))
    safe = lax.select(large, lax.full_like(x, 1.), x)
    direct = lax.exp(lax.square(safe)) * lax.erfc(safe)
    t = 1. / lax.square(x)
    asymptotic = _horner(coeffs[-nterms:], t) / (x * float(np.sqrt(np.pi)))
    return lax.select(large, asymptotic, direct)


@custom_jvp
def _erfcx(x):
    return _in_float32(_erfcx_impl, x)


# the rules' constants are Python floats: a rule that calls its function may not close over arrays
_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - float(2. / np.sqrt(np.pi))))


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x), real arguments."""
    x, = promote_args_inexact("erfcx", x)
    if issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("erfcx of complex arguments (JAX's Faddeeva function wofz) is not supported yet")
    return _erfcx(x)


# Rational approximations of Dawson's integral (Cody, Paciorek and Thacher, 1970) on [0, 3.25), [3.25, 6.25) and
# [6.25, inf), numerators and denominators, highest degree first.
_DAWSN = (
    ([1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,
      9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4,
      -8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2,
      9.99999999999999994612e-1],
     [2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
      1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4,
      3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1,
      5.74918629489320327824e-1, 1.00000000000000000539e0]),
    ([5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2,
      -2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4,
      3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8,
      -2.40274520828250956942e-9, 3.59233385440928410398e-11],
     [1.00000000000000000000e0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
      -5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4,
      7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7,
      -4.91324691331920606875e-9, 7.18466403235734541950e-11]),
    ([-5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
      1.64837047825189632310e-2, -4.86827613020462700845e-4],
     [1.00000000000000000000e0, -2.69820057197544900361e0, 1.73270799045947845857e0,
      -3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4]),
)


def _dawsn_impl(x):
    """Each region evaluated at a safe dummy where it does not apply (its polynomials overflow far outside)."""
    (an, ad), (bn, bd), (cn, cd) = _DAWSN
    ax = lax.abs(x)
    one = lax.full_like(ax, 1.)
    t = 1. / lax.square(ax)
    in_1 = ax < 3.25
    in_2 = (ax >= 3.25) & (ax < 6.25)
    in_3 = ax >= 6.25
    ax_1 = lax.select(in_1, ax, one)
    value_1 = ax_1 * _horner(an, lax.square(ax_1)) / _horner(ad, lax.square(ax_1))

    def tail(inside, p, q):
        t_r, ax_r = lax.select(inside, t, one), lax.select(inside, ax, one)
        return (0.5 / ax_r) * (1. + t_r * _horner(p, t_r) / _horner(q, t_r))
    result = lax.select(in_1, value_1, lax.select(in_2, tail(in_2, bn, bd), tail(in_3, cn, cd)))
    return jnp.sign(x) * result


@custom_jvp
def _dawsn(x):
    return _in_float32(_dawsn_impl, x)


_dawsn.defjvps(lambda g, ans, x: g * (1. - 2. * x * ans))


def dawsn(x):
    """Dawson's integral exp(-x^2) times the integral of exp(t^2) from 0 to x, real arguments."""
    x, = promote_args_inexact("dawsn", x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("dawsn does not support complex-valued inputs.")
    return _dawsn(x)


from ._special_more import (bessel_jn, exp1, expi, expn, fresnel, hyp1f1, hyp2f1, loggamma, owens_t, sici,  # noqa: E402
                            sph_harm_y, wofz)
