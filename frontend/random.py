"""``irax.random``: JAX's counter-based PRNG, ported so that every sample is bit-identical to JAX's.

The samplers are JAX 0.10's (``jax/_src/random/core.py``) over its default
``threefry2x32`` implementation with ``jax_threefry_partitionable`` on (JAX 0.10's
default), so the same key, shape and dtype give the same bits here as in JAX.
Keys are raw ``uint32[..., 2]`` arrays (``PRNGKey``) or typed key arrays (``key``),
which here are a pytree around the same ``uint32`` data; JAX's ``random_wrap``,
``random_bits`` and other key primitives are therefore not separate ops: their
expansion (``threefry2x32`` and integer ops) is traced inline.

The float samplers are ``jit``-compiled helpers, as in JAX, and that matters for the bits: XLA and IREE
both contract ``u * (maxval - minval) + minval`` into one fused multiply-add, which the NumPy eager rules
(one rounding per op) would not reproduce. Samplers that end in log, log1p, tan, erf or erf_inv match
JAX only to the last ulp of those functions, whose float32 approximations in IREE are not XLA's.

JAX's ``random_gamma`` primitive is not a primitive here: ``gamma`` traces what JAX lowers it to (a key split
off per element and Marsaglia and Tsang's rejection loop, vmapped) under a ``custom_jvp`` carrying JAX's JVP. The
rejection samplers (gamma, poisson, binomial) test candidates with log; where IREE's log rounds differently from
XLA's on a candidate at the acceptance boundary, the two would accept different candidates. Sorting, the
integer samplers built on these loops and the float16/bfloat16 gamma samples come out bit-identical.
"""
from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence

import numpy as np

from irax import basearray, dtypes, lax
from irax import numpy as jnp
from irax.api import jit
from irax.batching import vmap
from irax.core import bind
from irax.custom_derivatives import custom_jvp
from irax.numpy._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from irax.tree_util import register_pytree_node

__all__ = ["ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare", "choice", "clone",
           "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma", "generalized_normal",
           "geometric", "gumbel", "key", "key_data", "key_dtype", "key_impl", "laplace", "loggamma", "logistic",
           "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal", "pareto",
           "permutation", "poisson", "PRNGKey", "rademacher", "randint", "rayleigh", "split", "t", "triangular",
           "truncated_normal", "uniform", "wald", "weibull_min", "wrap_key_data"]

_KEY_SHAPE = (2,)
_IMPL_NAME = "threefry2x32"
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


class KeyTy:
    """The dtype of typed keys; printed as JAX prints it, so that user code comparing dtypes keeps working."""

    name = "key<fry>"
    type = dtypes.prng_key

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyTy)

    def __hash__(self):
        return hash(KeyTy)


@basearray.Array.register
class PRNGKeyArray:
    """An array of typed keys: its ``uint32[*shape, 2]`` data is the one pytree leaf, so that ``jit``, ``vmap``
    and ``tree_map`` carry keys as they carry arrays."""

    __slots__ = ("_base",)

    def __init__(self, base):
        self._base = base

    @property
    def shape(self):
        return tuple(self._base.shape[:-1])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def dtype(self):
        return KeyTy()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            raise NotImplementedError("indexing key arrays with an ellipsis")
        return PRNGKeyArray(self._base[index])

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(jnp.asarray(self._base) == jnp.asarray(other._base), axis=-1)

    def __repr__(self):
        return f"Array({self.shape}, dtype={KeyTy.name}) overlaying:\n{self._base}"


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None), lambda _, leaves: PRNGKeyArray(leaves[0]))


def _check_key_data(data):
    if not all(hasattr(data, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype "
                        f"attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != _KEY_SHAPE:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got "
                        f"shape={tuple(data.shape)} for impl=PRNGImpl({_IMPL_NAME})")
    if data.dtype != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got "
                        f"dtype={data.dtype}")


def _check_prng_key(name, key, allow_batched=False):
    """The key's ``uint32`` data and whether it came as a raw array (results are then returned raw too)."""
    if isinstance(key, PRNGKeyArray):
        data, raw = key._base, False
    elif hasattr(key, "shape") and hasattr(key, "dtype") or isinstance(key, (int, float, list, tuple)):
        data, raw = jnp.asarray(key), True
        _check_key_data(data)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and data.ndim > 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape {tuple(data.shape[:-1])} "
                         "!= (). Use jax.vmap for batching.")
    return data, raw


def _return_keys(raw, data):
    return data if raw else PRNGKeyArray(data)


def _canonical_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.") from None


def _broadcast_shapes(*shapes):
    """``lax.broadcast_shapes``, with its error message."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}") from None


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        shape_ = _broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != tuple(shape_):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                             f"result of broadcasting the shapes must equal the shape argument, but got result "
                             f"{tuple(shape_)} for shape argument {tuple(shape)}.")


def _user_dtype(dtype, default):
    return dtypes.canonicalize_dtype(default() if dtype is None else dtype)


# --- the threefry2x32 implementation (jax/_src/random/threefry2x32.py) ---------------------------------------

def _threefry2x32(k1, k2, x1, x2):
    return bind("threefry2x32", k1, k2, x1, x2)


def _seed(seed):
    """A scalar integer seed as key data: its high 32 bits, then its low 32 bits (JAX's ``threefry_seed``)."""
    if isinstance(seed, int):  # JAX converts through int64, which wraps in 32-bit mode rather than overflowing
        seed = np.int64(seed).astype(dtypes.default_int_dtype())
    seed = jnp.asarray(seed)
    if seed.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if not dtypes.issubdtype(seed.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    high = lax.shift_right_logical(seed, lax.full_like(seed, 32))
    convert = lambda k: lax.expand_dims(lax.convert_element_type(k, np.uint32), [0])  # noqa: E731
    return lax.concatenate([convert(high), convert(seed)], 0)


def _iota_2x32_shape(shape):
    """The row-major index of every element as (high, low) uint32 words; sizes stay below 2**32 here, so the
    high word is zero."""
    if not shape:
        zero = jnp.zeros((), np.uint32)
        return zero, zero
    if math.prod(shape) >= 2 ** 32:
        raise NotImplementedError("random bits arrays of 2**32 elements or more")
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    low = None
    for dim, stride in enumerate(strides):
        term = lax.broadcasted_iota(np.uint32, shape, dim)
        term = term if stride == 1 else lax.mul(term, jnp.full(shape, stride, np.uint32))
        low = term if low is None else lax.add(low, term)
    return jnp.zeros(shape, np.uint32), low


def _threefry_2x32(key, count):
    """The cipher over a flat count array split in halves (JAX's ``threefry_2x32``)."""
    flat = jnp.ravel(count)
    if flat.shape[0] % 2:
        flat = jnp.concatenate([flat, jnp.zeros((1,), np.uint32)])
    x1, x2 = jnp.split(flat, 2)
    out = jnp.concatenate(_threefry2x32(key[0], key[1], x1, x2))
    return lax.reshape(out[:-1] if count.size % 2 else out, count.shape)


def _split_data(key, shape):
    counts1, counts2 = _iota_2x32_shape(shape)
    bits1, bits2 = _threefry2x32(key[0], key[1], counts1, counts2)
    return jnp.stack([bits1, bits2], axis=bits1.ndim)


def _fold_in_data(key, data):
    return _threefry_2x32(key, _seed(jnp.asarray(data, dtype=np.uint32)))


def _random_bits(key, bit_width, shape):
    counts1, counts2 = _iota_2x32_shape(shape)
    bits1, bits2 = _threefry2x32(key[0], key[1], counts1, counts2)
    dtype = _UINT[bit_width]
    if bit_width == 64:
        high, low = (lax.convert_element_type(b, dtype) for b in (bits1, bits2))
        return lax.bitwise_or(lax.shift_left(high, jnp.asarray(32, dtype=dtype)), low)
    if bit_width == 32:
        return lax.bitwise_xor(bits1, bits2)
    return lax.convert_element_type(lax.bitwise_xor(bits1, bits2), dtype)


# --- keys -------------------------------------------------------------------------------------------------------

def _check_impl(impl):
    if impl is not None and str(impl) not in (_IMPL_NAME, KeyTy.name):
        raise NotImplementedError(f"PRNG implementation {impl!r}: irax implements only {_IMPL_NAME!r}")


def _key(ctor_name, seed, impl):
    _check_impl(impl)
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape {np.shape(seed)} != (). "
                        "Use jax.vmap for batching")
    return _seed(seed)


def key(seed, *, impl=None, dtype=None):
    """A typed scalar key: JAX's recommended kind, which can't be mistaken for an integer array."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    return PRNGKeyArray(_key("key", seed, impl if dtype is None else dtype))


def PRNGKey(seed, *, impl=None):
    """A legacy raw key: ``uint32[2]``."""
    return _key("PRNGKey", seed, impl)


def key_data(keys):
    """The ``uint32[..., 2]`` data under typed keys (raw keys are their own data)."""
    data, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over existing ``uint32[..., 2]`` key data."""
    if dtype is not None and impl is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
    _check_impl(impl if dtype is None else dtype)
    _check_key_data(key_bits_array)
    return PRNGKeyArray(jnp.asarray(key_bits_array))


def key_dtype(impl=None):
    """The dtype of typed keys of ``impl`` (only threefry2x32 here)."""
    _check_impl(impl)
    return KeyTy()


def clone(key):
    """The same key (as an array): JAX's clone only exempts a key from its key-reuse checks, which irax does not
    make, and checks nothing else."""
    return key if isinstance(key, PRNGKeyArray) else jnp.asarray(key)


def key_impl(keys):
    """The name of the keys' PRNG implementation: always JAX's default, threefry2x32."""
    _check_prng_key("key_impl", keys, allow_batched=True)
    return _IMPL_NAME


def fold_in(key, data):
    """A new key from a key and a 32-bit integer."""
    data_key, raw = _check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    return _return_keys(raw, _fold_in_data(data_key, data))


def split(key, num=2):
    """``num`` (a count or a shape) new keys along new leading axes."""
    data, raw = _check_prng_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return _return_keys(raw, _split_data(data, _canonical_shape(shape)))


# --- samplers ---------------------------------------------------------------------------------------------------

def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniformly random unsigned integers."""
    data, _ = _check_prng_key("bits", key)
    dtype = _user_dtype(dtype, dtypes.default_uint_dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _random_bits(data, dtype.itemsize * 8, _canonical_shape(shape))


def _broadcast_to_rank(x, rank):
    extra = rank - x.ndim
    return lax.broadcast_in_dim(x, (1,) * extra + tuple(x.shape), tuple(range(extra, rank))) if extra > 0 else x


@functools.partial(jit, static_argnums=(3, 4))
def _uniform(key, minval, maxval, shape, dtype):
    """Random mantissa bits under the exponent of 1.0, giving [1, 2), then shifted and scaled."""
    _check_shape("uniform", shape)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError("uniform only accepts floating point dtypes.")
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    minval = _broadcast_to_rank(minval, len(shape))
    maxval = _broadcast_to_rank(maxval, len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    random = _random_bits(key, rng_bits, shape)
    uint_dtype = _UINT[nbits]
    if rng_bits != nbits:
        random = lax.convert_element_type(random, uint_dtype)
    float_bits = lax.shift_right_logical(random, jnp.array(rng_bits - nmant, uint_dtype))
    float_bits = lax.bitwise_or(float_bits, jnp.asarray(np.array(1.0, dtype).view(uint_dtype), dtype=uint_dtype))
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), jnp.array(1.0, dtype))
    return lax.max(minval, lax.reshape(lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval), shape))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in [minval, maxval)."""
    data, _ = _check_prng_key("uniform", key)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    shape = _canonical_shape(shape)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
    return _uniform(data, minval, maxval, shape, dtype)


def _convert_and_clip_integer(val, dtype):
    """A conversion that saturates at dtype's range instead of wrapping."""
    lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(val.dtype).min))
    hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(val.dtype).max))
    return jnp.clip(val, jnp.asarray(lo, val.dtype), jnp.asarray(hi, val.dtype)).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
    """Twice the dtype's bits per value, reduced modulo the span: JAX's trade of a small bias for a fixed cost."""
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    maxval_out_of_range = lax.gt(
        maxval, _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype))
    minval = _broadcast_to_rank(_convert_and_clip_integer(minval, dtype), len(shape))
    maxval = _broadcast_to_rank(_convert_and_clip_integer(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    keys = _split_data(key, (2,))
    higher_bits, lower_bits = (_random_bits(keys[i], nbits, shape) for i in range(2))
    unsigned_dtype = _UINT[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned_dtype)
    span = lax.select(lax.le(maxval, minval), lax.full_like(span, 1), span)
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, lax.full_like(span, 1)), span)
    multiplier = lax.rem(lax.full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, lax.convert_element_type(random_offset, dtype))


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in [minval, maxval)."""
    data, _ = _check_prng_key("randint", key)
    dtype = _user_dtype(dtype, dtypes.default_int_dtype)
    shape = _canonical_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:  # sampled in 32 bits, as JAX does, against the modulo bias
        sampling_dtype = np.dtype(np.int32)
        minval = jnp.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
    return _randint(data, minval, maxval, shape, sampling_dtype).astype(dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_real(key, shape, dtype):
    """The inverse error function of a uniform sample in (-1, 1), scaled by sqrt(2)."""
    _check_shape("normal", shape)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform(key, shape, dtype, lo, np.array(1.0, dtype))
    return lax.mul(jnp.asarray(np.array(np.sqrt(2), dtype)), lax.erf_inv(u))


@functools.partial(jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        real_dtype = np.array(0, dtype).real.dtype
        keys = _split_data(key, (2,))
        re, im = (_normal_real(keys[i], shape, real_dtype).astype(dtype) for i in range(2))
        return (re + 1j * im) / jnp.asarray(np.array(np.sqrt(2), dtype))
    return _normal_real(key, shape, dtype)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (complex dtypes: real and imaginary parts from two split keys)."""
    data, _ = _check_prng_key("normal", key)
    shape = _canonical_shape(shape)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dtype}")
    return _normal(data, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(lower), np.shape(upper)))
    else:
        _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = jnp.asarray(np.array(np.sqrt(2), dtype))
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    # Clamped into the open interval: rounding (or u == a) could land on a bound.
    return jnp.clip(out, lax.nextafter(lax.stop_gradient(lower), jnp.asarray(np.array(np.inf, dtype))),
                    lax.nextafter(lax.stop_gradient(upper), jnp.asarray(np.array(-np.inf, dtype))))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples in the open interval (lower, upper), by inverting erf over [erf(lower), erf(upper))."""
    if shape is not None:
        shape = _canonical_shape(shape)
    data, _ = _check_prng_key("truncated_normal", key)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `truncated_normal` must be a float dtype, got {dtype}")
    return _truncated_normal(data, lower, upper, shape, dtype)


@functools.partial(jit, static_argnames=("shape", "mode"))
def _bernoulli(key, p, shape, mode):
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        _check_shape("bernoulli", shape, np.shape(p))
    dtype = dtypes.dtype(p)
    if mode == "high":
        u = uniform(key, (2, *shape), dtype)
        u1, u2 = u[0], u[1] * (2 ** -dtypes.finfo(dtype).nmant)
        return u2 < p - u1
    return uniform(key, shape, dtype) < p


def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """True with probability p; mode "high" spends a second uniform on resolving small p."""
    if shape is not None:
        shape = _canonical_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    data, _ = _check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    return _bernoulli(data, lax.convert_element_type(p, dtype), shape=shape, mode=mode)


@functools.partial(jit, static_argnums=(1, 2))
def _rademacher(key, shape, dtype):
    samples = bernoulli(key, 0.5, shape).astype(dtype)
    return (2 * samples - 1).astype(dtype)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """-1 or 1 with equal probability."""
    data, _ = _check_prng_key("rademacher", key)
    return _rademacher(data, _canonical_shape(shape), _user_dtype(dtype, dtypes.default_int_dtype))


def _float_sampler(name, body):
    """The public sampler around a jitted ``body(key, shape, dtype)``: JAX's checks of key, dtype and shape."""
    def sampler(key, shape=(), dtype=None, *, out_sharding=None):
        data, _ = _check_prng_key(name, key)
        dtype = _user_dtype(dtype, dtypes.default_float_dtype)
        if not dtypes.issubdtype(dtype, np.floating):
            raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
        shape = _canonical_shape(shape)
        _check_shape(name, shape)
        return body(data, shape, dtype)
    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = body.__doc__
    return sampler


@functools.partial(jit, static_argnums=(1, 2))
def _cauchy(key, shape, dtype):
    """tan(pi (u - 1/2)) of a uniform u in [eps, 1)."""
    u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.0)
    return lax.tan(lax.mul(lax.full_like(u, np.pi), lax.sub(u, lax.full_like(u, 0.5))))


@functools.partial(jit, static_argnums=(1, 2))
def _exponential(key, shape, dtype):
    """-log(1 - u): 1 - u keeps log's argument in (0, 1]."""
    u = uniform(key, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


@functools.partial(jit, static_argnums=(1, 2))
def _laplace(key, shape, dtype):
    """sign(u) log(1 - |u|) of a uniform u in (-1, 1)."""
    u = uniform(key, shape, dtype, minval=-1.0 + float(dtypes.finfo(dtype).epsneg), maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@functools.partial(jit, static_argnums=(1, 2))
def _logistic(key, shape, dtype):
    """log(x) - log(1 - x): the logit of a uniform in [tiny, 1)."""
    x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


cauchy = _float_sampler("cauchy", _cauchy)
exponential = _float_sampler("exponential", _exponential)
laplace = _float_sampler("laplace", _laplace)
logistic = _float_sampler("logistic", _logistic)


def _safe_int_to_float(hi, lo, dtype):
    """A 64-bit fixed-point fraction (hi, lo) as the nearest-below float32 in (0, 1), exponent from the leading
    zeros."""
    finfo = dtypes.finfo(dtype)
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    u32 = lambda v: jnp.asarray(np.array(v, np.uint32))  # noqa: E731
    mantissa = lax.bitwise_or(lax.shift_left(hi, hiclz),
                              jnp.where(hiclz == 32, lax.shift_left(lo, loclz),
                                        lax.shift_right_logical(lo, finfo.bits - hiclz)))
    mantissa = lax.shift_right_logical(mantissa, u32(finfo.bits - finfo.nmant - 1))
    mantissa = lax.bitwise_and(mantissa, u32((1 << finfo.nmant) - 1))
    exp = lax.shift_left(-finfo.minexp - jnp.where(hiclz == 32, 32 + loclz, hiclz), u32(finfo.nmant))
    exp = lax.bitwise_and(exp, u32((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1))))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), dtype)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        random = _random_bits(key, info.bits, (2,) + shape)
        neg = lax.bitwise_not(random)
        lo_bits = neg[1]
        carry = jnp.stack([(lo_bits == np.uint32((1 << info.bits) - 1)).astype(np.uint32),
                           jnp.ones_like(lo_bits)])
        neg = neg + carry
        flip_mask = random[0] < np.uint32(1 << (info.bits - 1))
        x = jnp.where(flip_mask, random, neg)
        x = _safe_int_to_float(x[0], x[1], dtype)
        return jnp.where(flip_mask, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
    if mode in ("high", "highest"):
        u = _uniform(key, 0.0, 1.0, (2,) + shape, dtype)
        high, low = u[0], u[1]
        x = jnp.where(high >= 0.5, high, high + 2 ** -(info.nmant) * low + info.tiny)
        return -jnp.log(-jnp.log1p(-x))
    return -jnp.log(-jnp.log(_uniform(key, info.tiny, 1.0, shape, dtype)))


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """-log(-log(u)); modes "high"/"highest" resolve u near 1 with more bits, for larger logits."""
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _float_sampler("gumbel", lambda data, shape, dtype: _gumbel(data, shape, dtype, mode))(key, shape, dtype)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    """The Gumbel-max trick: the argmax of logits plus Gumbel noise."""
    data, _ = _check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonical_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if not replace:
        return _categorical_without_replacement(data, logits, shape, shape_prefix, batch_shape, axis, mode)
    if axis >= 0:
        axis -= logits.ndim
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % logits.ndim, logits.shape[axis])
    noise = gumbel(data, (*shape_prefix, *logits_shape), logits.dtype, mode=mode)
    return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(shape_prefix)))), axis=axis)


def _categorical_without_replacement(data, logits, shape, shape_prefix, batch_shape, axis, mode):
    """JAX's: the indices of the ``k`` largest Gumbel-perturbed logits (``lax.top_k``), one draw per sample."""
    logits = logits + gumbel(data, logits.shape, logits.dtype, mode=mode)
    k = int(np.prod(shape_prefix, dtype=np.int64))
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                         f"categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    return lax.reshape(indices, shape, (indices.ndim - 1, *range(indices.ndim - 1)))


@functools.partial(jit, static_argnums=(2,))
def _shuffle(key, x, axis):
    """Sorts by fresh random 32-bit keys, rounds enough that ties left are unlikely (JAX's heuristic)."""
    num_rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(num_rounds):
        keys = _split_data(key, (2,))
        key, subkey = keys[0], keys[1]
        _, x = lax.sort_key_val(_random_bits(subkey, 32, tuple(x.shape)), x, axis)
    return x


def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A shuffled ``arange(x)`` or ``x`` along ``axis`` (each slice on its own when ``independent``)."""
    data, _ = _check_prng_key("permutation", key)
    check_arraylike("permutation", x)
    axis = canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(data, jnp.arange(int(x)), axis)
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Draws from ``a`` (or ``arange(a)``): randint, a permutation's prefix, inverse-CDF search or Gumbel top-k."""
    data, _ = _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when "
                         "'replace=False'")
    if p is None:
        if replace:
            ind = randint(data, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(data, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        check_arraylike("choice", p)
        p_arr, = promote_dtypes_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(data, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = gumbel(data, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, k=n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


def _gamma_one(key, alpha, log_space):
    """Marsaglia and Tsang's rejection sampler for one alpha, boosted by ``u ** (1 / alpha)`` (or its log) for
    alpha < 1; JAX's op for op, since the bits depend on every split and rounding."""
    dtype = alpha.dtype
    const = lambda v: jnp.asarray(np.array(v, dtype))  # noqa: E731
    zero, one, two, minus_one = const(0), const(1), const(2), const(-1)
    one_over_two, one_over_three, squeeze_const = const(0.5), const(1. / 3.), const(0.0331)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kXVU):
        _, X, V, U = kXVU
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, one_over_two), lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))))

    def next_kxv(kxv):
        keys = _split_data(kxv[0], (2,))
        x = _normal(keys[1], (), dtype)
        return keys[0], x, lax.add(one, lax.mul(x, c))

    def body_fn(kXVU):
        keys = _split_data(kXVU[0], (3,))
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv, (keys[1], zero, minus_one))
        return keys[0], lax.mul(x, x), lax.mul(lax.mul(v, v), v), _uniform(keys[2], 0.0, 1.0, (), dtype)

    keys = _split_data(key, (2,))
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (keys[0], zero, one, two))
    if log_space:
        log_samples = lax.neg(_exponential(keys[1], (), dtype))
        log_boost = lax.select(lax.bitwise_or(boost_mask, log_samples == 0), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = 1 - _uniform(keys[1], 0.0, 1.0, (), dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _random_gamma(key, a, log_space):
    """JAX's ``random_gamma`` primitive as a function: its lowering (one key split off per element, the scalar
    sampler vmapped) under its JVP (the implicit reparameterization gradient ``random_gamma_grad``)."""
    if not a.size:
        return jnp.zeros(a.shape, a.dtype)
    keys, alphas = _split_data(key, (a.size,)), jnp.ravel(a)
    if a.size == 1:  # run twice and kept once: IREE takes minutes to compile these loops over one element
        keys, alphas = jnp.concatenate([keys, keys]), jnp.concatenate([alphas, alphas])
    samples = vmap(functools.partial(_gamma_one, log_space=log_space))(keys, alphas)
    return lax.reshape(samples[:a.size], a.shape)


@_random_gamma.defjvp
def _random_gamma_jvp(log_space, primals, tangents):
    key, a = primals
    ans = _random_gamma(key, a, log_space)
    return ans, tangents[1] * _gamma_grad(ans, a, log_space)


def _gamma_grad(sample, a, log_space):
    """d sample / d a, per element in a ``map`` as JAX does on CPU; in log space divided by the sample, whose
    exp may underflow to 0 and is then read as the smallest normal."""
    samples, alphas = jnp.ravel(sample), jnp.ravel(a)
    if log_space:
        samples = lax.exp(samples)
        samples = lax.select(samples == 0, lax.full_like(samples, dtypes.finfo(samples.dtype).tiny), samples)
        grad = lambda alpha, x: lax.random_gamma_grad(alpha, x) / x  # noqa: E731
    else:
        grad = lax.random_gamma_grad
    if not samples.size:
        return jnp.zeros(np.shape(a), samples.dtype)
    return lax.map(lambda args: grad(*args), (alphas, samples)).reshape(np.shape(a))


@functools.partial(jit, static_argnames=("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = np.shape(a)
    else:
        _check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return _random_gamma(key, a, log_space)


def _gamma_sampler(name, log_space):
    def sampler(key, a, shape=None, dtype=None, *, out_sharding=None):
        data, _ = _check_prng_key(name, key)
        dtype = _user_dtype(dtype, dtypes.default_float_dtype)
        if not dtypes.issubdtype(dtype, np.floating):
            raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
        if shape is not None:
            shape = _canonical_shape(shape)
        return _gamma(data, a, shape=shape, dtype=dtype, log_space=log_space)
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


gamma = _gamma_sampler("gamma", False)
gamma.__doc__ = "Standard gamma samples of shape parameter ``a`` (Marsaglia and Tsang, as JAX)."
loggamma = _gamma_sampler("loggamma", True)
loggamma.__doc__ = "The log of gamma samples, computed in log space: exact for the tiny samples of ``a << 1``."


def _check_all_safe_to_cast(name, dtype, *args):
    for arg in args:
        if dtypes.dtype(arg) != dtype and dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast argument of type "
                                            f"{jnp.asarray(arg).dtype} to {dtype}")


def _check_broadcast_shapes(name, shape, *args):
    if shape is None:
        return _broadcast_shapes(*(np.shape(a) for a in args))
    shape = _canonical_shape(shape)
    _check_shape(name, shape, *(np.shape(a) for a in args))
    return shape


def _sample_dtype(name, dtype, kind=np.floating, what="a float"):
    """The user's dtype, or the default of ``kind``, checked against ``kind`` with JAX's message."""
    dtype = _user_dtype(dtype, dtypes.default_float_dtype if kind is not np.integer else dtypes.default_int_dtype)
    if not dtypes.issubdtype(dtype, kind):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def _parametric(name, jitted, key, params, shape, dtype, kind=np.floating, what="a float", cast=True):
    """JAX's checks of a sampler whose parameters broadcast against ``shape``, then its jitted body."""
    data, _ = _check_prng_key(name, key)
    dtype = _sample_dtype(name, dtype, kind, what)
    shape = _check_broadcast_shapes(name, shape, *params)
    if cast:
        _check_all_safe_to_cast(name, dtype, *params)
    return jitted(data, *params, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _beta(key, a, b, shape, dtype):
    """The ratio of two log-gamma samples, scaled by their maximum so that tiny shapes keep their precision."""
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    keys = _split_data(key, (2,))
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
    log_gamma_a = _gamma(keys[0], a, shape=shape, dtype=dtype, log_space=True)
    log_gamma_b = _gamma(keys[1], b, shape=shape, dtype=dtype, log_space=True)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples as JAX draws them, from two log-gamma samples."""
    return _parametric("beta", _beta, key, (a, b), shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _dirichlet(key, alpha, shape, dtype):
    """The softmax of log-gamma samples: normalizing in log space keeps small concentrations finite."""
    from irax.nn import softmax
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = np.shape(alpha)[:-1]
    else:
        _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    return softmax(_gamma(key, alpha, shape=tuple(shape) + np.shape(alpha)[-1:], dtype=dtype, log_space=True), -1)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet samples over the last axis of ``alpha``."""
    data, _ = _check_prng_key("dirichlet", key)
    dtype = _sample_dtype("dirichlet", dtype)
    return _dirichlet(data, alpha, None if shape is None else _canonical_shape(shape), dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _t(key, df, shape, dtype):
    """A normal sample over the root of a gamma(df / 2) sample per degree of freedom."""
    df = lax.convert_element_type(df, dtype)
    keys = _split_data(key, (2,))
    n = _normal(keys[0], shape, dtype)
    half_df = lax.div(df, jnp.asarray(np.array(2, dtype)))
    g = _gamma(keys[1], half_df, shape=shape, dtype=dtype)
    return n * jnp.sqrt(half_df / g)


@functools.partial(jit, static_argnums=(2, 3))
def _chisquare(key, df, shape, dtype):
    """Twice a gamma(df / 2) sample, drawn in log space."""
    df = lax.convert_element_type(df, dtype)
    two = jnp.asarray(np.array(2, dtype))
    log_g = _gamma(key, lax.div(df, two), shape=shape, dtype=dtype, log_space=True)
    return lax.mul(jnp.exp(log_g), two)


@functools.partial(jit, static_argnums=(3, 4))
def _f(key, dfnum, dfden, shape, dtype):
    """The ratio of two chi-square samples, each over its degrees of freedom."""
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    keys = _split_data(key, (2,))
    chi2_dfn = _chisquare(keys[1], dfnum, shape, dtype)
    chi2_dfd = _chisquare(keys[0], dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


@functools.partial(jit, static_argnums=(2, 3))
def _pareto(key, b, shape, dtype):
    """exp(e / b) of an exponential sample e."""
    b = lax.convert_element_type(b, dtype)
    return lax.exp(_exponential(key, shape, dtype) / b)


@functools.partial(jit, static_argnums=(2, 3))
def _rayleigh(key, scale, shape, dtype):
    """scale * sqrt(-2 log u)."""
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), jnp.asarray(np.array(-2, dtype)))))


@functools.partial(jit, static_argnums=(2, 3))
def _wald(key, mean, shape, dtype):
    """Michael, Schucany and Haas's transformation of a squared normal, with one uniform choosing the root."""
    keys = _split_data(key, (2,))
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _normal(keys[0], shape, dtype)
    z = _uniform(keys[1], 0.0, 1.0, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


@functools.partial(jit, static_argnums=(2, 3))
def _geometric(key, p, shape, dtype):
    """The inverse CDF, floor(log u / log(1 - p)) + 1, with u = 0 read as 1 (as JAX, for stable samples)."""
    check_arraylike("geometric", p)
    p, = promote_dtypes_inexact(p)
    u = _uniform(key, 0.0, 1.0, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    return (lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1).astype(dtype)


@functools.partial(jit, static_argnums=(4, 5))
def _triangular(key, left, mode, right, shape, dtype):
    """The inverse CDF, one square-root branch on each side of the mode."""
    left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = _uniform(key, 0.0, 1.0, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


@functools.partial(jit, static_argnums=(2, 3))
def _lognormal(key, sigma, shape, dtype):
    """exp(sigma * normal)."""
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(_normal(key, shape, dtype) * sigma)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples; gamma-based, so heavy tails cost no precision."""
    return _parametric("t", _t, key, (df,), shape, dtype)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples, from log-gamma so that small ``df`` does not underflow."""
    return _parametric("chisquare", _chisquare, key, (df,), shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples from two chi-square draws on split keys."""
    return _parametric("f", _f, key, (dfnum, dfden), shape, dtype)


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples of shape ``b`` (minimum 1), through an exponential."""
    return _parametric("pareto", _pareto, key, (b,), shape, dtype)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples by inverting the CDF of one uniform."""
    return _parametric("rayleigh", _rayleigh, key, (scale,), shape, dtype)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples of unit shape, from one normal and one uniform."""
    return _parametric("wald", _wald, key, (mean,), shape, dtype)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Integer trial counts until the first success, by inverting the CDF of one uniform."""
    return _parametric("geometric", _geometric, key, (p,), shape, dtype, np.integer, "an int", cast=False)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on [left, right] peaking at mode, by inverting the CDF of one uniform."""
    return _parametric("triangular", _triangular, key, (left, mode, right), shape, dtype)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """Log-normal samples; complex dtypes are accepted, as in JAX."""
    data, _ = _check_prng_key("lognormal", key)
    dtype = _sample_dtype("lognormal", dtype, np.inexact, "a float or complex")
    shape = _check_broadcast_shapes("lognormal", shape, sigma)
    _check_all_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(data, sigma, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _maxwell(key, shape, dtype):
    """The norm of three standard normals."""
    return jnp.linalg.norm(_normal(key, shape + (3,), dtype), axis=-1)


maxwell = _float_sampler("maxwell", _maxwell)


@functools.partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    """A Maxwell sample with a random sign, scaled and shifted."""
    params_shapes = _broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (shape or params_shapes) + params_shapes
    keys = _split_data(key, (2,))
    return _rademacher(keys[1], shape, dtype) * _maxwell(keys[0], shape, dtype) * scale + loc


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples; ``shape`` is prepended to the parameters' shape, as in JAX."""
    data, _ = _check_prng_key("double_sided_maxwell", key)
    dtype = _sample_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell(data, loc, scale, _canonical_shape(shape), dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _weibull_min(key, scale, concentration, shape, dtype):
    """The inverse CDF: (-log(1 - u)) ** (1 / concentration) * scale."""
    u = _uniform(key, 0, 1, shape, dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples by inverting the CDF of one uniform."""
    data, _ = _check_prng_key("weibull_min", key)
    return _weibull_min(data, scale, concentration, _canonical_shape(shape), _sample_dtype("weibull_min", dtype))


@functools.partial(jit, static_argnums=(2, 3))
def _generalized_normal(key, p, shape, dtype):
    """A random sign times gamma(1 / p) ** (1 / p)."""
    keys = _split_data(key, (2,))
    g = _gamma(keys[0], 1 / p, shape=shape, dtype=dtype)
    return _rademacher(keys[1], shape, dtype) * g ** (1 / p)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Samples of density proportional to exp(-|x| ** p), through gamma(1 / p)."""
    shape = _canonical_shape(shape)
    data, _ = _check_prng_key("generalized_normal", key)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    _check_shape("generalized_normal", shape)
    return _generalized_normal(data, p, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _ball(key, p, d, shape, dtype):
    """Barthe, Guedon, Mendelson and Naor's: generalized normals over their p-norm grown by an exponential."""
    keys = _split_data(key, (2,))
    g = _generalized_normal(keys[0], p, (*shape, d), dtype)
    e = _exponential(keys[1], shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Uniform samples from the unit p-norm ball in ``d`` dimensions."""
    shape = _canonical_shape(shape)
    data, _ = _check_prng_key("ball", key)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    _check_shape("ball", shape)
    return _ball(data, p, operator.index(d), shape, dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_knuth(key, lam, shape, dtype, max_iters):
    """Knuth's: count uniforms until their product falls below exp(-lam), all elements in lockstep."""
    def body_fn(carry):
        i, k, rng, log_prod = carry
        keys = _split_data(rng, (2,))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(keys[1], 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, keys[0], log_prod + jnp.log(u)

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, np.float32, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_rejection(key, lam, shape, dtype, max_iters):
    """Hormann's transformed rejection (PTRS), for large lam."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry):
        i, k_out, accepted, key = carry
        keys = _split_data(key, (3,))
        u = _uniform(keys[1], 0.0, 1.0, shape, lam.dtype) - 0.5
        v = _uniform(keys[2], 0.0, 1.0, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, keys[0]

    def cond_fn(carry):
        i, _, accepted, _ = carry
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(lam, -1, lam.dtype, shape)
    accepted = lax.full_like(lam, False, np.dtype(np.bool_), shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _poisson(key, lam, shape, dtype):
    """Knuth below lam = 10, rejection above (as TensorFlow and NumPy); both loops run over every element."""
    use_knuth = (lam != lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson counts of rate ``lam`` (float32 internally, as in JAX, whatever the integer dtype)."""
    data, _ = _check_prng_key("poisson", key)
    dtype = _user_dtype(dtype, dtypes.default_int_dtype)
    shape = np.shape(lam) if shape is None else _canonical_shape(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    return _poisson(data, lam, shape, dtype)


def _stirling_approx_tail(k):
    stirling_tail_vals = jnp.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                                    0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                                    0.00925546218271273, 0.00833056343336287], dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax.clamp(jnp.asarray(np.array(0.0, k.dtype)), k, jnp.asarray(np.array(9.0, k.dtype)))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_tail_values, stirling_tail_vals[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    """Counts geometric waiting times until they pass ``count``: cheap when count * p is small."""
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry):
        i, num_geom, geom_sum, key = carry
        keys = _split_data(key, (2,))
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(keys[0], 0.0, 1.0, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, keys[1]

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = lax.full_like(prob, 0, prob.dtype, shape)
    geom_sum_init = lax.full_like(prob, 0, prob.dtype, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    """Hormann's transformed rejection with squeeze (BTRS), for count * p above 10."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body_fn(carry):
        i, k_out, accepted, key = carry
        keys = _split_data(key, (3,))
        u = _uniform(keys[1], 0.0, 1.0, shape, prob.dtype)
        v = _uniform(keys[2], 0.0, 1.0, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, keys[0]

    def cond_fn(carry):
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(prob, -1, prob.dtype, shape)
    carry = (0, k_init, jnp.full(shape, False, bool), key)
    return lax.while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _binomial(key, count, prob, shape, dtype):
    """Inversion for count * q <= 10, BTRS above (q = min(p, 1 - p)), as TensorFlow Probability; NaN for
    invalid parameters, inf for an infinite count."""
    if shape is None:
        shape = _broadcast_shapes(np.shape(count), np.shape(prob))
    else:
        _check_shape("binomial", shape, np.shape(count), np.shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    count = lax.convert_element_type(count, prob.dtype)
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = (count != count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = q != q
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion, _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples, count.astype(dtype) - samples)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial counts (as floats, JAX's choice) of ``n`` trials of success probability ``p``."""
    data, _ = _check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = _sample_dtype("binomial", dtype)
    return _binomial(data, n, p, None if shape is None else _canonical_shape(shape), dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts over the last axis of ``p``: one binomial per category on the trials left, in a scan."""
    data, _ = _check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    if shape is None:
        shape = p.shape
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        count = binomial(key, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining_probs = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = _split_data(data, (ratios.shape[0],))
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if not np.ndim(mean) >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {np.ndim(mean)}")
    if not np.ndim(cov) >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {np.ndim(cov)}")
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got cov.shape == "
                         f"{np.shape(cov)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    samples = normal(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *, out_sharding=None):
    """Samples of N(mean, cov): ``mean + factor @ z`` for standard normals ``z``, with ``factor`` the Cholesky
    factor of ``cov`` (``method`` 'cholesky') or from its eigendecomposition ('eigh') or SVD ('svd')."""
    _check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else _user_dtype(dtype, dtypes.default_float_dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = _canonical_shape(shape)
    return _multivariate_normal(key, mean, cov, shape, dtype, method)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(key, n, m, shape, dtype):
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp.linalg.diagonal(r)), -2)
    return x.mT if n < m else x


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Uniform samples of n x m matrices with orthonormal rows or columns (Mezzadri's QR of a normal matrix, the
    signs of R's diagonal folded into Q)."""
    m = n if m is None else m
    shape = _canonical_shape(shape)
    data, _ = _check_prng_key("orthogonal", key)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype)
    _check_shape("orthogonal", shape)
    return _orthogonal(data, operator.index(n), operator.index(m), shape, dtype)
