"""``irax.experimental.ode`` against JAX's ``jax.experimental.ode``: ``odeint`` on three ODEs (an array state with an
argument, a dict state, a tuple state with two arguments and a time-dependent force), on the reference backend
(``disable_jit``), compiled, and through its own jit when called eagerly (a second call retraces nothing);
reverse-mode gradients with respect to the initial state, the times and the arguments against JAX's and against
central differences, a second derivative, ``vmap``; the module's helpers; and JAX's exceptions for bad input.

The file compiles five programs (each an IREE compile of nested loops): the values and gradients are checked on
the reference backend, and the compiled path once per ODE and once for a gradient.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.experimental.ode as iode
import irax.numpy as inp

jax = pytest.importorskip("jax")
import jax.experimental.ode as jode  # noqa: E402
import jax.numpy as jnp  # noqa: E402

T = np.linspace(0.0, 3.0, 7).astype(np.float32)


def decay(y, t, k):
    return -k * y


def spiral(y, t):
    return {"x": y["v"], "v": -y["x"] - 0.1 * y["v"]}


def oscillator(y, t, w, c):
    x, v = y
    return v, -(w ** 2) * x - c * v + 0.1 * t


# name -> (func, y0, args, odeint options)
CASES = {
    "decay": (decay, np.array([1.0, 2.0, -0.5], np.float32), (np.float32(0.7),), {}),
    "dict_state": (spiral, {"x": np.array([1.0, 0.5], np.float32), "v": np.array([0.0, 1.0], np.float32)}, (),
                   dict(rtol=1e-6, atol=1e-6)),
    "oscillator": (oscillator, (np.float32(1.0), np.float32(0.0)), (np.float32(2.0), np.float32(0.3)),
                   dict(rtol=1e-5, atol=1e-5)),
}


def _close(got, want, rtol=1e-5, atol=1e-5):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _jax_odeint(case, y0=None, t=T, args=None):
    func, case_y0, case_args, options = CASES[case]
    return jode.odeint(func, case_y0 if y0 is None else y0, t, *(case_args if args is None else args), **options)


@pytest.mark.parametrize("case", CASES)
def test_odeint_reference_backend(case):
    func, y0, args, options = CASES[case]
    with irax.disable_jit():
        got = iode.odeint(func, y0, T, *args, **options)
    _close(got, _jax_odeint(case))


@pytest.mark.parametrize("case", CASES)
def test_odeint_under_jit(case):
    func, y0, args, options = CASES[case]
    got = irax.jit(lambda y0, t, *args: iode.odeint(func, y0, t, *args, **options))(y0, T, *args)
    _close(got, _jax_odeint(case))


def test_eager_call_compiles_once():
    """JAX's closure_convert cache keeps the converted function, so a second call with other argument values
    reuses the compiled integrator without tracing ``func`` again."""
    calls = []

    def counted(y, t, k):
        calls.append(None)
        return -k * y
    y0 = CASES["decay"][1]
    _close(iode.odeint(counted, y0, T, np.float32(0.7)), _jax_odeint("decay"))
    traced = len(calls)
    _close(iode.odeint(counted, y0, T, np.float32(1.3)), _jax_odeint("decay", args=(np.float32(1.3),)))
    assert len(calls) == traced


def _loss(odeint, case):
    func, _, _, options = CASES[case]
    weights = np.linspace(-1.0, 1.0, len(T) * 4, dtype=np.float32).reshape(len(T), 4)

    def loss(y0, t, *args):
        ys = jax.tree_util.tree_leaves(odeint(func, y0, t, *args, **options))
        return sum((y.reshape(len(T), -1) * weights[:, :y.size // len(T)]).sum() for y in ys)
    return loss


def _argnums(case):
    return tuple(range(2 + len(CASES[case][2])))


@pytest.mark.parametrize("case", CASES)
def test_grad_matches_jax(case):
    _, y0, args, _ = CASES[case]
    got = irax.grad(_loss(iode.odeint, case), _argnums(case))(y0, T, *args)
    want = jax.grad(_loss(jode.odeint, case), _argnums(case))(y0, T, *args)
    _close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_grad_matches_finite_differences(case):
    """The gradient along one random direction of (y0, t, *args) against a central difference."""
    _, y0, args, _ = CASES[case]
    primals = (y0, T, *args)
    loss = _loss(iode.odeint, case)
    grads = irax.grad(loss, _argnums(case))(*primals)
    leaves, tree = jax.tree_util.tree_flatten(primals)
    rng = np.random.default_rng(0)
    direction = [rng.standard_normal(np.shape(x)).astype(np.float32) for x in leaves]
    direction[len(jax.tree_util.tree_leaves(y0))] *= 0.1  # keep the times increasing
    eps = np.float32(1e-2)

    def at(sign):
        moved = jax.tree_util.tree_unflatten(tree, [x + sign * eps * d for x, d in zip(leaves, direction)])
        with irax.disable_jit():
            return float(loss(*moved))
    numeric = (at(1) - at(-1)) / (2 * eps)
    analytic = sum(float(np.vdot(np.asarray(g), d)) for g, d in zip(jax.tree_util.tree_leaves(grads), direction))
    np.testing.assert_allclose(analytic, numeric, rtol=2e-3, atol=2e-3)


def test_grad_under_jit():
    _, y0, args, _ = CASES["oscillator"]
    got = irax.jit(irax.grad(_loss(iode.odeint, "oscillator"), (0, 1, 2, 3)))(y0, T, *args)
    want = jax.grad(_loss(jode.odeint, "oscillator"), (0, 1, 2, 3))(y0, T, *args)
    _close(got, want, rtol=1e-4, atol=1e-5)


def test_second_derivative():
    """The adjoint's own odeint is differentiable too (JAX's rules nest one odeint in the other's backward pass):
    for y' = -k y, sum(y(t)**2) is sum(y0**2 exp(-2 k t)), whose second derivative in k is known."""
    y0, k = CASES["decay"][1], np.float32(0.5)
    got = irax.grad(irax.grad(lambda k: (iode.odeint(decay, y0, T[:3], k) ** 2).sum()))(k)
    t = T[:3, None].astype(np.float64)
    np.testing.assert_allclose(got, (4 * t ** 2 * y0 ** 2 * np.exp(-2 * k * t)).sum(), rtol=1e-4)


def test_vmap_matches_stacked_calls():
    y0s = np.array([[1.0, 2.0, -0.5], [0.5, 0.0, 3.0]], np.float32)
    with irax.disable_jit():
        got = irax.vmap(lambda y0: iode.odeint(decay, y0, T, np.float32(0.7)))(y0s)
    _close(got, np.stack([np.asarray(_jax_odeint("decay", y0=y0)) for y0 in y0s]))


Y = np.array([1.0, -2.0], np.float32)
K = np.array([[-0.5, 1.0], [-0.4, 0.9], [-0.45, 0.95], [-0.3, 0.7], [-0.35, 0.8], [-0.2, 0.6], [-0.25, 0.5]],
             np.float32)
HELPERS = {
    "initial_step_size": lambda m, np_: m.initial_step_size(lambda y, t: -0.5 * y, np_.float32(0.0), np_.asarray(Y),
                                                            4, 1.4e-8, 1.4e-8, np_.asarray(-0.5 * Y)),
    "runge_kutta_step": lambda m, np_: m.runge_kutta_step(lambda y, t: -0.5 * y + t, np_.asarray(Y),
                                                          np_.asarray(-0.5 * Y), np_.float32(0.5), np_.float32(0.1)),
    "interp_fit_dopri": lambda m, np_: m.interp_fit_dopri(np_.asarray(Y), np_.asarray(0.9 * Y), np_.asarray(K),
                                                          np_.float32(0.1)),
    "fit_4th_order_polynomial": lambda m, np_: m.fit_4th_order_polynomial(
        np_.asarray(Y), np_.asarray(0.9 * Y), np_.asarray(0.95 * Y), np_.asarray(K[0]), np_.asarray(K[-1]),
        np_.float32(0.1)),
    "mean_error_ratio": lambda m, np_: m.mean_error_ratio(np_.asarray(1e-6 * Y), 1e-5, 1e-6, np_.asarray(Y),
                                                          np_.asarray(0.9 * Y)),
    "optimal_step_size": lambda m, np_: [m.optimal_step_size(np_.float32(0.1), np_.float32(ratio))
                                         for ratio in (0.0, 0.5, 3.0)],
    "abs2_complex": lambda m, np_: m.abs2(np_.asarray(np.array([1 + 2j, -3j], np.complex64))),
    "abs2_real": lambda m, np_: m.abs2(np_.asarray(Y)),
}


@pytest.mark.parametrize("name", HELPERS)
def test_helpers(name):
    with irax.disable_jit():
        got = HELPERS[name](iode, inp)
    _close(got, HELPERS[name](jode, jnp), rtol=2e-6, atol=1e-7)


def test_public_names():
    public = {n for n, v in vars(jode).items()
              if callable(v) and getattr(v, "__module__", None) == jode.__name__ and not n.startswith("_")}
    assert public <= set(iode.__all__)
    assert all(callable(getattr(iode, n)) for n in iode.__all__)


ERRORS = {
    "string_arg": lambda m: m.odeint(lambda y, t, s: -y, Y, T, "abc"),
    "object_arg_in_list": lambda m, o=object(): m.odeint(lambda y, t, s: -y, Y, T, [o]),
    "integer_times": lambda m: m.odeint(lambda y, t: -y, Y, np.arange(3)),
    "list_times": lambda m: m.odeint(lambda y, t: -y, Y, [0.0, 1.0]),
    "derivative_of_wrong_size": lambda m: m.odeint(lambda y, t: y[:1], Y, T),
    "derivative_of_wrong_tree": lambda m: m.odeint(lambda y, t: {"a": -y["a"]}, {"a": Y, "b": Y}, T),
    "derivative_of_longer_tuple": lambda m: m.odeint(lambda y, t: (-y[0], -y[1], -y[0]), (Y, Y), T),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_jax(name):
    with pytest.raises(Exception) as want:
        ERRORS[name](jode)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        ERRORS[name](iode)


def test_forward_mode_is_refused_as_in_jax():
    message = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
    for transforms, module in ((jax, jode), (irax, iode)):
        with pytest.raises(TypeError, match=re.escape(message)):
            transforms.jvp(lambda k: module.odeint(decay, Y, T, k), (np.float32(0.5),), (np.float32(1.0),))


def test_unhashable_tolerance():
    for module in (jode, iode):
        with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
            module.odeint(lambda y, t: -y, Y, T, rtol=np.array([1e-3]))
