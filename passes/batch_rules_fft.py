"""Batching rule of ``fft``, JAX's ``_fft_batching_rule``: the batch axis moved to the front, where it is one
more leading axis the transform leaves alone (through the jitted ``lax.fft``, as JAX's rule calls it)."""
from __future__ import annotations

from .ad_rules_fft import staged_fft
from .batch import BATCH_RULES


def _fft_batch(b, args, dims, *, fft_type, fft_lengths):
    (x,), (bdim,) = args, dims
    return [staged_fft(b, b.moveaxis(x, bdim, 0), fft_type, fft_lengths)], [0]


BATCH_RULES["fft"] = _fft_batch
