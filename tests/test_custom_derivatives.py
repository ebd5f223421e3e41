"""custom_jvp, custom_vjp, checkpoint, grad through jit and slicing, Jacobians and check_grads: texts and values
vs JAX."""
import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax.ad_checkpoint import checkpoint_name as i_checkpoint_name
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
from jax.ad_checkpoint import checkpoint_name as j_checkpoint_name  # noqa: E402


def _customs(lib, jnp):
    """The same custom-derivative functions, built with irax or with JAX."""
    @lib.custom_vjp
    def sin_vjp(x):
        return jnp.sin(x)

    def sin_fwd(x):
        return jnp.sin(x), jnp.cos(x)

    def sin_bwd(res, g):
        return (res * g,)
    sin_vjp.defvjp(sin_fwd, sin_bwd)

    @lib.custom_jvp
    def sin_jvp(x):
        return jnp.sin(x)

    @sin_jvp.defjvp
    def sin_jvp_rule(primals, tangents):
        return sin_jvp(primals[0]), 2 * tangents[0]

    @lib.custom_jvp
    def times(x, y):
        return x * y
    times.defjvps(lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
    return sin_vjp, sin_jvp, times


def _programs(lib, jnp, checkpoint_name):
    sin_vjp, sin_jvp, times = _customs(lib, jnp)
    remat_sin = lib.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    return {
        "custom_vjp": (sin_vjp, (1.0,)),
        "grad_custom_vjp": (lib.grad(sin_vjp), (1.0,)),
        "custom_jvp": (sin_jvp, (1.0,)),
        "grad_custom_jvp": (lib.grad(sin_jvp), (1.0,)),
        "jvp_custom_jvp": (lambda x, t: lib.jvp(sin_jvp, (x,), (t,)), (1.0, 1.0)),
        "grad_defjvps": (lib.grad(times, argnums=(0, 1)), (1.0, 2.0)),
        "relu_twice": (lambda x: lib.nn.relu(lib.nn.relu(x)), (np.ones(3, np.float32),)),
        "grad_relu": (lib.grad(lambda x: jnp.sum(lib.nn.relu(x))), (np.ones(3, np.float32),)),
        "grad_of_jit": (lib.grad(lambda x: lib.jit(jnp.sin)(x) * 2), (1.0,)),
        "grad_of_jit_tanh": (lib.grad(lambda x: jnp.sum(lib.jit(lambda y: jnp.tanh(y) * y)(x) ** 2)),
                             (np.ones(3, np.float32),)),
        "checkpoint": (remat_sin, (1.0,)),
        "jvp_checkpoint": (lambda x, t: lib.jvp(remat_sin, (x,), (t,)), (1.0, 1.0)),
        "grad_checkpoint": (lib.grad(remat_sin), (1.0,)),
        "linearize_checkpoint": (lambda x: lib.linearize(remat_sin, x)[1](1.0), (1.0,)),
        "checkpoint_name": (lambda x: checkpoint_name(x, "a"), (1.0,)),
        "grad_slice": (lib.grad(lambda x: jnp.sum(jnp.sin(x)[1:3])), (np.ones(5, np.float32),)),
        "grad_strided_slice": (lib.grad(lambda x: jnp.sum(jnp.sin(x)[::2])), (np.ones(5, np.float32),)),
        "grad_index": (lib.grad(lambda x: jnp.sin(x)[2]), (np.ones(5, np.float32),)),
        "grad_pad_interior": (lib.grad(lambda x: jnp.sum(lib.lax.pad(x, 0.0, ((1, 2, 1),)))),
                              (np.ones(5, np.float32),)),
        "grad_pad_crop": (lib.grad(lambda x: jnp.sum(lib.lax.pad(x, 0.0, ((-1, 2, 0),)))), (np.ones(5, np.float32),)),
        "logaddexp": (jnp.logaddexp, (1.0, 2.0)),
        "grad_logaddexp": (lib.grad(jnp.logaddexp), (1.0, 2.0)),
        "logaddexp2_long_body": (jnp.logaddexp2, (1.0, 2.0)),
        "dynamic_slice_traced_index": (lambda x, i: lib.lax.dynamic_slice(x, (i,), (2,)),
                                       (np.arange(6, dtype=np.float32), np.int32(1))),
        "dynamic_slice_negative_index": (lambda x: lib.lax.dynamic_slice(x, (-1,), (2,)),
                                         (np.arange(6, dtype=np.float32),)),
    }


IRAX = _programs(irax, inp, i_checkpoint_name)
JAX = _programs(jax, jax.numpy, j_checkpoint_name)
# JAX prints this literal as the float64 it computed, irax as the float32 it holds.
TEXT_DIFFERS = {"logaddexp2_long_body"}


@pytest.mark.parametrize("name", sorted(set(IRAX) - TEXT_DIFFERS))
def test_same_text_as_jax(name):
    fn, args = IRAX[name]
    jfn, jargs = JAX[name]
    assert str(irax.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*jargs))


VALUE_CASES = ["grad_custom_vjp", "grad_custom_jvp", "grad_defjvps", "grad_relu", "grad_of_jit", "grad_of_jit_tanh",
               "grad_checkpoint"]


@pytest.mark.parametrize("name", VALUE_CASES)
def test_values_eager_and_jitted_match_jax(name):
    fn, args = IRAX[name]
    expected = jax.tree_util.tree_map(np.asarray, JAX[name][0](*args))
    for got in (fn(*args), irax.jit(fn)(*args)):
        jax.tree_util.tree_map(lambda g, e: np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6, atol=1e-7),
                               got, expected)


def test_relu_derivative_at_zero_is_zero_as_in_jax():
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(irax.grad(lambda v: inp.sum(irax.nn.relu(v)))(x)), [0.0, 0.0, 1.0])


def test_checkpoint_policies_give_the_same_gradients():
    cp = irax.checkpoint_policies
    x, y = np.eye(2, dtype=np.float32) + 0.5, np.ones((2, 2), np.float32)
    base = irax.grad(lambda a, b: inp.sum(inp.sin(a @ b) @ b))(x, y)
    for policy in (cp.nothing_saveable, cp.everything_saveable, cp.dots_saveable,
                   cp.dots_with_no_batch_dims_saveable, cp.save_only_these_names("a")):
        f = irax.checkpoint(lambda a, b: i_checkpoint_name(inp.sin(a @ b), "a") @ b, policy=policy)
        np.testing.assert_allclose(np.asarray(irax.grad(lambda a, b: inp.sum(f(a, b)))(x, y)), np.asarray(base),
                                   rtol=1e-6)


def test_custom_vjp_bwd_errors_name_the_rule():
    @irax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        return x * y, (x, y)

    def short_bwd(res, g):
        return (g * res[1],)
    f.defvjp(fwd, short_bwd)
    with pytest.raises(TypeError, match=r"must produce a tuple of length equal to the number of arguments.*short_bwd"):
        irax.grad(f)(1.0, 2.0)

    def bad_shape_bwd(res, g):
        return g * res[1], inp.ones(3)
    f.defvjp(fwd, bad_shape_bwd)
    with pytest.raises(ValueError, match=r"shapes do not match.*bad_shape_bwd at .*test_custom_derivatives.py:\d+"):
        irax.grad(f)(1.0, 2.0)


def test_undefined_rules_and_forward_mode_of_custom_vjp_raise_as_jax():
    @irax.custom_jvp
    def h(x):
        return x
    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function h using defjvp"):
        h(1.0)
    sin_vjp = _customs(irax, inp)[0]
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function"):
        irax.jvp(sin_vjp, (1.0,), (1.0,))


def test_jacobians_and_hessian_match_jax():
    x = np.linspace(-1, 1, 3).astype(np.float32)
    f = (lambda v: inp.sin(v) * inp.sum(v ** 2), lambda v: jax.numpy.sin(v) * jax.numpy.sum(v ** 2))
    g = (lambda v: inp.sum(inp.tanh(v) ** 3), lambda v: jax.numpy.sum(jax.numpy.tanh(v) ** 3))
    for mine, theirs in ((irax.jacfwd(f[0]), jax.jacfwd(f[1])), (irax.jacrev(f[0]), jax.jacrev(f[1])),
                         (irax.hessian(g[0]), jax.hessian(g[1])), (irax.jit(irax.hessian(g[0])), jax.hessian(g[1]))):
        np.testing.assert_allclose(np.asarray(mine(x)), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)
    tree = {"x": np.ones(2, np.float32), "y": np.ones((2, 2), np.float32)}
    shapes = jax.tree_util.tree_map(np.shape, irax.jacrev(lambda d: {"a": d["x"] * 2, "b": inp.sum(d["y"])})(tree))
    assert shapes == {"a": {"x": (2, 2), "y": (2, 2, 2)}, "b": {"x": (2,), "y": (2, 2)}}


def test_check_grads_passes_on_right_rules_and_fails_on_wrong_ones():
    x = (np.linspace(-1, 1, 4).astype(np.float32),)
    check_grads(lambda v: inp.sum(inp.tanh(v) * inp.sin(v)), x, order=2)
    check_grads(lambda v: inp.sum(irax.nn.softplus(v) ** 2), x, order=2, modes=("rev",))
    wrong = _customs(irax, inp)[1]  # its JVP is 2 * t, not cos(x) * t
    with pytest.raises(AssertionError):
        check_grads(wrong, (np.float32(0.3),), order=1, modes=("fwd",))


def test_closure_convert_hoists_closed_over_tracers():
    def outer(w):
        f = lambda x: inp.sin(x * w)  # noqa: E731
        converted, consts = irax.closure_convert(f, 1.0)
        assert len(consts) == 1
        return converted(2.0, *consts)
    np.testing.assert_allclose(np.asarray(irax.grad(outer)(3.0)), 2 * np.cos(6.0), rtol=1e-6)


def test_logaddexp_splits_the_derivative_evenly_at_ties_as_jax():
    for mine, theirs in ((inp.logaddexp, jax.numpy.logaddexp), (inp.logaddexp2, jax.numpy.logaddexp2)):
        got = irax.grad(mine, argnums=(0, 1))(np.float32(0), np.float32(0))
        want = jax.grad(theirs, argnums=(0, 1))(np.float32(0), np.float32(0))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    hess = irax.hessian(lambda v: irax.lax.cumlogsumexp(v, axis=0)[1])(np.zeros(2, np.float32))
    np.testing.assert_allclose(np.asarray(hess), [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-6)


def test_negative_dynamic_slice_indices_count_from_the_end_as_in_jax():
    x, update = np.arange(6, dtype=np.float32), np.ones(2, np.float32)
    pairs = [(lambda lax, a, i: lax.dynamic_slice(a, (i,), (2,))),
             (lambda lax, a, i: lax.dynamic_update_slice(a, update, (i,)))]
    for fn in pairs:
        for i in (-1, np.int32(-2)):
            want = np.asarray(fn(jax.lax, x, i))
            np.testing.assert_array_equal(np.asarray(fn(irax.lax, x, i)), want)
            np.testing.assert_array_equal(np.asarray(irax.jit(lambda a, j: fn(irax.lax, a, j))(x, np.int32(i))), want)


def test_a_custom_rule_that_calls_a_jit_of_its_own_function_traces_under_grad():
    @irax.custom_jvp
    def f(x):
        return x * 3

    g = irax.jit(lambda x: f(x))
    f.defjvp(lambda p, t: (g(p[0]), t[0] * 3))
    x = np.ones(3, np.float32)
    assert "jit[" in str(irax.make_jaxpr(irax.grad(lambda v: g(v).sum()))(x))
    np.testing.assert_array_equal(np.asarray(irax.jit(irax.grad(lambda v: g(v).sum()))(x)), [3.0, 3.0, 3.0])


def _custom_gradients(M, jnp):
    @M.custom_gradient
    def product(x, y):
        return x * y, lambda g: (g * y * 10, g * x)

    @M.custom_gradient
    def sin_scaled(x):
        return jnp.sin(x), lambda g: g * 5 * x

    @M.custom_gradient
    def clip_gradient(x):
        return x, lambda g: (jnp.clip(g, -1, 1),)

    @M.custom_gradient
    def of_dict(d):
        return d["a"] * d["b"], lambda g: ({"a": g * d["b"], "b": g},)
    return {
        "two_arguments": lambda: (M.grad(product)(2.0, 3.0), M.grad(product, 1)(2.0, 3.0)),
        "primal_text": lambda: str(M.make_jaxpr(product)(2.0, 3.0)),
        "grad_text": lambda: str(M.make_jaxpr(M.grad(product))(2.0, 3.0)),
        "single_cotangent_under_vmap_and_jit": lambda: (
            M.vmap(M.grad(sin_scaled))(jnp.arange(3.0)), M.jit(M.grad(sin_scaled))(1.0), sin_scaled(2.0)),
        "tuple_rule_and_closed_over_gradient": lambda: M.grad(lambda x: 5 * clip_gradient(x).sum())(jnp.ones(3)),
        "pytree_argument": lambda: M.grad(of_dict)({"a": 2.0, "b": 3.0}),
        "in_a_scan": lambda: M.jit(M.grad(lambda x: M.lax.scan(lambda c, _: (sin_scaled(c), None), x, None,
                                                                length=3)[0]))(0.5),
        "second_order": lambda: M.grad(M.grad(sin_scaled))(1.0),
    }


@pytest.mark.parametrize("name", list(_custom_gradients(irax, inp)))
def test_custom_gradient_as_jax(name):
    ours, theirs = _custom_gradients(irax, inp)[name](), _custom_gradients(jax, jax.numpy)[name]()
    if isinstance(theirs, str):
        assert ours == theirs
        return
    for a, b in zip(irax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert (a.dtype, a.shape, a.weak_type) == (b.dtype, b.shape, b.weak_type)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_custom_gradient_errors_as_jax():
    for M, jnp in ((irax, inp), (jax, jax.numpy)):
        @M.custom_gradient
        def bad_structure(x):
            return x * 2, lambda g: (g, g)

        @M.custom_gradient
        def sin_scaled(x):
            return jnp.sin(x), lambda g: g * 5 * x
        with pytest.raises(TypeError, match="Custom VJP bwd rule must produce an output with the same container"):
            M.grad(bad_structure)(1.0)
        with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function"):
            M.jvp(sin_scaled, (1.0,), (1.0,))


def _closing_over_arrays(M, jnp):
    """Custom functions made in a factory, closing over an array, whose rules call the function itself."""
    scale = jnp.arange(3.0)

    @M.custom_jvp
    def f_jvp(x):
        return jnp.sin(x) * scale

    @f_jvp.defjvp
    def f_jvp_rule(primals, tangents):
        x, = primals
        return f_jvp(x), jnp.cos(x) * scale * tangents[0]

    @M.custom_vjp
    def f_vjp(x):
        return jnp.sin(x) * scale

    def fwd(x):
        return f_vjp(x), jnp.cos(x)

    def bwd(cos, g):
        return (cos * scale * g,)
    f_vjp.defvjp(fwd, bwd)
    return {"custom_jvp": f_jvp, "custom_vjp": f_vjp}


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_rules_calling_the_function_while_closing_over_arrays(kind):
    def run(M, jnp):
        f = _closing_over_arrays(M, jnp)[kind]
        x = jnp.array([0.5, 1.0, 2.0])
        loss = lambda v: f(v).sum()  # noqa: E731
        return {"jit": M.jit(f)(x), "grad": M.grad(loss)(x), "jit_grad": M.jit(M.grad(loss))(x),
                "vmap_grad": M.vmap(M.grad(loss))(jnp.stack([x, x + 1])),
                "text": str(M.make_jaxpr(M.grad(loss))(x)), "primal_text": str(M.make_jaxpr(f)(x))}
    ours, theirs = run(irax, inp), run(jax, jax.numpy)
    for name, want in theirs.items():
        if isinstance(want, str):
            assert ours[name] == want, name
        else:
            np.testing.assert_allclose(ours[name], want, rtol=1e-6, err_msg=name)


def _power(lib, jnp):
    """x ** n whose JVP rule calls it at n - 1 (a nondiff argument): rules must be traced only when needed."""
    from functools import partial

    @partial(lib.custom_jvp, nondiff_argnums=(0,))
    def power(n, x):
        return jnp.sin(x) if n == 0 else x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return power(n, x), (jnp.cos(x) if n == 0 else n * power(n - 1, x)) * t
    return power


def _power_programs(lib, jnp):
    power = _power(lib, jnp)
    x, xs = np.float32(0.7), np.linspace(-1, 1, 3, dtype=np.float32)
    return {
        "grad": (lib.grad(lambda x: power(3, x)), x),
        "grad_grad": (lib.grad(lib.grad(lambda x: power(3, x))), x),
        "jit_grad_grad_grad": (lib.jit(lib.grad(lib.grad(lib.grad(lambda x: power(3, x))))), x),
        "jvp": (lambda x: lib.jvp(lambda x: power(4, x), (x,), (np.float32(1),)), x),
        "vmap_grad": (lib.vmap(lib.grad(lambda x: power(2, x))), xs),
        "grad_of_vmap_grad": (lib.grad(lambda xs: lib.vmap(lib.grad(lambda x: power(3, x)))(xs).sum()), xs),
        "jit_hessian": (lib.jit(lib.hessian(lambda xs: power(3, xs).sum())), xs),
    }


@pytest.mark.parametrize("name", sorted(_power_programs(irax, inp)))
def test_a_rule_calling_its_function_at_another_nondiff_value(name):
    (fn, x), (jfn, _) = _power_programs(irax, inp)[name], _power_programs(jax, jax.numpy)[name]
    for actual, expected in zip(jax.tree_util.tree_leaves(fn(x)), jax.tree_util.tree_leaves(jfn(x))):
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-6)


def test_a_rule_calling_its_function_at_another_nondiff_value_prints_as_jax():
    power, jpower = _power(irax, inp), _power(jax, jax.numpy)
    assert str(irax.make_jaxpr(irax.grad(lambda x: power(3, x)))(1.0)) == \
        str(jax.make_jaxpr(jax.grad(lambda x: jpower(3, x)))(1.0))


def _vjp_power(lib, jnp):
    """x ** n whose bwd rule calls it at n - 1, closing over an array constant (built in the rule when it is traced
    after its callers)."""
    from functools import partial
    weights = np.array([1.0, 2.0, 3.0], np.float32)

    @partial(lib.custom_vjp, nondiff_argnums=(0,))
    def power(n, x):
        return jnp.sin(x) if n == 0 else x ** n

    def power_fwd(n, x):
        return power(n, x), x

    def power_bwd(n, x, g):
        slope = jnp.cos(x) if n == 0 else n * power(n - 1, x)
        return (slope * g * jnp.sum(weights) / 6.0,)
    power.defvjp(power_fwd, power_bwd)
    return power


def _vjp_power_programs(lib, jnp):
    power = _vjp_power(lib, jnp)
    x, xs = np.float32(0.7), np.linspace(-1, 1, 3, dtype=np.float32)
    return {
        "grad_grad": (lib.grad(lib.grad(lambda x: power(3, x))), x),
        "jit_grad_grad_grad": (lib.jit(lib.grad(lib.grad(lib.grad(lambda x: power(3, x))))), x),
        "vmap_grad_grad": (lib.vmap(lib.grad(lib.grad(lambda x: power(2, x)))), xs),
        "grad_of_vmap_grad": (lib.grad(lambda xs: lib.vmap(lib.grad(lambda x: power(3, x)))(xs).sum()), xs),
    }


@pytest.mark.parametrize("name", sorted(_vjp_power_programs(irax, inp)))
def test_a_bwd_rule_calling_its_function_at_another_nondiff_value(name):
    (fn, x), (jfn, _) = _vjp_power_programs(irax, inp)[name], _vjp_power_programs(jax, jax.numpy)[name]
    np.testing.assert_allclose(np.asarray(fn(x)), np.asarray(jfn(x)), rtol=1e-6)


def test_a_deferred_rule_closing_over_a_tracer_is_refused():
    from functools import partial

    def outer(c):
        @partial(irax.custom_jvp, nondiff_argnums=(0,))
        def f(n, x):
            return x * n

        @f.defjvp
        def f_jvp(n, primals, tangents):
            return f(n, primals[0]), f(n - 1, primals[0]) * tangents[0] * c
        return irax.grad(irax.grad(lambda x: f(2, x)))(c)
    with pytest.raises(NotImplementedError, match="close over traced values"):
        irax.jit(outer)(np.float32(1.5))
