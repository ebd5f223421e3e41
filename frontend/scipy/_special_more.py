"""More of ``irax.scipy.special``: exponential, sine/cosine and Fresnel integrals, Owen's T, the hypergeometric
functions, Bessel J of integer order, spherical harmonics and the Faddeeva function. Ported from JAX's
``jax/_src/scipy/special.py`` and ``jax/_src/third_party/scipy/special.py`` (Cephes' coefficients) so that each
function binds JAX's primitives in JAX's order, with JAX's custom JVP rules and its conventions where it departs
from SciPy (``hyp1f1(0, 0, x) == 1``, for instance)."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.api import jit
from irax.batching import vmap
from irax.custom_derivatives import custom_jvp
from irax.dtypes import finfo as _finfo, issubdtype
from irax.numpy._util import (check_arraylike, convert, promote_args_inexact, promote_dtypes_inexact, promote_shapes,
                              to_inexact_dtype)

from .special import _lax_const, digamma, gamma, gammaln

__all__ = ["bessel_jn", "exp1", "expi", "expn", "fresnel", "hyp1f1", "hyp2f1", "loggamma", "owens_t", "sici",
           "sph_harm_y", "wofz"]


def _polyval(coeffs, x):
    """``jnp.polyval``'s arithmetic (from zero, ``y * x + c`` per coefficient, highest degree first) with the
    coefficients as Python floats, unrolled: irax refuses a custom function whose rule calls it while it closes over
    arrays, and JAX's coefficient arrays would be such closures."""
    y = lax.full_like(x, 0)
    for c in coeffs:
        y = y * x + float(c)
    return y


# --- loggamma ------------------------------------------------------------------------------------------------

# Lanczos' approximation, g = 7 with 9 coefficients (GSL's lanczos_7_c).
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = np.array([0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
                            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
                            1.5056327351493116e-7])


def _complex_loggamma(z):
    """Lanczos' approximation, reflected for Re z < 0.5 (with z made safe there first, so that the branch not
    taken gives no NaN to the gradient)."""
    needs_reflection = jnp.real(z) < 0.5
    z_lanczos = jnp.where(needs_reflection, 1.0 - z, z)
    zz = z_lanczos - 1.0
    coeffs = jnp.asarray(_LANCZOS_COEFFS, dtype=z.dtype)
    ks = lax.expand_dims(jnp.arange(1, 9, dtype=z.dtype), tuple(range(zz.ndim)))
    ag = coeffs[0] + jnp.sum(lax.expand_dims(coeffs[1:], tuple(range(zz.ndim)))
                             / (lax.expand_dims(zz, (zz.ndim,)) + ks), axis=-1)
    t = zz + _LANCZOS_G + 0.5
    half_log2pi = jnp.asarray(0.5 * np.log(2.0 * np.pi), dtype=z.dtype)
    log_gamma_lanczos = half_log2pi + (zz + 0.5) * jnp.log(t) - t + jnp.log(ag)
    z_safe = jnp.where(needs_reflection, z, jnp.full_like(z, 0.5))
    reflected = jnp.log(jnp.asarray(np.pi, dtype=z.dtype)) - jnp.log(jnp.sin(np.pi * z_safe)) - log_gamma_lanczos
    return jnp.where(needs_reflection, reflected, log_gamma_lanczos)


@jit
def _complex_loggamma_scipy(z):
    """SciPy's branch: one cut, on the negative real axis, by shifting z right of Re z = 0.5 before the
    approximation, loggamma(z) = loggamma(z + n) - sum log(z + k)."""
    is_nan = jnp.isnan(z)
    is_pole = (jnp.imag(z) == 0) & (jnp.real(z) == jnp.floor(jnp.real(z))) & (jnp.real(z) <= 0)
    nan_val = jnp.array(complex(jnp.nan, jnp.nan), dtype=z.dtype)
    safe = is_pole | is_nan
    z_safe = jnp.where(safe, jnp.ones_like(z), z)
    n = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(z_safe)).astype(int))

    def cond_fun(state):
        k, _ = state
        return jnp.any(k < n)

    def body_fun(state):
        k, sum_log = state
        mask = k < n
        zk = jnp.where(mask, z_safe + k, jnp.ones_like(z_safe))
        return k + 1, sum_log + jnp.where(mask, jnp.log(zk), jnp.zeros_like(sum_log))

    _, sum_log = lax.while_loop(cond_fun, body_fun, (0, jnp.zeros_like(z_safe)))
    res = _complex_loggamma(z_safe + n) - sum_log
    return jnp.where(safe, nan_val, res)


def loggamma(x):
    """The principal branch of log(gamma(x)): NaN for real x <= 0, where gamma changes sign; complex x has one
    branch cut, on the negative real axis, as SciPy's."""
    x, = promote_args_inexact("loggamma", x)
    if issubdtype(x.dtype, np.complexfloating):
        return _complex_loggamma_scipy(x)
    res = lax.lgamma(x)
    return jnp.where(x > 0, res, jnp.nan)


# --- exponential integrals (Cephes' ei.c and expn.c) -----------------------------------------------------------

# Rational approximations of expi on (0, 2] (x f(x) + gamma + log x) and, as exp(x)/x (1 + f(1/x)/x), on (2, 4],
# (4, 8], (8, 16], (16, 32], (32, 64] and (64, inf): numerators and denominators, highest degree first.
_EXPINT = [
    ([-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3, 5.541176756393557601232e4,
      -3.313381331178144034309e5, 1.592627163384945414220e6],
     [1.0, -5.250547959112862969197e1, 1.259616186786790571525e3, -1.756549581973534652631e4,
      1.493062117002725991967e5, -7.294949239640527645655e5, 1.592627163384945429726e6]),
    ([1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0, 2.755544509187936721172e0,
      -4.409507048701600257171e-1, 4.665623805935891391017e-2, -1.545042679673485262580e-3,
      7.059980605299617478514e-5],
     [1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1,
      2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4,
      3.953167195549672482304e-5]),
    ([-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0,
      -2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3,
      4.371064420753005429514e-5, 2.141783679522602903795e-6],
     [1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
      2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4,
      -4.729848351866523044863e-6, 2.665195537390710170105e-6]),
    ([-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1, 2.322724180937565842585e-2,
      2.372880440493179832059e-4, -8.343219561192552752335e-5, 1.363408795605250394881e-5,
      -3.655412321999253963714e-7, 1.464941733975961318456e-8, 6.176407863710360207074e-10],
     [1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1, -1.566542966630792353556e-2,
      2.761106850817352773874e-3, -2.089148012284048449115e-4, 1.708528938807675304186e-5,
      -4.459311796356686423199e-7, 1.394634930353847498145e-8, 6.150865933977338354138e-10]),
    ([-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2,
      -1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5,
      2.644179518984235952241e-6, -4.239473659313765177195e-8],
     [1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1, 9.695000254621984627876e-2,
      -1.601745692712991078208e-2, 1.496414899205908021882e-3, -8.462452563778485013756e-5,
      2.728938403476726394024e-6, -4.239462431819542051337e-8]),
    ([1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1,
      -3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5],
     [1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1, -3.337004338674007801307e-2,
      1.560544881127388842819e-3, -2.523137093603234562648e-5]),
    ([-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1,
      3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4,
      -6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9],
     [1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1,
      3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4,
      -6.345146083130515357861e-6, 1.239754287483206878024e-7, -1.086076102793126632978e-9]),
]


def _expint1(x):
    A, B = _EXPINT[0]
    f = _polyval(A, x) / _polyval(B, x)
    return x * f + np.euler_gamma + jnp.log(x)


def _eval_expint_k(k, x):
    A, B = _EXPINT[k]
    one = _lax_const(x, 1.0)
    w = one / x
    f = _polyval(A, w) / _polyval(B, w)
    f = w * f + one
    return jnp.exp(x) * w * f


def _expi_pos(x):
    _c = _lax_const
    conds = [(_c(x, 0) < x) & (x <= _c(x, 2))] + [(_c(x, 2 ** i) < x) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)]
    return jnp.piecewise(x, conds, [_expint1] + [partial(_eval_expint_k, k) for k in range(1, 7)])


def _expi_neg(x):
    return -exp1(-x)


@custom_jvp
@jit
def expi(x):
    """The exponential integral Ei(x), the principal value of the integral of exp(t)/t from -inf to x."""
    x_arr, = promote_args_inexact("expi", x)
    if issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError("expi does not support complex-valued inputs.")
    return jnp.piecewise(x_arr, [x_arr < 0], [_expi_neg, _expi_pos])


@expi.defjvp
@jit
def _expi_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return expi(x), jnp.exp(x) / x * x_dot


def _expn1(x, n):
    """The power series, for x <= 1."""
    _c = _lax_const
    MACHEP = _finfo(x.dtype).eps
    zero = _c(x, 0.0)
    one = _c(x, 1.0)
    psi = -np.euler_gamma - jnp.log(x)
    psi = lax.fori_loop(_c(n, 1), n, lambda i, psi: psi + one / i, psi)
    n1 = jnp.where(n == _c(n, 1), one + one, n)
    init = dict(x=x, z=-x, xk=zero, yk=one, pk=one - n, ans=jnp.where(n == _c(n, 1), zero, one / (one - n1)),
                t=np.inf)

    def body(d):
        d["xk"] += one
        d["yk"] *= d["z"] / d["xk"]
        d["pk"] += one
        d["ans"] += jnp.where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = jnp.where(d["ans"] != zero, abs(d["yk"] / d["ans"]), one)
        return d

    def cond(d):
        return (d["x"] > _c(d["x"], 0.0)) & (d["t"] > MACHEP)

    d = lax.while_loop(cond, body, init)
    t = n
    r = n - _c(n, 1)
    return d["z"] ** r * psi / jnp.exp(gammaln(t)) - d["ans"]


def _expn2(x, n):
    """The continued fraction, for x > 1."""
    _c = _lax_const
    BIG = _c(x, 1.44115188075855872e17)
    MACHEP = _finfo(x.dtype).eps
    zero = _c(x, 0.0)
    one = _c(x, 1.0)
    init = dict(k=_c(n, 1), pkm2=one, qkm2=x, pkm1=one, qkm1=x + n, ans=one / (x + n), t=_c(x, np.inf), r=zero, x=x)

    def body(d):
        x = d["x"]
        d["k"] += _c(d["k"], 1)
        k = d["k"]
        odd = k % _c(k, 2) == _c(k, 1)
        yk = jnp.where(odd, one, x)
        xk = jnp.where(odd, n + (k - _c(k, 1)) / _c(k, 2), k / _c(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nz = qk != zero
        d["r"] = r = jnp.where(nz, pk / qk, d["r"])
        d["t"] = jnp.where(nz, abs((d["ans"] - r) / r), one)
        d["ans"] = jnp.where(nz, r, d["ans"])
        d["pkm2"] = d["pkm1"]
        d["pkm1"] = pk
        d["qkm2"] = d["qkm1"]
        d["qkm1"] = qk
        is_big = abs(pk) > BIG
        for s in "pq":
            for i in "12":
                key = s + "km" + i
                d[key] = jnp.where(is_big, d[key] / BIG, d[key])
        return d

    def cond(d):
        return (d["x"] > _c(d["k"], 0)) & (d["t"] > MACHEP)

    d = lax.while_loop(cond, body, init)
    return d["ans"] * jnp.exp(-x)


def _expn3(x, n):
    """The asymptotic expansion in n, for n >= 5000."""
    _c = _lax_const
    one = _c(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    t = n
    ans = yk * t * (_c(x, 6) * x * x - _c(x, 8) * t * x + t * t)
    ans = yk * (ans + t * (t - _c(x, 2) * x))
    ans = yk * (ans + t)
    return (ans + one) * jnp.exp(-x) / xk


@jnp.vectorize
@jit
def _expn(n, x):
    n, x = promote_args_inexact("expn", n, x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expn does not support complex-valued inputs.")
    _c = _lax_const
    zero = _c(x, 0)
    one = _c(x, 1)
    conds = [(n < _c(n, 0)) | (x < zero), (x == zero) & (n < _c(n, 2)), (x == zero) & (n >= _c(n, 2)),
             (n == _c(n, 0)) & (x >= zero), (n >= _c(n, 5000)), (x > one)]
    n1 = jnp.where(n == _c(n, 1), n + n, n)
    vals = [np.nan, np.inf, one / n1, jnp.exp(-x) / x, _expn3, _expn2, _expn1]
    return jnp.piecewise(x, conds, vals, n=n)


@partial(custom_jvp, nondiff_argnums=(0,))
def expn(n, x):
    """The generalized exponential integral E_n(x), real n >= 0 and x >= 0 (NaN elsewhere)."""
    return _expn(n, x)


@expn.defjvp
def _expn_jvp(n, primals, tangents):
    """JAX's rule, d/dx E_n = -E_{n-1}, but calling the implementation, not ``expn``: irax traces a custom function's
    rules when the function is traced, so a rule calling the function at another ``n``, or at a traced ``n`` (a
    nondiff tracer keys a new trace each time), recurses forever. First derivatives are JAX's; higher ones
    differentiate the implementation."""
    (x,), (x_dot,) = primals, tangents
    return _expn(n, x), lax.mul(lax.neg(x_dot), _expn(lax.sub(n, _lax_const(n, 1)), x))


def exp1(x):
    """The exponential integral E_1(x) (``expn(1, x)``)."""
    x, = promote_args_inexact("exp1", x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return expn(1, x)


# --- sine and cosine integrals (Cephes' sici.c) ----------------------------------------------------------------

_SICI_SN = [-8.39167827910303881427E-11, 4.62591714427012837309E-8, -9.75759303843632795789E-6,
            9.76945438170435310816E-4, -4.13470316229406538752E-2, 1.00000000000000000302E0]
_SICI_SD = [2.03269266195951942049E-12, 1.27997891179943299903E-9, 4.41827842801218905784E-7,
            9.96412122043875552487E-5, 1.42085239326149893930E-2, 9.99999999999999996984E-1]
_SICI_CN = [2.02524002389102268789E-11, -1.35249504915790756375E-8, 3.59325051419993077021E-6,
            -4.74007206873407909465E-4, 2.89159652607555242092E-2, -1.00000000000000000080E0]
_SICI_CD = [4.07746040061880559506E-12, 3.06780997581887812692E-9, 1.23210355685883423679E-6,
            3.17442024775032769882E-4, 5.10028056236446052392E-2, 4.00000000000000000080E0]
# The auxiliary functions f and g on (4, 8) and [8, 1e9]: numerators and denominators in 1/x^2.
_SICI_FN4 = [4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
             1.67006611831323023771E-1, 6.81020132472518137426E-3, 1.08936580650328664411E-4,
             5.48900223421373614008E-7]
_SICI_FD4 = [1, 8.16496634205391016773E0, 7.30828822505564552187E0, 1.86792257950184183883E0,
             1.78792052963149907262E-1, 7.01710668322789753610E-3, 1.10034357153915731354E-4,
             5.48900252756255700982E-7]
_SICI_GN4 = [8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
             7.48527737628469092119E-2, 5.38868681462177273157E-3, 1.61999794598934024525E-4,
             1.97963874140963632189E-6, 7.82579040744090311069E-9]
_SICI_GD4 = [1, 1.64402202413355338886E0, 6.66296701268987968381E-1, 9.88771761277688796203E-2,
             6.22396345441768420760E-3, 1.73221081474177119497E-4, 2.02659182086343991969E-6,
             7.82579218933534490868E-9]
_SICI_FN8 = [4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
             1.16064229408124407915E-2, 3.49556442447859055605E-4, 4.86215430826454749482E-6,
             3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14]
_SICI_FD8 = [1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1, 1.22253594771971293032E-2,
             3.58696481881851580297E-4, 4.92435064317881464393E-6, 3.21956939101046018377E-8,
             9.43720590350276732376E-11, 9.70507110881952025725E-14]
_SICI_GN8 = [6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
             1.71718239052347903558E-3, 3.48941165502279436777E-5, 3.47131167084116673800E-7,
             1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15]
_SICI_GD8 = [1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1, 4.67913194259625806320E-2,
             1.90284426674399523638E-3, 3.68475504442561108162E-5, 3.57043223443740838771E-7,
             1.72693748966316146736E-9, 3.87830166023954706752E-12, 3.14040098946363335242E-15]


@custom_jvp
@jit
def sici(x):
    """The sine and cosine integrals Si(x) and Ci(x) of real x (Ci is NaN below 0, as JAX's at -inf only)."""
    x, = promote_args_inexact("sici", x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    x_abs = jnp.abs(x)
    si_series, ci_series = _sici_series(x_abs)
    si_asymp, ci_asymp = _sici_asympt(x_abs)
    si_approx, ci_approx = _sici_approx(x_abs)
    cond1 = x_abs <= 4
    cond2 = (x_abs > 4) & (x_abs <= 1e9)
    si = jnp.select([cond1, cond2], [si_series, si_asymp], si_approx)
    ci = jnp.select([cond1, cond2], [ci_series, ci_asymp], ci_approx)
    si = jnp.sign(x) * si
    ci = jnp.where(jnp.isneginf(x), np.nan, ci)
    return si, ci


def _sici_approx(x):
    si = (np.pi / 2) - jnp.cos(x) / x
    ci = jnp.sin(x) / x
    si = jnp.where(jnp.isposinf(x), np.pi / 2, si)
    ci = jnp.where(jnp.isposinf(x), 0.0, ci)
    return si, ci


def _sici_series(x):
    def si_series(x):
        t = x * x
        return (x * _polyval(_SICI_SN, t)) / _polyval(_SICI_SD, t)

    def ci_series(x):
        t = x * x
        return np.euler_gamma + jnp.log(x) + t * _polyval(_SICI_CN, t) / _polyval(_SICI_CD, t)

    si = jnp.where(x == 0, 0.0, si_series(x))
    ci = jnp.where(x == 0, -np.inf, ci_series(x))
    return si, ci


def _sici_asympt(x):
    s = jnp.sin(x)
    c = jnp.cos(x)
    z = 1.0 / (x * x)
    f4 = _polyval(_SICI_FN4, z) / (x * _polyval(_SICI_FD4, z))
    g4 = z * _polyval(_SICI_GN4, z) / _polyval(_SICI_GD4, z)
    f8 = _polyval(_SICI_FN8, z) / (x * _polyval(_SICI_FD8, z))
    g8 = z * _polyval(_SICI_GN8, z) / _polyval(_SICI_GD8, z)
    mask = x < 8.0
    f = jnp.where(mask, f4, f8)
    g = jnp.where(mask, g4, g8)
    si = (np.pi / 2) - f * c - g * s
    ci = f * s - g * c
    return si, ci


@sici.defjvp
@jit
def _sici_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    primal_out = sici(p)
    sin_term = jnp.sinc(p / np.pi)
    cos_term = jnp.cos(p) / p
    return primal_out, (sin_term * t, cos_term * t)


# --- Fresnel integrals (SciPy's fresnl.h; Cephes' fresnlf for float32) ----------------------------------------

@jit
def _sincospisquaredhalf(x):
    """sin and cos of pi x^2 / 2 with the argument reduced exactly modulo 2, from x modulo 2."""
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)
    sinpi = jnp.where(r < 0.5, jnp.sin(np.pi * r),
                      jnp.where(r > 1.5, jnp.sin(np.pi * (r - 2.0)), -jnp.sin(np.pi * (r - 1.0))))
    cospi = jnp.where(r == 0.5, 0.0, jnp.where(r < 1.0, -jnp.sin(np.pi * (r - 0.5)), jnp.sin(np.pi * (r - 1.5))))
    return sinpi, cospi


_FRESNL32 = dict(
    sn=[+1.647629463788700e-9, -1.522754752581096e-7, +8.424748808502400e-6, -3.120693124703272e-4,
        +7.244727626597022e-3, -9.228055941124598e-2, +5.235987735681432e-1],
    cn=[+1.416802502367354e-8, -1.157231412229871e-6, +5.387223446683264e-5, -1.604381798862293e-3,
        +2.818489036795073e-2, -2.467398198317899e-1, +9.999999760004487e-1],
    fn=[-1.903009855649792e12, +1.355942388050252e11, -4.158143148511033e9, +7.343848463587323e7,
        -8.732356681548485e5, +8.560515466275470e3, -1.032877601091159e2, +2.999401847870011e0],
    gn=[-1.860843997624650e11, +1.278350673393208e10, -3.779387713202229e8, +6.492611570598858e6,
        -7.787789623358162e4, +8.602931494734327e2, -1.493439396592284e1, +9.999841934744914e-1])
_FRESNL64 = dict(
    sn=[-2.99181919401019853726e3, +7.08840045257738576863e5, -6.29741486205862506537e7, +2.54890880573376359104e9,
        -4.42979518059697779103e10, +3.18016297876567817986e11],
    sd=[+1.00000000000000000000e0, +2.81376268889994315696e2, +4.55847810806532581675e4, +5.17343888770096400730e6,
        +4.19320245898111231129e8, +2.24411795645340920940e10, +6.07366389490084639049e11],
    cn=[-4.98843114573573548651e-8, +9.50428062829859605134e-6, -6.45191435683965050962e-4,
        +1.88843319396703850064e-2, -2.05525900955013891793e-1, +9.99999999999999998822e-1],
    cd=[+3.99982968972495980367e-12, +9.15439215774657478799e-10, +1.25001862479598821474e-7,
        +1.22262789024179030997e-5, +8.68029542941784300606e-4, +4.12142090722199792936e-2,
        +1.00000000000000000118e0],
    fn=[+4.21543555043677546506e-1, +1.43407919780758885261e-1, +1.15220955073585758835e-2,
        +3.45017939782574027900e-4, +4.63613749287867322088e-6, +3.05568983790257605827e-8,
        +1.02304514164907233465e-10, +1.72010743268161828879e-13, +1.34283276233062758925e-16,
        +3.76329711269987889006e-20],
    fd=[+1.00000000000000000000e0, +7.51586398353378947175e-1, +1.16888925859191382142e-1,
        +6.44051526508858611005e-3, +1.55934409164153020873e-4, +1.84627567348930545870e-6,
        +1.12699224763999035261e-8, +3.60140029589371370404e-11, +5.88754533621578410010e-14,
        +4.52001434074129701496e-17, +1.25443237090011264384e-20],
    gn=[+5.04442073643383265887e-1, +1.97102833525523411709e-1, +1.87648584092575249293e-2,
        +6.84079380915393090172e-4, +1.15138826111884280931e-5, +9.82852443688422223854e-8,
        +4.45344415861750144738e-10, +1.08268041139020870318e-12, +1.37555460633261799868e-15,
        +8.36354435630677421531e-19, +1.86958710162783235106e-22],
    gd=[+1.00000000000000000000e0, +1.47495759925128324529e0, +3.37748989120019970451e-1,
        +2.53603741420338795122e-2, +8.14679107184306179049e-4, +1.27545075667729118702e-5,
        +1.04314589657571990585e-7, +4.60680728146520428211e-10, +1.10273215066240270757e-12,
        +1.38796531259578871258e-15, +8.39158816283118707363e-19, +1.86958710162783236342e-22])


@custom_jvp
def fresnel(x):
    """The Fresnel integrals S(x) and C(x) of real x; half precision computed in float32, as JAX's."""
    xxa, = promote_args_inexact("fresnel", x)
    original_dtype = xxa.dtype
    if issubdtype(xxa.dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    elif xxa.dtype in (np.float32, np.float16, jnp.bfloat16):
        xxa = xxa.astype(np.float32)
        c = _FRESNL32
    elif xxa.dtype == np.float64:
        c = _FRESNL64
    else:
        raise NotImplementedError(f"Support for {xxa.dtype} dtype is not implemented yet.")
    single_precision = xxa.dtype == np.float32
    x = jnp.abs(xxa)
    x2 = x * x
    s_inf = c_inf = 0.5
    t = x2 * x2
    if single_precision:
        s_small = x * x2 * _polyval(c["sn"], t)
        c_small = x * _polyval(c["cn"], t)
    else:
        s_small = x * x2 * _polyval(c["sn"][:6], t) / _polyval(c["sd"][:7], t)
        c_small = x * _polyval(c["cn"][:6], t) / _polyval(c["cd"][:7], t)
    sinpi, cospi = _sincospisquaredhalf(x)
    if single_precision:
        c_large = c_inf
        s_large = s_inf
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sinpi
        s_large = 0.5 - 1 / (np.pi * x) * cospi
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single_precision:
        f = 1.0 - u * _polyval(c["fn"], u)
        g = t * _polyval(c["gn"], u)
    else:
        f = 1.0 - u * _polyval(c["fn"], u) / _polyval(c["fd"], u)
        g = t * _polyval(c["gn"], u) / _polyval(c["gd"], u)
    t = np.pi * x
    c_other = 0.5 + (f * sinpi - g * cospi) / t
    s_other = 0.5 - (f * cospi + g * sinpi) / t
    isinf = jnp.isinf(xxa)
    small = x2 < 2.5625
    large = x > 36974.0
    s = jnp.where(isinf, s_inf, jnp.where(small, s_small, jnp.where(large, s_large, s_other)))
    c = jnp.where(isinf, c_inf, jnp.where(small, c_small, jnp.where(large, c_large, c_other)))
    neg = xxa < 0.0
    s = jnp.where(neg, -s, s)
    c = jnp.where(neg, -c, c)
    if original_dtype != xxa.dtype:
        s = s.astype(original_dtype)
        c = c.astype(original_dtype)
    return s, c


def _fresnel_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    result = fresnel(x)
    sinpi, cospi = _sincospisquaredhalf(x)
    return result, (sinpi * x_dot, cospi * x_dot)


fresnel.defjvp(_fresnel_jvp)


# --- Owen's T (Patefield and Tandy's method T5) ----------------------------------------------------------------

# A 13-point Gauss rule for T(h, a) = a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i), |a| <= 1.
_OWENS_T_QUAD_PTS = [
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277, 0.25851196049125435,
    0.36807553840697534, 0.48501092905604697, 0.60277514152618577, 0.71477884217753227, 0.81475510988760099,
    0.89711029755948966, 0.95723808085944262, 0.99178832974629704]
_OWENS_T_QUAD_WTS = [
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753, 0.016243219975989857,
    0.014994592034116705, 0.013535474469662088, 0.011886351605820165, 0.010070377242777432, 0.0081130545742299587,
    0.0060419009528470239, 0.0038862217010742058, 0.0016793031084546090]


def _owens_t_quadrature(h, a):
    """JAX's quadrature, summed point by point with the points and weights as Python floats (not JAX's dot of the
    integrand with an array of weights): the function's custom rule calls it, so it may not close over arrays."""
    total = lax.full_like(a, 0)
    for t, w in zip(_OWENS_T_QUAD_PTS, _OWENS_T_QUAD_WTS):
        r = jnp.square(a) * float(t)
        total = total + jnp.exp(-0.5 * jnp.square(h) * (1. + r)) / (1. + r) * float(w)
    return a * total


@custom_jvp
def _owens_t_impl(h, a):
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    root_2 = _lax_const(h, np.sqrt(2))
    h_normed = h / root_2
    modified_a = jnp.where(abs_a <= 1., abs_a, jnp.reciprocal(abs_a))
    modified_h = jnp.where(abs_a <= 1., h, abs_a * h)
    result = _owens_t_quadrature(modified_h, modified_a)
    result = jnp.where(modified_h == 0., jnp.arctan(modified_a) / (2 * np.pi), result)
    result = jnp.where(modified_a == 1., 0.125 * lax.erfc(-modified_h / root_2) * lax.erfc(modified_h / root_2),
                       result)
    normh = lax.erfc(h_normed)
    normah = lax.erfc(abs_a * h_normed)
    result = jnp.where(abs_a > 1., jnp.where(abs_a * h <= 0.67,
                                             (0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result),
                                             0.25 * (normh + normah - normh * normah) - result),
                       result)
    result = lax.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, jnp.nan), result)


def _owens_t_jvp(primals, tangents):
    (h, a), (dh, da) = primals, tangents
    result = _owens_t_impl(h, a)
    root_2 = _lax_const(h, np.sqrt(2))
    dout_dh = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2) / (2. * _lax_const(h, np.sqrt(2. * np.pi))))
    dout_da = (lax.exp(-0.5 * (lax.square(a) + 1.) * lax.square(h)) / (2. * np.pi * (lax.square(a) + 1.)))
    return result, (dout_dh * dh + dout_da * da).astype(result.dtype)


_owens_t_impl.defjvp(_owens_t_jvp)


def owens_t(h, a):
    """Owen's T function by a 13-point quadrature (JAX's method, not SciPy's 18-region dispatch)."""
    h, a = promote_args_inexact("owens_t", h, a)
    return _owens_t_impl(h, a)


# --- the confluent hypergeometric function 1F1 (Pearson, Olver and Porter, 2014) --------------------------------

def _hyp1f1_serie(a, b, x):
    """The Taylor series (their eq. 3.2)."""
    precision = _finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)

    init = 1, 1, a / b * x
    return lax.while_loop(cond, body, init)[0]


def _hyp1f1_asymptotic(a, b, x):
    """The asymptotic expansion for large real x (their eq. 3.8)."""
    precision = _finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term
        term *= (b - a + k) * (1 - a + k) / (k + 1) / x
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)

    init = 1, 1, (b - a) * (1 - a) / x
    serie = lax.while_loop(cond, body, init)[0]
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


@jit
@jnp.vectorize
def _hyp1f1_a_derivative(a, b, x):
    precision = _finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(a + k) - digamma(a))
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)

    init = 0, 1, a / b * x
    return lax.while_loop(cond, body, init)[0]


@jit
@jnp.vectorize
def _hyp1f1_b_derivative(a, b, x):
    precision = _finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(b) - digamma(b + k))
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)

    init = 0, 1, a / b * x
    return lax.while_loop(cond, body, init)[0]


@jit
def _hyp1f1_x_derivative(a, b, x):
    return a / b * hyp1f1(a + 1, b + 1, x)


@custom_jvp
@jit
@jnp.vectorize
def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x), real arguments; 1 at a = b = 0 (SciPy: NaN)."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    if issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    result = lax.cond(lax.abs(x) < 100, _hyp1f1_serie, _hyp1f1_asymptotic, a, b, x)
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    return lax.select_n(index, result, jnp.array(1, dtype=x.dtype), jnp.exp(x), jnp.array(np.inf, dtype=x.dtype))


hyp1f1.defjvps(lambda a_dot, primal_out, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot,
               lambda b_dot, primal_out, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot,
               lambda x_dot, primal_out, a, b, x: _hyp1f1_x_derivative(a, b, x) * x_dot)


# --- the Gauss hypergeometric function 2F1 (Pearson, Olver and Porter; AMS 55 15.3) -----------------------------

def _hyp2f1_terminal(a, b, c, x):
    """The terminating series for a or b a non-positive integer (their eq. 4.1), in the one of a and b that ends
    it first without c's pole getting in the way."""
    eps = _finfo(x.dtype).eps * 50
    ib = jnp.round(b)
    mask = jnp.logical_and(b < a, jnp.logical_and(jnp.abs(b - ib) < eps, jnp.logical_not(
        jnp.logical_and(c % 1 == 0, jnp.logical_and(c <= 0, c > b)))))
    orig_a = a
    a = jnp.where(mask, b, a)
    b = jnp.where(mask, orig_a, b)
    a = jnp.abs(a)

    def body(i, state):
        serie, term = state
        term *= -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        serie += term
        return serie, term

    init = (jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.fori_loop(jnp.array(1, dtype=a.dtype), a + 1, body, init)[0]


def _hyp2f1_serie(a, b, c, x):
    rtol = _finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term
        term *= (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) > rtol * lax.abs(serie))

    init = (jnp.array(0, dtype=x.dtype), jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.while_loop(cond, body, init)[0]


def _hyp2f1_terminal_or_serie(a, b, c, x):
    """The Taylor series, its terminating form, or (near x = 1 with c - a - b an integer) the digamma
    transformation; every one is computed and the right one selected."""
    eps = _finfo(x.dtype).eps * 50
    d = c - a - b
    ia = jnp.round(a)
    ib = jnp.round(b)
    id = jnp.round(d)
    neg_int_a = jnp.logical_and(a <= 0, jnp.abs(a - ia) < eps)
    neg_int_b = jnp.logical_and(b <= 0, jnp.abs(b - ib) < eps)
    neg_int_a_or_b = jnp.logical_or(neg_int_a, neg_int_b)
    not_neg_int_a_or_b = jnp.logical_not(neg_int_a_or_b)
    index = jnp.where(jnp.logical_and(x > 0.9, not_neg_int_a_or_b), jnp.where(jnp.abs(d - id) >= eps, 0, 1),
                      jnp.where(neg_int_a_or_b, 2, 0))
    return lax.select_n(index, _hyp2f1_serie(a, b, c, x), _hyp2f1_digamma_transform(a, b, c, x),
                        _hyp2f1_terminal(a, b, c, x))


def _hyp2f1_digamma_transform(a, b, c, x):
    """AMS 55 15.3.10 to 15.3.12: 2F1 near x = 1 when c - a - b is an integer."""
    rtol = _finfo(x.dtype).eps
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1 = jnp.where(rd >= 0, d, jnp.array(0, dtype=d.dtype))
    d2 = jnp.where(rd >= 0, jnp.array(0, dtype=d.dtype), d)
    ard = jnp.where(rd >= 0, rd, -rd).astype('int32')
    ax = jnp.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y /= gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state):
        _, _, _, _, _, _, q, _, _, t, y = state
        return jnp.logical_and(t < 250, jnp.abs(q) >= rtol * jnp.abs(y))

    def body(state):
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - ax
        q = p * r
        y += q
        p *= s * (a + t + d1) / (t + 1.0)
        p *= (b + t + d1) / (t + 1.0 + e)
        t += 1.0
        return a, ax, b, d1, e, p, q, r, s, t, y

    init = (a, ax, b, d1, e, p, y, jnp.array(0, dtype=x.dtype), s, jnp.array(1, dtype=x.dtype), y)
    _, _, _, _, _, _, q, r, _, _, y = lax.while_loop(cond, body, init)

    def compute_sum(y):
        y1 = jnp.array(1, dtype=x.dtype)
        t = jnp.array(0, dtype=x.dtype)
        p = jnp.array(1, dtype=x.dtype)

        def for_body(i, state):
            a, b, d2, e, p, s, t, y1 = state
            r = 1.0 - e + t
            p *= s * (a + t + d2) * (b + t + d2) / r
            t += 1.0
            p /= t
            y1 += p
            return a, b, d2, e, p, s, t, y1

        init_val = a, b, d2, e, p, s, t, y1
        y1 = lax.fori_loop(1, ard, for_body, init_val)[-1]
        p = gamma(c)
        y1 *= gamma(e) * p / (gamma(a + d1) * gamma(b + d1))
        y *= p / (gamma(a + d2) * gamma(b + d2))
        y = jnp.where((ard & 1) != 0, -y, y)
        q = s ** rd
        return jnp.where(rd > 0, y * q + y1, y + y1 * q)

    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), compute_sum(y))


def _hyp2f1_parameter_derivative(which, a, b, c, x):
    """The derivative in a (0), b (1) or c (2) as a series: the Taylor series' terms times differences of
    digammas."""
    precision = _finfo(x.dtype).eps
    p = (a, b, c)[which]

    def body(state):
        serie, k, term = state
        weight = digamma(c) - digamma(c + k) if which == 2 else digamma(p + k) - digamma(p)
        serie += term * weight
        term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)

    init = 0, 1, a * b / c * x
    return lax.while_loop(cond, body, init)[0]


@jit
@jnp.vectorize
def _hyp2f1_a_derivative(a, b, c, x):
    return _hyp2f1_parameter_derivative(0, a, b, c, x)


@jit
@jnp.vectorize
def _hyp2f1_b_derivative(a, b, c, x):
    return _hyp2f1_parameter_derivative(1, a, b, c, x)


@jit
@jnp.vectorize
def _hyp2f1_c_derivative(a, b, c, x):
    return _hyp2f1_parameter_derivative(2, a, b, c, x)


@jit
def _hyp2f1_x_derivative(a, b, c, x):
    return a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)


@custom_jvp
@jit
@jnp.vectorize
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x), real arguments, x <= 1 (inf above)."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    eps = _finfo(x.dtype).eps * 50
    d = c - a - b
    s = 1 - x
    ca = c - a
    cb = c - b
    id = jnp.round(d)
    index = jnp.where(
        jnp.logical_or(x == 0, jnp.logical_and(jnp.logical_or(a == 0, b == 0), c != 0)), 0,
        jnp.where(jnp.logical_or(c == 0, jnp.logical_and(c < 0, c % 1 == 0)), 1,
                  jnp.where(jnp.logical_and(d <= -1, jnp.logical_not(jnp.logical_and(jnp.abs(d - id) >= eps, s < 0))),
                            2,
                            jnp.where(jnp.logical_and(d <= 0, x == 1), 1,
                                      jnp.where(jnp.logical_and(x < 1, b == c), 3,
                                                jnp.where(jnp.logical_and(x < 1, a == c), 4,
                                                          jnp.where(x > 1, 1, jnp.where(x == 1, 5, 6))))))))
    return lax.select_n(index, jnp.array(1, dtype=x.dtype), jnp.array(np.inf, dtype=x.dtype),
                        s ** d * _hyp2f1_terminal_or_serie(ca, cb, c, x), s ** (-a), s ** (-b),
                        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)), _hyp2f1_terminal_or_serie(a, b, c, x))


hyp2f1.defjvps(lambda a_dot, primal_out, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot,
               lambda b_dot, primal_out, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot,
               lambda c_dot, primal_out, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot,
               lambda x_dot, primal_out, a, b, c, x: _hyp2f1_x_derivative(a, b, c, x) * x_dot)


# --- Bessel functions of the first kind of integer order (Zhang and Jin's BJNDD) -------------------------------

def _bessel_jn_scan_body_fun(carry, k):
    f0, f1, bs, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0

    def true_fn_update_bs(u):
        bs, f = u
        return bs + 2.0 * f

    def false_fn_update_bs(u):
        bs, _ = u
        return bs

    bs = lax.cond(jnp.mod(k, 2) == 0, true_fn_update_bs, false_fn_update_bs, operand=(bs, f))
    f0 = f1
    f1 = f
    return (f0, f1, bs, z), f


def _bessel_jn(z, *, v, n_iter=50):
    """Miller's backward recurrence from order n_iter, normalized by J_0 + 2 sum J_2k = 1."""
    f0 = _lax_const(z, 0.0)
    f1 = _lax_const(z, 1E-16)
    bs = _lax_const(z, 0.0)
    (_, _, bs, _), j_vals = lax.scan(f=_bessel_jn_scan_body_fun, init=(f0, f1, bs, z),
                                     xs=lax.iota(lax.dtype(z), n_iter + 1), reverse=True)
    f = j_vals[0]
    j_vals = j_vals[:v + 1]
    return j_vals / (bs - f)


@partial(jit, static_argnames=["v", "n_iter"])
def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) .. J_v(z) for real z, stacked on a new leading axis; ``n_iter`` recurrence steps (static)."""
    z = jnp.asarray(z)
    z, = promote_dtypes_inexact(z)
    z_dtype = lax.dtype(z)
    if issubdtype(z_dtype, complex):
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = int(n_iter)
    bessel_jn_fun = partial(_bessel_jn, v=v, n_iter=n_iter)
    for _ in range(z.ndim):
        bessel_jn_fun = vmap(bessel_jn_fun)
    return jnp.moveaxis(bessel_jn_fun(z), -1, 0)


# --- spherical harmonics (normalized associated Legendre functions by recurrence) ------------------------------

def _gen_recurrence_mask(l_max, is_normalized, dtype):
    """The recurrence's coefficients for the entries off the diagonal and first off-diagonal, placed on the planes
    i + j = k of a cube so that the loop's step i picks its own."""
    m_mat, l_mat = jnp.meshgrid(jnp.arange(l_max + 1, dtype=dtype), jnp.arange(l_max + 1, dtype=dtype),
                                indexing='ij')
    if is_normalized:
        c0 = l_mat * l_mat
        c1 = m_mat * m_mat
        c2 = 2.0 * l_mat
        c3 = (l_mat - 1.0) * (l_mat - 1.0)
        d0 = jnp.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
        d1 = jnp.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1)))
    else:
        d0 = (2.0 * l_mat - 1.0) / (l_mat - m_mat)
        d1 = (l_mat + m_mat - 1.0) / (l_mat - m_mat)
    d0_mask_indices = jnp.triu_indices(l_max + 1, 1)
    d1_mask_indices = jnp.triu_indices(l_max + 1, 2)
    d_zeros = jnp.zeros((l_max + 1, l_max + 1), dtype=dtype)
    d0_mask = d_zeros.at[d0_mask_indices].set(d0[d0_mask_indices])
    d1_mask = d_zeros.at[d1_mask_indices].set(d1[d1_mask_indices])
    i, j, k = jnp.ogrid[:l_max + 1, :l_max + 1, :l_max + 1]
    mask = (i + j - k == 0).astype(dtype)
    d0_mask_3d = jnp.einsum('jk,ijk->ijk', d0_mask, mask)
    d1_mask_3d = jnp.einsum('jk,ijk->ijk', d1_mask, mask)
    return (d0_mask_3d, d1_mask_3d)


@partial(jit, static_argnums=(0, 2))
def _gen_associated_legendre(l_max, x, is_normalized):
    """P_l^m(x) for 0 <= m, l <= l_max as a (m, l, len(x)) array: the diagonal and first off-diagonal in closed
    form, the rest by the three-term recurrence in l."""
    p = jnp.zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=x.dtype)
    a_idx = jnp.arange(1, l_max + 1, dtype=x.dtype)
    b_idx = jnp.arange(l_max, dtype=x.dtype)
    if is_normalized:
        initial_value = 0.5 / jnp.sqrt(np.pi)
        f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
        f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    else:
        initial_value = 1.0
        f_a = jnp.cumprod(1.0 - 2.0 * a_idx)
        f_b = 2.0 * b_idx + 1.0
    p = p.at[(0, 0)].set(initial_value)
    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    p_diag = initial_value * jnp.einsum('i,ij->ij', f_a, y)
    diag_indices = jnp.diag_indices(l_max + 1)
    p = p.at[(diag_indices[0][1:], diag_indices[1][1:])].set(p_diag)
    p_offdiag = jnp.einsum('ij,ij->ij', jnp.einsum('i,j->ij', f_b, x), p[jnp.diag_indices(l_max)])
    offdiag_indices = (diag_indices[0][:l_max], diag_indices[1][:l_max] + 1)
    p = p.at[offdiag_indices].set(p_offdiag)
    d0_mask_3d, d1_mask_3d = _gen_recurrence_mask(l_max, is_normalized=is_normalized, dtype=x.dtype)

    def body_fun(i, p_val):
        coeff_0 = d0_mask_3d[i]
        coeff_1 = d1_mask_3d[i]
        h = (jnp.einsum('ij,ijk->ijk', coeff_0, jnp.einsum('ijk,k->ijk', jnp.roll(p_val, shift=1, axis=1), x))
             - jnp.einsum('ij,ijk->ijk', coeff_1, jnp.roll(p_val, shift=2, axis=1)))
        return p_val + h

    p = p.astype(jnp.result_type(p, x, d0_mask_3d))
    if l_max > 1:
        p = lax.fori_loop(lower=2, upper=l_max + 1, body_fun=body_fun, init_val=p)
    return p


@partial(jit, static_argnums=(4,))
def _sph_harm(n, m, theta, phi, n_max):
    cos_colatitude = jnp.cos(theta)
    legendre = _gen_associated_legendre(n_max, cos_colatitude, True)
    legendre_val = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    vandermonde = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(legendre_val * jnp.real(vandermonde), legendre_val * jnp.imag(vandermonde))
    return jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi) (theta the colatitude), 1-D; degrees above the static ``n_max``
    (max(n) by default, which needs a concrete n) are clipped to it."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    n_max = int(n_max)
    return _sph_harm(n, m, theta, phi, n_max)


# --- the Faddeeva function (Weideman's rational approximation, N = 32) ------------------------------------------

# w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with Z = (L + iz) / (L - iz), for Im z >= 0: p's
# coefficients, highest degree first.
_WOFZ_L = 4.7568284600108841
_WOFZ_C = [
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12, -2.1543593557490879e-11,
    -5.5442449963237932e-11, 1.165824698850374e-10, 4.1537441121999766e-10, -5.2310202114920615e-10,
    -3.2080151339721323e-09, 8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07, 4.4015317312832251e-06,
    6.8210319443575151e-06, -2.1409619201999998e-05, -0.00013075449254579421, -0.00024532980270038237,
    0.00039259136070109705, 0.0045195411053493093, 0.019006155784845501, 0.057304403529837282,
    0.14060716226893755, 0.29544451071508743, 0.54601397206393376, 0.9019254893648001,
    1.3455441692345449, 1.8256696296324815, 2.2635372999002676, 2.5722534081245696,
]


def _wofz_upper(z):
    re = lax.real(z)
    L = lax.complex(_lax_const(re, _WOFZ_L), _lax_const(re, 0.))
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denom = L - iz
    Z = (L + iz) / denom
    p = _polyval(_WOFZ_C, Z)
    one_over_sqrtpi = lax.complex(_lax_const(re, 1. / np.sqrt(np.pi)), _lax_const(re, 0.))
    return 2 * p / (denom * denom) + one_over_sqrtpi / denom


@custom_jvp
def _wofz(z):
    """The lower half-plane by w(-z) = 2 exp(-z^2) - w(z)."""
    sign = lax.ge(lax.imag(z), _lax_const(lax.real(z), 0.))
    z_upper = lax.select(sign, z, lax.neg(z))
    w_upper = _wofz_upper(z_upper)
    correction = 2 * lax.exp(lax.neg(z * z)) - w_upper
    return lax.select(sign, w_upper, correction)


_wofz.defjvps(lambda g, ans, z: g * (lax.neg(2 * z * ans) + lax.complex(
    _lax_const(lax.real(z), 0.), _lax_const(lax.real(z), 2. / np.sqrt(np.pi)))))


def _promote_args_complex(name, *args):
    """JAX's ``promote_args_complex``: the promoted dtype's complex counterpart (complex128 from float64)."""
    check_arraylike(name, *args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = to_inexact_dtype(dtype)
    complex_dtype = np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)
    return promote_shapes(name, *[convert(a, complex_dtype, weak) for a in args])


def wofz(z):
    """The Faddeeva function exp(-z^2) erfc(-iz), real or complex z, complex result."""
    z, = _promote_args_complex("wofz", z)
    return _wofz(z)
