"""Whole programs written once against the JAX API and run three ways: eagerly, jitted through IREE, and by JAX.
Each combines control flow with ordinary numerics the way user code does: an ODE integrated with RK4 in a
``fori_loop`` (and its gradient), k-means with a ``fori_loop`` of assignments and ``.at[].add`` updates, and
Newton's method in a ``while_loop`` (with its forward-mode derivative, which JAX allows through a while)."""
import numpy as np
import pytest

import irax
import irax.numpy as inp

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

LIBS = {"irax": (irax, inp), "jax": (jax, jnp)}


def rk4(lib, np_):
    """A damped pendulum integrated over 50 RK4 steps; the loss is the final state's energy."""
    def field(state, params):
        theta, omega = state[0], state[1]
        damping, gravity = params[0], params[1]
        return np_.stack([omega, -damping * omega - gravity * np_.sin(theta)])

    def integrate(state, params, dt=0.05):
        def step(_, s):
            k1 = field(s, params)
            k2 = field(s + dt / 2 * k1, params)
            k3 = field(s + dt / 2 * k2, params)
            k4 = field(s + dt * k3, params)
            return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return lib.lax.fori_loop(0, 50, step, state)

    def energy(state, params):
        final = integrate(state, params)
        return 0.5 * final[1] ** 2 + params[1] * (1 - np_.cos(final[0]))
    return integrate, energy


def kmeans(lib, np_):
    """Ten rounds of Lloyd's algorithm: assign each point to its nearest centre, move centres to the means."""
    def fit(points, centres):
        def round_(_, centres):
            d2 = np_.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
            label = np_.argmin(d2, axis=1)
            sums = np_.zeros_like(centres).at[label].add(points)
            counts = np_.zeros(centres.shape[0], points.dtype).at[label].add(1.0)
            return np_.where(counts[:, None] > 0, sums / np_.maximum(counts, 1.0)[:, None], centres)
        centres = lib.lax.fori_loop(0, 10, round_, centres)
        d2 = np_.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
        return centres, np_.argmin(d2, axis=1), np_.min(d2, axis=1).sum()
    return fit


def newton(lib, np_):
    """The root of x^3 - a x - b by Newton's method, iterated until the step is below 1e-6."""
    def solve(a, b):
        def body(state):
            x, _, n = state
            step = (x ** 3 - a * x - b) / (3 * x ** 2 - a)
            return x - step, np_.abs(step), n + 1
        x, _, n = lib.lax.while_loop(lambda s: (s[1] > 1e-6) & (s[2] < 100), body,
                                     (np_.asarray(3.0, np_.float32), np_.asarray(1.0, np_.float32), 0))
        return x, n
    return solve


def _close(mine, theirs, tol):
    for m, t in zip(irax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(theirs)):
        m, t = np.asarray(m), np.asarray(t)
        assert m.shape == t.shape and m.dtype == t.dtype
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


def test_rk4_fori_loop_and_gradient():
    state, params = np.array([1.0, 0.0], np.float32), np.array([0.3, 9.81], np.float32)
    (integrate, energy), (j_integrate, j_energy) = rk4(*LIBS["irax"]), rk4(*LIBS["jax"])
    want = j_integrate(state, params)
    _close(integrate(state, params), want, 1e-5)
    _close(irax.jit(integrate)(state, params), want, 1e-5)
    want_grad = jax.grad(j_energy, (0, 1))(state, params)
    _close(irax.grad(energy, (0, 1))(state, params), want_grad, 1e-4)
    _close(irax.jit(irax.grad(energy, (0, 1)))(state, params), want_grad, 1e-4)
    assert str(irax.make_jaxpr(integrate)(state, params)) == str(jax.make_jaxpr(j_integrate)(state, params))


def test_kmeans():
    rng = np.random.default_rng(0)
    blobs = np.array([[0, 0], [4, 4], [-4, 3]], np.float32)
    points = (blobs[rng.integers(0, 3, 120)] + rng.normal(size=(120, 2))).astype(np.float32)
    centres = points[:3].copy()
    want = kmeans(*LIBS["jax"])(points, centres)
    fit = kmeans(*LIBS["irax"])
    _close(fit(points, centres), want, 1e-4)
    _close(irax.jit(fit)(points, centres), want, 1e-4)


def test_newton_while_loop_and_forward_derivative():
    solve, j_solve = newton(*LIBS["irax"]), newton(*LIBS["jax"])
    for a, b in [(2.0, 5.0), (1.0, 1.0), (6.0, -2.0)]:
        a, b = np.float32(a), np.float32(b)
        want = j_solve(a, b)
        _close(solve(a, b), want, 1e-5)
        _close(irax.jit(solve)(a, b), want, 1e-5)
        # the root's derivative in b, by implicit differentiation: 1 / f'(x)
        _, tangent = irax.jvp(lambda b: solve(a, b)[0], (b,), (np.float32(1.0),))
        _, j_tangent = jax.jvp(lambda b: j_solve(a, b)[0], (b,), (np.float32(1.0),))
        _close(tangent, j_tangent, 1e-4)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        irax.grad(lambda b: solve(np.float32(2.0), b)[0])(np.float32(5.0))
    batched = irax.jit(irax.vmap(solve))(np.array([2.0, 1.0, 6.0], np.float32), np.array([5.0, 1.0, -2.0], np.float32))
    _close(batched, jax.vmap(j_solve)(np.array([2.0, 1.0, 6.0], np.float32), np.array([5.0, 1.0, -2.0], np.float32)),
           1e-5)
