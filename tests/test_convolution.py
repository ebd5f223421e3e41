"""conv_general_dilated (and its wrappers, jnp.convolve/correlate) and the windowed reductions (reduce_window_sum/
max/min, with select_and_gather_add and select_and_scatter_add behind their derivatives) against JAX: values
eagerly (the NumPy rules) and under ``irax.jit`` (IREE; each sweep one module), ``make_jaxpr`` text, gradients
(``check_grads`` and ``jax.grad``), vmap (against stacking and JAX), JAX's errors, and a small CNN train step.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
jnp = jax.numpy

F32 = np.float32

# (id, lhs shape, rhs shape, conv_general_dilated keyword arguments)
CONVS = [
    ("nchw_same", (2, 3, 6, 6), (4, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    ("nchw_valid_strided", (2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(2, 3), padding="VALID")),
    ("explicit_dilated", (2, 3, 6, 6), (4, 3, 3, 3),
     dict(window_strides=(2, 1), padding=[(1, 0), (2, 2)], lhs_dilation=(1, 2), rhs_dilation=(2, 1))),
    ("negative_padding", (1, 2, 6, 6), (3, 2, 2, 2), dict(window_strides=(1, 1), padding=[(-1, 0), (0, -2)])),
    ("nhwc_same_lower", (2, 6, 6, 3), (3, 3, 3, 4),
     dict(window_strides=(2, 2), padding="SAME_LOWER", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("mixed_layout", (2, 5, 3, 6), (3, 3, 4, 2),
     dict(window_strides=(1, 2), padding="SAME", dimension_numbers=("NWCH", "HIOW", "CNHW"))),
    ("depthwise", (2, 6, 5, 5), (6, 1, 3, 3), dict(window_strides=(1, 1), padding="SAME", feature_group_count=6)),
    ("feature_groups", (2, 6, 5, 5), (4, 3, 3, 3), dict(window_strides=(1, 1), padding="VALID",
                                                        feature_group_count=2)),
    ("batch_groups", (4, 3, 6, 6), (4, 3, 3, 3), dict(window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    ("conv1d", (2, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding="SAME")),
    ("conv3d", (1, 2, 4, 4, 4), (3, 2, 2, 2, 2), dict(window_strides=(1, 1, 1), padding="SAME")),
    ("empty_batch", (0, 3, 6, 6), (4, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
]
# Grouped convolutions' gradients reshape an axis into another, which JAX prints as reshape[dimensions=...] and
# irax as a transpose and a reshape: their values agree but not their text.
GROUPED = {"feature_groups", "batch_groups", "depthwise"}
IDS = [c[0] for c in CONVS]


def _args(lhs_shape, rhs_shape, seed=0, dtype=F32):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(lhs_shape).astype(dtype), rng.standard_normal(rhs_shape).astype(dtype)


def _conv(lx, kw):
    return lambda x, w: lx.conv_general_dilated(x, w, **kw)


def _close(actual, expected, tol=2e-5):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if actual.dtype.kind != "c":
        actual, expected = actual.astype(F32), expected.astype(F32)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def _text(jax_fn, irax_fn, *args):
    return str(irax.make_jaxpr(irax_fn)(*args)), str(jax.make_jaxpr(jax_fn)(*args))


# --- conv_general_dilated ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,lhs_shape,rhs_shape,kw", CONVS, ids=IDS)
def test_conv_eager_and_text(name, lhs_shape, rhs_shape, kw):
    x, w = _args(lhs_shape, rhs_shape)
    _close(_conv(lax, kw)(x, w), _conv(jax.lax, kw)(x, w))
    mine, theirs = _text(_conv(jax.lax, kw), _conv(lax, kw), x, w)
    assert mine == theirs


def test_conv_jit_all_configurations():
    """Every configuration in one module: IREE compiles and runs each as JAX computes it."""
    args = [_args(lhs, rhs, seed=i) for i, (_, lhs, rhs, _) in enumerate(CONVS)]

    def run(lx, args):
        return [_conv(lx, kw)(x, w) for (x, w), (_, _, _, kw) in zip(args, CONVS)]
    for mine, theirs in zip(irax.jit(lambda a: run(lax, a))(args), run(jax.lax, args)):
        _close(mine, theirs)


def test_conv_half_precision_and_preferred_type():
    """float16/bfloat16 convolve as XLA's CPU does (in float32, rounded once), eagerly and in IREE."""
    def run(lx, x16, w16, xb, wb):
        return [lx.conv(x16, w16, (1, 1), "SAME"), lx.conv(xb, wb, (2, 1), "VALID"),
                lx.conv_general_dilated(xb, wb, (1, 1), "SAME", preferred_element_type=np.float32)]
    x16, w16 = _args((2, 3, 6, 6), (4, 3, 3, 3), dtype=np.float16)
    xb, wb = (a.astype(jnp.bfloat16) for a in _args((2, 3, 6, 6), (4, 3, 3, 3), seed=1))
    expected = run(jax.lax, x16, w16, xb, wb)
    for got in (run(lax, x16, w16, xb, wb), irax.jit(lambda *a: run(lax, *a))(x16, w16, xb, wb)):
        for mine, theirs in zip(got, expected):
            _close(mine, theirs, tol=2e-2)


def test_conv_integer_and_complex():
    rng = np.random.default_rng(3)
    xi, wi = rng.integers(-4, 4, (2, 3, 5, 5)).astype(np.int32), rng.integers(-4, 4, (2, 3, 3, 3)).astype(np.int32)
    xc, wc = (a + 1j * b for a, b in zip(_args((1, 2, 5), (3, 2, 2)), _args((1, 2, 5), (3, 2, 2), seed=4)))
    xc, wc = xc.astype(np.complex64), wc.astype(np.complex64)

    def run(lx, xi, wi, xc, wc):
        return [lx.conv(xi, wi, (1, 1), "SAME"), lx.conv(xc, wc, (1,), "SAME")]
    expected = run(jax.lax, xi, wi, xc, wc)
    for got in (run(lax, xi, wi, xc, wc), irax.jit(lambda *a: run(lax, *a))(xi, wi, xc, wc)):
        for mine, theirs in zip(got, expected):
            _close(mine, theirs, tol=1e-5)


def test_conv_precision_text():
    x, w = _args((1, 2, 5, 5), (3, 2, 3, 3))
    for precision in ("highest", jax.lax.Precision.HIGH, ("high", "default")):
        mine_precision = lax.Precision[precision.name] if isinstance(precision, jax.lax.Precision) else precision
        mine, theirs = _text(lambda x, w: jax.lax.conv(x, w, (1, 1), "SAME", precision=precision),
                             lambda x, w: lax.conv(x, w, (1, 1), "SAME", precision=mine_precision), x, w)
        assert mine == theirs


def test_conv_wrappers():
    x, w = _args((2, 3, 6, 6), (4, 3, 3, 3))
    xt, wt = _args((2, 5, 5, 3), (3, 3, 3, 4), seed=2)
    wt_k = np.swapaxes(wt, 2, 3).copy()

    def run(lx, x, w, xt, wt, wt_k):
        return [lx.conv(x, w, (2, 2), "VALID"),
                lx.conv_with_general_padding(x, w, (1, 1), [(1, 2), (0, 1)], (2, 1), (1, 2)),
                lx.conv_transpose(xt, wt, (2, 2), "SAME"),
                lx.conv_transpose(xt, wt, (2, 1), "VALID", rhs_dilation=(1, 2)),
                lx.conv_transpose(xt, wt, (2, 2), ((1, 1), (2, 0))),
                lx.conv_transpose(xt, wt_k, (2, 2), "SAME", transpose_kernel=True)]
    expected = run(jax.lax, x, w, xt, wt, wt_k)
    for got in (run(lax, x, w, xt, wt, wt_k), irax.jit(lambda *a: run(lax, *a))(x, w, xt, wt, wt_k)):
        for mine, theirs in zip(got, expected):
            _close(mine, theirs)
    mine, theirs = _text(lambda x, w: jax.lax.conv_transpose(x, w, (2, 2), "SAME"),
                         lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"), xt, wt)
    assert mine == theirs


def test_conv_helpers():
    for dn in (None, ("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NWCH", "HIOW", "CNHW")):
        mine = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), dn)
        theirs = jax.lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), dn)
        assert tuple(map(tuple, mine)) == tuple(map(tuple, theirs)) and isinstance(mine, lax.ConvDimensionNumbers)
    dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1,) * 4, (1,) * 4, dn) is dn
    for mode in ("SAME", "SAME_LOWER", "VALID"):
        args = ((7, 8, 5), (3, 2, 4), (2, 3, 1), mode)
        assert lax.padtype_to_pads(*args) == jax.lax.padtype_to_pads(*args)


@pytest.mark.parametrize("name,lhs_shape,rhs_shape,kw", CONVS, ids=IDS)
def test_conv_grad(name, lhs_shape, rhs_shape, kw):
    x, w = _args(lhs_shape, rhs_shape)

    def loss(lx):
        return lambda x, w: (_conv(lx, kw)(x, w) ** 2).sum()
    expected = jax.grad(loss(jax.lax), (0, 1))(x, w)
    for mine, theirs in zip(irax.grad(loss(lax), (0, 1))(x, w), expected):
        _close(mine, theirs, tol=1e-4)
    if name not in GROUPED:
        mine, theirs = _text(jax.grad(loss(jax.lax), (0, 1)), irax.grad(loss(lax), (0, 1)), x, w)
        assert mine == theirs


def test_conv_grad_jit():
    """The configurations whose gradients are convolutions of other kinds (one module; nchw_same's runs in the CNN
    test)."""
    convs = [c for c in CONVS if c[0] in {"explicit_dilated", "negative_padding", "mixed_layout", "depthwise",
                                          "batch_groups", "conv1d", "conv3d", "empty_batch"}]
    args = [_args(lhs, rhs, seed=i) for i, (_, lhs, rhs, _) in enumerate(convs)]

    def grads(lx, grad, args):
        return [grad(lambda x, w: (_conv(lx, kw)(x, w) ** 2).sum(), (0, 1))(x, w)
                for (x, w), (_, _, _, kw) in zip(args, convs)]
    for mine, theirs in zip(irax.jit(lambda a: grads(lax, irax.grad, a))(args), grads(jax.lax, jax.grad, args)):
        for m, t in zip(mine, theirs):
            _close(m, t, tol=1e-4)


def test_conv_few_outputs_as_dots():
    """Convolutions with a few output positions and a window at least as large (kernel gradients) lower as one
    dot_general per position: strides, window dilation, negative and uneven padding, layouts, 1-3 spatial dims."""
    convs = [((2, 3, 8, 8), (4, 3, 7, 7), dict(window_strides=(1, 1), padding="VALID")),
             ((3, 9, 9, 2), (5, 5, 2, 4), dict(window_strides=(2, 3), padding=[(1, 0), (-1, 2)], rhs_dilation=(1, 2),
                                               dimension_numbers=("NHWC", "HWIO", "NHWC"))),
             ((2, 5, 6, 3), (3, 6, 2, 3), dict(window_strides=(1, 1), padding="VALID",
                                               dimension_numbers=("NWCH", "HIOW", "CNHW"))),
             ((2, 3, 12), (2, 3, 10), dict(window_strides=(1,), padding=[(0, 1)])),
             ((1, 2, 4, 5, 4), (3, 2, 3, 4, 4), dict(window_strides=(1, 1, 1), padding="VALID"))]
    args = [_args(lhs, rhs, seed=i) for i, (lhs, rhs, _) in enumerate(convs)]

    def run(lx, args):
        return [_conv(lx, kw)(x, w) for (x, w), (_, _, kw) in zip(args, convs)]
    for mine, theirs in zip(irax.jit(lambda a: run(lax, a))(args), run(jax.lax, args)):
        _close(mine, theirs, tol=1e-4)


@pytest.mark.parametrize("name", ["explicit_dilated", "depthwise", "batch_groups", "mixed_layout", "conv1d"])
def test_conv_check_grads(name):
    _, lhs_shape, rhs_shape, kw = next(c for c in CONVS if c[0] == name)
    x, w = _args(lhs_shape, rhs_shape)
    check_grads(_conv(lax, kw), (x, w), order=1, atol=5e-2, rtol=5e-2)


def test_conv_check_grads_second_order():
    kw = dict(window_strides=(2,), padding=[(1, 0)], rhs_dilation=(2,))
    x, w = _args((2, 2, 5), (2, 2, 2), seed=5)
    check_grads(lambda x, w: lax.tanh(_conv(lax, kw)(x, w)), (x, w), order=2, atol=5e-2, rtol=5e-2)


VMAPS = [("nchw_same", (0, 0)), ("nchw_same", (1, None)), ("nchw_same", (None, 3)), ("depthwise", (0, 0)),
         ("depthwise", (None, 1)), ("feature_groups", (2, 0)), ("batch_groups", (0, 0)), ("batch_groups", (1, None)),
         ("batch_groups", (None, 0)), ("nhwc_same_lower", (3, 2)), ("empty_batch", (0, None))]


def _batched(lhs_shape, rhs_shape, axes, seed):
    x, w = _args(lhs_shape, rhs_shape, seed)
    scale = np.array([1.0, -0.5, 2.0], F32)
    stack = (lambda a, ax: a if ax is None else np.stack([a * s for s in scale], ax))
    return stack(x, axes[0]), stack(w, axes[1])


@pytest.mark.parametrize("name,axes", VMAPS, ids=[f"{n}-{a}" for n, a in VMAPS])
def test_conv_vmap(name, axes):
    _, lhs_shape, rhs_shape, kw = next(c for c in CONVS if c[0] == name)
    xs, ws = _batched(lhs_shape, rhs_shape, axes, seed=1)
    mine = irax.vmap(_conv(lax, kw), axes)(xs, ws)
    _close(mine, jax.vmap(_conv(jax.lax, kw), axes)(xs, ws))
    take = (lambda a, ax, i: a if ax is None else np.take(a, i, ax))
    stacked = np.stack([np.asarray(_conv(lax, kw)(take(xs, axes[0], i), take(ws, axes[1], i))) for i in range(3)])
    _close(mine, stacked)


def test_conv_vmap_jit():
    cases = [(next(c for c in CONVS if c[0] == name), axes) for name, axes in VMAPS]
    args = [_batched(c[1], c[2], axes, seed=i) for i, (c, axes) in enumerate(cases)]

    def run(lx, vmap, args):
        return [vmap(_conv(lx, c[3]), axes)(x, w) for (c, axes), (x, w) in zip(cases, args)]
    for mine, theirs in zip(irax.jit(lambda a: run(lax, irax.vmap, a))(args), run(jax.lax, jax.vmap, args)):
        _close(mine, theirs)


def _raises(fn, *args):
    """The exception JAX raises for ``fn`` (class and message) is irax's too."""
    with pytest.raises(Exception) as theirs:
        fn(jax.lax)(*args)
    with pytest.raises(type(theirs.value)) as mine:
        fn(lax)(*args)
    assert str(mine.value) == str(theirs.value)


def test_conv_errors():
    x, w = _args((2, 3, 6, 6), (4, 3, 3, 3))
    _raises(lambda lx: lambda x, w: lx.conv(x, w[0], (1, 1), "SAME"), x, w)
    _raises(lambda lx: lambda x, w: lx.conv(x, w[:, :2], (1, 1), "SAME"), x, w)
    _raises(lambda lx: lambda x, w: lx.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2), x, w)
    _raises(lambda lx: lambda x, w: lx.conv_general_dilated(x, w, (1, 1), "SAME", batch_group_count=3), x, w)
    _raises(lambda lx: lambda x, w: lx.conv(x, w, (1, 1), "FULL"), x, w)
    _raises(lambda lx: lambda x, w: lx.conv_general_dilated(x, w, (1, 1), [1, 2]), x, w)
    _raises(lambda lx: lambda x, w: lx.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 1)), x, w)
    _raises(lambda lx: lambda x, w: lx.conv(x, w.astype(np.float16), (1, 1), "SAME"), x, w)
    _raises(lambda lx: lambda x, w: lx.conv_general_dilated(x, w, (1, 1), "SAME",
                                                            dimension_numbers=("NCHW", "OIHW")), x, w)
    _raises(lambda lx: lambda x, w: lx.conv_general_dilated(x, w, (1, 1), "SAME",
                                                            dimension_numbers=("NCHW", "OIHW", "NCXW")), x, w)
    _raises(lambda lx: lambda x, w: lx.conv(x, w, (1, 1), [(-7, 0), (0, 0)]), x, w)


# --- jnp.convolve / jnp.correlate -------------------------------------------------------------------------------

def test_convolve_correlate():
    rng = np.random.default_rng(6)
    pairs = [(rng.standard_normal(5).astype(F32), rng.standard_normal(3).astype(F32)),
             (rng.standard_normal(2).astype(F32), rng.standard_normal(4).astype(F32)),
             (rng.integers(-3, 3, 6).astype(np.int32), rng.integers(-3, 3, 2).astype(np.int32))]

    def run(np_, pairs):
        return [getattr(np_, fn)(a, v, mode=mode) for a, v in pairs for fn in ("convolve", "correlate")
                for mode in ("full", "same", "valid")]
    expected = run(jnp, pairs)
    for got in (run(inp, pairs), irax.jit(lambda p: run(inp, p))(pairs)):
        for mine, theirs in zip(got, expected):
            _close(mine, theirs, tol=1e-5)
    for fn in ("convolve", "correlate"):
        for a, v in pairs[:2]:
            mine, theirs = _text(lambda a, v: getattr(jnp, fn)(a, v, mode="same"),
                                 lambda a, v: getattr(inp, fn)(a, v, mode="same"), a, v)
            assert mine == theirs


# --- windowed reductions ------------------------------------------------------------------------------------------

# (id, computation, window_dimensions, reduce_window keyword arguments)
POOLS = [
    ("max_2x2", "max", (1, 1, 2, 2), dict(window_strides=(1, 1, 2, 2), padding="VALID")),
    ("max_3x3_same", "max", (1, 1, 3, 3), dict(window_strides=(1, 1, 2, 2), padding="SAME")),
    ("max_gapped", "max", (1, 1, 2, 2), dict(window_strides=(1, 1, 3, 3), padding=((0, 0), (0, 0), (1, 0), (0, 1)))),
    ("min_overlap", "min", (1, 1, 3, 2), dict(window_strides=(1, 1, 1, 1), padding=((0, 0), (0, 0), (1, 2), (2, 0)))),
    ("max_base_dilated", "max", (1, 1, 2, 2), dict(window_strides=(1, 1, 1, 1), padding="VALID",
                                                   base_dilation=(1, 1, 2, 1))),
    ("sum_3x3_same", "add", (1, 1, 3, 3), dict(window_strides=(1, 1, 2, 2), padding="SAME")),
    ("sum_dilated", "add", (1, 1, 2, 2), dict(window_strides=(1, 1, 1, 2), padding="VALID",
                                              base_dilation=(1, 1, 2, 1), window_dilation=(1, 1, 1, 2))),
    ("sum_1d", "add", (3,), dict(window_strides=(2,), padding=((1, 1),))),
]
POOL_IDS = [p[0] for p in POOLS]
INITS = {"max": -np.inf, "min": np.inf, "add": 0.0}


def _pool(lx, comp, window, kw):
    return lambda x: lx.reduce_window(x, INITS[comp], getattr(lx, comp), window, **kw)


def _pool_input(window, seed=0):
    shape = (6,) if len(window) == 1 else (2, 2, 6, 5)
    return np.random.default_rng(seed).permutation(np.arange(np.prod(shape))).reshape(shape).astype(F32) / 7


@pytest.mark.parametrize("name,comp,window,kw", POOLS, ids=POOL_IDS)
def test_pool_eager_grad_and_text(name, comp, window, kw):
    """Inputs without ties, where max/min gradients are unambiguous."""
    x = _pool_input(window)
    _close(_pool(lax, comp, window, kw)(x), _pool(jax.lax, comp, window, kw)(x))
    assert str(irax.make_jaxpr(_pool(lax, comp, window, kw))(x)) == str(
        jax.make_jaxpr(_pool(jax.lax, comp, window, kw))(x))

    def loss(lx):
        return lambda x: (_pool(lx, comp, window, kw)(x) ** 2).sum()
    _close(irax.grad(loss(lax))(x), jax.grad(loss(jax.lax))(x), tol=1e-4)
    mine, theirs = _text(jax.grad(loss(jax.lax)), irax.grad(loss(lax)), x)
    assert mine == theirs
    t = np.random.default_rng(1).standard_normal(x.shape).astype(F32)
    _close(irax.jvp(_pool(lax, comp, window, kw), (x,), (t,))[1], jax.jvp(_pool(jax.lax, comp, window, kw), (x,),
                                                                          (t,))[1])


def test_pool_jit_values_jvp_and_grads():
    xs = [_pool_input(window, seed=i) for i, (_, _, window, _) in enumerate(POOLS)]
    ts = [np.random.default_rng(i).standard_normal(x.shape).astype(F32) for i, x in enumerate(xs)]

    def run(lx, ad, xs, ts):
        out = []
        for x, t, (_, comp, window, kw) in zip(xs, ts, POOLS):
            f = _pool(lx, comp, window, kw)
            out += [f(x), ad.jvp(f, (x,), (t,))[1], ad.grad(lambda x: (f(x) ** 2).sum())(x)]
        return out
    for mine, theirs in zip(irax.jit(lambda xs, ts: run(lax, irax, xs, ts))(xs, ts), run(jax.lax, jax, xs, ts)):
        _close(mine, theirs, tol=1e-4)


def test_pool_large_window():
    """Windows past the lowering's unrolling limit use stablehlo.reduce_window."""
    x = _pool_input((1, 1, 3, 3)).reshape(2, 1, 10, 6)
    for comp in ("max", "add"):
        f = _pool(lax, comp, (1, 1, 9, 8), dict(window_strides=(1, 1, 1, 2), padding="SAME"))
        g = _pool(jax.lax, comp, (1, 1, 9, 8), dict(window_strides=(1, 1, 1, 2), padding="SAME"))
        _close(irax.jit(f)(x), g(x), tol=1e-4)
        _close(f(x), g(x), tol=1e-4)


@pytest.mark.parametrize("name", ["max_3x3_same", "min_overlap", "sum_dilated", "max_base_dilated"])
def test_pool_check_grads(name):
    _, comp, window, kw = next(p for p in POOLS if p[0] == name)
    check_grads(_pool(lax, comp, window, kw), (_pool_input(window),), order=2, atol=5e-2, rtol=5e-2)


def test_pool_vmap():
    x = _pool_input((1, 1, 3, 3))
    xs = np.stack([x, -2 * x, x + 1], 1)
    fs = [(_pool(lax, c, w, kw), _pool(jax.lax, c, w, kw)) for name, c, w, kw in POOLS
          if name in ("max_3x3_same", "min_overlap", "sum_dilated")]

    expected = [jax.vmap(f, 1)(xs) for _, f in fs]
    mine = [irax.vmap(f, 1)(xs) for f, _ in fs]
    for m, t in zip(mine, expected):
        _close(m, t)
    stacked = [np.stack([np.asarray(f(xs[:, i])) for i in range(3)]) for f, _ in fs]
    for m, s in zip(mine, stacked):
        _close(m, s)
    grads = [irax.vmap(irax.grad(lambda x, f=f: (f(x) ** 2).sum()), 1)(xs) for f, _ in fs]
    jax_grads = [jax.vmap(jax.grad(lambda x, f=f: (f(x) ** 2).sum()), 1)(xs) for _, f in fs]
    for m, t in zip(grads, jax_grads):
        _close(m, t, tol=1e-4)
    jitted = irax.jit(lambda xs: [irax.vmap(irax.grad(lambda x, f=f: (f(x) ** 2).sum()), 1)(xs) for f, _ in fs])(xs)
    for m, t in zip(jitted, jax_grads):
        _close(m, t, tol=1e-4)


def test_pool_integer_and_errors():
    x = np.arange(24, dtype=np.int32).reshape(4, 6) % 7
    for comp in ("max", "min", "add"):
        init = {"max": np.iinfo(np.int32).min, "min": np.iinfo(np.int32).max, "add": 0}[comp]

        def f(lx):
            return lambda x: lx.reduce_window(x, init, getattr(lx, comp), (2, 3), (1, 2), "SAME")
        _close(f(lax)(x), f(jax.lax)(x))
        _close(irax.jit(f(lax))(x), f(jax.lax)(x))
    y = np.ones((4, 6), F32)
    _raises(lambda lx: lambda y: lx.reduce_window(y, 0.0, lx.add, (2,), (1,), "VALID"), y)
    _raises(lambda lx: lambda y: lx.reduce_window(y, 0.0, lx.add, (2, 2), (1,), "VALID"), y)
    _raises(lambda lx: lambda y: lx.reduce_window(y, 0.0, lx.add, (2, 0), (1, 1), "VALID"), y)
    _raises(lambda lx: lambda y: lx.reduce_window(y, 0.0, lx.add, (2, 2), (1, 1), "FULL"), y)
    with pytest.raises(NotImplementedError):
        lax.reduce_window(y, 1.0, lax.mul, (2, 2), (1, 1), "VALID")


# --- a small CNN ----------------------------------------------------------------------------------------------------

def _cnn(lx, np_):
    def loss(params, x, y):
        w1, w2, dense = params
        h = lx.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = np_.maximum(h, 0.0)
        h = lx.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = np_.maximum(h, 0.0)
        h = lx.reduce_window(h, -np.inf, lx.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ dense
        return ((logits - y) ** 2).mean()
    return loss


def test_small_cnn_forward_backward():
    rng = np.random.default_rng(7)
    params = [rng.standard_normal((3, 3, 2, 4)).astype(F32) * 0.3, rng.standard_normal((3, 3, 4, 4)).astype(F32) * 0.2,
              rng.standard_normal((4 * 3 * 3, 3)).astype(F32) * 0.1]
    x, y = rng.standard_normal((2, 6, 6, 2)).astype(F32), rng.standard_normal((2, 3)).astype(F32)
    theirs = jax.value_and_grad(_cnn(jax.lax, jnp))(params, x, y)
    for fn in (irax.value_and_grad(_cnn(lax, inp)), irax.jit(irax.value_and_grad(_cnn(lax, inp)))):
        value, grads = fn(params, x, y)
        _close(value, theirs[0], tol=1e-5)
        for m, t in zip(grads, theirs[1]):
            _close(m, t, tol=1e-4)
    mine, theirs = _text(jax.grad(_cnn(jax.lax, jnp)), irax.grad(_cnn(lax, inp)), params, x, y)
    assert mine == theirs
