"""``irax.nn.initializers``, ported from ``jax/_src/nn/initializers.py``: the same random draws as JAX's (irax.random
gives jax.random's bits), so a model initialized under irax starts from JAX's weights."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from irax import dtypes, random
from irax import numpy as jnp

__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "orthogonal",
           "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]


def _float_dtype(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """An initializer of zeros (``key`` unused)."""
    return jnp.zeros(shape, _float_dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An initializer of ones (``key`` unused)."""
    return jnp.ones(shape, _float_dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling with ``value``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_float_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from [0, scale)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _float_dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from N(0, stddev**2)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _float_dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from a normal truncated to [lower, upper] standard deviations, scaled by stddev."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _float_dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev, dtype)
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """The fan-in and fan-out of a weight of ``shape``: the named axes' sizes times the receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with "
                         "default in_axis. Must be at least 2D or specify in_axis explicitly.")
    size = lambda axes: shape[axes] if isinstance(axes, int) else math.prod([shape[i] for i in axes])  # noqa: E731
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_uniform(key, shape, dtype):
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    dtype = np.result_type(real_dtype, np.complex64)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    dtype = np.result_type(real_dtype, np.complex64)
    t = (1 - jnp.exp(jnp.array(-(upper ** 2), dtype))) * random.uniform(key_r, shape, real_dtype).astype(dtype)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis: int | Sequence[int] = -2,
                     out_axis: int | Sequence[int] = -1, batch_axis: int | Sequence[int] = (), dtype=None):
    """An initializer whose variance is ``scale`` over the fan ``mode`` ("fan_in", "fan_out", "fan_avg",
    "fan_geo_avg"), drawn from ``distribution`` ("truncated_normal", "normal", "uniform").

    Raises:
      ValueError: for another mode or distribution (when the initializer is called, as JAX's).
    """
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = tuple(operator.index(d) for d in shape)
        dtype = _float_dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        floating = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if floating:  # .8796...: the stddev of a standard normal truncated to (-2, 2)
                stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def _scaled(scale, mode, distribution, doc):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    make.__doc__ = doc
    return make


glorot_uniform = _scaled(1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform: variance 2 / (fan_in + fan_out).")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) truncated normal.")
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "LeCun uniform: variance 1 / fan_in.")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal", "LeCun truncated normal.")
he_uniform = _scaled(2.0, "fan_in", "uniform", "He (Kaiming) uniform: variance 2 / fan_in.")
he_normal = _scaled(2.0, "fan_in", "truncated_normal", "He (Kaiming) truncated normal.")
for _name in ("glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal"):
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of matrices (reshaped around ``column_axis``) with orthonormal rows or columns, from
    ``random.orthogonal``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError
        dtype = _float_dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of 3-5D convolution kernels: an orthogonal matrix at the spatial centre, zeros elsewhere."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError
        if len(shape) not in [3, 4, 5]:
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        w = jnp.zeros(shape, dtype=_float_dtype(dtype))
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return w.at[centre + (Ellipsis,)].set(ortho_matrix)
    return init
