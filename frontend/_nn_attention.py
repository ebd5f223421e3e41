"""``irax.nn.dot_product_attention``, ported from ``jax/_src/nn/functions.py`` (its ``xla`` implementation, the one
JAX uses by default) so that it binds JAX's primitives in JAX's order."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.batching import vmap

__all__ = ["dot_product_attention"]


def _get_large_negative(dtype):
    dtype_max = min(jnp.finfo(dtype).max, jnp.finfo(np.float32).max)  # softmax runs in float32: stay finite there
    return jnp.asarray(-0.7 * dtype_max, dtype=dtype)


def _get_causal_mask(T, S):
    mask = jnp.tril(jnp.ones((T, S), dtype=bool))
    return mask[None, None, :, :]


def _get_window_mask(T, S, local_window_size):
    query_pos = jnp.array(list(range(T)))
    key_pos = jnp.array(list(range(S)))
    left_window, right_window = local_window_size
    left_mask = query_pos[..., None] <= key_pos[..., None, :] + left_window
    right_mask = query_pos[..., None] >= key_pos[..., None, :] - right_window
    return jnp.logical_and(right_mask, left_mask)[None, None, :, :]


def _get_padding_mask_logits(T, S, q_seqlen, kv_seqlen):
    q_mask = True
    kv_mask = True
    if q_seqlen is not None:
        q_indices = jnp.arange(0, T)[None, :, None]
        q_mask = q_indices < q_seqlen[:, None, None]
    if kv_seqlen is not None:
        kv_indices = jnp.arange(0, S)[None, None, :]
        kv_mask = kv_indices < kv_seqlen[:, None, None]
    mask = jnp.logical_and(q_mask, kv_mask)
    return mask[:, None, :, :]


def _get_padding_mask_encoded(T, q_seqlen):
    q_indices = jnp.arange(0, T)[None, :]
    mask = q_indices < q_seqlen[:, None]
    return mask[:, :, None, None]


def _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
    if mask is None and not is_causal and q_seqlen is None and kv_seqlen is None and local_window_size is None:
        return logits
    combined_mask = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        assert mask.dtype == np.dtype(bool)
        combined_mask = jnp.logical_and(combined_mask, mask)
    T, S = logits.shape[2], logits.shape[3]
    if is_causal:
        combined_mask = jnp.logical_and(combined_mask, _get_causal_mask(T, S))
    if local_window_size is not None:
        combined_mask = jnp.logical_and(combined_mask, _get_window_mask(T, S, local_window_size))
    if q_seqlen is not None or kv_seqlen is not None:
        combined_mask = jnp.logical_and(combined_mask, _get_padding_mask_logits(T, S, q_seqlen, kv_seqlen))
    large_negative_number = _get_large_negative(logits.dtype)
    return jnp.where(combined_mask, logits, large_negative_number)


def _dot_product_attention_core(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                                local_window_size, return_residual):
    from irax.nn import logsumexp, softmax
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
    logits *= jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    padded_logits = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size)
    padded_logits = padded_logits.astype(np.float32)
    probs = softmax(padded_logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_seqlen is not None:
        mask = _get_padding_mask_encoded(encoded.shape[1], q_seqlen)
        encoded *= mask.astype(encoded.dtype)
    if return_residual:
        lse_residual = logsumexp(padded_logits, axis=-1).astype(key.dtype)
        lse_residual = jnp.transpose(lse_residual, (0, 2, 1))
        return encoded, lax.stop_gradient(lse_residual)
    return encoded


def _dot_product_attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                               local_window_size, return_residual=False):
    B, T, N, H = query.shape
    _, S, K, _ = key.shape
    G = N // K
    query = jnp.reshape(query, (B, T, K, G, H))

    def _reshape_to_grouped(t):
        if t is not None:
            tB, tN, tT, tS = t.shape
            if tN == 1:
                t = jnp.broadcast_to(t[:, :, None, :, :], (tB, tN, G, tT, tS))
            else:
                assert tN == N
                t = jnp.reshape(t, (tB, K, G, tT, tS))
        return t

    bias = _reshape_to_grouped(bias)
    mask = _reshape_to_grouped(mask)
    vmapped_fn = vmap(_dot_product_attention_core, in_axes=(3, None, None, 2, 2, None, None, None, None, None, None),
                      out_axes=3)
    output = vmapped_fn(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen, local_window_size,
                        return_residual)
    if return_residual:
        encoded, lse_residual = output
        return jnp.reshape(encoded, (B, T, N, H)), jnp.reshape(lse_residual, (B, T, N))
    return jnp.reshape(output, (B, T, N, H))


def _check_shape_and_dtype(t, shape: Sequence[int], dtype, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention, softmax(Q K^T * scale + bias, masked) V, on [B]TNH arrays.

    Args:
      query, key, value: ``(B, T, N, H)``, ``(B, S, K, H)``, ``(B, S, K, H)`` (or without B); N a multiple of K
        (grouped-query attention).
      bias, mask: broadcastable to ``(B, N, T, S)``; mask is boolean, False masking out.
      scale: of the logits; ``1 / sqrt(H)`` by default.
      is_causal, query_seq_lengths, key_value_seq_lengths, local_window_size: further masks, as JAX's.
      implementation: ``None`` or ``"xla"`` (irax's only one); ``"cudnn"`` raises.
      return_residual: also return the logsumexp of the logits, ``(B, T, N)``.

    Returns:
      The attention output, shaped as ``query`` (and the residual when asked).
    """
    output_shape = jnp.asarray(query).shape
    residual_shape = output_shape[:-1]

    def _ensure_4d(t):
        t = jnp.asarray(t)
        dims_to_add = 4 - t.ndim
        if dims_to_add > 0:
            return jnp.expand_dims(t, axis=tuple(range(dims_to_add)))
        return t

    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = key_arr.shape
    _check_shape_and_dtype(value_arr, [B, S, K, H], key_arr.dtype, "value")
    _check_shape_and_dtype(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(query_seq_lengths, [B], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(key_value_seq_lengths, [B], np.dtype("int32"), "key_value_seq_lengths")
    if query_arr.shape[-2] % K != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but got "
                         f"{query_arr.shape[-2]} vs {K}")
    scale_val = (1.0 / np.sqrt(H)) if scale is None else scale
    if implementation == "cudnn":
        raise NotImplementedError("implementation='cudnn' (cuDNN flash attention) is not available in irax; "
                                  "use implementation='xla' or None")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _dot_product_attention_xla(query_arr, key_arr, value_arr, bias, mask, is_causal=is_causal,
                                     scale=scale_val, q_seqlen=query_seq_lengths, kv_seqlen=key_value_seq_lengths,
                                     local_window_size=local_window_size, return_residual=return_residual)
    if return_residual:
        out, residual = out
        return jnp.reshape(out, output_shape), jnp.reshape(residual, residual_shape)
    return jnp.reshape(out, output_shape)
