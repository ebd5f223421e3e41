"""``irax.nn``: common activations and softmax-family functions, as ``jax.nn``.

Each function follows ``jax/_src/nn/functions.py`` (and ``jax/_src/ops/special.py`` for ``logsumexp``)
statement by statement: the same ``jit`` wrappers (``staged`` here, printed as ``jit[name=...]``), the same
``custom_jvp`` rules and the same ``jnp``/``lax`` calls in the same order, so that ``make_jaxpr`` prints the
same text as JAX's.
"""
from __future__ import annotations

import functools
import inspect
import operator
import sys
import warnings

import numpy as np

from irax import core, dtypes, lax, tree_util
from irax import numpy as jnp
from irax.api import staged
from irax.config import config
from irax.custom_derivatives import custom_jvp
from irax.numpy._util import canonicalize_axis, check_arraylike, promote_args_inexact


def _jit(fun=None, *, static_argnames=()):
    """JAX's ``api.jit`` for these functions, built on ``staged`` (printed as ``jit[name=...]`` under a trace).

    As in JAX, a static argument may be passed by name or by position (JAX infers ``static_argnums`` from the
    signature), and the call keeps the caller's positional/keyword form, which orders the jaxpr's arguments.
    Called eagerly, the dynamic arguments' leaves become irax arrays first, as jit's arguments do in JAX
    (Python scalars weakly typed), so the body never computes with NumPy's operators and promotion.
    """
    if fun is None:
        return functools.partial(_jit, static_argnames=static_argnames)
    static_argnames = tuple(static_argnames)
    params = inspect.signature(fun).parameters
    positional = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums = tuple(positional.index(n) for n in static_argnames if n in positional)
    variants = {}

    @functools.wraps(fun)
    def call(*args, **kwargs):
        present = tuple(i for i in nums if i < len(args))
        if isinstance(core.current_trace(), core.EvalTrace):
            args = tuple(a if i in present else _as_jit_argument(a) for i, a in enumerate(args))
            kwargs = {k: v if k in static_argnames else _as_jit_argument(v) for k, v in kwargs.items()}
        staged_fun = variants.get(present)
        if staged_fun is None:
            staged_fun = variants[present] = staged(fun, static_argnums=present, static_argnames=static_argnames)
        return staged_fun(*args, **kwargs)
    return call


def _as_jit_argument(tree):
    def leaf(x):
        if isinstance(x, (np.ndarray, np.generic)) or type(x) in (bool, int, float, complex):
            return jnp.asarray(x)
        return x
    return tree_util.tree_map(leaf, tree)


def _ensure_arraylike(name, *args):
    """JAX's ``numpy_util.ensure_arraylike``: checks the arguments, then ``jnp.asarray`` on each."""
    check_arraylike(name, *args)
    if len(args) == 1:
        return jnp.asarray(args[0])
    return tuple(jnp.asarray(a) for a in args)


def _check_arraylike_or_none(name, *args):
    check_arraylike(name, *(a for a in args if a is not None))


# activations
@_jit
def identity(x):
    """Identity activation function: returns the argument unmodified."""
    return _ensure_arraylike("identity", x)


@custom_jvp
@_jit
def relu(x):
    """max(x, 0), whose derivative at 0 is 0 (a custom JVP, as in JAX)."""
    return jnp.maximum(x, 0)


# For behavior at 0, see https://dl.acm.org/doi/10.5555/3540261.3540297
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@_jit
def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2."""
    x, b = _ensure_arraylike("squareplus", x, b)
    y = x + jnp.sqrt(jnp.square(x) + b)
    return y / 2


@_jit
def softplus(x):
    """log(1 + exp(x))."""
    return jnp.logaddexp(x, 0)


@_jit
def sparse_plus(x):
    """0 for x <= -1, (x+1)^2/4 for -1 < x < 1, x for x >= 1."""
    x = _ensure_arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@_jit
def soft_sign(x):
    """x / (|x| + 1)."""
    x_arr = _ensure_arraylike("soft_sign", x)
    return x_arr / (jnp.abs(x_arr) + 1)


def sigmoid(x):
    """``lax.logistic`` (JAX's ``jit(inline=True)``, which leaves no call in a jaxpr)."""
    return lax.logistic(x)


@_jit
def sparse_sigmoid(x):
    """0 for x <= -1, (x+1)/2 for -1 < x < 1, 1 for x >= 1."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@_jit
def silu(x):
    """x * sigmoid(x)."""
    x_arr = _ensure_arraylike("silu", x)
    return x_arr * sigmoid(x_arr)


swish = silu


@_jit
def mish(x):
    """x * tanh(softplus(x))."""
    x_arr = _ensure_arraylike("mish", x)
    return x_arr * jnp.tanh(softplus(x_arr))


@_jit
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x)."""
    x_arr = _ensure_arraylike("log_sigmoid", x)
    return -softplus(-x_arr)


@_jit
def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x_arr = _ensure_arraylike("elu", x)
    return jnp.where(x_arr > 0, x_arr, alpha * jnp.expm1(jnp.where(x_arr > 0, 0., x_arr)))


@_jit
def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise."""
    x_arr = _ensure_arraylike("leaky_relu", x)
    return jnp.where(x_arr >= 0, x_arr, negative_slope * x_arr)


@_jit
def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x_arr = _ensure_arraylike("hard_tanh", x)
    return jnp.where(x_arr > 1, 1, jnp.where(x_arr < -1, -1, x_arr))


@_jit
def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@_jit
def selu(x):
    """scale * elu(x, alpha) with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x, approximate: bool = True):
    """GELU; the tanh approximation by default. Not jitted, as in JAX."""
    [x_arr] = promote_args_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x_arr.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x_arr + 0.044715 * (x_arr ** 3))))
        return x_arr * cdf
    else:
        sqrt_half = np.sqrt(0.5).astype(x_arr.dtype)
        return jnp.array(0.5 * x_arr * (lax.erfc(-x_arr * sqrt_half)), dtype=x_arr.dtype)


@_jit(static_argnames=("axis",))
def glu(x, axis: int = -1):
    """The first half of ``axis`` times the sigmoid of the second half."""
    x_arr = _ensure_arraylike("glu", x)
    size = x_arr.shape[axis]
    assert size % 2 == 0, "axis size must be divisible by 2"
    x1, x2 = jnp.split(x_arr, 2, axis)
    return x1 * sigmoid(x2)


# other functions

def _reduction_dims(a, axis):
    """JAX's ``reductions._reduction_dims`` (no named axes): the canonical axes, twice."""
    if axis is None:
        return (tuple(range(np.ndim(a))),) * 2
    axes = (axis,) if not isinstance(axis, (np.ndarray, tuple, list)) else axis
    canon_axis = tuple(canonicalize_axis(x, np.ndim(a)) for x in axes)
    if len(canon_axis) != len(set(canon_axis)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canon_axis, canon_axis


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))), shifted by the (finite) max for stability (``jax.scipy.special.logsumexp``)."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = jnp.where(b_arr != 0, a_arr, -np.inf)
    else:
        a_arr, = promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    pos_dims, dims = _reduction_dims(a_arr, axis)
    amax = jnp.max(a_arr.real, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, pos_dims)

    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(a_arr.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not np.issubdtype(a_arr.dtype, np.complexfloating):
        sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))

    if return_sign:
        return (out, sign)
    if b is not None and not np.issubdtype(out.dtype, np.complexfloating):
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


def _count(a, axis, keepdims, where, dtype):
    """JAX's ``reductions._count``: the number of reduced elements, as ``dtype``."""
    if where is None:
        if axis is None:
            count = int(np.size(a))
        else:
            axes = (axis,) if not isinstance(axis, (tuple, list)) else axis
            count = int(np.prod([np.shape(a)[canonicalize_axis(i, np.ndim(a))] for i in axes], dtype=np.int64))
        count = lax.convert_element_type(count, dtype)
    else:
        count = jnp.sum(jnp.broadcast_to(where, np.shape(a)), axis, dtype=dtype, keepdims=keepdims)
    return count


@_jit(static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) = logsumexp(x) - log(n)."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = _count(x, axis=axis, where=where, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)


@_jit(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along ``axis``; masked-out entries give -inf."""
    x_arr = _ensure_arraylike("log_softmax", x)
    x_max = jnp.max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else jnp.where(where, x_arr, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


def softmax(x, axis=-1, where=None):
    """exp(x - max) / sum along ``axis``; masked-out entries give 0. Not jitted, as in JAX."""
    if getattr(config, "jax_softmax_custom_jvp", False):
        return _softmax(x, axis, where)
    else:
        return _softmax_deprecated(x, axis, where)


def _softmax_fun(x, axis=-1, where=None, initial=-np.inf):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


_softmax_fun.__name__ = _softmax_fun.__qualname__ = "_softmax"
_softmax = custom_jvp(_softmax_fun, nondiff_argnums=(1,))


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


def _softmax_deprecated(x, axis=-1, where=None, initial=-np.inf):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


@_jit(static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon); ``algorithm='fast'`` uses E[x^2] - E[x]^2 as JAX does."""
    check_arraylike("standardize", x)
    _check_arraylike_or_none("standardize", mean, variance, where)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            # E[x^2] - E[x]^2 may come out negative: clip it to 0 for the rsqrt.
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


@_jit(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes: int, *, dtype, axis):
    output_pos_axis = canonicalize_axis(axis, x.ndim + 1)
    axis = operator.index(axis)
    lhs = lax.expand_dims(x, (axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(output_pos_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, rhs_shape, output_pos_axis)
    return (lhs == rhs).astype(dtype)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """One-hot encoding along a new axis; out-of-range indices give all zeros."""
    num_classes = operator.index(num_classes)
    x_arr = jnp.asarray(x)
    if not dtypes.isdtype(x_arr.dtype, "integral"):
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x_arr.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return _one_hot(x_arr, num_classes, dtype=dtype, axis=axis)


@custom_jvp
@_jit
def relu6(x):
    """min(max(x, 0), 6), whose derivative is 0 at 0 and 6 (a custom JVP, as in JAX)."""
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@_jit
def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(x + 3.) / 6.


@_jit
def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x_arr = _ensure_arraylike("hard_silu", x)
    return x_arr * hard_sigmoid(x_arr)


hard_swish = hard_silu


@custom_jvp
@_jit
def log1mexp(x):
    """log(1 - exp(-x)), choosing the accurate form on each side of log(2)."""
    x = _ensure_arraylike("log1mexp", x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


tanh = jnp.tanh  # as jax.nn.tanh

from irax import _nn_initializers as initializers  # noqa: E402  (importable as irax.nn.initializers too)
from irax._nn_attention import dot_product_attention as _dot_product_attention  # noqa: E402
sys.modules[__name__ + ".initializers"] = initializers
dot_product_attention = _dot_product_attention
