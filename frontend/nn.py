"""``irax.nn``: common activations and softmax-family functions, as ``jax.nn``."""
from __future__ import annotations

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.api import staged
from irax.lax._scalars import as_operand
from irax.numpy._util import convert, promote_args_inexact


@staged
def relu(x):
    """max(x, 0)."""
    x = as_operand(x)
    return lax.max(x, convert(0, x.dtype, True))


def sigmoid(x):
    (x,) = promote_args_inexact("sigmoid", x)
    return lax.logistic(x)


def softplus(x):
    (x,) = promote_args_inexact("softplus", x)
    return jnp.logaddexp(x, convert(0, x.dtype))


def silu(x):
    (x,) = promote_args_inexact("silu", x)
    return lax.mul(x, lax.logistic(x))


swish = silu


def gelu(x, approximate: bool = True):
    """GELU; the tanh approximation by default, as JAX."""
    (x,) = promote_args_inexact("gelu", x)
    if approximate:
        c = convert(np.sqrt(2 / np.pi), x.dtype)
        cdf = lax.mul(convert(0.5, x.dtype), lax.add(convert(1.0, x.dtype), lax.tanh(
            lax.mul(c, lax.add(x, lax.mul(convert(0.044715, x.dtype), lax.integer_pow(x, 3)))))))
        return lax.mul(x, cdf)
    return lax.mul(lax.mul(x, convert(0.5, x.dtype)),
                   lax.add(convert(1.0, x.dtype), lax.erf(lax.div(x, convert(np.sqrt(2), x.dtype)))))


def _reduction_axes(x, axis):
    return tuple(range(x.ndim)) if axis is None else tuple(
        a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))


def softmax(x, axis=-1, where=None, initial=None):
    """exp(x - max) / sum, stable; the max carries no gradient (as JAX)."""
    (x,) = promote_args_inexact("softmax", x)
    axes = _reduction_axes(x, axis)
    unnormalized = jnp.exp(lax.sub(x, lax.stop_gradient(jnp.max(x, axes, keepdims=True, initial=-np.inf))))
    return lax.div(unnormalized, jnp.sum(unnormalized, axes, keepdims=True))


def log_softmax(x, axis=-1, where=None, initial=None):
    (x,) = promote_args_inexact("log_softmax", x)
    axes = _reduction_axes(x, axis)
    shifted = lax.sub(x, lax.stop_gradient(jnp.max(x, axes, keepdims=True, initial=-np.inf)))
    return lax.sub(shifted, jnp.log(jnp.sum(jnp.exp(shifted), axes, keepdims=True)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    (a,) = promote_args_inexact("logsumexp", a)
    axes = _reduction_axes(a, axis)
    amax = lax.stop_gradient(jnp.max(a, axes, keepdims=True))
    amax = jnp.where(jnp.isfinite(amax), amax, lax.full_like(amax, 0))
    out = lax.add(jnp.log(jnp.sum(jnp.exp(lax.sub(a, amax)), axes, keepdims=True)), amax)
    return out if keepdims else jnp.squeeze(out, axes)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding along a new axis; out-of-range indices give all zeros."""
    x = as_operand(x)
    dtype = dtypes.canonicalize_dtype(dtype) if dtype is not None else dtypes.default_float_dtype()
    axis = axis % (x.ndim + 1)
    lhs = lax.expand_dims(x, (axis,))
    shape = list(lhs.shape)
    shape[axis] = num_classes
    rhs = lax.broadcasted_iota(x.dtype, shape, axis)
    return lax.convert_element_type(lax.eq(jnp.broadcast_to(lhs, shape), rhs), dtype)


def relu6(x):
    (x,) = promote_args_inexact("relu6", x)
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=1e-2):
    (x,) = promote_args_inexact("leaky_relu", x)
    return jnp.where(lax.ge(x, convert(0, x.dtype)), x, lax.mul(convert(negative_slope, x.dtype), x))


def elu(x, alpha=1.0):
    (x,) = promote_args_inexact("elu", x)
    safe = jnp.where(lax.gt(x, convert(0, x.dtype)), convert(0, x.dtype), x)
    return jnp.where(lax.gt(x, convert(0, x.dtype)), x, lax.mul(convert(alpha, x.dtype), lax.expm1(safe)))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    (x,) = promote_args_inexact("standardize", x)
    mean = jnp.mean(x, axis, keepdims=True) if mean is None else mean
    variance = jnp.var(x, axis, keepdims=True) if variance is None else variance
    return lax.mul(lax.sub(x, mean), lax.rsqrt(lax.add(variance, convert(epsilon, x.dtype))))
