"""The stages of ``jit`` (``irax.stages``), ``irax.typing``, ``irax.profiler``'s annotations, the config states
(``irax.enable_x64(...)`` and the others) and ``jax_numpy_rank_promotion``: each against JAX's behaviour."""
import warnings

import numpy as np
import pytest

import irax
import irax.numpy as jnp

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402


def _f(a, n, b, c=1.0):
    return a * n + b + c, {"s": (a * b).sum()}


SIGNATURES = {
    "positional": (dict(), (np.ones(3, np.float32), 2, np.ones(3, np.float32), np.ones(3, np.float32)), {}),
    "static-and-donated-name": (dict(static_argnums=1, donate_argnames="b"),
                                (np.ones(3, np.float32), 2, np.ones(3, np.float32)), {"c": np.ones(3, np.float32)}),
    "donated-nums-as-keyword": (dict(static_argnums=1, donate_argnums=(2, 3)),
                                (np.ones(3, np.float32), 2, np.ones(3, np.float32)), {"c": np.ones(3, np.float32)}),
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_stage_signatures_are_jaxs(name):
    options, args, kwargs = SIGNATURES[name]
    ours = irax.jit(_f, **options).trace(*args, **kwargs)
    theirs = jax.jit(_f, **options).trace(*args, **kwargs)
    for attr in ("args_info", "donate_argnums", "fun_name", "in_avals", "in_tree", "out_avals", "out_info",
                 "out_tree", "jaxpr"):
        assert repr(getattr(ours, attr)) == repr(getattr(theirs, attr)), attr
    lowered = ours.lower()
    compiled = lowered.compile()
    for stage in (lowered, compiled):
        for attr in ("args_info", "donate_argnums", "in_avals", "in_tree", "out_tree"):
            assert repr(getattr(stage, attr)) == repr(getattr(theirs, attr)), (stage, attr)
    assert repr(lowered.out_info) == repr(theirs.out_info)
    assert isinstance(irax.jit(_f), irax.stages.Wrapped)
    assert isinstance(lowered, irax.stages.Lowered) and isinstance(compiled, irax.stages.Compiled)
    assert "stablehlo" in str(lowered.compiler_ir()) and lowered.cost_analysis() is None
    out = compiled(*(a for i, a in enumerate(args) if i != options.get("static_argnums")), **kwargs)
    np.testing.assert_allclose(out[0], _f(*args, **kwargs)[0])


def test_donated_names_reach_positional_arguments():
    """``donate_argnames`` donates the argument passed by position too (it was ignored), as JAX's."""
    b = jnp.ones(3)
    out = irax.jit(lambda a, b: a + b, donate_argnames="b")(jnp.ones(3), b)
    np.testing.assert_allclose(out, 2.0)
    assert b.is_deleted()


@pytest.mark.parametrize("options", [dict(donate_argnums=5), dict(donate_argnums=1, static_argnums=1)],
                         ids=["out-of-range", "static-and-donated"])
def test_bad_donations_raise_jaxs_errors(options):
    def f(a, b):
        return a + b
    with pytest.raises(ValueError) as theirs:
        jax.jit(f, **options)
    with pytest.raises(ValueError) as ours:
        irax.jit(f, **options)
    assert str(ours.value) == str(theirs.value)


def test_clear_cache_retraces_one_function():
    traces = []

    @irax.jit
    def f(x):
        traces.append(1)
        return x + 1
    f(1.0)
    f(2.0)
    f.clear_cache()
    f(3.0)
    assert len(traces) == 2


RANK_CASES = {
    "multiply": lambda m: m.ones(3) * m.ones((2, 3)),
    "scalar": lambda m: m.ones(3) + 1.0,
    "where": lambda m: m.where(m.ones((2, 3)) > 0, m.ones(3), 0.0),
    "numpy-operand": lambda m: m.ones((2, 3)) - np.ones(3, np.float32),
    "power": lambda m: m.ones(3) ** m.ones((2, 3)),
    "matmul": lambda m: m.ones((2, 3)) @ m.ones(3),
    "less": lambda m: m.ones((2, 3)) < m.ones(3),
    "clip": lambda m: m.clip(m.ones((2, 3)), m.ones(3)),
    "jitted": lambda m: (irax if m is jnp else jax).jit(lambda a, b: a * b)(m.ones(3), m.ones((2, 3))),
}


def _rank_outcome(lib, np_module, case, mode):
    lib.clear_caches()  # JAX warns only while tracing, and its jnp functions are jitted: trace them again
    with lib.numpy_rank_promotion(mode), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            RANK_CASES[case](np_module)
            outcome = "ok"
        except ValueError as e:
            outcome = str(e)
    return outcome, [str(w.message) for w in caught]


@pytest.mark.parametrize("mode", ["raise", "warn"])
@pytest.mark.parametrize("case", sorted(RANK_CASES))
def test_numpy_rank_promotion(case, mode):
    """It was accepted and ignored; now it warns or raises where JAX does, with JAX's message, and the jit cache
    keeps traces made under different settings apart."""
    assert _rank_outcome(irax, jnp, case, mode) == _rank_outcome(jax, jjnp, case, mode)
    RANK_CASES[case](jnp)  # allowed again after the block


def test_config_states_and_enum_values():
    assert irax.enable_x64.value is False and irax.numpy_rank_promotion.value == "allow"
    with irax.enable_x64():
        assert jnp.ones(2).dtype == np.float64 and irax.enable_x64.value
    assert jnp.ones(2).dtype == np.float32
    with irax.default_matmul_precision("highest"):
        assert irax.config.jax_default_matmul_precision == "highest"
    assert irax.config.jax_default_matmul_precision is None
    for name, value in [("jax_numpy_rank_promotion", "foo"), ("jax_numpy_rank_promotion", None),
                        ("jax_default_matmul_precision", "foo")]:
        with pytest.raises(ValueError) as theirs:
            jax.config.update(name, value)
        with pytest.raises(ValueError) as ours:
            irax.config.update(name, value)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="new enum value must be in"):
        with irax.numpy_rank_promotion("bar"):
            pass


def test_typing_and_profiler_annotations():
    from irax.typing import ArrayLike, DTypeLike

    def scale(x: ArrayLike, dtype: DTypeLike = None):
        return jnp.asarray(x, dtype) * 2
    assert str(ArrayLike).replace("irax.basearray.Array", "A") == str(jax.typing.ArrayLike).replace(
        "jax.jaxlib._jax.Array", "A")
    steps = []
    for step in range(2):
        with irax.profiler.StepTraceAnnotation("train", step_num=step), irax.profiler.TraceAnnotation("inner"):
            steps.append(float(irax.jit(irax.profiler.annotate_function(scale))(step)))
    assert steps == [0.0, 2.0]
    with pytest.raises(NotImplementedError, match="records no profiles"):
        irax.profiler.start_trace("/tmp/irax-trace")


def test_top_level_names():
    assert irax.Device is type(irax.devices()[0]) and irax.float0 == jax.float0
    assert irax.process_indices() == [0]
    x = jnp.arange(3.0)
    assert irax.copy_to_host_async({"x": x})["x"] is x
    assert set(irax.__all__) <= set(dir(irax))
