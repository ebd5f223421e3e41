"""Special functions for the NumPy reference rules (no SciPy dependency).

Evaluated in float64 and rounded to the operand's dtype by the caller, which is
at least as accurate as XLA's float32 approximations they are compared with.
"""
from __future__ import annotations

import math

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _lgamma_scalar(x):
    try:
        return math.lgamma(x)
    except ValueError:
        return math.inf
    except OverflowError:
        return math.inf


_lgamma = np.frompyfunc(_lgamma_scalar, 1, 1)


def erf(x):
    return np.asarray(_erf(np.asarray(x, np.float64)), np.float64)


def erfc(x):
    return np.asarray(_erfc(np.asarray(x, np.float64)), np.float64)


def lgamma(x):
    x = np.asarray(x, np.float64)
    out = np.asarray(_lgamma(x), np.float64)
    return np.where(np.isnan(x), np.nan, out)


def digamma(x):
    """psi(x) by reflection for x < 0.5, recurrence up to 10, then the asymptotic series (to ~1e-16, so that
    finite differences of it, as check_grads takes of lgamma's derivative, stay accurate)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        y = np.where(reflect, 1.0 - x, x)
        acc = np.zeros_like(y)
        for _ in range(10):
            small = y < 10.0
            acc = acc - np.where(small, 1.0 / y, 0.0)
            y = np.where(small, y + 1.0, y)
        inv2 = 1.0 / (y * y)
        series = np.log(y) - 0.5 / y - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
            1 / 240 - inv2 * (1 / 132 - inv2 * (691 / 32760 - inv2 / 12))))))
        result = acc + series
        result = np.where(reflect, result - np.pi / np.tan(np.pi * x), result)
        pole = (x <= 0) & (x == np.floor(x))
        return np.where(pole, np.nan, result)


# Cephes zeta.c's Euler-Maclaurin coefficients: (2k)! / B_2k.
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta(s, q):
    """Hurwitz zeta(s, q) as Cephes computes it (which XLA's follows): 9+ terms summed directly (more for
    q < 0, until the terms' arguments pass 9), then the Euler-Maclaurin tail."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        steps = int(np.clip(np.nanmax(np.ceil(9.0 - q), initial=9.0), 9, 1 << 16))
        total = q ** -s
        a = q.copy()
        for _ in range(steps):
            a = a + 1.0
            total = total + a ** -s
        b = a ** -s
        total = total + b * a / (s - 1.0) - 0.5 * b
        fact, k = np.ones_like(s), 0.0
        for coeff in _ZETA_A:
            fact = fact * (s + k)
            b = b / a
            total = total + fact * b / coeff
            fact = fact * (s + k + 1.0)
            b = b / a
            k += 2.0
        # At a pole (q a whole number <= 0) XLA's sum gives inf for even s and NaN (inf - inf) for odd s.
        pole = (q <= 0) & (q == np.floor(q))
        out = np.where(pole, np.where(np.mod(s, 2.0) == 0.0, np.inf, np.nan), total)
        out = np.where(s == 1.0, np.inf, out)
        return np.where((s < 1.0) | ((q < 0) & (s != np.floor(s))) | np.isnan(s) | np.isnan(q), np.nan, out)


def polygamma(m, x):
    """psi^(m)(x) = (-1)^(m+1) m! zeta(m+1, x) for whole m >= 1, digamma for m = 0, NaN otherwise (as XLA)."""
    m, x = np.broadcast_arrays(np.asarray(m, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        sign = np.where(np.mod(m, 2.0) == 1.0, 1.0, -1.0)
        factorial = np.exp(lgamma(m + 1.0))
        out = np.where(m == 0, digamma(x), sign * factorial * zeta(m + 1.0, x))
        return np.where((m != np.floor(m)) | (m < 0), np.nan, out)


def erf_inv(x):
    """Inverse erf: a rational first guess refined by Newton steps on ``erf``."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - x) * (1.0 + x))
        guess = np.where(w < 5.0, _central(w - 2.5), _tail(np.sqrt(w) - 3.0)) * x
        for _ in range(3):
            err = erf(guess) - x
            guess = guess - err / (2.0 / np.sqrt(np.pi) * np.exp(-guess * guess))
        guess = np.where(x == 1.0, np.inf, np.where(x == -1.0, -np.inf, guess))
        return np.where((x > 1.0) | (x < -1.0) | np.isnan(x), np.nan, guess)


def _poly(coeffs, w):
    p = np.zeros_like(w)
    for c in coeffs:
        p = p * w + c
    return p


def _central(w):
    return _poly([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], w)


def _tail(w):
    return _poly([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], w)
