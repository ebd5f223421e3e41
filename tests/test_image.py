"""``irax.image`` against ``jax.image``: every method, upsampling and downsampling, with and without antialiasing,
on 1-D to 4-D images (only some dimensions resized), integer, half-precision and complex images and empty outputs;
``scale_and_translate`` over chosen dimensions; ``irax.jit`` (three small compiles), ``grad``, ``vmap``; the
``make_jaxpr`` text where it equals JAX's; and each error, raised alike by both libraries.

Compiling JAX's oracle costs far more than irax's eager resize, so each oracle computes every variant of one
configuration in one ``jax.jit`` and is cached for the tests that compare against it.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import irax
import irax.numpy as jnp

jax = pytest.importorskip("jax")

METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
VARIANTS = [(m, aa) for m in METHODS for aa in (True, False)]
# (input shape, output shape): downsampling, both at once, and batch/channel dimensions kept.
SHAPES = [((9,), (4,)), ((5, 8), (11, 3)), ((3, 4, 5), (6, 2, 5)), ((2, 6, 7, 3), (2, 4, 13, 3))]
# (spatial_dims, scale, translation, output shape) for an image of shape (2, 6, 7, 3).
TRANSFORMS = [((1, 2), (1.7, 0.6), (-0.8, 1.3), (2, 9, 5, 3)), ((-3, 0), (0.45, 2.5), (2.0, -3.25), (4, 4, 7, 3))]


def _image(shape, dtype=np.float32):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


def _check(out, ref, rtol=1e-5, atol=1e-6):
    assert out.shape == ref.shape and out.dtype == ref.dtype, (out.shape, out.dtype, ref.shape, ref.dtype)
    np.testing.assert_allclose(np.asarray(out, np.complex128), np.asarray(ref, np.complex128), rtol=rtol, atol=atol)


@functools.lru_cache(maxsize=None)
def _jax_resized(in_shape, out_shape):
    return jax.jit(lambda x: {(m, aa): jax.image.resize(x, out_shape, m, antialias=aa) for m, aa in VARIANTS})(
        _image(in_shape))


@pytest.mark.parametrize("method, antialias", VARIANTS)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}->{s[1]}")
def test_resize(shapes, method, antialias):
    _check(irax.image.resize(_image(shapes[0]), shapes[1], method, antialias=antialias),
           _jax_resized(*shapes)[method, antialias])


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float16", "bfloat16", "complex64"])
def test_resize_dtypes(dtype):
    """Integer and bool images become float32 (NEAREST keeps the dtype); half precision stays itself."""
    x = np.abs(_image((6, 5)) * 4).astype(dtype)
    methods = ["nearest", "linear", "cubic-pytorch", "area"]
    refs = jax.jit(lambda x: [jax.image.resize(x, (4, 9), m, antialias=False) for m in methods])(x)
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-5
    for method, ref in zip(methods, refs):
        _check(irax.image.resize(jnp.asarray(x), (4, 9), method, antialias=False), ref, rtol=tol, atol=tol)


def test_resize_to_empty():
    x, shapes = _image((4, 5)), [(0, 5), (4, 0), (0, 7)]
    refs = jax.jit(lambda x: {(m, s): jax.image.resize(x, s, m) for m in METHODS for s in shapes})(x)
    for (method, shape), ref in refs.items():
        _check(irax.image.resize(x, shape, method), ref)


def test_resize_method_enum_and_names():
    names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR", "trilinear": "LINEAR",
             "triangle": "LINEAR", "lanczos3": "LANCZOS3", "lanczos5": "LANCZOS5", "cubic": "CUBIC",
             "bicubic": "CUBIC", "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
             "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
    assert [(m.name, m.value) for m in irax.image.ResizeMethod] == [(m.name, m.value) for m in jax.image.ResizeMethod]
    for s, name in names.items():
        assert irax.image.ResizeMethod.from_string(s) is irax.image.ResizeMethod[name]
        assert jax.image.ResizeMethod.from_string(s).name == name
    _check(irax.image.resize(_image((5, 8)), [11, 3], irax.image.ResizeMethod.CUBIC),
           _jax_resized((5, 8), (11, 3))["cubic", True])


@functools.lru_cache(maxsize=None)
def _jax_transformed(transform):
    dims, scale, translation, shape = transform
    return jax.jit(lambda x, s, t: {(m, aa): jax.image.scale_and_translate(x, shape, dims, s, t, m, antialias=aa)
                                    for m, aa in VARIANTS if m != "nearest"})(
        _image((2, 6, 7, 3)), np.array(scale, np.float32), np.array(translation, np.float32))


@pytest.mark.parametrize("method, antialias", [v for v in VARIANTS if v[0] != "nearest"])
@pytest.mark.parametrize("transform", TRANSFORMS, ids=lambda t: f"dims{t[0]}")
def test_scale_and_translate(transform, method, antialias):
    dims, scale, translation, shape = transform
    _check(irax.image.scale_and_translate(_image((2, 6, 7, 3)), shape, dims, np.array(scale, np.float32),
                                          np.array(translation, np.float32), method, antialias=antialias),
           _jax_transformed(transform)[method, antialias])


def test_scale_and_translate_dtypes():
    """The weights are computed in the dtype of scale and translation (here float16, hence the tolerance), then
    cast to the image's; no spatial dims is the identity."""
    x = (_image((5, 6)) * 4).astype(np.int32)
    scale, translation, empty = np.array([1.5], np.float16), np.array([2], np.int32), np.zeros((0,), np.float32)
    refs = jax.jit(lambda x, xh: [jax.image.scale_and_translate(x, (5, 8), (1,), scale, translation, "lanczos3"),
                                  jax.image.scale_and_translate(xh, (5, 8), (1,), scale, translation, "lanczos3"),
                                  jax.image.scale_and_translate(x, (5, 6), (), empty, empty, "linear")])(
        x, x.astype(np.float16))
    _check(irax.image.scale_and_translate(x, (5, 8), (1,), scale, translation, "lanczos3"), refs[0], 1e-2, 1e-2)
    _check(irax.image.scale_and_translate(x.astype(np.float16), (5, 8), (1,), scale, translation, "lanczos3"),
           refs[1], 1e-2, 1e-2)
    _check(irax.image.scale_and_translate(x, (5, 6), (), empty, empty, "linear"), refs[2])


def test_jit():
    """``resize`` under ``irax.jit`` (three methods in one module, with the unchanged dimensions of an NHWC image)
    and ``scale_and_translate`` with traced scale and translation."""
    shapes, methods = SHAPES[-1], [("nearest", True), ("cubic-pytorch", False), ("area", True)]
    resized = irax.jit(lambda x: [irax.image.resize(x, shapes[1], m, antialias=aa) for m, aa in methods])
    for variant, out in zip(methods, resized(_image(shapes[0]))):
        _check(out, _jax_resized(*shapes)[variant])
    transform = TRANSFORMS[0]
    dims, scale, translation, shape = transform
    st = irax.jit(lambda x, s, t: irax.image.scale_and_translate(x, shape, dims, s, t, "lanczos5"))
    _check(st(_image((2, 6, 7, 3)), np.array(scale, np.float32), np.array(translation, np.float32)),
           _jax_transformed(transform)["lanczos5", True])


GRAD_METHODS = ["nearest", "linear", "cubic", "cubic-pytorch", "area"]


def _loss(lib, x, method, antialias):
    return (lib.image.resize(x, (3, 11), method, antialias=antialias) ** 2).sum()


@functools.lru_cache(maxsize=None)
def _jax_grads():
    return jax.jit(lambda x: {(m, aa): jax.grad(_loss, 1)(jax, x, m, aa) for m in GRAD_METHODS
                              for aa in (True, False)})(_image((5, 8)))


@pytest.mark.parametrize("method", GRAD_METHODS)
def test_grad(method):
    for antialias in (True, False):
        _check(irax.grad(_loss, 1)(irax, _image((5, 8)), method, antialias), _jax_grads()[method, antialias])


def test_grad_scale_and_translate_under_jit():
    scale, translation = np.array([0.7, 1.9], np.float32), np.array([0.4, -1.1], np.float32)

    def loss(lib, x):
        return (lib.image.scale_and_translate(x, (5, 7), (0, 1), scale, translation, "cubic") ** 2).sum()
    x = _image((4, 6))
    _check(irax.jit(irax.grad(lambda x: loss(irax, x)))(x), jax.jit(jax.grad(lambda x: loss(jax, x)))(x))


def test_vmap():
    xs, methods = _image((3, 5, 8)), ["nearest", "linear", "cubic-pytorch"]
    refs = jax.jit(lambda xs: [jax.vmap(lambda x: jax.image.resize(x, (7, 4), m, antialias=False))(xs)
                               for m in methods])(xs)
    for method, ref in zip(methods, refs):
        _check(irax.vmap(lambda x: irax.image.resize(x, (7, 4), method, antialias=False))(xs), ref)


@pytest.mark.parametrize("method", ["nearest", "cubic-pytorch"])
def test_jaxpr_text(method):
    x = np.ones((4, 6), np.float32)
    assert (str(irax.make_jaxpr(lambda x: irax.image.resize(x, (2, 9), method, antialias=False))(x))
            == str(jax.make_jaxpr(lambda x: jax.image.resize(x, (2, 9), method, antialias=False))(x)))


def test_jaxpr_text_scale_and_translate():
    args = np.ones((4, 6), np.float32), np.array([0.5, 1.5], np.float32), np.array([0.1, 0.2], np.float32)

    def jaxpr(lib):
        return str(lib.make_jaxpr(lambda x, s, t: lib.image.scale_and_translate(x, (2, 9), (0, 1), s, t, "linear"))(
            *args))
    assert jaxpr(irax) == jaxpr(jax)


@pytest.mark.parametrize("lib", ["irax", "jax"])
def test_errors(lib):
    lib = irax if lib == "irax" else jax
    x, pair = np.ones((4, 6), np.float32), np.array([0.5, 1.5], np.float32)
    with pytest.raises(ValueError, match=r"shape must have length equal to the number of dimensions of x;  "
                                         r"\(2,\) vs \(4, 6\)"):
        lib.image.resize(x, (2,), "linear")
    with pytest.raises(ValueError, match=r"shape must have length equal to the number of dimensions of x;  "
                                         r"\(2, 9, 1\) vs \(4, 6\)"):
        lib.image.scale_and_translate(x, (2, 9, 1), (0, 1), pair, pair, "linear")
    with pytest.raises(ValueError, match='Unknown resize method "bilinear-pytorch"'):
        lib.image.resize(x, (2, 3), "bilinear-pytorch")
    with pytest.raises(ValueError, match='Unknown resize method "Linear"'):
        lib.image.scale_and_translate(x, (2, 9), (0, 1), pair, pair, "Linear")
    with pytest.raises(ValueError, match='Unknown resize method "gaussian"'):
        lib.image.ResizeMethod.from_string("gaussian")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported for "
                                         "scale_and_translate."):
        lib.image.scale_and_translate(x, (2, 9), (0, 1), pair, pair, "nearest")
    with pytest.raises(TypeError, match=r"Shapes must be 1D sequences of concrete values of integer type, "
                                        r"got \(2, 3.0\)."):
        lib.image.resize(x, (2, 3.0), "linear")
    # JAX asserts the lengths of spatial_dims, scale and translation; irax's error is also a ValueError.
    for dims, scale, translation in [((0,), pair, pair), ((0, 1), pair, pair[:1]), ((0, 1), pair[:1], pair)]:
        with pytest.raises(AssertionError):
            lib.image.scale_and_translate(x, (2, 9), dims, scale, translation, "linear")
    if lib is irax:
        with pytest.raises(ValueError, match="spatial_dims, scale and translation must have one length; "
                                             "got 2, 2 and 1"):
            lib.image.scale_and_translate(x, (2, 9), (0, 1), pair, pair[:1], "linear")
