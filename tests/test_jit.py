"""``jit``: caching, static arguments, closures, nested jit, pytrees, lowering, and the reference interpreter."""
import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax import lax
from irax.backends.interpreter import evaluate


def test_results_keep_dtypes_and_weak_types():
    out = irax.jit(lambda x: x * 2)(1.0)
    assert out.dtype == np.float32 and out.weak_type
    out = irax.jit(lambda x: x * 2)(jnp.float32(1.0))
    assert not out.weak_type


def test_retraces_only_on_new_signature_and_side_effects_run_once_per_trace():
    calls = []

    @irax.jit
    def f(x, y):
        calls.append(x.shape)
        return x * y

    f(jnp.ones(3), 2.0)
    f(jnp.ones(3), 3.0)
    assert len(calls) == 1
    f(jnp.ones(3, jnp.int32), 2)
    f(jnp.ones(4), 2.0)
    assert len(calls) == 3


def test_static_argnums_and_argnames():
    f = irax.jit(lambda x, n, *, mode: x * n if mode == "mul" else x + n, static_argnums=1,
                 static_argnames="mode")
    assert float(f(jnp.float32(2), 3, mode="mul")) == 6.0
    assert float(f(jnp.float32(2), 3, mode="add")) == 5.0
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f(jnp.float32(2), [3], mode="add")


def test_pytrees_in_and_out():
    @irax.jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "aux": (x, None)}

    out = f({"w": jnp.ones(3), "b": 2.0}, jnp.arange(3.0))
    np.testing.assert_allclose(out["y"], [2.0, 3.0, 4.0])
    assert out["aux"][1] is None


def test_closures_become_constants_and_methods_work():
    c = np.arange(3, dtype=np.float32)

    class Model:
        def __init__(self):
            self.scale = 2.0

        @irax.jit
        def scaled(self, x):
            return x * self.scale

        __call__ = irax.jit(lambda self, x: x * self.scale, static_argnums=0)

    assert np.allclose(irax.jit(lambda x: x + c)(jnp.ones(3)), c + 1)
    assert "lambda a:f32[3]; b:f32[3]." in str(irax.make_jaxpr(lambda x: x + c)(jnp.ones(3)))
    np.testing.assert_allclose(Model()(jnp.ones(2)), [2.0, 2.0])
    with pytest.raises(TypeError, match="not a valid JAX type"):
        Model().scaled(jnp.ones(2))


def test_nested_jit_is_one_module_and_runs():
    inner = irax.jit(lambda y: jnp.cos(y) * 2.0)
    outer = irax.jit(lambda x: inner(x) + inner(x + 1.0))
    x = jnp.arange(4.0)
    np.testing.assert_allclose(outer(x), np.cos(x) * 2 + np.cos(x + 1) * 2, rtol=1e-6)
    assert "jit[" in str(irax.make_jaxpr(outer)(x))
    assert "func.call" not in outer.lower(x).as_text()


def test_lower_compile_and_eval_shape():
    f = irax.jit(lambda x, y: (x @ y, jnp.sum(x)))
    x, y = jnp.ones((2, 3)), jnp.ones((3, 4))
    lowered = f.lower(x, y)
    assert "stablehlo.dot_general" in lowered.as_text()
    assert '"jaxpr.dot_general"' in lowered.as_text(dialect="jaxpr")
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(x, y)[0], np.full((2, 4), 3.0))
    shapes = irax.eval_shape(f, irax.ShapeDtypeStruct((2, 3), jnp.float32), irax.ShapeDtypeStruct((3, 4), jnp.float32))
    assert shapes[0].shape == (2, 4) and shapes[1].shape == () and shapes[0].dtype == np.float32


def test_reference_interpreter_agrees_with_iree():
    def f(x, y):
        z = jnp.tanh(x @ y) + jnp.max(y, axis=0)
        return jnp.cumsum(z, axis=1), jnp.argmin(z, axis=0)

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 5), np.float32), rng.standard_normal((5, 4), np.float32)
    closed = irax.make_jaxpr(f)(x, y)
    expected = evaluate(closed.jaxpr.module, [x, y])
    got = irax.jit(f)(x, y)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-5)


def test_size_zero_and_scalar_programs():
    f = irax.jit(lambda x: (jnp.sum(x, axis=0), x * 2, jnp.max(x, axis=1)))
    outs = f(jnp.ones((0, 3)))
    assert outs[0].shape == (3,) and outs[1].shape == (0, 3) and outs[2].shape == (0,)
    assert float(irax.jit(lambda a, b: lax.atan2(a, b))(jnp.float32(0.0), jnp.float32(-1.0))) == pytest.approx(np.pi)


def test_device_put_and_get():
    x = irax.device_put(np.arange(3.0))
    assert isinstance(x, irax.Array) and x.dtype == np.float32
    tree = irax.device_get({"a": x})
    assert isinstance(tree["a"], np.ndarray)
    assert len(irax.devices()) == 1
