"""``irax.scipy.optimize``: JAX's ``minimize`` (BFGS and its experimental L-BFGS), ported step for step from
``jax/_src/scipy/optimize/{minimize,bfgs,_lbfgs,line_search}.py`` so that iterates, counters and status codes, and
the jaxprs of the ``while_loop``s, come out as JAX's. One module, not JAX's package: only ``minimize`` and
``OptimizeResults`` are public there, and the line search is a private helper of both methods.
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.ad import value_and_grad
from irax.numpy._util import promote_dtypes_inexact

__all__ = ["OptimizeResults", "minimize"]

_dot = functools.partial(jnp.dot, precision=lax.Precision.HIGHEST)
_einsum = functools.partial(jnp.einsum, precision=lax.Precision.HIGHEST)


class OptimizeResults(NamedTuple):
    """Object holding optimization results.

    Parameters:
      x: final solution.
      success: ``True`` if optimization succeeded.
      status: integer solver specific return code. 0 means converged (nominal), 1=max BFGS iters reached,
        3=zoom failed, 4=saddle point reached, 5=max line search iters reached, -1=undefined
      fun: final function value.
      jac: final jacobian array.
      hess_inv: final inverse Hessian estimate.
      nfev: integer number of function calls used.
      njev: integer number of gradient evaluations.
      nit: integer number of iterations of the optimization algorithm.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimizes a scalar function of a 1-D array (``jax.scipy.optimize.minimize``); gradients come from ``grad``.

    Args:
      fun: the objective, ``fun(x, *args) -> float`` for ``x`` of shape ``(n,)``; it must be differentiable.
      x0: the initial guess, a real array of shape ``(n,)``.
      args: a tuple of extra arguments to ``fun``.
      method: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"`` (any case).
      tol: unused, as in JAX: pass the solver's ``gtol`` in ``options``.
      options: the solver's keyword options (``maxiter``, ``gtol``, ``norm``, ``line_search_maxiter``; L-BFGS
        also ``maxcor``, ``ftol``, ``maxfun``, ``maxgrad``, ``maxls``).

    Returns:
      An :class:`OptimizeResults`.

    Raises:
      TypeError: ``args`` is not a tuple.
      ValueError: ``method`` is not one of the two.
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x):
        return fun(x, *args)

    if method.lower() == "bfgs":
        results = _minimize_bfgs(fun_with_args, x0, **options)
        hess_inv = results.H_k
    elif method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        results = _minimize_lbfgs(fun_with_args, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    success = results.converged & jnp.logical_not(results.failed)
    return OptimizeResults(x=results.x_k, success=success, status=results.status, fun=results.f_k, jac=results.g_k,
                           hess_inv=hess_inv, nfev=results.nfev, njev=results.ngev, nit=results.k)


# --- BFGS (bfgs.py) ------------------------------------------------------------------------------------------------

class _BFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Algorithm 6.1 of Wright and Nocedal, 'Numerical Optimization' (1999)."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    initial_H = jnp.eye(d, dtype=x0.dtype)
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1, nhev=0,
                         x_k=x0, f_k=f_0, g_k=g_0, H_k=initial_H, old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
                         status=0, line_search_status=0)

    def cond_fun(state):
        return jnp.logical_not(state.converged) & jnp.logical_not(state.failed) & (state.k < maxiter)

    def body_fun(state):
        p_k = -_dot(state.H_k, state.g_k)
        ls = _line_search(fun, state.x_k, p_k, old_fval=state.f_k, old_old_fval=state.old_old_fval,
                          gfk=state.g_k, maxiter=line_search_maxiter)
        state = state._replace(nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev, failed=ls.failed,
                               line_search_status=ls.status)
        s_k = ls.a_k * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = ls.f_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        H_kp1 = _einsum("ij,jk,lk", w, state.H_k, w) + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :]
        H_kp1 = jnp.where(jnp.isfinite(rho_k), H_kp1, state.H_k)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(converged=converged, k=state.k + 1, x_k=x_kp1, f_k=f_kp1, g_k=g_kp1, H_k=H_kp1,
                              old_old_fval=state.f_k)

    state = lax.while_loop(cond_fun, body_fun, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)


# JAX's name for it, which a TypeError for an unknown option names ("minimize_bfgs() got an unexpected keyword ...")
_minimize_bfgs.__name__ = _minimize_bfgs.__qualname__ = "minimize_bfgs"


# --- L-BFGS (_lbfgs.py) --------------------------------------------------------------------------------------------

class _LBFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09, gtol=1e-05,
                    maxfun=None, maxgrad=None, maxls=20):
    """Algorithm 7.5 of Wright and Nocedal, with Sorber et al.'s (2012) extension to complex variables."""
    d = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    state_initial = _LBFGSResults(
        converged=jnp.array(False, dtype=bool), failed=jnp.array(False, dtype=bool), k=0, nfev=1, ngev=1, x_k=x0,
        f_k=f_0, g_k=g_0, s_history=jnp.zeros((maxcor, d), dtype=dtype), y_history=jnp.zeros((maxcor, d), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1., status=0, ls_status=0)

    def cond_fun(state):
        return (~state.converged) & (~state.failed)

    def body_fun(state):
        p_k = _two_loop_recursion(state)
        ls = _line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k, maxiter=maxls)
        s_k = jnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = ls.f_k
        g_kp1 = ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k_inv = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(rho_k_inv).astype(y_k.dtype)
        gamma = rho_k_inv / jnp.real(_dot(jnp.conj(y_k), y_k))

        status = jnp.array(0)
        status = jnp.where(state.f_k - f_kp1 < ftol, 4, status)
        status = jnp.where(state.ngev >= maxgrad, 3, status)
        status = jnp.where(state.nfev >= maxfun, 2, status)
        status = jnp.where(state.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & (~converged), k=state.k + 1, nfev=state.nfev + ls.nfev,
            ngev=state.ngev + ls.ngev, x_k=x_kp1.astype(state.x_k.dtype), f_k=f_kp1.astype(state.f_k.dtype),
            g_k=g_kp1.astype(state.g_k.dtype), s_history=_update_history_vectors(state.s_history, s_k),
            y_history=_update_history_vectors(state.y_history, y_k),
            rho_history=_update_history_scalars(state.rho_history, rho_k), gamma=gamma.astype(state.g_k.dtype),
            status=jnp.where(converged, 0, status), ls_status=ls.status)

    return lax.while_loop(cond_fun, body_fun, state_initial)


def _two_loop_recursion(state):
    dtype = state.rho_history.dtype
    his_size = len(state.rho_history)
    curr_size = jnp.where(state.k < his_size, state.k, his_size)
    q = -jnp.conj(state.g_k)
    a_his = jnp.zeros_like(state.rho_history)

    def body_fun1(j, carry):
        i = his_size - 1 - j
        _q, _a_his = carry
        a_i = state.rho_history[i] * _dot(jnp.conj(state.s_history[i]), _q).real.astype(dtype)
        _a_his = _a_his.at[i].set(a_i)
        _q = _q - a_i * jnp.conj(state.y_history[i])
        return _q, _a_his

    q, a_his = lax.fori_loop(0, curr_size, body_fun1, (q, a_his))
    q = state.gamma * q

    def body_fun2(j, _q):
        i = his_size - curr_size + j
        b_i = state.rho_history[i] * _dot(state.y_history[i], _q).real.astype(dtype)
        return _q + (a_his[i] - b_i) * state.s_history[i]

    return lax.fori_loop(0, curr_size, body_fun2, q)


def _update_history_vectors(history, new):
    return jnp.roll(history, -1, axis=0).at[-1, :].set(new)


def _update_history_scalars(history, new):
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


# --- the strong-Wolfe line search (line_search.py) -----------------------------------------------------------------

def _cubicmin(a, fa, fpa, b, fb, c, fc):
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom
    radical = B * B - 3. * A * C
    return a + (-B + jnp.sqrt(radical)) / (3. * A)


def _quadmin(a, fa, fpa, b, fb):
    D = fa
    C = fpa
    db = b - a
    B = (fb - D - C * db) / (db ** 2)
    return a - C / (2. * B)


def _binary_replace(replace_bit, original_dict, new_dict, keys=None):
    if keys is None:
        keys = new_dict.keys()
    return {key: jnp.where(replace_bit, new_dict[key], original_dict[key]) for key in keys}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi, g_0,
          pass_through):
    """Algorithm 3.6 of Wright and Nocedal: cubic, then quadratic, then bisection; selects with ``where``, not
    ``cond``, as JAX does."""
    state = _ZoomState(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi,
                       phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2., phi_rec=(phi_lo + phi_hi) / 2.,
                       a_star=1., phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0, nfev=0, ngev=0)
    delta1 = 0.2
    delta2 = 0.1

    def body(state):
        dalpha = (state.a_hi - state.a_lo)
        a = jnp.minimum(state.a_hi, state.a_lo)
        b = jnp.maximum(state.a_hi, state.a_lo)
        cchk = delta1 * dalpha
        qchk = delta2 * dalpha
        threshold = jnp.where((dtypes.finfo(dalpha.dtype).bits < 64), 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi, state.a_rec,
                              state.phi_rec)
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = jnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = jnp.where(use_quad, a_j_quad, a_j)
        a_j = jnp.where(use_bisection, a_j_bisection, a_j)

        phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = state._replace(**_binary_replace(hi_to_j, state._asdict(), dict(
            a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi, phi_rec=state.phi_hi)))
        state = state._replace(done=star_to_j | state.done, **_binary_replace(star_to_j, state._asdict(), dict(
            a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)))
        state = state._replace(**_binary_replace(hi_to_lo, state._asdict(), dict(
            a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo, a_rec=state.a_hi, phi_rec=state.phi_hi)))
        state = state._replace(**_binary_replace(lo_to_j & ~hi_to_lo, state._asdict(), dict(
            a_rec=state.a_lo, phi_rec=state.phi_lo)))
        state = state._replace(**_binary_replace(lo_to_j, state._asdict(), dict(
            a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)))
        state = state._replace(j=state.j + 1)
        # JAX allows more zoom steps than SciPy (30): it needs them to reach the same values.
        return state._replace(failed=state.failed | (state.j >= 30))

    return lax.while_loop(lambda state: (~state.done) & (~pass_through) & (~state.failed), body, state)


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class _LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Algorithm 3.5 of Wright and Nocedal: an inexact line search meeting the strong Wolfe conditions."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def restricted_func_and_grad(t):
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        dphi = jnp.real(_dot(g, pk))
        return phi, dphi, g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted_func_and_grad(0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = jnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i, phi_i):
        return phi_i > phi_0 + c1 * a_i * dphi_0  # the negation of the sufficient-decrease condition

    def wolfe_two(dphi_i):
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    evaluated = 1 if (old_fval is None or gfk is None) else 0
    # Iterations count from 1 as in Wright and Nocedal (SciPy starts at 0, scipy/scipy#12157).
    state = _LineSearchState(done=jnp.array(False, dtype=bool), failed=jnp.array(False, dtype=bool), i=1, a_i1=0.,
                             phi_i1=phi_0, dphi_i1=dphi_0, nfev=evaluated, ngev=evaluated, a_star=0.,
                             phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(state):
        a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.)
        phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, state.a_i1, state.phi_i1, state.dphi_i1,
                      a_i, phi_i, dphi_i, gfk, ~star_to_zoom1)
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(restricted_func_and_grad, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, state.a_i1, state.phi_i1,
                      state.dphi_i1, gfk, ~star_to_zoom2)
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        keys = ["a_star", "phi_star", "dphi_star", "g_star"]
        state = state._replace(done=star_to_zoom1 | state.done, failed=(star_to_zoom1 & zoom1.failed) | state.failed,
                               **_binary_replace(star_to_zoom1, state._asdict(), zoom1._asdict(), keys=keys))
        state = state._replace(done=star_to_i | state.done, **_binary_replace(star_to_i, state._asdict(), dict(
            a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)))
        state = state._replace(done=star_to_zoom2 | state.done, failed=(star_to_zoom2 & zoom2.failed) | state.failed,
                               **_binary_replace(star_to_zoom2, state._asdict(), zoom2._asdict(), keys=keys))
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed), body, state)
    status = jnp.where(state.failed, jnp.array(1), jnp.where(state.i > maxiter, jnp.array(3), jnp.array(0)))
    # Below 64 bits a tiny step stalls the optimizer on a zero direction: floor its magnitude at 1e-8.
    alpha_k = jnp.asarray(state.a_star)
    alpha_k = jnp.where((dtypes.finfo(alpha_k.dtype).bits != 64) & (jnp.abs(alpha_k) < 1e-8),
                        jnp.sign(alpha_k) * 1e-8, alpha_k)
    return _LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1, nfev=state.nfev,
                              ngev=state.ngev, k=state.i, a_k=alpha_k, f_k=state.phi_star, g_k=state.g_star,
                              status=status)
