"""``irax.image``: image resampling, as ``jax.image``.

Every method but NEAREST is separable: each resized dimension gets an ``[in, out]`` weight matrix built from the
method's kernel (JAX's formula, so values and dtypes match), contracted with that dimension of the image.
"""
from __future__ import annotations

import enum
import operator

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.api import staged
from irax.numpy._util import canonicalize_axis, promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys, a = -0.5), CUBIC_PYTORCH (OpenCV's
    a = -0.75 with edge padding when not antialiased, else CUBIC) or AREA (the mean over each output pixel's
    footprint)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        try:
            return _METHOD_NAMES[s]
        except (KeyError, TypeError):
            raise ValueError(f'Unknown resize method "{s}"') from None


_METHOD_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(["linear", "bilinear", "trilinear", "triangle"], ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(["cubic", "bicubic", "tricubic"], ResizeMethod.CUBIC),
    **dict.fromkeys(["cubic-pytorch", "bicubic-pytorch"], ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}


class _LengthMismatchError(ValueError, AssertionError):
    """Where JAX's bare ``assert`` on the lengths of spatial_dims, scale and translation fails: an AssertionError
    as there, and a ValueError that says what is wrong."""


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _lanczos(radius, x):
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    # sin(pi x)^2 / (pi x)^2 tends to 1 at 0, where the quotient is 0/0.
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
    return jnp.where(x > radius, 0., out)


def _keys_cubic(x):
    """Keys' cubic convolution kernel with a = -0.5 (Pillow's and TensorFlow's, PyTorch's when antialiased)."""
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return jnp.where(x >= 2., 0., out)


def _opencv_cubic(x, a=-0.75):
    """The cubic kernel with OpenCV's a = -0.75, which PyTorch uses when not antialiasing (it rings more)."""
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


_AREA = None  # weights are interval overlaps, not a kernel of the distance

# method -> (radius, kernel of the distance in input pixels)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos(3., x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos(5., x)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _weight_matrix(input_size, output_size, scale, translation, kernel, antialias, edge_radius):
    """The ``[input_size, output_size]`` weights of one dimension; column j resamples output pixel j.

    ``edge_radius`` (an int, or None) extends the input by that many copies of its edge pixels; without it,
    weights off the input are dropped and the rest renormalized.
    """
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1. / scale
    # Downsampling widens the kernel to low-pass filter; upsampling only interpolates.
    kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
    # Input coordinate of each output pixel's center (pixel i spans [i, i + 1]).
    sample_f = (jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    k = edge_radius or 0
    positions = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _AREA:
        left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right = left + inv_scale
        in_left = jnp.arange(input_size, dtype=dtype)
        in_right = in_left + 1.0
        weights = jnp.maximum(0.0, jnp.minimum(right[None, :], in_right[:, None])
                              - jnp.maximum(left[None, :], in_left[:, None]))
    else:
        weights = kernel(jnp.abs(sample_f[None, :] - positions[:, None]) / kernel_scale)
    if k:  # the weights of the padding move onto the edge pixels they copy
        rows = jnp.clip(positions.astype(jnp.int32), 0, input_size - 1)
        cols = jnp.arange(output_size)
        edge_weights = jnp.zeros((input_size, output_size), dtype)
        cols = lax.broadcast_in_dim(cols, weights.shape, (1,))
        weights = edge_weights.at[rows[:, None], cols].add(weights)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                        jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)
    if not k:
        # Output pixels whose center falls off the input are zero.
        inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
        weights = jnp.where(inside[None, :], weights, 0)
    return weights


def _contract(x, dims, weights, precision):
    """``x`` with each dimension in ``dims`` resampled by its ``[in, out]`` weights.

    One ``dot_general`` per dimension rather than JAX's einsum, which irax runs without ``precision``. The first
    weights go on the left, the others on the right, and one transpose ends it: the order opt_einsum gives JAX
    for a 2-D image or an NHWC batch, so those jaxprs match. ``axes`` names the original dimension each axis of
    the running result stands for.
    """
    axes = list(range(x.ndim))
    for i, (d, w) in enumerate(zip(dims, weights)):
        axis = axes.index(d)
        operands, contracting = ((w, x), ([0], [axis])) if i == 0 else ((x, w), ([axis], [0]))
        x = lax.dot_general(*operands, (contracting, ([], [])), precision=precision, preferred_element_type=x.dtype)
        axes.remove(d)
        axes = [d] + axes if i == 0 else axes + [d]
    return x if axes == sorted(axes) else lax.transpose(x, tuple(map(axes.index, range(x.ndim))))


def _scale_and_translate(x, shape, spatial_dims, scale, translation, method, antialias, precision):
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_radius = radius if method == ResizeMethod.CUBIC_PYTORCH else None
    dims = [canonicalize_axis(d, x.ndim) for d in spatial_dims]
    weights = [_weight_matrix(x.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
                              edge_radius).astype(x.dtype) for i, d in enumerate(dims)]
    return _contract(x, dims, weights, precision)


def _canonical_shape(shape):
    try:
        return tuple(map(operator.index, shape))
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None


def _check_rank(shape, image):
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")


def _as_method(method):
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a ResizeMethod or its name, got {method!r}")
    return method


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True,
                        precision=lax.Precision.HIGHEST):
    """Resamples ``image`` onto ``shape`` under the map ``x -> x * scale + translation`` of ``spatial_dims``.

    Pixels are half-centered (pixel ``i`` is at ``i + 0.5``); output pixels that map off the input are zero.
    ``scale`` and ``translation`` are arrays of one entry per spatial dimension and may be traced. NEAREST is
    not supported here, as in JAX.
    """
    shape = _canonical_shape(shape)
    _check_rank(shape, image)
    method = _as_method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError('Nearest neighbor resampling is not currently supported for scale_and_translate.')
    image, = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    if not len(spatial_dims) == len(scale) == len(translation):
        raise _LengthMismatchError(f"spatial_dims, scale and translation must have one length; got "
                                   f"{len(spatial_dims)}, {len(scale)} and {len(translation)}")
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias, precision)


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m != n:
            # float32 as JAX (its float64 offsets were wrong on some backends)
            offsets = jnp.floor((jnp.arange(n, dtype=np.float32) + 0.5) * m / n).astype(np.int32)
            x = x[(slice(None),) * d + (offsets,)]
    return x


@staged(static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
    _check_rank(shape, image)
    method = _as_method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image, = promote_dtypes_inexact(image)
    # Unchanged dimensions are skipped: every kernel interpolates, so an identity map leaves them as they are.
    dims = tuple(d for d, (m, n) in enumerate(zip(image.shape, shape)) if m != n)
    scale = [shape[d] / image.shape[d] if shape[d] else 1.0 for d in dims]
    return _scale_and_translate(image, shape, dims, scale, [0.] * len(dims), method, antialias, precision)


def resize(image, shape, method, antialias=True, precision=lax.Precision.HIGHEST):
    """Resizes ``image`` to ``shape`` (every dimension: batch and channel dimensions keep their size).

    ``method`` is a ``ResizeMethod`` or its name (``ResizeMethod.from_string``). NEAREST keeps the dtype and
    ignores ``antialias`` and ``precision``; the other methods return a floating-point image, and ``antialias``
    widens their kernel when downsampling. Staged as JAX's ``_resize`` jit, with every argument but the image
    static.
    """
    return _resize(jnp.asarray(image), _canonical_shape(shape), method, antialias, precision)
