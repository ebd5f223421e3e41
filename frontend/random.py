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
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.api import jit
from irax.core import bind
from irax.tree_util import register_pytree_node

__all__ = ["PRNGKey", "bernoulli", "bits", "categorical", "cauchy", "exponential", "fold_in", "gumbel", "key",
           "key_data", "key_impl", "laplace", "logistic", "normal", "rademacher", "randint", "split",
           "truncated_normal", "uniform", "wrap_key_data"]

_KEY_SHAPE = (2,)
_IMPL_NAME = "threefry2x32"
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


class KeyTy:
    """The dtype of typed keys; printed as JAX prints it, so that user code comparing dtypes keeps working."""

    name = "key<fry>"

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyTy)

    def __hash__(self):
        return hash(KeyTy)


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


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        shape_ = np.broadcast_shapes(shape, *param_shapes)
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
    if not replace:
        raise NotImplementedError("categorical(replace=False) needs lax.top_k, which irax does not implement")
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if axis >= 0:
        axis -= logits.ndim
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % logits.ndim, logits.shape[axis])
    noise = gumbel(data, (*shape_prefix, *logits_shape), logits.dtype, mode=mode)
    return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(shape_prefix)))), axis=axis)


def _missing(name, needs):
    def sampler(*args, **kwargs):
        raise NotImplementedError(f"jax.random.{name} is not implemented in irax: it needs {needs}")
    sampler.__name__ = name
    sampler.__doc__ = f"Not implemented: needs {needs}."
    return sampler


gamma = _missing("gamma", "a while loop (rejection sampling)")
loggamma = _missing("loggamma", "a while loop (rejection sampling)")
beta = _missing("beta", "gamma, which needs a while loop")
dirichlet = _missing("dirichlet", "gamma, which needs a while loop")
poisson = _missing("poisson", "a while loop (rejection sampling)")
permutation = _missing("permutation", "sort")
choice = _missing("choice", "sort or a gather")
multivariate_normal = _missing("multivariate_normal", "a Cholesky or eigen decomposition")
