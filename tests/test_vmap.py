"""``vmap``: jaxpr text identical to JAX's, values, composition with ``jit`` and autodiff, and misuse.

Programs are written once against a ``(jax, jnp, lax, nn)`` module tuple, so the
same code is traced by irax and by JAX (the optional oracle).
"""
import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax as ilax
from irax import nn as inn

try:
    import jax
    import jax.numpy as jax_jnp
except ImportError:  # JAX is an optional oracle
    jax = jax_jnp = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the oracle")

F = np.float32
IRAX = (irax, inp, ilax, inn)
x43 = np.arange(12, dtype=F).reshape(4, 3) / 5 - 1
x435 = np.arange(60, dtype=F).reshape(4, 3, 5) / 30
v3 = np.array([0.5, 1.5, 2.5], F)
w52 = np.arange(10, dtype=F).reshape(5, 2) / 10
w32 = np.arange(6, dtype=F).reshape(3, 2) / 6
y42 = np.arange(8, dtype=F).reshape(4, 2) / 8


def _jax_mods():
    return (jax, jax_jnp, jax.lax, jax.nn)


def _loss(jnp):
    def loss(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2)
    return loss


def _mlp(jax, jnp, lax, nn):
    params = {"w1": np.ones((3, 4), F) / 7, "b1": np.zeros(4, F), "w2": np.ones((4, 2), F) / 3}

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)
    return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)), (params, x43, y42)


PROGRAMS = {
    "sin_plus_unbatched": lambda jax, jnp, lax, nn: (
        jax.vmap(lambda a, b: jnp.sin(a) + b, in_axes=(0, None)), (x43, v3)),
    "matmul_shared_weights": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: a @ w52), (x435,)),
    "batched_matmul": lambda jax, jnp, lax, nn: (jax.vmap(jnp.matmul), (x435, np.ones((4, 5, 2), F))),
    "sum_over_axis1": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: a.sum(0), in_axes=1), (x435,)),
    "reshape": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: a.reshape(3, 1)), (x43,)),
    "transpose_negative_axis": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: a.T, in_axes=-1), (x435,)),
    "jit_inside": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: jax.jit(jnp.sin)(a)), (x43,)),
    "jit_vmap_grad": lambda jax, jnp, lax, nn: (
        jax.jit(jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0))), (w32, x43, y42)),
    "per_example_mlp_grads": _mlp,
    "out_axes_1": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: jnp.exp(a) * 2.0, out_axes=1), (x43,)),
    "out_axes_none_for_unbatched": lambda jax, jnp, lax, nn: (
        jax.vmap(lambda a, b: (a * 2.0, b + 1.0), in_axes=(0, None), out_axes=(0, None)), (x43, v3)),
    "unbatched_output_broadcast": lambda jax, jnp, lax, nn: (
        jax.vmap(lambda a, b: b * 3.0, in_axes=(0, None)), (x43, v3)),
    "nested": lambda jax, jnp, lax, nn: (jax.vmap(jax.vmap(lambda a, b: a * b), in_axes=(0, None)), (x43, v3)),
    "nested_inner_axis1": lambda jax, jnp, lax, nn: (
        jax.vmap(jax.vmap(lambda a: jnp.sum(a), in_axes=1)), (x435,)),
    "dict_in_axes": lambda jax, jnp, lax, nn: (
        jax.vmap(lambda d: d["a"] * d["b"], in_axes=({"a": 0, "b": None},)), ({"a": x43, "b": v3},)),
    "kwargs_mapped": lambda jax, jnp, lax, nn: (lambda a, k: jax.vmap(lambda a, k: a - k)(a, k=k), (x43, x43)),
    "broadcast_to": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: jnp.broadcast_to(a, (2, 3))), (x43,)),
    "softmax": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: jnp.exp(a) / jnp.sum(jnp.exp(a))), (x43,)),
    "where": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: jnp.where(a > 0, a, 0.0)), (x43,)),
    "concatenate_with_unbatched": lambda jax, jnp, lax, nn: (
        jax.vmap(lambda a, b: jnp.concatenate([a, b]), in_axes=(0, None)), (x43, v3)),
    "axis_size_without_inputs": lambda jax, jnp, lax, nn: (lambda a: jax.vmap(lambda: a * 2.0, axis_size=3)(), (v3,)),
    "batch_of_zero": lambda jax, jnp, lax, nn: (jax.vmap(lambda a: jnp.sin(a) @ w32), (np.zeros((0, 3), F),)),
    "grad_of_vmap_sum": lambda jax, jnp, lax, nn: (
        jax.grad(lambda w: jnp.sum(jax.vmap(lambda x: jnp.tanh(x @ w))(x43))), (w32,)),
    "jacfwd": lambda jax, jnp, lax, nn: (jax.jacfwd(lambda x: jnp.sin(x) * x), (v3,)),
    "jacrev": lambda jax, jnp, lax, nn: (jax.jacrev(lambda x: jnp.sin(x) * 2.0), (v3,)),
    "jacfwd_two_args": lambda jax, jnp, lax, nn: (jax.jacfwd(lambda x, y: (x * y, x), argnums=(0, 1)), (v3, v3)),
    "jacrev_matrix": lambda jax, jnp, lax, nn: (jax.jacrev(lambda w: jnp.tanh(x43 @ w)), (w32,)),
    "hessian": lambda jax, jnp, lax, nn: (jax.hessian(lambda x: jnp.sum(jnp.sin(x) ** 2)), (v3,)),
}


@needs_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_jaxpr_text_as_jax(name):
    build = PROGRAMS[name]
    fn, args = build(*IRAX)
    mine = str(irax.make_jaxpr(fn)(*args))
    jfn, jargs = build(*_jax_mods())
    assert mine == str(jax.make_jaxpr(jfn)(*jargs))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_eager_and_jitted_match_jax(name):
    fn, args = PROGRAMS[name](*IRAX)
    eager = irax.tree_util.tree_leaves(fn(*args))
    jitted = irax.tree_util.tree_leaves(irax.jit(fn)(*args))
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=2e-6, atol=1e-6)
    if jax is not None:
        jfn, jargs = PROGRAMS[name](*_jax_mods())
        for e, t in zip(eager, jax.tree_util.tree_leaves(jfn(*jargs))):
            assert np.asarray(e).shape == np.asarray(t).shape
            np.testing.assert_allclose(np.asarray(e), np.asarray(t), rtol=2e-5, atol=1e-6)


# --- semantics ---------------------------------------------------------------------------------------

def test_vmap_equals_stacking_examples():
    f = lambda a, b: inp.sin(a) * b + inp.sum(a)
    out = irax.vmap(f, in_axes=(1, None))(x43, F(2.0))
    expected = np.stack([np.asarray(f(x43[:, i], F(2.0))) for i in range(3)])
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_unmapped_python_values_stay_concrete():
    """Python control flow on an unmapped argument works, as in JAX (it is not traced)."""
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x if n > 1 else -x
    np.testing.assert_allclose(np.asarray(irax.vmap(f, in_axes=(0, None))(v3, 3)), v3 * 8)


def test_in_axes_prefix_with_a_custom_node():
    @irax.tree_util.register_pytree_node_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    out = irax.vmap(lambda p: p.a * p.b, in_axes=(Pair(1, None),))(Pair(x43.T.copy(), v3))
    np.testing.assert_allclose(np.asarray(out), x43 * v3, rtol=1e-6)


def test_batched_value_in_python_control_flow_raises_jax_error():
    with pytest.raises(irax.errors.TracerBoolConversionError, match="vmap"):
        irax.vmap(lambda a: a if a > 0 else -a)(v3)


def test_out_axes_pytree_and_negative():
    out = irax.vmap(lambda a: {"s": a.sum(), "t": a * 2.0}, out_axes={"s": 0, "t": -1})(x43)
    assert out["s"].shape == (4,) and out["t"].shape == (3, 4)
    np.testing.assert_allclose(np.asarray(out["t"]), (x43 * 2).T)


def test_batch_of_size_zero_and_one():
    assert irax.vmap(inp.sin)(np.zeros((0, 3), F)).shape == (0, 3)
    assert irax.jit(irax.vmap(lambda a: a.sum()))(np.zeros((0, 3), F)).shape == (0,)
    np.testing.assert_allclose(np.asarray(irax.vmap(inp.cos)(x43[:1])), np.cos(x43[:1]), rtol=1e-6)


def test_jit_vmap_grad_is_one_module():
    f = irax.jit(irax.vmap(irax.grad(_loss(inp)), in_axes=(None, 0, 0)))
    text = f.lower(w32, x43, y42).as_text()
    assert text.count("func.func") == 1 and "stablehlo.dot_general" in text
    grads = np.asarray(f(w32, x43, y42))
    singles = np.stack([np.asarray(irax.grad(_loss(inp))(w32, x43[i], y42[i])) for i in range(4)])
    np.testing.assert_allclose(grads, singles, rtol=1e-5, atol=1e-6)


def test_vmap_of_vmap_matches_numpy():
    out = irax.vmap(irax.vmap(lambda a, b: a * b + 1.0, in_axes=(0, None)), in_axes=(None, 0))(v3, x43)
    np.testing.assert_allclose(np.asarray(out), v3[None, :, None] * x43[:, None, :] + 1, rtol=1e-6)


def test_jacobians_match_jax_values():
    f = lambda x: inp.sin(x) * inp.sum(x ** 2)
    for jac in (irax.jacfwd, irax.jacrev):
        np.testing.assert_allclose(np.asarray(jac(f)(v3)), np.asarray(irax.jacrev(f)(v3)), rtol=1e-5)
    if jax is not None:
        jf = lambda x: jax_jnp.sin(x) * jax_jnp.sum(x ** 2)
        np.testing.assert_allclose(np.asarray(irax.hessian(lambda x: inp.sum(f(x)))(v3)),
                                   np.asarray(jax.hessian(lambda x: jax_jnp.sum(jf(x)))(v3)), rtol=1e-5)


# --- misuse ------------------------------------------------------------------------------------------

def _error(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return info.type, str(info.value)


@pytest.mark.parametrize("case", [
    "inconsistent_sizes", "axis_out_of_range", "negative_axis_out_of_range", "in_axes_length", "in_axes_prefix",
    "in_axes_list_length", "out_axes_none_batched", "out_axes_none_named", "no_mapped_axis", "no_arguments",
    "axis_size_disagrees", "in_axes_type", "out_axes_prefix",
])
def test_errors_match_jax(case):
    def build(jax, jnp):
        x = jnp.ones((4, 3))
        return {
            "inconsistent_sizes": (jax.vmap(lambda a, b: a + b), x, jnp.ones((5, 3))),
            "axis_out_of_range": (jax.vmap(lambda a: a, in_axes=2), x),
            "negative_axis_out_of_range": (jax.vmap(lambda a: a, in_axes=-3), x),
            "in_axes_length": (jax.vmap(lambda a, b: a, in_axes=(0,)), x, x),
            "in_axes_prefix": (jax.vmap(lambda d: d["a"], in_axes=({"b": 0},)), {"a": x}),
            "in_axes_list_length": (jax.vmap(lambda d: d[0], in_axes=([0, 0],)), [x]),
            "out_axes_none_batched": (jax.vmap(lambda a: a, out_axes=None), x),
            "out_axes_none_named": (jax.vmap(lambda a: a, out_axes=None, axis_name="i"), x),
            "no_mapped_axis": (jax.vmap(lambda a: a, in_axes=None), x),
            "no_arguments": (jax.vmap(lambda: 1.0),),
            "axis_size_disagrees": (jax.vmap(lambda a, b: a, in_axes=(0, 1)), x, jnp.ones((3, 5, 2))),
            "in_axes_type": (lambda: jax.vmap(lambda a: a, in_axes="a"),),
            "out_axes_prefix": (jax.vmap(lambda a: a, out_axes={"a": 0}), x),
        }[case]
    kind, message = _error(*build(irax, inp))
    assert kind in (ValueError, TypeError), message
    if jax is not None:
        jkind, jmessage = _error(*build(jax, jax_jnp))
        assert kind is jkind
        first = jmessage.splitlines()[0]
        assert message.splitlines()[0] == first
        if "inconsistent sizes" in first or "rank should be" in first or "mapped output" in first:
            assert message == jmessage


def test_inconsistent_sizes_name_each_argument():
    _, message = _error(irax.vmap(lambda a, b: a + b), np.ones((4, 3), F), np.ones((5, 3), F))
    assert "axis 0 of argument a of type float32[4,3]" in message
    assert "axis 0 of argument b of type float32[5,3]" in message


@needs_jax
def test_collective_inside_a_jit_of_unbatched_operands_is_batched():
    """The call has no batched operand, but its callee names the mapped axis: it must be rewritten."""
    def build(jax, lax):
        return jax.vmap(lambda a, b: jax.jit(lambda b: lax.psum(b, "i"))(b) + a, in_axes=(0, None), axis_name="i")
    mine = build(irax, ilax)
    assert str(irax.make_jaxpr(mine)(x43, v3)) == str(jax.make_jaxpr(build(jax, jax.lax))(x43, v3))
    np.testing.assert_allclose(np.asarray(irax.jit(mine)(x43, v3)), x43 + 4 * v3, rtol=1e-6)


def _pmap_programs(lib):
    ones = np.ones((1, 3), np.float32)
    return {
        "map": (lib.pmap(lambda x: x * 2), (ones,)),
        "psum_pytree": (lib.pmap(lambda t: {"s": lib.lax.psum(t["a"], "i"), "m": t["a"].max()}, axis_name="i"),
                        ({"a": np.arange(6, dtype=np.float32).reshape(1, 6)},)),
        "static_and_unmapped": (lib.pmap(lambda x, n, y: x * n + y, in_axes=(0, None, None),
                                         static_broadcasted_argnums=(1,)), (ones, 3, np.float32(1.5))),
        "in_axes_1": (lib.pmap(lambda x: x.sum(), in_axes=1), (np.arange(4, dtype=np.float32).reshape(4, 1),)),
    }


@pytest.mark.parametrize("name", sorted(_pmap_programs(irax)))
def test_pmap_matches_jax_on_one_device(name):
    jax = pytest.importorskip("jax")
    (fn, args), (jfn, _) = _pmap_programs(irax)[name], _pmap_programs(jax)[name]
    actual, expected = fn(*args), jfn(*args)
    assert irax.tree_util.tree_structure(actual) == irax.tree_util.tree_structure(expected)
    for a, e in zip(irax.tree_util.tree_leaves(actual), irax.tree_util.tree_leaves(expected)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


def test_pmap_over_more_elements_than_devices_is_refused():
    with pytest.raises(ValueError, match="requires 2 logical devices, but only 1 devices are available"):
        irax.pmap(lambda x: x * 2)(np.ones((2, 3), np.float32))
