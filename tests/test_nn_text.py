"""``irax.nn`` against ``jax.nn``: the printed jaxprs (forward and gradient) and the values.

The text checks compare ``str(irax.make_jaxpr(f)(x))`` with ``str(jax.make_jaxpr(f)(x))`` for float32 inputs
of shapes (), (3,) and (2, 3) and the functions' usual keyword arguments. Cases that still differ for reasons
outside ``irax/nn.py`` are marked ``xfail`` (strict) with the reason: once fixed they fail, and the mark comes off.
"""
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402

import irax  # noqa: E402
import irax.numpy as ijnp  # noqa: E402

SHAPES = [(), (3,), (2, 3)]

# Reasons for the differences that remain, none of them in frontend/nn.py.
ZERO_RES = ("grad through a nested jit on scalars: JAX makes the instantiated zero tangent of a literal a residual "
            "output (`in (g, 0.0:f32[])`); irax does not (passes)")
WHERE_CONST = ("a NumPy `where=` mask used by both jnp.where and a reduction's where= becomes one constvar per use "
               "in irax, one in JAX (irax.numpy)")
PRINT_LET = ("printer: a custom_jvp_call's call_jaxpr inside a shared (`let`) jaxpr is hoisted as "
             "`let jaxpr = ...` by JAX, printed inline by irax (ir/printer.py)")


def _known(name, kw, shape, mode):
    """The reason a case still differs from JAX, or None."""
    if mode == "grad" and name in ("elu", "sparse_plus", "hard_tanh", "selu") and shape == ():
        return ZERO_RES
    return None


ELEMENTWISE = [
    ("relu", {}), ("softplus", {}), ("sigmoid", {}), ("silu", {}), ("swish", {}), ("log_sigmoid", {}),
    ("elu", {}), ("elu", {"alpha": 0.5}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("gelu", {}), ("gelu", {"approximate": True}), ("gelu", {"approximate": False}),
    ("celu", {}), ("celu", {"alpha": 0.5}), ("selu", {}), ("hard_tanh", {}), ("soft_sign", {}), ("relu6", {}),
    ("hard_sigmoid", {}), ("hard_silu", {}), ("hard_swish", {}), ("mish", {}), ("squareplus", {}),
    ("squareplus", {"b": 2}), ("sparse_plus", {}), ("sparse_sigmoid", {}), ("log1mexp", {}), ("identity", {}),
    ("tanh", {}),
]
# (name, kwargs, shapes): reductions need an axis that the shape has.
REDUCING = [
    ("softmax", {}, [(3,), (2, 3)]), ("softmax", {"axis": 0}, [(3,), (2, 3)]), ("softmax", {"axis": None}, SHAPES),
    ("softmax", {"axis": (0, 1)}, [(2, 3)]),
    ("log_softmax", {}, [(3,), (2, 3)]), ("log_softmax", {"axis": 0}, [(3,), (2, 3)]),
    ("log_softmax", {"axis": None}, SHAPES),
    ("logsumexp", {}, SHAPES), ("logsumexp", {"axis": -1}, [(3,), (2, 3)]),
    ("logsumexp", {"axis": 0, "keepdims": True}, [(3,), (2, 3)]),
    ("logmeanexp", {}, SHAPES), ("logmeanexp", {"axis": -1}, [(3,), (2, 3)]),
    ("logmeanexp", {"axis": 0, "keepdims": True}, [(2, 3)]),
    ("standardize", {}, [(3,), (2, 3)]), ("standardize", {"axis": None}, SHAPES),
    ("standardize", {"axis": 0}, [(2, 3)]), ("standardize", {"algorithm": "stable"}, [(3,), (2, 3)]),
    ("glu", {}, [(2,), (4,), (2, 4)]), ("glu", {"axis": 0}, [(4, 3)]),
]

CASES = [(n, kw, s) for n, kw in ELEMENTWISE for s in SHAPES] + [(n, kw, s) for n, kw, ss in REDUCING for s in ss]


def _input(shape):
    return np.linspace(-2.5, 2.5, int(np.prod(shape))).astype(np.float32).reshape(shape)


def _texts(name, kw, shape, mode):
    x = _input(shape)

    def build(mod, np_mod):
        f = getattr(mod.nn, name)
        fun = (lambda x: f(x, **kw))
        if mode == "grad":
            fun = mod.grad(lambda x: np_mod.sum(f(x, **kw)))
        return fun
    return str(jax.make_jaxpr(build(jax, jjnp))(x)), str(irax.make_jaxpr(build(irax, ijnp))(x))


def _params():
    out = []
    for name, kw, shape in CASES:
        for mode in ("fwd", "grad"):
            reason = _known(name, kw, shape, mode)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(name, kw, shape, mode, marks=marks, id=f"{name}-{kw}-{shape}-{mode}"))
    return out


@pytest.mark.parametrize("name,kw,shape,mode", _params())
def test_text_matches_jax(name, kw, shape, mode):
    expected, got = _texts(name, kw, shape, mode)
    assert got == expected


# Other calls: integer inputs, masks, positional static arguments, one_hot, repeated calls.
_X = np.linspace(-2, 2, 6).astype(np.float32).reshape(2, 3)
_W = np.array([[True, False, True], [True, True, False]])
_IDX = np.array([0, 2, 1, 5], np.int32)
EXTRA = [
    ("relu_int", lambda nn: (lambda i: nn.relu(i)), _IDX, None),
    ("softplus_int", lambda nn: (lambda i: nn.softplus(i)), _IDX, None),
    ("hard_sigmoid_int", lambda nn: (lambda i: nn.hard_sigmoid(i)), _IDX, None),
    ("one_hot", lambda nn: (lambda i: nn.one_hot(i, 6)), _IDX, None),
    ("one_hot_axis0_int", lambda nn: (lambda i: nn.one_hot(i, 6, axis=0, dtype=np.int32)), _IDX, None),
    ("log_softmax_positional_axis", lambda nn: (lambda x: nn.log_softmax(x, 0)), _X, None),
    ("standardize_positional_axis", lambda nn: (lambda x: nn.standardize(x, 0)), _X, None),
    ("logmeanexp_positional", lambda nn: (lambda x: nn.logmeanexp(x, 1, None, True)), _X, None),
    ("log_softmax_where", lambda nn: (lambda x: nn.log_softmax(x, where=_W)), _X, None),
    ("logsumexp_b", lambda nn: (lambda x: nn.logsumexp(x, axis=1, b=x)), _X, None),
    ("logsumexp_return_sign", lambda nn: (lambda x: nn.logsumexp(x, axis=1, return_sign=True)), _X, None),
    ("celu_alpha2", lambda nn: (lambda x: nn.celu(x, alpha=2.0)), _X, None),
    ("relu6_twice", lambda nn: (lambda x: nn.relu6(x) + nn.relu6(x)), _X, None),
    ("glu_positional_axis", lambda nn: (lambda x: nn.glu(x, 0)), np.ones((4, 3), np.float32), None),
    ("softmax_where", lambda nn: (lambda x: nn.softmax(x, where=_W)), _X, WHERE_CONST),
    ("logsumexp_where", lambda nn: (lambda x: nn.logsumexp(x, axis=1, where=_W)), _X, WHERE_CONST),
    ("logmeanexp_where", lambda nn: (lambda x: nn.logmeanexp(x, axis=1, where=_W)), _X, None),
    ("standardize_where", lambda nn: (lambda x: nn.standardize(x, where=_W)), _X, None),
    ("standardize_mean_variance", lambda nn: (lambda x: nn.standardize(x, mean=0.0, variance=1.0)), _X, None),
    ("softplus_twice", lambda nn: (lambda x: nn.softplus(x) + nn.softplus(x)), _X, PRINT_LET),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=[pytest.mark.xfail(reason=c[3], strict=True)]
                                               if c[3] else []) for c in EXTRA])
def test_text_matches_jax_other_calls(case):
    _, make, x, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert str(irax.make_jaxpr(make(irax.nn))(x)) == str(jax.make_jaxpr(make(jax.nn))(x))


def test_softmax_custom_jvp_rule_matches_jax():
    """The custom-JVP softmax (JAX's ``jax_softmax_custom_jvp=True`` path), forward and gradient."""
    from jax._src.nn import functions as jax_functions
    x = _X

    def build(softmax, mod):
        return lambda x: softmax(x, -1, None, -np.inf), mod.grad(lambda x: softmax(x, -1, None, -np.inf)[0, 1])
    jf, jg = build(jax_functions._softmax, jax)
    i_f, ig = build(irax.nn._softmax, irax)
    assert str(irax.make_jaxpr(i_f)(x)) == str(jax.make_jaxpr(jf)(x))
    assert str(irax.make_jaxpr(ig)(x)) == str(jax.make_jaxpr(jg)(x))
    np.testing.assert_allclose(np.asarray(ig(x)), np.asarray(jg(x)), rtol=1e-5, atol=1e-6)


def test_public_names():
    expected = {"celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
                "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot",
                "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus",
                "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh"}
    assert expected <= set(dir(irax.nn))
    assert irax.nn.swish is irax.nn.silu and irax.nn.hard_swish is irax.nn.hard_silu


# Values, eager and under irax.jit, at special inputs. XLA on CPU flushes subnormals to zero where irax's
# eager NumPy keeps them (sigmoid(-88) = 6e-39, so silu(-88) = -5e-37 instead of -0.): hence atol=1e-35.
SPECIAL = np.array([0., -0., 1., -1., 0.5, -0.5, 2., -2., 3., -3., 6., 7., 20., -20., 88., -88., 100., -100.,
                    1e30, -1e30, 3e38, -3e38, 1e-30, -1e-30, np.inf, -np.inf, np.nan], np.float32)
TINY = 1e-35
VALUE_FUNS = [
    ("relu", {}), ("softplus", {}), ("sigmoid", {}), ("silu", {}), ("log_sigmoid", {}), ("elu", {}),
    ("elu", {"alpha": 0.5}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("gelu", {}),
    ("gelu", {"approximate": False}), ("celu", {}), ("celu", {"alpha": 2.0}), ("selu", {}), ("hard_tanh", {}),
    ("soft_sign", {}), ("relu6", {}), ("hard_sigmoid", {}), ("hard_silu", {}), ("mish", {}), ("squareplus", {}),
    ("squareplus", {"b": 2.0}), ("sparse_plus", {}), ("sparse_sigmoid", {}), ("log1mexp", {}), ("identity", {}),
    ("tanh", {}),
]


def _key(name, kw):
    return name + "".join(f"-{k}={v}" for k, v in kw.items())


def _elementwise(nn, x):
    return {_key(n, kw): getattr(nn, n)(x, **kw) for n, kw in VALUE_FUNS}


def _elementwise_grads(mod, np_mod, x):
    return {_key(n, kw): mod.grad(lambda x, n=n, kw=kw: np_mod.sum(getattr(mod.nn, n)(x, **kw)))(x)
            for n, kw in VALUE_FUNS}


def _check(expected, got, rtol, atol, what):
    for k, a in expected.items():
        a, b = np.asarray(a), np.asarray(got[k])
        assert (a.dtype, a.shape) == (b.dtype, b.shape), (what, k)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{what} {k}")


def test_elementwise_values():
    expected = jax.jit(lambda x: _elementwise(jax.nn, x))(SPECIAL)  # one XLA compile for all
    _check(expected, _elementwise(irax.nn, SPECIAL), 2e-6, TINY, "eager")
    _check(expected, irax.jit(lambda x: _elementwise(irax.nn, x))(SPECIAL), 2e-6, TINY, "jit")


def test_elementwise_gradients():
    x = SPECIAL[np.isfinite(SPECIAL)]
    expected = jax.jit(lambda x: _elementwise_grads(jax, jjnp, x))(x)
    # 1 - tanh(x)^2 and similar cancel: XLA's and NumPy's tanh differ in the last bits.
    _check(expected, _elementwise_grads(irax, ijnp, x), 1e-5, 1e-6, "eager grad")
    _check(expected, irax.jit(lambda x: _elementwise_grads(irax, ijnp, x))(x), 1e-5, 1e-6, "jit grad")


ROWS = np.array([[0., 1., 2., 3.], [-np.inf, 0., 1., 2.], [np.inf, 0., 1., 2.], [np.nan, 0., 1., 2.],
                 [1e30, -1e30, 0., 1.], [-np.inf] * 4, [100., 100., 100., 100.], [-88., -89., 88., 0.]], np.float32)
MASK = np.array([[1, 0, 1, 1]] * 8, bool)
B = np.float32([1, -1, 2, 0.5])


def _reductions(nn, x):
    finite = x[:4]  # standardize(where=): XLA's fusion gives 0 or nan on the overflowing row (1e30)
    return {
        "softmax": nn.softmax(x), "softmax0": nn.softmax(x, axis=0), "softmax_all": nn.softmax(x, axis=None),
        "softmax_where": nn.softmax(x, where=MASK),
        "log_softmax": nn.log_softmax(x), "log_softmax0": nn.log_softmax(x, 0),
        "log_softmax_where": nn.log_softmax(x, where=MASK),
        "logsumexp": nn.logsumexp(x, axis=-1), "logsumexp_all": nn.logsumexp(x),
        "logsumexp_b": nn.logsumexp(x, axis=1, b=B), "logsumexp_sign": nn.logsumexp(x, 1, B, return_sign=True)[1],
        "logsumexp_where": nn.logsumexp(x, axis=1, where=MASK),
        "logmeanexp": nn.logmeanexp(x, axis=1), "logmeanexp_where": nn.logmeanexp(x, axis=1, where=MASK),
        "standardize": nn.standardize(x), "standardize0": nn.standardize(x, 0),
        "standardize_stable": nn.standardize(x, algorithm="stable"),
        "standardize_where": nn.standardize(finite, where=MASK[:4]),
        "glu": nn.glu(x), "glu0": nn.glu(x, 0),
        "one_hot": nn.one_hot(np.array([0, 3, -1, 4, 2]), 4),
        "one_hot_axis0": nn.one_hot(np.array([[0, 3], [1, 2]]), 4, axis=0, dtype=np.int32),
    }


def test_reduction_values():
    expected = jax.jit(lambda x: _reductions(jax.nn, x))(ROWS)
    _check(expected, _reductions(irax.nn, ROWS), 2e-6, TINY, "eager")
    _check(expected, irax.jit(lambda x: _reductions(irax.nn, x))(ROWS), 2e-6, TINY, "jit")


DTYPE_FUNS = ["relu", "softplus", "sigmoid", "silu", "log_sigmoid", "elu", "leaky_relu", "gelu", "celu", "selu",
              "hard_tanh", "soft_sign", "relu6", "hard_sigmoid", "hard_silu", "mish", "squareplus", "sparse_plus",
              "sparse_sigmoid", "log1mexp", "identity", "logsumexp", "logmeanexp"]
DTYPE_INPUTS = [1.5, 2, True, np.array([1, -2], np.int32)]


def _result(f, x):
    try:
        r = f(x)
    except Exception as e:  # noqa: BLE001 - the exception's kind is compared
        return type(e).__name__
    return str(r.dtype), bool(getattr(r, "weak_type", False)), repr(np.round(np.asarray(r, np.float64), 5).tolist())


@pytest.mark.parametrize("name", DTYPE_FUNS)
def test_dtypes_and_weak_types(name):
    """Python scalars, integers and bools: the same dtype, weak type and value as JAX (eagerly)."""
    for x in DTYPE_INPUTS:
        assert _result(getattr(irax.nn, name), x) == _result(getattr(jax.nn, name), x), repr(x)


def test_softmax_integer_input():
    x = np.array([1, 2], np.int32)
    np.testing.assert_allclose(np.asarray(irax.nn.softmax(x)), np.asarray(jax.nn.softmax(x)), rtol=1e-6)


def test_static_arguments_by_position_and_name():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(np.asarray(irax.jit(lambda x: irax.nn.glu(x, 0))(x)), np.asarray(jax.nn.glu(x, 0)),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(irax.nn.log_softmax(x, 0)), np.asarray(jax.nn.log_softmax(x, axis=0)),
                               rtol=1e-6)
    assert irax.nn.one_hot(np.array([1, 0]), 3, dtype=np.int32, axis=0).shape == (3, 2)
    with pytest.raises(ValueError, match="algorithm"):
        irax.nn.standardize(x, algorithm="exact")
