"""``vmap`` of custom_jvp and custom_vjp functions (``passes/batch_custom.py``): values, derivatives in both
orders of composition, and ``make_jaxpr`` texts against JAX; the batched modules verified; ``custom_lin``
batched between linearize and transpose."""
import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import api
from irax.ad import replay
from irax.ir.mlir import scope
from irax.ir.printer import jaxpr_text
from irax.passes import funcs, run_pipeline
from irax.passes.batch import batch_function
from irax.passes.linearize import NUM_RESIDUALS_ATTR
from irax.passes.transpose import transpose_function

jax = pytest.importorskip("jax")

B = 3


def _customs(lib, jnp):
    """The same custom-derivative functions, built with irax or with JAX."""
    @lib.custom_jvp
    def log1pexp(x):
        return jnp.log(1. + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * (1. - 1. / (1. + jnp.exp(x)))

    @lib.custom_jvp
    def sin_times(x, y):
        return jnp.sin(x) * y

    @sin_times.defjvp
    def sin_times_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return jnp.sin(x) * y, jnp.cos(x) * tx * y + jnp.sin(x) * ty

    @lib.custom_jvp
    def twice_y(x, y):
        """Its primal ignores x, its tangent does not: batched over x only, only the tangent is batched."""
        return 2. * y

    @twice_y.defjvp
    def twice_y_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return lib.jit(twice_y)(x, y), tx * y + 2. * ty

    @lib.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def clip_gradient_fwd(lo, hi, x):
        return x, (lo, hi)

    def clip_gradient_bwd(res, g):
        lo, hi = res
        return None, None, jnp.clip(g, lo, hi)
    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    @lib.custom_vjp
    def sin_scaled(x, y):
        return jnp.sin(x) * y

    def sin_scaled_fwd(x, y):
        return sin_scaled(x, y), (jnp.cos(x), jnp.sin(x), y)

    def sin_scaled_bwd(res, g):
        cos, sin, y = res
        return 2. * cos * g * y, sin * g
    sin_scaled.defvjp(sin_scaled_fwd, sin_scaled_bwd)

    @lib.custom_vjp
    def twice_y_vjp(x, y):
        return 2. * y

    twice_y_vjp.defvjp(lambda x, y: (twice_y_vjp(x, y), (x, y)), lambda res, g: (g * res[1], 2. * g + res[0]))

    @lib.custom_vjp
    def bwd_calls_f(x, y):
        return jnp.sin(x) * y

    bwd_calls_f.defvjp(lambda x, y: (bwd_calls_f(x, y), (x, y)),
                       lambda res, g: (bwd_calls_f(res[0] + np.float32(np.pi / 2), res[1]) * g, jnp.sin(res[0]) * g))

    def closes_over_x(x, y):
        @lib.custom_jvp
        def sin_times_x(z):
            return jnp.sin(z) * x
        sin_times_x.defjvp(lambda primals, tangents: (jnp.sin(primals[0]) * x, jnp.cos(primals[0]) * tangents[0] * x))
        return sin_times_x(y)
    return {"log1pexp": log1pexp, "relu": lib.nn.relu, "sin_times": sin_times, "twice_y": twice_y,
            "clip_gradient": lambda x: clip_gradient(-0.5, 0.5, jnp.sin(x) * 3.), "sin_scaled": sin_scaled,
            "twice_y_vjp": twice_y_vjp, "bwd_calls_f": bwd_calls_f, "closes_over_x": closes_over_x}


IRAX, JAX = _customs(irax, inp), _customs(jax, jax.numpy)
_rng = np.random.default_rng(0)
X = _rng.uniform(-2, 2, (B, 2)).astype(np.float32)
Y = _rng.uniform(-2, 2, (2, B)).astype(np.float32)
# name: (function, in_axes, arguments)
CASES = {
    "log1pexp": ("log1pexp", 0, (X,)),
    "log1pexp_axis1": ("log1pexp", 1, (Y,)),
    "relu": ("relu", 0, (X,)),
    "sin_times": ("sin_times", (0, 1), (X, Y)),
    "sin_times_shared_y": ("sin_times", (1, None), (Y, Y[:, 0])),
    "sin_times_shared_x": ("sin_times", (None, 0), (Y[:, 0], X)),
    "twice_y": ("twice_y", (0, None), (X[:, 0], np.float32(1.5))),
    "clip_gradient": ("clip_gradient", 1, (Y,)),
    "sin_scaled": ("sin_scaled", (0, 1), (X, Y)),
    "sin_scaled_shared_y": ("sin_scaled", (1, None), (Y, Y[:, 0])),
    "twice_y_vjp": ("twice_y_vjp", (0, None), (X[:, 0], np.float32(1.5))),
    "bwd_calls_f": ("bwd_calls_f", (None, 1), (X[0], Y)),
}
JVP_CASES = [name for name in CASES if CASES[name][0] in ("log1pexp", "relu", "sin_times", "twice_y")]


def _fns(name, transform):
    fn, in_axes, args = CASES[name]
    return transform(irax, IRAX[fn], in_axes, args), transform(jax, JAX[fn], in_axes, args), args


def _assert_close(got, expected):
    jax.tree_util.tree_map(lambda g, e: np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-6,
                                                                   atol=2e-6), got, expected)


def _vmap(lib, fn, in_axes, args):
    return lib.vmap(fn, in_axes=in_axes)


def _grad_of_vmap_sum(lib, fn, in_axes, args):
    return lib.grad(lambda *a: lib.vmap(fn, in_axes=in_axes)(*a).sum(), argnums=tuple(range(len(args))))


def _vmap_of_grad(lib, fn, in_axes, args):
    """Per-example gradients (of each example's sum)."""
    return lib.vmap(lib.grad(lambda *a: fn(*a).sum(), argnums=tuple(range(len(args)))), in_axes=in_axes)


def _jvp_of_vmap(lib, fn, in_axes, args):
    return lambda *a: lib.jvp(lib.vmap(fn, in_axes=in_axes), a, tuple(np.cos(x) for x in a))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("transform", [_vmap, _grad_of_vmap_sum, _vmap_of_grad], ids=lambda t: t.__name__[1:])
def test_values_match_jax(transform, name):
    fn, jfn, args = _fns(name, transform)
    _assert_close(fn(*args), jfn(*args))


@pytest.mark.parametrize("name", JVP_CASES)
def test_jvp_of_vmap_matches_jax(name):
    fn, jfn, args = _fns(name, _jvp_of_vmap)
    _assert_close(fn(*args), jfn(*args))


@pytest.mark.parametrize("in_axes", [0, (None, 0), (0, None)])
def test_custom_jvp_closing_over_a_batched_value(in_axes):
    """The callee and the jvp rule take the closed-over value as a constant operand, batched or not."""
    args = (X[:, 0], X[:, 1])
    args = tuple(x[0] if a is None else x for x, a in zip(args, in_axes if isinstance(in_axes, tuple) else (0, 0)))
    fn, jfn = irax.vmap(IRAX["closes_over_x"], in_axes=in_axes), jax.vmap(JAX["closes_over_x"], in_axes=in_axes)
    _assert_close(fn(*args), jfn(*args))
    _assert_close(irax.jit(fn)(*args), jfn(*args))


def test_custom_jvp_closing_over_a_batched_value_text():
    args = (X[:, 0], X[:, 1])
    fn, jfn = irax.vmap(IRAX["closes_over_x"]), jax.vmap(JAX["closes_over_x"])
    assert str(irax.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*args))


def test_jvp_of_vmap_of_custom_vjp_raises_as_in_jax():
    fn, jfn, args = _fns("sin_scaled", _jvp_of_vmap)
    for f in (fn, jfn):
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            f(*args)


def test_jitted_per_example_gradients_match_jax():
    """One jitted function (one IREE compile) holding every case's ``vmap(grad(f))``."""
    def all_cases(lib, fns):
        return lib.jit(lambda cases: {name: _vmap_of_grad(lib, fns[CASES[name][0]], CASES[name][1], args)(*args)
                                      for name, args in cases.items()})
    cases = {name: args for name, (_, _, args) in CASES.items()}
    _assert_close(all_cases(irax, IRAX)(cases), all_cases(jax, JAX)(cases))


TWICE_Y = ("JAX leaves the call's result unbatched (it batches the jvp rule only when the rule runs, and "
           "broadcasts the primal there); irax batches the rule with the call, and the JVP pass needs a tangent "
           "typed as its primal, so call_jaxpr broadcasts the result")
CLIP = ("JAX's batched bwd (batch_custom_vjp_bwd) runs the bwd rule on the weak-typed residuals lo and hi, so "
        "jnp.clip converts them (convert_element_type weak_type=False); irax traces bwd once, where the call is "
        "traced, on residual types without weak_type (ShapeDtypeStruct in frontend/custom_derivatives.py), and "
        "batching keeps that body")
TEXT_DIFFERS = {("vmap", "twice_y"): TWICE_Y, ("grad_of_vmap_sum", "twice_y"): TWICE_Y,
                ("vmap_of_grad", "twice_y"): TWICE_Y, ("grad_of_vmap_sum", "clip_gradient"): CLIP,
                ("vmap_of_grad", "clip_gradient"): CLIP}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("transform", [_vmap, _grad_of_vmap_sum, _vmap_of_grad], ids=lambda t: t.__name__[1:])
def test_same_text_as_jax(transform, name, request):
    reason = TEXT_DIFFERS.get((transform.__name__[1:], name))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    fn, jfn, args = _fns(name, transform)
    assert str(irax.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_module_verifies_and_differentiates(name):
    """``jaxpr-batch`` then the whole reverse-mode pipeline on the batched function, each step verified."""
    fn, in_axes, args = CASES[name]
    structs = [api.ShapeDtypeStruct(np.shape(x), np.float32) for x in args]
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    structs = [s if a is None else api.ShapeDtypeStruct(s.shape[:a] + s.shape[a + 1:], s.dtype)
               for s, a in zip(structs, axes)]
    traced = api.trace(IRAX[fn], tuple(structs), {}, purpose="make_jaxpr")
    in_axes_text = ",".join("none" if a is None else str(a) for a in axes)
    with scope():
        run_pipeline(traced.module, f"builtin.module(jaxpr-batch{{func=main in_axes={in_axes_text} axis_size={B}}},"
                                    "jaxpr-verify,jaxpr-jvp{func=main_batched},jaxpr-verify,"
                                    "jaxpr-linearize{func=main_batched_jvp},jaxpr-transpose{func=main_batched_jvp_lin},"
                                    "jaxpr-verify)")


def test_custom_lin_batched_then_transposed_gives_per_example_cotangents():
    """A ``custom_lin`` left by linearize, batched over its residuals and first tangent (the second shared):
    transposed, bwd runs on the batch, and the shared tangent's cotangent is summed over it."""
    fn = IRAX["sin_scaled"]
    s = api.ShapeDtypeStruct((), np.float32)
    traced = api.trace(fn, (s, s), {}, purpose="make_jaxpr")
    module = traced.module
    with scope():
        run_pipeline(module, "builtin.module(jaxpr-jvp{func=main},jaxpr-linearize{func=main_jvp})")
        lin = funcs.lookup(module, "main_jvp_lin")
        assert funcs.int_attribute(lin, NUM_RESIDUALS_ATTR) == 3  # cos x, sin x, y
        batched, dims = batch_function(module, lin, [0, 0, None, 0, None], B, "lin_batched")
        assert dims == [0]
        batched.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(3)
        transposed = transpose_function(module, batched)
        run_pipeline(module, "builtin.module(jaxpr-verify)")
        assert jaxpr_text(module, funcs.name_of(transposed)).strip() == (
            "{ lambda ; a:f32[3] b:f32[3] c:f32[] d:f32[3]. let\n"
            "    e:f32[3] = mul 2.0:f32[] a\n"
            "    f:f32[3] = mul e d\n"
            "    g:f32[3] = mul f c\n"
            "    h:f32[3] = mul b d\n"
            "    i:f32[] = reduce_sum[axes=(0,) out_sharding=None] h\n"
            "  in (g, i) }")
    xs, y, g = X[:, 0], np.float32(1.5), np.arange(1, B + 1, dtype=np.float32)
    got = replay(module, transposed, [np.cos(xs), np.sin(xs), y, g])
    _, vjp = jax.vjp(jax.vmap(JAX["sin_scaled"], in_axes=(0, None)), xs, y)
    _assert_close(got, list(vjp(g)))
