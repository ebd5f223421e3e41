"""``lax.custom_linear_solve``, ``lax.custom_root`` and ``jnp.linalg.solve`` on them, against JAX: values eagerly
(the interpreter runs the solve body) and under ``irax.jit`` (IREE), ``make_jaxpr`` text of the op, its JVP, its
transpose (grad) and its batching (vmap at every operand placement), gradients (``check_grads``), and JAX's
errors; ``scipy.sparse.linalg.cg`` on it. Also ``precision`` of ``lax.dot_general`` and the ``jnp`` products,
and ``lax.broadcast_shapes``.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
import irax.scipy.sparse.linalg as ispl
from irax import lax as ilax
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.sparse.linalg as jspl  # noqa: E402

_rng = np.random.default_rng(0)
A3 = (_rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
A3B = (_rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
AINV = np.linalg.inv(A3).astype(np.float32)
AINVB = np.linalg.inv(A3B).astype(np.float32)
S3 = (A3 @ A3.T).astype(np.float32)
SINV = np.linalg.inv(S3).astype(np.float32)
V3, V3B = _rng.standard_normal(3).astype(np.float32), _rng.standard_normal((2, 3)).astype(np.float32)
B32, B3B2 = _rng.standard_normal((3, 2)).astype(np.float32), _rng.standard_normal((2, 3, 2)).astype(np.float32)


def _general(lax, a, b, ainv):
    """A solve whose transpose is given: matvec ``a @ x``, solves by a closed-over inverse."""
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, y: ainv @ y, lambda vm, y: ainv.T @ y)


def _symmetric(lax, a, b, ainv):
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, y: ainv @ y, symmetric=True)


def _forward_only(lax, a, b, ainv):
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, y: ainv @ y)


def _pytree(lax, a, b, ainv):
    """``b`` a pair: the map acts on both halves, the solve calls matvec (it traces inline)."""
    def matvec(x):
        return (a @ x[0], 2.0 * x[1])

    def solve(mv, y):
        return (ainv @ y[0], y[1] / 2.0)
    return lax.custom_linear_solve(matvec, b, solve, symmetric=True)


def _aux(lax, a, b, ainv):
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, y: (ainv @ y, (y * y).sum()),
                                   lambda vm, y: (ainv.T @ y, y.sum()), has_aux=True)


def _sum_of_solves(lax, a, b, ainv):
    """The solve used twice in one program, on a matvec that is itself a product of two maps."""
    x = lax.custom_linear_solve(lambda v: a @ (a.T @ v), b, lambda mv, y: ainv.T @ (ainv @ y), symmetric=True)
    return x + _general(lax, a, b, ainv)


def _vecmat_of_closed_over(lax, a, b, ainv):
    """Solves that apply their map to a value they close over: transpose_solve's constants are vecmat's first
    (JAX transposes ``a @ x`` as a call that takes ``a`` before the cotangent), then that value."""
    x0 = b * 2.0

    def solve(mv, y):
        return ainv @ (y - mv(x0)) + x0
    return lax.custom_linear_solve(lambda x: a @ x, b, solve, lambda vm, y: ainv.T @ (y - vm(x0)) + x0)


SOLVERS = {"general": _general, "symmetric": _symmetric, "forward_only": _forward_only, "aux": _aux,
           "sum_of_solves": _sum_of_solves, "vecmat_of_closed_over": _vecmat_of_closed_over}


def _both(fn):
    return (lambda *xs: fn(ilax, *xs)), (lambda *xs: fn(jax.lax, *xs))


def _text(mine, theirs, *args):
    assert str(irax.make_jaxpr(mine)(*args)) == str(jax.make_jaxpr(theirs)(*args))


def _close(got, want, tol=2e-5):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_custom_linear_solve_text_and_values(name):
    mine, theirs = _both(SOLVERS[name])
    args = (A3, V3, AINV)
    _text(mine, theirs, *args)
    want = theirs(*args)
    _close(mine(*args), want)
    _close(irax.jit(mine)(*args), want)


def test_custom_linear_solve_pytree_and_empty():
    mine, theirs = _both(_pytree)
    args = (A3, (V3, V3), AINV)
    _text(mine, theirs, *args)
    _close(irax.jit(mine)(*args), theirs(*args))
    mine, theirs = _both(_general)
    empty = (np.zeros((0, 0), np.float32), np.zeros(0, np.float32), np.zeros((0, 0), np.float32))
    _text(mine, theirs, *empty)
    assert mine(*empty).shape == (0,)


@pytest.mark.parametrize("name", ["general", "symmetric", "aux", "sum_of_solves"])
def test_custom_linear_solve_derivative_texts(name):
    mine, theirs = _both(SOLVERS[name])

    def programs(api, fn):
        loss = (lambda a, b, ainv: fn(a, b, ainv)[0].sum()) if name == "aux" else \
            (lambda a, b, ainv: (fn(a, b, ainv) ** 2).sum())
        return [lambda a, b, ainv: api.jvp(lambda a, b: fn(a, b, ainv), (a, b), (a, b)),
                api.grad(loss, (0, 1))]
    for m, t in zip(programs(irax, mine), programs(jax, theirs)):
        _text(m, t, A3, V3, AINV)


def test_custom_linear_solve_derivative_values():
    mine, theirs = _both(_general)
    loss_m = irax.grad(lambda a, b, ainv: (mine(a, b, ainv) ** 2).sum(), (0, 1))
    loss_t = jax.grad(lambda a, b, ainv: (theirs(a, b, ainv) ** 2).sum(), (0, 1))
    want = loss_t(A3, V3, AINV)
    _close(loss_m(A3, V3, AINV), want, 1e-4)
    _close(irax.jit(loss_m)(A3, V3, AINV), want, 1e-4)
    exact = lambda a, b: ilax.custom_linear_solve(  # noqa: E731
        lambda x: a @ x, b, lambda mv, y: inp.linalg.solve(a, y), lambda vm, y: inp.linalg.solve(a.T, y))
    check_grads(exact, (A3, V3), order=1, modes=["fwd", "rev"], atol=2e-2, rtol=2e-2)


def test_custom_linear_solve_check_grads_symmetric():
    """Exact inverses at the point, so that finite differences see the same map as the derivative."""
    mine, _ = _both(_symmetric)
    check_grads(lambda b: mine(S3, b, SINV), (V3,), order=2, modes=["fwd", "rev"], atol=2e-2, rtol=2e-2)


VMAP_AXES = [(0, None, 0), (None, 0, None), (0, 0, 0), (None, None, 0), (0, None, None), (0, 1, 0)]


@pytest.mark.parametrize("name", ["general", "symmetric", "forward_only", "aux"])
def test_custom_linear_solve_vmap(name):
    mine, theirs = _both(SOLVERS[name])
    programs = []
    for axes in VMAP_AXES:
        args = tuple(x if ax is None else (y if ax == 0 else np.moveaxis(y, 0, ax))
                     for x, y, ax in zip((A3, V3, AINV), (A3B, V3B, AINVB), axes))
        _text(irax.vmap(mine, axes), jax.vmap(theirs, axes), *args)
        programs.append((axes, args))
    compiled = irax.jit(lambda *all_args: [irax.vmap(mine, ax)(*a) for (ax, _), a in zip(programs, all_args)])
    got = compiled(*[a for _, a in programs])
    for (axes, args), g in zip(programs, got):
        _close(g, jax.vmap(theirs, axes)(*args), 1e-4)


def test_custom_linear_solve_vmap_of_grad():
    mine, theirs = _both(_general)
    prog = lambda api, fn: api.vmap(api.grad(lambda a, b, ainv: (fn(a, b, ainv) ** 2).sum(), (0, 1)))  # noqa: E731
    _text(prog(irax, mine), prog(jax, theirs), A3B, V3B, AINVB)
    _close(irax.jit(prog(irax, mine))(A3B, V3B, AINVB), prog(jax, theirs)(A3B, V3B, AINVB), 1e-4)


def _error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda lax, a, b: jax_grad(lax)(lambda b: _forward_only(lax, a, b, a).sum())(b),
    lambda lax, a, b: lax.custom_linear_solve(lambda x: (a @ x)[:2], b, lambda mv, y: y),
    lambda lax, a, b: lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, y: y[:2]),
    lambda lax, a, b: lax.custom_linear_solve(lambda x: (x, x), b, lambda mv, y: y),
    lambda lax, a, b: lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, y: y, has_aux=True),
])
def test_custom_linear_solve_errors(case):
    mine, theirs = _error(case, ilax, A3, V3), _error(case, jax.lax, A3, V3)
    assert theirs is not None and mine == theirs


def jax_grad(lax):
    return irax.grad if lax is ilax else jax.grad


# --- custom_root ---------------------------------------------------------------------------------------------------

def _sqrt_cubed(lax, np_, x):
    """JAX's docstring example: the root of ``y**2 - x**3`` by Newton's method."""
    def f(y):
        return y ** 2 - x ** 3

    def solve(f, y0):
        return lax.while_loop(lambda y: np_.abs(f(y)) > 0.5, lambda y: y - f(y) / (2 * y), y0)
    return lax.custom_root(f, np_.float32(1.0), solve, lambda g, y: y / g(np_.float32(1.0)))


def _vector_root(lax, np_, a, b):
    """``a x = b`` as a root of ``a x - b``; both systems solved with ``linalg.solve``."""
    return lax.custom_root(lambda x: a @ x - b, np_.zeros_like(b), lambda f, x0: np_.linalg.solve(a, b),
                           lambda g, y: np_.linalg.solve(a, y))


def test_custom_root():
    mine = lambda x: _sqrt_cubed(ilax, inp, x)  # noqa: E731
    theirs = lambda x: _sqrt_cubed(jax.lax, jnp, x)  # noqa: E731
    x = np.float32(2.0)
    want = theirs(x), jax.grad(theirs)(x)
    _close((mine(x), irax.grad(mine)(x)), want, 1e-5)
    _close((irax.jit(mine)(x), irax.jit(irax.grad(mine))(x)), want, 1e-5)
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    _close(irax.jit(irax.vmap(irax.grad(mine)))(xs), jax.vmap(jax.grad(theirs))(xs), 1e-5)
    _text(mine, theirs, x)
    root_m = lambda a, b: _vector_root(ilax, inp, a, b)  # noqa: E731
    root_t = lambda a, b: _vector_root(jax.lax, jnp, a, b)  # noqa: E731
    _close(irax.jacrev(root_m, (0, 1))(A3, V3), jax.jacrev(root_t, (0, 1))(A3, V3), 1e-4)
    _close(irax.jit(irax.jacfwd(root_m, (0, 1)))(A3, V3), jax.jacfwd(root_t, (0, 1))(A3, V3), 1e-4)


def test_custom_root_errors():
    for args in [(lambda y: (y, y), 1.0, lambda f, y: y, lambda g, y: y),
                 (lambda y: y, 1.0, lambda f, y: (y, y), lambda g, y: y),
                 (lambda y: y, 1.0, lambda f, y: y, lambda g, y: (y, y))]:
        mine, theirs = _error(ilax.custom_root, *args), _error(jax.lax.custom_root, *args)
        assert theirs is not None and mine == theirs


# --- jnp.linalg.solve ----------------------------------------------------------------------------------------------

SOLVE_ARGS = [(A3, V3), (A3, B32), (A3B, V3), (A3B, B3B2), (A3, np.zeros((3, 0), np.float32))]


def test_linalg_solve_text():
    for args in SOLVE_ARGS:
        _text(inp.linalg.solve, jnp.linalg.solve, *args)
    _text(irax.vmap(inp.linalg.solve, (0, None)), jax.vmap(jnp.linalg.solve, (0, None)), A3B, V3)
    _text(irax.vmap(inp.linalg.solve, (None, 1)), jax.vmap(jnp.linalg.solve, (None, 1)), A3, B32)
    _text(lambda a, b: irax.jvp(inp.linalg.solve, (a, b), (a, b)),
          lambda a, b: jax.jvp(jnp.linalg.solve, (a, b), (a, b)), A3, V3)


def test_linalg_solve_values_grads_vmap():
    def programs(api, np_):
        f = np_.linalg.solve
        loss = lambda a, b: (f(a, b) ** 2).sum()  # noqa: E731
        return lambda a, b, ab, bb: (f(a, b), f(ab, bb), api.grad(loss, (0, 1))(a, b),
                                     api.grad(loss, (0, 1))(ab, bb), api.vmap(f, (0, None))(ab, b),
                                     api.vmap(f, (None, 1))(a, bb[0]), api.jacfwd(f)(a, b[:, 0]))
    args = (A3, B32, A3B, B3B2)
    want = programs(jax, jnp)(*args)
    _close(programs(irax, inp)(*args), want, 1e-4)
    _close(irax.jit(programs(irax, inp))(*args), want, 1e-4)
    check_grads(inp.linalg.solve, (A3, V3), order=2, modes=["fwd", "rev"], atol=2e-2, rtol=2e-2)


def test_linalg_solve_errors():
    for a, b in [((3, 3), (4,)), ((3, 4), (3,)), ((2, 3, 3), (5, 3)), ((3, 3), (3, 2, 1)), ((3,), (3,))]:
        mine = _error(inp.linalg.solve, np.ones(a, np.float32), np.ones(b, np.float32))
        theirs = _error(jnp.linalg.solve, np.ones(a, np.float32), np.ones(b, np.float32))
        assert theirs is not None and mine == theirs


# --- scipy.sparse.linalg.cg ---------------------------------------------------------------------------------------

def _cg_programs(api, spl):
    """Values of cg, its gradient and vmap."""
    def solve(a, b):
        return spl.cg(a, b)[0]
    return lambda a, b, bb: (
        solve(a, b), spl.cg(lambda x: a @ x, b, M=np.diag(1 / np.diag(S3)), tol=1e-6)[0],
        spl.cg(lambda t: {"x": a @ t["x"], "y": a @ t["y"]}, {"x": b, "y": 2 * b}, x0={"x": b, "y": b},
               maxiter=50)[0],
        api.grad(lambda a, b: (solve(a, b) ** 2).sum(), (0, 1))(a, b), api.vmap(lambda b: solve(a, b))(bb))


def test_cg():
    args = (S3, V3, np.stack([V3, 2 * V3]))
    want = _cg_programs(jax, jspl)(*args)
    _close(_cg_programs(irax, ispl)(*args), want, 1e-3)
    _close(irax.jit(_cg_programs(irax, ispl))(*args), want, 1e-3)
    for a, b, x0 in [(S3, V3, V3[:1]), (np.ones((2, 3), np.float32), V3, None)]:
        mine, theirs = _error(lambda: ispl.cg(a, b, x0=x0)), _error(lambda: jspl.cg(a, b, x0=x0))
        assert theirs is not None and mine == theirs


def test_cg_jaxpr_text():
    assert str(irax.make_jaxpr(lambda a, b: ispl.cg(a, b)[0])(S3, V3)) == \
        str(jax.make_jaxpr(lambda a, b: jspl.cg(a, b)[0])(S3, V3))


# --- dot_general precision, broadcast_shapes -----------------------------------------------------------------------

PRECISIONS = [None, "highest", "float32", "bfloat16", ilax.Precision.DEFAULT, ("high", "fastest"),
              (ilax.Precision.HIGH, ilax.Precision.HIGHEST)]


def _jax_precision(p):
    if isinstance(p, ilax.Precision):
        return jax.lax.Precision[p.name]
    if isinstance(p, tuple):
        return tuple(_jax_precision(q) for q in p)
    return p


def test_dot_general_precision():
    dims = (([1], [0]), ([], []))
    for p in PRECISIONS:
        _text(lambda x: ilax.dot_general(x, x, dims, precision=p),
              lambda x: jax.lax.dot_general(x, x, dims, precision=_jax_precision(p)), A3)
    _text(irax.grad(lambda x: ilax.dot(x, x, precision="highest").sum()),
          jax.grad(lambda x: jax.lax.dot(x, x, precision="highest").sum()), A3)
    _text(irax.vmap(lambda x: ilax.dot(x, x, precision="highest")),
          jax.vmap(lambda x: jax.lax.dot(x, x, precision="highest")), A3B)
    _close(irax.jit(lambda x: ilax.dot(x, x, precision=ilax.Precision.HIGHEST))(A3), A3 @ A3, 1e-4)
    for prog in [lambda np_, x: np_.dot(x, x[0], precision="highest"),
                 lambda np_, x: np_.matmul(x, x.T, precision="high"),
                 lambda np_, x: np_.vdot(x, x, precision="highest"),
                 lambda np_, x: np_.tensordot(x, x, 2, precision="highest"),
                 lambda np_, x: np_.inner(x, x, precision="highest")]:
        _text(lambda x: prog(inp, x), lambda x: prog(jnp, x), A3)
    assert repr(ilax.Precision.HIGHEST) == repr(jax.lax.Precision.HIGHEST)
    assert str(ilax.Precision("bfloat16")) == str(jax.lax.Precision("bfloat16"))
    for bad in ["bogus", (ilax.Precision.HIGH, None), ("high", ilax.Precision.HIGH)]:
        mine = _error(lambda: ilax.dot_general(A3, A3, dims, precision=bad))
        theirs = _error(lambda: jax.lax.dot_general(A3, A3, dims, precision=_jax_precision(bad)))
        assert theirs is not None and mine == theirs


def test_broadcast_shapes():
    for shapes in [((2, 1), (3,)), ((2,),), ((), (4, 1), (1, 5)), ((0, 1), (3,)), ((2, 3), (1, 2, 1))]:
        assert ilax.broadcast_shapes(*shapes) == jax.lax.broadcast_shapes(*shapes)
    for shapes in [((2,), (3,)), ((2, 1), (3, 4, 5)), ((2,), (2.5,)), ((-1,), (2,))]:
        mine, theirs = _error(ilax.broadcast_shapes, *shapes), _error(jax.lax.broadcast_shapes, *shapes)
        assert theirs is not None and mine == theirs
