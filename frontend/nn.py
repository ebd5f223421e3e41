"""``irax.nn``: common activations and softmax-family functions, as ``jax.nn``."""
from __future__ import annotations

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.api import staged
from irax.custom_derivatives import custom_jvp
from irax.lax._scalars import as_operand
from irax.numpy._util import check_arraylike, convert, promote_args_inexact


@custom_jvp
@staged
def relu(x):
    """max(x, 0), whose derivative at 0 is 0 (a custom JVP, as in JAX)."""
    x = as_operand(x)
    return lax.max(x, convert(0, x.dtype, True))


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


def sigmoid(x):
    """``lax.logistic``: integers are rejected, as in JAX."""
    return lax.logistic(as_operand(x))


def softplus(x):
    (x,) = promote_args_inexact("softplus", x)
    return jnp.logaddexp(x, convert(0, x.dtype))


def silu(x):
    check_arraylike("silu", x)
    x = as_operand(x)
    return jnp.multiply(x, sigmoid(x))


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
    """exp(x - max) / sum, stable; the max carries no gradient (as JAX). ``where`` masks entries out."""
    (x,) = promote_args_inexact("softmax", x)
    axes = _reduction_axes(x, axis)
    x_max = jnp.max(x, axes, keepdims=True, where=where, initial=-np.inf)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(lax.sub(x_safe, lax.stop_gradient(x_max)))
    result = lax.div(unnormalized, jnp.sum(unnormalized, axes, keepdims=True, where=where))
    return result if where is None else jnp.where(where, result, 0)


def log_softmax(x, axis=-1, where=None, initial=None):
    (x,) = promote_args_inexact("log_softmax", x)
    axes = _reduction_axes(x, axis)
    x_max = jnp.max(x, axes, keepdims=True, where=where, initial=-np.inf)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = lax.sub(x_safe, lax.stop_gradient(x_max))
    result = lax.sub(shifted, jnp.log(jnp.sum(jnp.exp(shifted), axes, keepdims=True, where=where)))
    return result if where is None else jnp.where(where, result, -np.inf)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))), shifted by the (finite) max for stability; ``return_sign`` gives the sign too."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(lax.ne(b, convert(0, b.dtype)), a, -np.inf)
    else:
        (a,) = promote_args_inexact("logsumexp", a)
    axes = _reduction_axes(a, axis)
    amax = jnp.max(jnp.real(a), axes, keepdims=True, where=where, initial=-np.inf)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    exp_a = jnp.exp(lax.sub(a, convert(amax, a.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = jnp.sum(exp_a, axes, keepdims=True, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not np.issubdtype(a.dtype, np.complexfloating):
        sumexp = jnp.abs(sumexp)
    out = lax.add(jnp.log(sumexp), convert(amax, sumexp.dtype))
    if not keepdims:
        out, sign = jnp.squeeze(out, axes), jnp.squeeze(sign, axes)
    if return_sign:
        return out, sign
    if b is not None and not np.issubdtype(out.dtype, np.complexfloating):
        out = jnp.where(lax.lt(sign, convert(0, sign.dtype)), convert(np.nan, out.dtype), out)
    return out


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))): ``logsumexp`` minus the log of the element count."""
    lse = logsumexp(x, axis, keepdims=keepdims, where=where)
    x = as_operand(x)
    if where is None:
        count = convert(int(np.prod([x.shape[i] for i in _reduction_axes(x, axis)], dtype=np.int64)), lse.dtype)
    else:
        count = jnp.sum(jnp.broadcast_to(where, x.shape), axis, dtype=lse.dtype, keepdims=keepdims)
    return lax.sub(lse, jnp.log(count))


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
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=1e-2):
    check_arraylike("leaky_relu", x)
    x = as_operand(x)
    return jnp.where(x >= 0, x, jnp.multiply(negative_slope, x))


def elu(x, alpha=1.0):
    check_arraylike("elu", x)
    x = as_operand(x)
    return jnp.where(x > 0, x, jnp.multiply(alpha, jnp.expm1(jnp.where(x > 0, 0.0, x))))


def celu(x, alpha=1.0):
    return jnp.add(jnp.maximum(x, 0.0), jnp.multiply(alpha, jnp.expm1(jnp.divide(jnp.minimum(x, 0.0), alpha))))


def selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return jnp.multiply(scale, elu(x, alpha))


def glu(x, axis=-1):
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second half."""
    check_arraylike("glu", x)
    x = as_operand(x)
    if x.shape[axis] % 2:
        raise ValueError(f"axis size must be divisible by 2, got {x.shape[axis]}")
    x1, x2 = jnp.split(x, 2, axis)
    return jnp.multiply(x1, sigmoid(x2))


def hard_sigmoid(x):
    return jnp.divide(relu6(jnp.add(x, 3.0)), 6.0)


def hard_silu(x):
    check_arraylike("hard_silu", x)
    x = as_operand(x)
    return jnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def hard_tanh(x):
    check_arraylike("hard_tanh", x)
    x = as_operand(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def log_sigmoid(x):
    check_arraylike("log_sigmoid", x)
    return jnp.negative(softplus(jnp.negative(x)))


def log1mexp(x):
    """log(1 - exp(-x)), choosing the accurate form on each side of log(2)."""
    check_arraylike("log1mexp", x)
    x = as_operand(x)
    return jnp.where(x < np.log(2.0), jnp.log(jnp.negative(jnp.expm1(jnp.negative(x)))),
                     jnp.log1p(jnp.negative(jnp.exp(jnp.negative(x)))))


def mish(x):
    check_arraylike("mish", x)
    x = as_operand(x)
    return jnp.multiply(x, jnp.tanh(softplus(x)))


def soft_sign(x):
    check_arraylike("soft_sign", x)
    x = as_operand(x)
    return jnp.divide(x, jnp.add(jnp.abs(x), 1))


def sparse_plus(x):
    check_arraylike("sparse_plus", x)
    x = as_operand(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, jnp.divide(jnp.square(jnp.add(x, 1.0)), 4)))


def sparse_sigmoid(x):
    return jnp.multiply(0.5, jnp.clip(jnp.add(x, 1.0), 0.0, 2.0))


def squareplus(x, b=4):
    check_arraylike("squareplus", x, b)
    return jnp.divide(jnp.add(x, jnp.sqrt(jnp.add(jnp.square(x), b))), 2)


def tanh(x):
    return jnp.tanh(x)


def identity(x):
    check_arraylike("identity", x)
    return as_operand(x)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon); ``algorithm='fast'`` uses E[x^2] - E[x]^2 as JAX does."""
    check_arraylike("standardize", x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.clip(jnp.subtract(jnp.mean(jnp.square(x), axis, keepdims=True, where=where),
                                             jnp.square(mean)), 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.multiply(jnp.subtract(x, mean), lax.rsqrt(jnp.add(variance, epsilon)))
