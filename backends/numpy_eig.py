"""NumPy rule of ``eig``: LAPACK's ``geev`` through ``np.linalg.eig``, as JAX's CPU ``eig`` calls it. The left
eigenvectors, which NumPy does not return, are the rows of the right ones' inverse, normalized as ``geev``
normalizes them (unit norm, largest component real)."""
from __future__ import annotations

import numpy as np

from .numpy_rules import RULES


def _normalized(vectors):
    vectors = vectors / np.linalg.norm(vectors, axis=0, keepdims=True)
    largest = vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])]
    return vectors * (np.conj(largest) / np.abs(largest))


def eig(x, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs, implementation):
    dtype = np.result_type(x.dtype, np.complex64)
    batch, n = x.shape[:-2], x.shape[-1]
    nan = complex(np.nan, np.nan)
    w = np.full(batch + (n,), nan, dtype)
    left, right = (np.full(batch + (n, n), nan, dtype) for _ in range(2))
    for index in np.ndindex(*batch):
        a = x[index]
        if not np.isfinite(a).all():  # LAPACK's NaNs, where NumPy would raise
            continue
        a = a.astype(np.result_type(a.dtype, np.float32))
        if not (compute_left_eigenvectors or compute_right_eigenvectors):
            w[index] = np.linalg.eigvals(a)
            continue
        w[index], vectors = np.linalg.eig(a)
        right[index] = vectors
        if compute_left_eigenvectors and n:
            try:
                inverse = np.linalg.inv(vectors)
            except np.linalg.LinAlgError:  # a defective matrix: its eigenvectors span less than the space
                inverse = np.linalg.pinv(vectors)
            left[index] = _normalized(inverse.conj().T)
    return [w] + [left] * bool(compute_left_eigenvectors) + [right] * bool(compute_right_eigenvectors)


RULES["eig"] = eig
