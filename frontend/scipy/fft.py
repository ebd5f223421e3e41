"""``irax.scipy.fft``: JAX's ``jax.scipy.fft`` type-2 discrete cosine transforms, ported from
``jax/_src/scipy/fft.py``: a DCT is an FFT of the even/odd interleaved input times a quarter-wave twiddle, so it
binds the primitives JAX binds (but for the interleave of ``dct`` and ``dctn``, see ``_dct_interleave``)."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.numpy import fft as jnp_fft
from irax.numpy._util import canonicalize_axis, convert, ensure_arraylike, promote_dtypes_inexact, to_inexact_dtype

__all__ = ["dct", "dctn", "idct", "idctn"]


def _to_complex_dtype(dtype):
    """JAX's ``dtypes.to_complex_dtype``: float64 and complex128 (and 64-bit integers) give complex128."""
    wide = to_inexact_dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def _promote_dtypes_complex(*args):
    """JAX's ``promote_dtypes_complex``: the promoted dtype of all arguments, made complex, weak type kept."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = dtypes.canonicalize_dtype(_to_complex_dtype(dtype))
    return [convert(a, dtype, weak) for a in args]


def _W4(N, k):
    N_arr, k = _promote_dtypes_complex(N, k)
    return jnp.exp(-.5j * np.pi * k / N_arr)


def _dct_interleave(x, axis):
    """The even-indexed elements, then the odd-indexed ones reversed."""
    v0 = lax.slice_in_dim(x, None, None, 2, axis)
    v1 = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([v0, v1], axis)


def _dct_ortho_norm(out, axis):
    factor = lax.concatenate([lax.full((1,), 4, out.dtype), lax.full((out.shape[axis] - 1,), 2, out.dtype)], 0)
    factor = lax.expand_dims(factor, [a for a in range(out.ndim) if a != axis])
    return out / lax.sqrt(factor * out.shape[axis])


def _pad_axes(x, sizes):
    """Zero-pads (or, with negative padding, truncates) each axis in ``sizes`` to its length there."""
    pads = [(0, sizes[a] - x.shape[a] if a in sizes else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, jnp.array(0, x.dtype), pads)


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ["backward", "ortho"]:
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def dct(x, type=2, n=None, axis=-1, norm=None):
    """Type-2 DCT along ``axis``; ``n`` zero-pads or truncates first, complex input transforms its parts apart."""
    x = ensure_arraylike("dct", x)
    _check("dct", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(dct(x.real, type=type, n=n, norm=norm, axis=axis),
                           dct(x.imag, type=type, n=n, norm=norm, axis=axis))
    axis = canonicalize_axis(axis, x.ndim)
    if n is not None:
        x = _pad_axes(x, {axis: n})
    N = x.shape[axis]
    v = _dct_interleave(x, axis)
    V = jnp_fft.fft(v, axis=axis)
    k = lax.expand_dims(jnp.arange(N, dtype=V.real.dtype), [a for a in range(x.ndim) if a != axis])
    out = V * _W4(N, k)
    out = 2 * out.real
    if norm == "ortho":
        out = _dct_ortho_norm(out, axis)
    return out


def _dct2(x, axes, norm):
    """A 2-D DCT from one 2-D FFT (Makhoul's algorithm), not two 1-D DCTs."""
    axis1, axis2 = map(partial(canonicalize_axis, ndim=x.ndim), axes)
    N1, N2 = x.shape[axis1], x.shape[axis2]
    v = _dct_interleave(_dct_interleave(x, axis1), axis2)
    V = jnp_fft.fftn(v, axes=axes)
    k1 = lax.expand_dims(jnp.arange(N1, dtype=V.dtype), [a for a in range(x.ndim) if a != axis1])
    k2 = lax.expand_dims(jnp.arange(N2, dtype=V.dtype), [a for a in range(x.ndim) if a != axis2])
    out = _W4(N1, k1) * (_W4(N2, k2) * V + _W4(N2, -k2) * jnp.roll(jnp.flip(V, axis=axis2), shift=1, axis=axis2))
    out = 2 * out.real
    if norm == "ortho":
        return _dct_ortho_norm(_dct_ortho_norm(out, axis1), axis2)
    return out


def _shape_and_axes(x, s, axes):
    """SciPy's defaults: ``axes`` are the last ``len(s)`` axes, or all of them."""
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    elif isinstance(axes, Sequence):
        axes = tuple(canonicalize_axis(i, x.ndim) for i in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axes}")
    else:
        axes = (canonicalize_axis(axes, x.ndim),)
    return s, axes


def dctn(x, type=2, s=None, axes=None, norm=None):
    """Type-2 DCT over ``axes``, two axes at a time by ``_dct2``."""
    x = ensure_arraylike("dctn", x)
    _check("dctn", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(dctn(x.real, type=type, s=s, norm=norm, axes=axes),
                           dctn(x.imag, type=type, s=s, norm=norm, axes=axes))
    s, axes = _shape_and_axes(x, s, axes)
    if len(axes) == 1:
        return dct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    if s is not None:
        x = _pad_axes(x, dict(zip(axes, s)))
    if len(axes) == 2:
        return _dct2(x, axes=axes, norm=norm)
    for axes_block in [axes[i:i + 2] for i in range(0, len(axes), 2)]:
        x = dctn(x, axes=axes_block, norm=norm)
    return x


def idct(x, type=2, n=None, axis=-1, norm=None):
    """Inverse of the type-2 DCT (a scaled type-3 DCT), by one inverse FFT."""
    x = ensure_arraylike("idct", x)
    _check("idct", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(idct(x.real, type=type, n=n, norm=norm, axis=axis),
                           idct(x.imag, type=type, n=n, norm=norm, axis=axis))
    axis = canonicalize_axis(axis, x.ndim)
    if n is not None:
        x = _pad_axes(x, {axis: n})
    N = x.shape[axis]
    x, = promote_dtypes_inexact(x)
    if norm is None or norm == "backward":
        x = _dct_ortho_norm(x, axis)
    x = _dct_ortho_norm(x, axis)
    k = lax.expand_dims(jnp.arange(N, dtype=x.dtype), [a for a in range(x.ndim) if a != axis])
    w4 = _W4(N, k)
    x = x.astype(w4.dtype)
    x = x / (_W4(N, k))
    x = x * 2 * N
    x = jnp_fft.ifft(x, axis=axis)
    return _dct_deinterleave(x.real, axis)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """Inverse type-2 DCT over ``axes``, one axis at a time."""
    x = ensure_arraylike("idctn", x)
    _check("idctn", type, norm)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(idctn(x.real, type=type, s=s, norm=norm, axes=axes),
                           idctn(x.imag, type=type, s=s, norm=norm, axes=axes))
    s, axes = _shape_and_axes(x, s, axes)
    if len(axes) == 1:
        return idct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    if s is not None:
        x = _pad_axes(x, dict(zip(axes, s)))
    for axis in axes:
        x = idct(x, axis=axis, norm=norm)
    return x


def _dct_deinterleave(x, axis):
    """Undoes ``_dct_interleave``: the first half to the even places, the reversed second half to the odd ones."""
    def along(sl):
        return tuple(sl if i == axis else slice(None) for i in range(x.ndim))
    half = math.ceil(x.shape[axis] / 2)
    v0 = x[along(slice(None, half, 1))]
    v1 = lax.rev(x[along(slice(half, None, 1))], (axis,))
    out = jnp.zeros(x.shape, dtype=x.dtype)
    out = out.at[along(slice(None, None, 2))].set(v0)
    return out.at[along(slice(1, None, 2))].set(v1)
