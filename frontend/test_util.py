"""``check_grads``: derivatives from autodiff against central finite differences, as ``jax.test_util``.

Each order is checked along one random direction (seeded), so the cost does not
grow with the size of the inputs: forward mode compares ``jvp`` with the
difference quotient, reverse mode compares the inner products ``<t, vjp(c)>``
and ``<jvp(t), c>``; higher orders recurse on the JVP / VJP functions.
"""
from __future__ import annotations

import functools

import numpy as np

from . import ad, dtypes, tree_util

EPS = 1e-4
_DEFAULT_TOLERANCE = {np.dtype(dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
                      np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5}


def _dtype(x):
    return np.dtype(x.dtype) if hasattr(x, "dtype") else dtypes.canonicalize_dtype(dtypes.dtype(x))


def _tolerance(dtype, tol):
    if tol is None:
        return _DEFAULT_TOLERANCE.get(np.dtype(dtype), 1e-5)
    if isinstance(tol, dict):
        return {np.dtype(k): v for k, v in tol.items()}.get(np.dtype(dtype), _DEFAULT_TOLERANCE.get(dtype, 1e-5))
    return tol


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
    def close(x, y):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, f"{err_msg}: shapes {x.shape} and {y.shape} differ"
        a = max(_tolerance(x.dtype, atol), _tolerance(y.dtype, atol))
        r = max(_tolerance(x.dtype, rtol), _tolerance(y.dtype, rtol))
        np.testing.assert_allclose(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                                   y.astype(np.complex128 if y.dtype.kind == "c" else np.float64),
                                   atol=a * x.size, rtol=r * y.size, err_msg=err_msg)
    tree_util.tree_map(close, xs, ys)


def _rand_like(rng, x):
    shape, dtype = np.shape(x), _dtype(x)
    value = np.asarray(rng.randn(*shape), dtype)
    if np.issubdtype(dtype, np.complexfloating):
        value = value + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype)
    return value


def _scaled(xs, a):
    return tree_util.tree_map(lambda x: np.multiply(np.asarray(x), np.array(a, _dtype(x)), dtype=_dtype(x)), xs)


def _combine(op, xs, ys):
    return tree_util.tree_map(lambda x, y: np.asarray(op(np.asarray(x), np.asarray(y)), _dtype(x)), xs, ys)


def _safe_sub(x, y):
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.array(0, x.dtype), np.subtract(x, y, dtype=x.dtype))


def numerical_jvp(f, primals, tangents, eps=EPS):
    delta = _scaled(tangents, eps)
    f_pos = f(*_combine(np.add, primals, delta))
    f_neg = f(*_combine(np.subtract, primals, delta))
    return _scaled(tree_util.tree_map(_safe_sub, f_pos, f_neg), 0.5 / eps)


def _inner_prod(xs, ys):
    def contract(x, y):
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return sum(tree_util.tree_leaves(tree_util.tree_map(contract, xs, ys)))


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    rng = np.random.RandomState(0)
    tangent = tree_util.tree_map(functools.partial(_rand_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    check_close(v_out, f(*args), atol=atol, rtol=rtol, err_msg=f"{err_msg} primal" if err_msg else "primal")
    check_close(t_out, numerical_jvp(f, args, tangent, eps=eps), atol=atol, rtol=rtol,
                err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    rng = np.random.RandomState(0)
    v_out, vjp_fun = f_vjp(*args)
    check_close(v_out, f(*args), atol=atol, rtol=rtol, err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_util.tree_map(functools.partial(_rand_like, rng), args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_util.tree_map(functools.partial(_rand_like, rng), v_out)
    conj = functools.partial(tree_util.tree_map, lambda x: np.conj(np.asarray(x)))
    cotangent_out = conj(vjp_fun(conj(cotangent)))
    check_close(_inner_prod(tangent, cotangent_out), _inner_prod(tangent_out, cotangent), atol=atol, rtol=rtol,
                err_msg=f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks derivatives of ``f`` at ``args`` up to ``order`` in the given ``modes``; raises AssertionError."""
    args = tuple(args)
    eps = eps or EPS

    def check(f, args, order, err_msg=""):
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(f, functools.partial(ad.jvp, f), args, atol, rtol, eps, msg)
            if order > 1:
                check(functools.partial(ad.jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(f, functools.partial(ad.vjp, f), args, atol, rtol, eps, msg)
            if order > 1:
                def f_vjp(*xs):
                    out, pullback = ad.vjp(f, *xs)
                    return pullback(out)
                check(f_vjp, args, order - 1, msg)

    check(f, args, order)
