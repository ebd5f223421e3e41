"""``irax.numpy`` and ``irax.nn`` against JAX: values, shapes, dtypes and weak types, eagerly and under ``jit``.

One table of cases drives both runs; the cases are grouped in chunks of ~80 and each chunk is
one test. JAX's expected results come from one ``jax.jit`` per chunk (JAX's op-by-op dispatch
compiles every op). Eagerly every case runs on irax's NumPy rules; under ``irax.jit`` the first
cases of each function are traced into one function per chunk, because an IREE compile costs
~0.4 s a module plus ~70 ms a case on this machine. A call JAX rejects must raise the same
exception type in irax.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

import irax
import irax.numpy as inp

jax = pytest.importorskip("jax")
jjnp = jax.numpy

nan, inf = np.nan, np.inf
_rng = np.random.default_rng(0)
F = _rng.standard_normal((3, 4)).astype(np.float32)
F3 = _rng.standard_normal((2, 3, 4)).astype(np.float32)
V = _rng.standard_normal(5).astype(np.float32)
V4 = _rng.standard_normal(4).astype(np.float32)
SQ = _rng.standard_normal((4, 4)).astype(np.float32)
POS = (np.abs(F) + 0.5).astype(np.float32)
I = _rng.integers(-5, 6, (3, 4)).astype(np.int32)
IPOS = _rng.integers(1, 6, (3, 4)).astype(np.int32)
I8 = _rng.integers(-100, 100, (3, 4)).astype(np.int8)
U8 = _rng.integers(0, 200, (3, 4)).astype(np.uint8)
B = _rng.random((3, 4)) > 0.5
H = F.astype(np.float16)
C = (F + 1j * F[::-1]).astype(np.complex64)
S = np.array(1.5, np.float32)
E = np.zeros((0, 3), np.float32)
E1 = np.zeros((0,), np.float32)
N = np.array([[1.0, nan, -inf, 2.0], [nan, nan, nan, nan], [0.0, inf, -1.0, 3.0]], np.float32)
NV = np.array([1.0, nan, 3.0, -2.0, nan], np.float32)
MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])
W4 = np.array([1.0, 2.0, 0.5, 3.0], np.float32)


class Case(NamedTuple):
    chunk: str
    id: str
    fn: Callable[..., Any]  # fn(module, *arrays)
    args: tuple  # the NumPy arrays, traced under jit
    jit: bool  # False for host-only functions (they return Python values or need concrete arguments)
    tol: float | None
    compile: bool = False  # chosen for the irax.jit run (see JIT_PER_FUNCTION)


CASES: list[Case] = []
_counts: dict[str, int] = {}


def _add(chunk, name, fn, args, jit, tol):
    k = _counts[name] = _counts.get(name, -1) + 1
    CASES.append(Case(chunk, f"{name}-{k}", fn, tuple(args), jit, tol))


def call(chunk, name, *args, jit=True, tol=None, _module=lambda m: m, **kwargs):
    """A case ``jnp.<name>(*args, **kwargs)``; NumPy arrays among the arguments become jit inputs."""
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    keys = [k for k, v in kwargs.items() if isinstance(v, np.ndarray)]

    def fn(m, *arrays):
        full, kw = list(args), dict(kwargs)
        for i, a in zip(pos, arrays):
            full[i] = a
        for k, a in zip(keys, arrays[len(pos):]):
            kw[k] = a
        return getattr(_module(m), name)(*full, **kw)
    _add(chunk, name, fn, [args[i] for i in pos] + [kwargs[k] for k in keys], jit, tol)


def lam(chunk, name, fn, *arrays, jit=True, tol=None):
    """A case given as ``fn(module, *arrays)``."""
    _add(chunk, name, fn, arrays, jit, tol)


# --- creation -------------------------------------------------------------------------------------------------
for shape in [(3,), (2, 3), (0, 2), ()]:
    call("creation", "zeros", shape)
    call("creation", "ones", shape, dtype=np.int32)
    call("creation", "full", shape, 2.5)
call("creation", "full", (2, 3), 7, dtype=np.int8)
call("creation", "full", (2, 3), V[:3])
call("creation", "empty", (2, 2))
for name in ["zeros_like", "ones_like", "empty_like"]:
    call("creation", name, F)
    call("creation", name, I, dtype=np.float32)
    call("creation", name, B, shape=(2,))
call("creation", "full_like", F, 3)
call("creation", "full_like", I, 2.7)
call("creation", "arange", 5)
call("creation", "arange", 2, 11, 3)
call("creation", "arange", 0.5, 3.0, 0.5)
call("creation", "arange", 0)
call("creation", "arange", 5, dtype=np.float32)
call("creation", "linspace", 0, 1, 5)
call("creation", "linspace", 2.0, 3.0, 4, endpoint=False, retstep=True)
call("creation", "linspace", V[:2], 3.0, 4, axis=-1)
call("creation", "linspace", 0, 10, 4, dtype=np.int32)
call("creation", "linspace", 0, 1, 1)
call("creation", "linspace", 0, 1, 0)
call("creation", "logspace", 0, 3, 4)
call("creation", "logspace", 0.0, 3.0, 4, base=2.0, endpoint=False)
call("creation", "logspace", V[:2], 1.0, 3, axis=1)
call("creation", "geomspace", 2, 256, 8)
call("creation", "geomspace", -1.0, -1000.0, 4)
call("creation", "geomspace", 1, 1000, 4, endpoint=False, dtype=np.float32)
call("creation", "eye", 3)
call("creation", "eye", 3, 4, k=1, dtype=np.int32)
call("creation", "eye", 0)
call("creation", "identity", 2, dtype=np.bool_)
call("creation", "tri", 3, 4, k=-1)
call("creation", "array", [1, 2, 3])
call("creation", "array", [[1.0, 2], [3, 4]])
call("creation", "array", 3.5)
call("creation", "array", F, dtype=np.int32)
call("creation", "array", [True, False], ndmin=2)
call("creation", "asarray", I)
call("creation", "asarray", [1, 2], dtype=np.float32)
call("creation", "copy", F)
for name in ["hanning", "hamming", "blackman", "bartlett"]:
    call("creation", name, 6, tol=1e-5)
    call("creation", name, 1)
call("creation", "indices", (2, 3))
call("creation", "indices", (2, 3), sparse=True)
call("creation", "indices", (0, 2), dtype=np.float32)
call("creation", "meshgrid", V, V4)
call("creation", "meshgrid", V, V4, V[:2], indexing="ij")
call("creation", "meshgrid", V, V4, sparse=True)
call("creation", "meshgrid", V)
call("creation", "tril_indices", 3)
call("creation", "tril_indices", 3, 1, 4)
call("creation", "triu_indices", 4, -1)
call("creation", "triu_indices", 3, m=2)
call("creation", "tril_indices_from", F)
call("creation", "triu_indices_from", F, k=1)
call("creation", "diag_indices", 3)
call("creation", "diag_indices", 2, ndim=3)
call("creation", "diag_indices_from", SQ)
call("creation", "ix_", np.arange(2), np.arange(3))
lam("creation", "fromfunction", lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=np.int32))
lam("creation", "fromfunction", lambda m: m.fromfunction(lambda i, j: i == j, (3, 3)))

# --- shape manipulation ---------------------------------------------------------------------------------------
call("shape", "reshape", F, (4, 3))
call("shape", "reshape", F, (-1,))
call("shape", "reshape", F3, (2, -1))
call("shape", "reshape", E, (3, 0))
call("shape", "ravel", F3)
call("shape", "transpose", F3)
call("shape", "transpose", F3, (1, 0, 2))
call("shape", "permute_dims", F3, (2, 0, 1))
call("shape", "matrix_transpose", F3)
call("shape", "moveaxis", F3, 0, -1)
call("shape", "moveaxis", F3, (0, 1), (2, 0))
call("shape", "swapaxes", F3, 0, 2)
call("shape", "rollaxis", F3, 2)
call("shape", "rollaxis", F3, 0, 2)
call("shape", "rollaxis", F3, -1, -2)
call("shape", "squeeze", F3[:1])
call("shape", "squeeze", F3[:, :1], axis=1)
call("shape", "expand_dims", F, 0)
call("shape", "expand_dims", F, (0, 3))
call("shape", "broadcast_to", V4, (3, 4))
call("shape", "broadcast_to", S, (2, 2))
call("shape", "broadcast_arrays", F, V4, S)
call("shape", "atleast_1d", S)
call("shape", "atleast_2d", V)
call("shape", "atleast_3d", F)
call("shape", "atleast_3d", V, S)
call("shape", "concatenate", [F, F], axis=1)
call("shape", "concatenate", [F, I])
call("shape", "concatenate", [F, F3[0]], axis=None)
call("shape", "concatenate", [E, E])
call("shape", "concat", [V, V4])
call("shape", "stack", [F, F])
call("shape", "stack", [F, F], axis=-1)
call("shape", "stack", [V, V], axis=1, dtype=np.float16, tol=2e-3)
call("shape", "vstack", [F, V4])
call("shape", "hstack", [V, V4])
call("shape", "hstack", [F, F])
call("shape", "dstack", [F, F])
call("shape", "dstack", [V, V])
call("shape", "column_stack", [V, V])
call("shape", "split", F3, 2)
call("shape", "split", F, [1, 3], axis=1)
call("shape", "split", E, 1)
call("shape", "array_split", V, 3)
call("shape", "array_split", F, 3, axis=1)
call("shape", "hsplit", F, 2)
call("shape", "vsplit", F3, [1])
call("shape", "dsplit", F3, 2)
call("shape", "unstack", F)
call("shape", "unstack", F3, axis=-1)
call("shape", "flip", F3)
call("shape", "flip", F3, (0, 2))
call("shape", "fliplr", F)
call("shape", "flipud", F)
call("shape", "rot90", F)
call("shape", "rot90", F, 2)
call("shape", "rot90", F3, 3, (2, 1))
call("shape", "rot90", F, -1)
call("shape", "roll", F, 1)
call("shape", "roll", F3, (1, -2), (0, 2))
call("shape", "tile", V, 2)
call("shape", "tile", F, (2, 1, 2))
call("shape", "repeat", F, 2, axis=1)
call("shape", "repeat", V, 3)
call("shape", "append", V, V4)
call("shape", "append", F, F, axis=0)
call("shape", "append", F, S)
call("shape", "resize", F, (5, 5))
call("shape", "resize", V, 3)
call("shape", "resize", E, (2,))
lam("shape", "block", lambda m, a, b: m.block([[a, a], [b, b]]), F, F)
lam("shape", "block", lambda m, a, b: m.block([a, b]), V, V4)
call("shape", "astype", I, np.float32)
call("shape", "astype", F, np.int8)
call("shape", "trim_zeros", np.array([0.0, 0, 1, 2, 0], np.float32), jit=False)
call("shape", "trim_zeros", np.array([0, 0, 1, 2, 0], np.int32), "f", jit=False)
for shape_fn in ["shape", "ndim", "size"]:
    call("shape", shape_fn, F3, jit=False)
call("shape", "size", F3, 1, jit=False)

# --- reductions -----------------------------------------------------------------------------------------------
for name in ["sum", "prod", "max", "min", "mean", "all", "any"]:
    call("reduce", name, F)
    call("reduce", name, F3, axis=1)
    call("reduce", name, F3, axis=(0, 2), keepdims=True)
    call("reduce", name, I, axis=-1)
    call("reduce", name, B, axis=0)
    call("reduce", name, S)
for name in ["sum", "prod", "mean", "all", "any"]:
    call("reduce", name, E, axis=0)
    call("reduce", name, E)
for name in ["sum", "prod"]:
    call("reduce", name, I8)
    call("reduce", name, U8, axis=0)
    call("reduce", name, I8, promote_integers=False)
    call("reduce", name, F, axis=0, dtype=np.int32)
    call("reduce", name, F, initial=2.0)
    call("reduce", name, F, axis=1, where=MASK)
    call("reduce", name, H, axis=1, tol=2e-2)
call("reduce", "max", F, initial=0.5)
call("reduce", "max", E, axis=0, initial=-1.0)
call("reduce", "min", F, axis=1, where=MASK, initial=10.0)
call("reduce", "max", I, axis=0, keepdims=True, where=MASK, initial=-100)
call("reduce", "all", F, where=MASK)
call("reduce", "any", B, axis=1, where=MASK, keepdims=True)
call("reduce", "amax", F3, axis=2)
call("reduce", "amin", I)
call("reduce", "mean", I8, axis=0)
call("reduce", "mean", F, axis=0, dtype=np.float16, tol=2e-3)
call("reduce", "mean", H, tol=2e-3)
call("reduce", "mean", F, axis=1, where=MASK, keepdims=True)
call("reduce", "mean", C, axis=0)
for name in ["var", "std"]:
    call("reduce", name, F)
    call("reduce", name, F3, axis=(0, 1), ddof=1)
    call("reduce", name, I, axis=0, keepdims=True)
    call("reduce", name, F, axis=1, correction=2)
    call("reduce", name, F, axis=1, ddof=4)
    call("reduce", name, F, axis=1, where=MASK)
    call("reduce", name, C, axis=1)
    call("reduce", name, H, tol=2e-3)
    call("reduce", name, F, axis=0, mean=F.mean(0, keepdims=True))
    call("reduce", name, E, axis=0)
for name in ["argmax", "argmin"]:
    call("reduce", name, F)
    call("reduce", name, F3, axis=1)
    call("reduce", name, F3, axis=-1, keepdims=True)
    call("reduce", name, F3, keepdims=True)
    call("reduce", name, I)
    call("reduce", name, B, axis=0)
for name in ["cumsum", "cumprod"]:
    call("reduce", name, F)
    call("reduce", name, F3, axis=1)
    call("reduce", name, I8, axis=0)
    call("reduce", name, B, axis=1)
    call("reduce", name, S)
    call("reduce", name, I, axis=1, dtype=np.float32)
    call("reduce", name, I, axis=1, dtype=np.bool_)
    call("reduce", name, E, axis=0)
for name in ["cumulative_sum", "cumulative_prod"]:
    call("reduce", name, V)
    call("reduce", name, F, axis=1, include_initial=True)
    call("reduce", name, I8, axis=0)
    call("reduce", name, B, axis=-1, include_initial=True)
    call("reduce", name, E, axis=0, include_initial=True)
    call("reduce", name, U8, axis=1, dtype=np.float32)
call("reduce", "ptp", F)
call("reduce", "ptp", I, axis=1, keepdims=True)
call("reduce", "count_nonzero", I)
call("reduce", "count_nonzero", F3 > 0, axis=(0, 2))
call("reduce", "average", F)
call("reduce", "average", F, axis=1, weights=W4)
call("reduce", "average", F, axis=1, weights=W4, returned=True)
call("reduce", "average", I, axis=0, returned=True)
call("reduce", "average", F, weights=POS, keepdims=True)
call("reduce", "average", F3, axis=(0, 2), weights=F3[:, 0, :] * 0 + 1)

# --- NaN-aware reductions -------------------------------------------------------------------------------------
for name in ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]:
    call("nan", name, N)
    call("nan", name, N, axis=1)
    call("nan", name, N, axis=0, keepdims=True)
    call("nan", name, NV)
    call("nan", name, I, axis=1)
    call("nan", name, F, axis=0)
call("nan", "nansum", N, axis=1, where=MASK)
call("nan", "nansum", N, axis=1, dtype=np.float16, tol=2e-3)
call("nan", "nanprod", N, axis=0, initial=2.0)
call("nan", "nanmax", N, axis=1, initial=-5.0)
call("nan", "nanmin", N, axis=1, where=MASK, initial=9.0)
call("nan", "nanmean", N, axis=1, where=MASK)
call("nan", "nanmean", E, axis=0)
call("nan", "nanvar", N, axis=1, ddof=1)
call("nan", "nanvar", NV, ddof=3)
call("nan", "nanstd", N, axis=0, where=MASK)
for name in ["nanargmax", "nanargmin"]:
    call("nan", name, NV)
    call("nan", name, N, axis=1)
    call("nan", name, N, axis=0, keepdims=True)
    call("nan", name, I, axis=1)
for name in ["nancumsum", "nancumprod"]:
    call("nan", name, N)
    call("nan", name, N, axis=1)
    call("nan", name, I, axis=0)
    call("nan", name, NV, dtype=np.float16, tol=2e-3)
call("nan", "nan_to_num", N)
call("nan", "nan_to_num", N, nan=-1.0, posinf=9.0)
call("nan", "isnan", N)
call("nan", "isinf", N)
call("nan", "isfinite", N)
call("nan", "isposinf", N)
call("nan", "isneginf", N)
call("nan", "isfinite", I)
call("nan", "isnan", C)
call("nan", "fmax", N, F)
call("nan", "fmin", N, N[::-1])
call("nan", "fmax", I, IPOS)
call("nan", "fmin", F, 0.0)
call("nan", "isclose", N, N)
call("nan", "isclose", N, N, equal_nan=True)
call("nan", "isclose", F, F + 1e-6)
call("nan", "isclose", F, F + 1e-3, rtol=1e-2, atol=0.0)
call("nan", "isclose", I, IPOS)
call("nan", "isclose", V, 1.0)
call("nan", "allclose", F, F + 1e-7)
call("nan", "allclose", N, N, equal_nan=True)
call("nan", "allclose", F, F + 1.0)
call("nan", "array_equal", F, F)
call("nan", "array_equal", N, N)
call("nan", "array_equal", N, N, equal_nan=True)
call("nan", "array_equal", F, V, jit=False)
call("nan", "array_equiv", V4, F * 0 + V4)
call("nan", "array_equiv", V4, F)
call("nan", "array_equiv", V, F, jit=False)

# --- products -------------------------------------------------------------------------------------------------
call("linalg", "matmul", F, SQ)
call("linalg", "matmul", F3, SQ)
call("linalg", "matmul", V4, SQ)
call("linalg", "matmul", SQ, V4)
call("linalg", "matmul", F3, V4)
call("linalg", "matmul", F3, np.ones((2, 4, 5), np.float32))
call("linalg", "matmul", np.ones((1, 3, 4), np.float32), np.ones((2, 4, 2), np.float32))
call("linalg", "matmul", I, I.T)
call("linalg", "matmul", F, I.T)
call("linalg", "matmul", E, np.ones((3, 2), np.float32))
call("linalg", "dot", F, SQ)
call("linalg", "dot", V4, V4)
call("linalg", "dot", S, F)
call("linalg", "dot", F3, V4)
call("linalg", "dot", F3, SQ)
call("linalg", "vdot", F, F)
call("linalg", "vdot", C, C)
call("linalg", "vecdot", F, F)
call("linalg", "vecdot", F3, F, axis=-1)
call("linalg", "inner", F, F)
call("linalg", "inner", V4, F)
call("linalg", "inner", S, V)
call("linalg", "outer", V, V4)
call("linalg", "outer", F, V)
call("linalg", "tensordot", F3, SQ, 1)
call("linalg", "tensordot", F3, F, ((1, 2), (0, 1)))
call("linalg", "tensordot", F, F, 0)
call("linalg", "einsum", "ij,jk->ik", F, SQ)
call("linalg", "einsum", "bij,jk->bik", F3, SQ)
call("linalg", "einsum", "ij->j", F)
call("linalg", "einsum", "ij,ij->", F, F)
call("linalg", "einsum", "i,j->ij", V, V4)
call("linalg", "einsum", "ijk,ij->k", F3, F3[:, :, 0])
call("linalg", "einsum", "...ij,jk->...ik", F3, SQ)
call("linalg", "einsum", "...j,...j->...", F3, F)
call("linalg", "einsum", "ii->i", SQ)
call("linalg", "einsum", "ii", SQ)
call("linalg", "einsum", "ij,jk", F, SQ)
call("linalg", "einsum", "i...->...", F3)
call("linalg", "trace", SQ)
call("linalg", "trace", F, 1)
call("linalg", "trace", F3, axis1=1, axis2=2)
call("linalg", "diagonal", F)
call("linalg", "diagonal", F, -1)
call("linalg", "diagonal", F3, 1, 1, 2)
call("linalg", "matvec", F, V4)
call("linalg", "matvec", F3, V4)
call("linalg", "matvec", SQ, F)
call("linalg", "vecmat", V[:3], F)
call("linalg", "vecmat", F, np.ones((3, 4, 2), np.float32))
call("linalg", "vecmat", C[0], C.T, jit=False)  # IREE's llvm-cpu fails to compile complex dot_general
call("linalg", "kron", F[:2, :2], V)
call("linalg", "kron", F, SQ[:2, :3])
call("linalg", "kron", I, IPOS)
call("linalg", "kron", S, V)
call("linalg", "cross", F[:, :3], V[:3])
call("linalg", "cross", V[:2], V4[:2])
call("linalg", "cross", V[:3], V[1:3])
call("linalg", "cross", F3[:, :, :3], F3[:, :, 1:], axisc=0)
call("linalg", "cross", F[:3, :3], F[:3, 1:], axis=0)
call("linalg", "cross", I[:, :3], IPOS[:, :3])
call("linalg", "diag", V)
call("linalg", "diag", V, 2)
call("linalg", "diag", V, -1)
call("linalg", "diag", F, 1)
call("linalg", "diag", F, -2)
call("linalg", "diagflat", F[:2, :2])
call("linalg", "diagflat", V, -1)
call("linalg", "tril", F)
call("linalg", "tril", F3, -1)
call("linalg", "triu", F, 1)
call("linalg", "triu", I)
call("linalg", "triu", np.ones((2, 0, 3), np.float32))
call("linalg", "vander", POS[0])
call("linalg", "vander", V, jit=False)  # IREE's stablehlo.power gives NaN for a negative base (x ** 2.0)
call("linalg", "vander", POS[1], 3, increasing=True)
call("linalg", "vander", I[0], 4)
call("linalg", "fill_diagonal", F, 5.0, inplace=False)
call("linalg", "fill_diagonal", F.T, V[:2], inplace=False)
call("linalg", "fill_diagonal", np.zeros((3, 3, 3), np.float32), 2, inplace=False)
call("linalg", "fill_diagonal", I, IPOS[0], inplace=False)
call("linalg", "cov", F, tol=1e-5)
call("linalg", "cov", F, rowvar=False, bias=True, tol=1e-5)
call("linalg", "cov", V, V[::-1], tol=1e-5)
call("linalg", "cov", F, aweights=W4, fweights=np.array([1, 2, 1, 3], np.int32), tol=1e-5)
call("linalg", "cov", F, ddof=0, fweights=np.array([1, 2, 1, 3], np.int32), tol=1e-5)
call("linalg", "cov", V, tol=1e-5)
call("linalg", "corrcoef", F, tol=1e-5)
call("linalg", "corrcoef", V, V[::-1] * V, tol=1e-5)
call("linalg", "convolve", V, V4[:3], tol=1e-5)
call("linalg", "convolve", V4[:2], V, mode="same", tol=1e-5)
call("linalg", "convolve", V, V4, mode="valid", tol=1e-5)
call("linalg", "convolve", I[0], IPOS[1], tol=1e-5)
call("linalg", "correlate", V, V4[:3], tol=1e-5)
call("linalg", "correlate", V4[:2], V, mode="full", tol=1e-5)
call("linalg", "correlate", V, V, mode="same", tol=1e-5)
call("linalg", "correlate", C[0], C[1], mode="full", tol=1e-5)

# --- elementwise ----------------------------------------------------------------------------------------------
for name in ["sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "exp", "exp2", "expm1", "sqrt", "cbrt",
             "log", "log1p", "log2", "log10", "deg2rad", "rad2deg", "sinc", "reciprocal"]:
    call("ufunc", name, POS, tol=1e-5)
    call("ufunc", name, IPOS, tol=1e-5)
for name in ["abs", "negative", "positive", "sign", "square", "floor", "ceil", "trunc", "rint", "signbit",
             "conj", "real", "imag", "isreal", "iscomplex", "logical_not", "fabs", "angle"]:
    call("ufunc", name, F)
    call("ufunc", name, I)
    call("ufunc", name, S)
for name in ["abs", "real", "imag", "conj", "isreal", "iscomplex", "angle", "sign", "square"]:
    call("ufunc", name, C, jit=name not in ("isreal", "iscomplex"))
for name in ["abs", "floor", "logical_not", "positive"]:
    call("ufunc", name, B)
    call("ufunc", name, U8)
call("ufunc", "angle", C, deg=True)
call("ufunc", "angle", 3.0)
call("ufunc", "arcsin", F / 4)
call("ufunc", "arccos", F / 4)
call("ufunc", "arctanh", F / 4)
call("ufunc", "arccosh", POS + 1)
for name in ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "equal", "not_equal",
             "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
             "arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "heaviside", "float_power", "fmax", "fmin"]:
    call("ufunc", name, F, F[::-1], tol=1e-5)
    call("ufunc", name, I, V4, tol=1e-5)
    call("ufunc", name, F, 2.0, tol=1e-5)
for name in ["floor_divide", "remainder", "mod", "fmod", "power", "divmod"]:
    call("ufunc", name, I, IPOS)
    call("ufunc", name, F, POS, tol=1e-5)
    call("ufunc", name, I8, np.int8(3))
call("ufunc", "power", F, 2)
call("ufunc", "power", 2, IPOS)
call("ufunc", "power", POS, 0.5)
for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "bitwise_left_shift",
             "bitwise_right_shift"]:
    call("ufunc", name, I, IPOS)
    call("ufunc", name, U8, np.uint8(2))
for name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    call("ufunc", name, B, B[::-1])
call("ufunc", "invert", I)
call("ufunc", "bitwise_not", B)
call("ufunc", "bitwise_count", I)
call("ufunc", "bitwise_count", U8)
call("ufunc", "round", F * 10)
call("ufunc", "round", F, 2)
call("ufunc", "round", I)
call("ufunc", "around", np.array([0.5, 1.5, 2.5, -0.5], np.float32))
call("ufunc", "clip", F, -0.5, 0.5)
call("ufunc", "clip", I, max=2)
call("ufunc", "clip", F, min=V4)
call("ufunc", "where", B, F, I)
call("ufunc", "where", F > 0, F, 0.0)
call("ufunc", "where", B[0], 1, 2)
for x, y in [(I8, U8), (I8, 2), (U8, -1.5), (B, 1.5), (B, B), (H, F), (H, 2.0), (I, 2.5), (C, F), (S, I8),
             (np.float32(2), V), (I8, np.int16(3)), (True, I)]:
    call("ufunc", "add", x, y, tol=2e-3)
    call("ufunc", "multiply", x, y, tol=2e-3)
call("ufunc", "true_divide", I, IPOS)
call("ufunc", "true_divide", I8, U8, tol=1e-5)
call("ufunc", "power", I8, 2)
call("ufunc", "power", H, 3, tol=2e-3)
call("ufunc", "floor_divide", F, 0.0)
call("ufunc", "round", F * 100, -1)
call("ufunc", "round", I, -1)
call("ufunc", "clip", U8, 10, 100)
call("ufunc", "where", B, 1.5, I8)
call("ufunc", "where", True, F, V4)
call("shape", "concatenate", [I8, U8, B], axis=None)
call("shape", "repeat", F, 2)
call("shape", "squeeze", F)
call("shape", "expand_dims", F, -1)
call("shape", "broadcast_to", E, (2, 0, 3))
call("shape", "tile", F, 0)
call("shape", "roll", F, -5, axis=1)
call("shape", "split", E, 3, axis=0)
call("shape", "flip", S)
call("shape", "stack", [S, S])
call("ufunc", "modf", F * 3)
call("ufunc", "modf", I)
call("ufunc", "frexp", np.array([0, 1.5, -3, 1024, inf, -inf, nan, 1e-20], np.float32))
call("ufunc", "frexp", I)
call("ufunc", "ldexp", V4, np.array([1, -2, 3, 20], np.int32))
call("ufunc", "ldexp", np.array([0, inf, 1.5], np.float32), 3)
call("ufunc", "spacing", F)
call("ufunc", "nextafter", F, F[::-1])
call("ufunc", "isreal", C)
call("ufunc", "select", [F > 0.5, F < -0.5], [F, -F], 7.0)
call("ufunc", "select", [B], [I])
call("ufunc", "select", [F > 0, I > 0], [I, IPOS], default=V4)

# --- differences, integrals, padding, polynomials ------------------------------------------------------------
call("numeric", "diff", V)
call("numeric", "diff", F, 2)
call("numeric", "diff", F, axis=0)
call("numeric", "diff", F3, 1, 1, prepend=1.0)
call("numeric", "diff", F, 1, 1, prepend=F[:, :2], append=0)
call("numeric", "diff", B, axis=1)
call("numeric", "diff", I, 3)
call("numeric", "diff", V, 0)
call("numeric", "diff", E, axis=0)
call("numeric", "ediff1d", F)
call("numeric", "ediff1d", I, to_begin=np.array([9, 8], np.int32), to_end=3)
call("numeric", "ediff1d", V, to_end=F[0])
call("numeric", "trapezoid", V)
call("numeric", "trapezoid", F, V4)
call("numeric", "trapezoid", F, dx=0.5, axis=0)
call("numeric", "trapezoid", F3, F3[:, :1, :] + np.arange(3, dtype=np.float32)[:, None], axis=1)
call("numeric", "trapezoid", I, dx=W4[:2, None], axis=0)
call("numeric", "gradient", V)
call("numeric", "gradient", F)
call("numeric", "gradient", F, 2.0, axis=1)
call("numeric", "gradient", F, np.array([0, 1, 3, 4], np.float32), axis=-1)
call("numeric", "gradient", F3, 1.0, 2.0, axis=(0, 2))
call("numeric", "unwrap", np.array([0, 3, 6.5, 10, -1, 9], np.float32))
call("numeric", "unwrap", F * 5, axis=0)
call("numeric", "unwrap", I * 3, period=4)
call("numeric", "unwrap", V * 4, discont=4.0)
for mode in ["constant", "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "empty"]:
    call("numeric", "pad", F, ((1, 2), (3, 1)), mode=mode)
    call("numeric", "pad", V, 7, mode=mode)
call("numeric", "pad", F, 2, constant_values=9.0)
call("numeric", "pad", I, (1, 2), constant_values=((1, 2), (3, 4)))
call("numeric", "pad", F, ((0, 0), (2, 2)), mode="linear_ramp", end_values=(1, 2))
call("numeric", "pad", V, 3, mode="linear_ramp")
call("numeric", "pad", F, 2, mode="reflect", reflect_type="odd")
call("numeric", "pad", F, 5, mode="symmetric", reflect_type="odd")
call("numeric", "pad", I, 2, mode="mean")
call("numeric", "pad", F, 2, mode="maximum", stat_length=2)
call("numeric", "pad", F3, ((0, 0), (1, 1), (0, 2)), mode="wrap")
call("numeric", "pad", S, 3)
call("numeric", "pad", np.ones((1, 3), np.float32), 3, mode="reflect")
call("numeric", "polyval", V, F, tol=1e-5)
call("numeric", "polyval", IPOS[0], 2)
call("numeric", "polyval", V4, S, tol=1e-5)
call("numeric", "polyadd", V, V4)
call("numeric", "polyadd", V4[:2], I[0])
call("numeric", "polysub", V, V4)
call("numeric", "polymul", V, V4, tol=1e-5)
call("numeric", "polymul", I[0], IPOS[0], tol=1e-5)
call("numeric", "polyder", V, tol=1e-5)
call("numeric", "polyder", V, 3, tol=1e-5)
call("numeric", "polyder", I[0], 0)
call("numeric", "polyint", V, tol=1e-5)
call("numeric", "polyint", V4, 2, k=3.0, tol=1e-5)
call("numeric", "polyint", V4, 2, k=np.array([1.0, 2.0], np.float32), tol=1e-5)
call("numeric", "polydiv", V, V4[:2], tol=1e-4)
call("numeric", "polydiv", np.array([1.0, -3, 2], np.float32), np.array([1.0, -1], np.float32), tol=1e-5)

# --- searching, counting, index arithmetic, static deletion and insertion, bits ------------------------------
SORTED = np.array([-1.0, 0.0, 1.5, 2.0, 2.0, 5.0], np.float32)
IDX = np.array([0, 3, 1, 1, 5, 2], np.int32)
call("search", "searchsorted", SORTED, F)
call("search", "searchsorted", SORTED, F * 3, side="right")
call("search", "searchsorted", np.array([1.0, 2.0, nan], np.float32), np.array([nan, 1.5, 3.0], np.float32))
call("search", "searchsorted", IDX[:3], 2, method="compare_all")
call("search", "searchsorted", SORTED, E)
call("search", "digitize", F * 3, SORTED)
call("search", "digitize", F * 3, SORTED[::-1], right=True)
call("search", "digitize", IDX, np.array([1, 3], np.int32))
call("search", "digitize", F, E1)
call("search", "isin", F, F[0])
call("search", "isin", IDX, np.array([1, 2], np.int32), invert=True)
call("search", "isin", I, V4)
call("search", "bincount", IDX, jit=False)
call("search", "bincount", IDX, length=4)
call("search", "bincount", IDX, weights=SORTED, minlength=9, jit=False)
call("search", "bincount", B[0], length=3)
call("search", "bincount", IDX, SORTED, length=8)
call("search", "histogram_bin_edges", F, 4)
call("search", "histogram_bin_edges", F, 3, range=(0, 1))
call("search", "histogram_bin_edges", I, SORTED)
call("search", "histogram_bin_edges", np.ones(3, np.float32), 2)
call("search", "histogram", F, 4)
call("search", "histogram", F * 3, SORTED, weights=F)
call("search", "histogram", F, 3, density=True)
call("search", "histogram", I, 5, range=(-2, 2))
call("search", "unravel_index", IDX, (2, 3))
call("search", "unravel_index", np.array([-7, 20, 4], np.int32), (3, 2))
call("search", "unravel_index", np.array(5, np.int32), (2, 4))
lam("search", "ravel_multi_index", lambda m, i: m.ravel_multi_index((i, i[::-1]), (7, 6), mode="clip"), IDX)
lam("search", "ravel_multi_index", lambda m, i: m.ravel_multi_index((i, i), (3, 4), mode="clip", order="F"), IDX)
lam("search", "ravel_multi_index", lambda m, i: m.ravel_multi_index((i, i), (3, 4), mode="wrap"), IDX)
lam("search", "ravel_multi_index", lambda m: m.ravel_multi_index((IDX, IDX[::-1]), (7, 6)))
lam("search", "choose", lambda m, a, x: m.choose(a, [x[:, :2], 9, x[:, 2:]], mode="clip"),
    np.array([[0, 1], [2, 1], [1, 0]], np.int32), F)
lam("search", "choose", lambda m, i, a: m.choose(i, [a, -a], mode="wrap"), IDX, SORTED)
lam("search", "choose", lambda m: m.choose(IDX % 3, [SORTED, -SORTED, 2 * SORTED]))
lam("search", "piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 1.8], [lambda t: -t, lambda t: t * 10, 7.0]),
    SORTED)
lam("search", "piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 0.5], [lambda t: -t, 3]), F)
lam("search", "piecewise", lambda m, x: m.piecewise(x, [x < 0], [lambda t, k: t * k, 1], 2), I)
lam("search", "delete", lambda m, x: m.delete(x, 1, axis=1), F)
lam("search", "delete", lambda m, x: m.delete(x, np.array([0, 2, 3])), F)
lam("search", "delete", lambda m, x: m.delete(x, slice(None, None, 2), axis=1), F)
lam("search", "delete", lambda m, x: m.delete(x, np.array([True, False, True, False, False, True])), SORTED)
lam("search", "delete", lambda m, x: m.delete(x, -1, axis=0), F3)
lam("search", "insert", lambda m, x: m.insert(x, 1, 5.0, axis=1), F)
lam("search", "insert", lambda m, x, v: m.insert(x, np.array([0, 2, 2, 6]), v), SORTED, V4)
lam("search", "insert", lambda m, x, v: m.insert(x, 2, v, axis=1), F, V[:3])
lam("search", "insert", lambda m, x, v: m.insert(x, np.array([1]), v, axis=1), F, V[:3, None])
lam("search", "insert", lambda m, x: m.insert(x, slice(0, 4, 2), 0.0, axis=1), F)
lam("search", "insert", lambda m, x: m.insert(x, -1, 9), IDX)
lam("search", "insert", lambda m, x: m.insert(x, 1, 9.5, axis=None), I)
call("search", "packbits", np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1], np.uint8))
call("search", "packbits", F3 > 0, axis=-1, bitorder="little")
call("search", "packbits", I, axis=0)
call("search", "unpackbits", np.array([[3, 255], [128, 7]], np.uint8), axis=0)
call("search", "unpackbits", np.array([3, 255], np.uint8), count=11, bitorder="little")
call("search", "unpackbits", np.array([3, 255], np.uint8), count=5)
call("search", "unpackbits", U8)

# --- irax.nn against jax.nn -----------------------------------------------------------------------------------
def _nn(m):
    return irax.nn if m is inp else jax.nn


def nn_call(name, *args, tol=1e-5, **kwargs):
    call("nn", name, *args, tol=tol, _module=_nn, **kwargs)


for name in ["relu", "sigmoid", "softplus", "silu", "swish", "gelu", "relu6", "leaky_relu", "elu", "celu", "selu",
             "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "log_sigmoid", "mish", "soft_sign",
             "sparse_plus", "sparse_sigmoid", "squareplus", "tanh", "identity"]:
    nn_call(name, F * 3)
    nn_call(name, I)
nn_call("gelu", F, approximate=False)
nn_call("leaky_relu", F, negative_slope=0.3)
nn_call("elu", F, alpha=0.5)
nn_call("celu", F * 2, alpha=2.0)
nn_call("squareplus", F, b=1.0)
nn_call("log1mexp", POS)
nn_call("glu", F)
nn_call("glu", F3, axis=0)
for name in ["softmax", "log_softmax"]:
    nn_call(name, F)
    nn_call(name, F3, axis=(0, 2))
    nn_call(name, F, where=MASK)
nn_call("softmax", I, axis=0)
nn_call("logsumexp", F)
nn_call("logsumexp", F3, axis=1, keepdims=True)
nn_call("logsumexp", F, axis=1, b=POS)
nn_call("logsumexp", F, axis=0, b=F, return_sign=True)
nn_call("logsumexp", F, axis=1, where=MASK)
nn_call("logsumexp", N, axis=1)
nn_call("logmeanexp", F)
nn_call("logmeanexp", F, axis=1, where=MASK, keepdims=True)
nn_call("standardize", F)
nn_call("standardize", F3, axis=(0, 1), algorithm="stable")
nn_call("standardize", F, where=MASK)
nn_call("one_hot", IDX, 4)
nn_call("one_hot", IDX[:4].reshape(2, 2), 6, axis=0, dtype=np.int32)


# --- the comparison -------------------------------------------------------------------------------------------
def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _structure(x):
    if isinstance(x, (list, tuple)):
        return type(x).__name__, tuple(_structure(item) for item in x)
    return "leaf"


def _default_tol(dtype):
    return 2e-3 if dtype == np.float16 else 1e-6


def assert_same(actual, expected, tol, what, *, weak_types=True):
    """Same pytree structure; per leaf the same dtype, shape, weak type, NaN positions and (close) values."""
    assert _structure(actual) == _structure(expected), f"{what}: structure {_structure(actual)} != " \
                                                         f"{_structure(expected)}"
    for a, e in zip(_leaves(actual), _leaves(expected)):
        if isinstance(e, (bool, int, float, tuple)) and not hasattr(e, "dtype"):
            assert a == e and type(a) is type(e), f"{what}: {a!r} != {e!r}"
            continue
        if weak_types:  # (jnp.reshape returns a NumPy array given one)
            assert getattr(a, "weak_type", False) == getattr(e, "weak_type", False), \
                f"{what}: weak_type {getattr(a, 'weak_type', None)} != {getattr(e, 'weak_type', None)}"
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != {e.dtype}"
        assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
        if np.issubdtype(a.dtype, np.inexact):
            t = tol if tol is not None else _default_tol(a.dtype)
            np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"{what}: NaN positions differ")
            np.testing.assert_allclose(a.astype(np.complex128), e.astype(np.complex128), rtol=t, atol=t,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(a, e, err_msg=what)


# The functions this sweep was written with (more of their cases are jitted).
NEW_FUNCTIONS = set("""diff ediff1d tril triu tril_indices triu_indices tril_indices_from triu_indices_from meshgrid
nansum nanmean nanmax nanmin nanprod nanvar nanstd nanargmax nanargmin nancumsum nancumprod fmax fmin logaddexp2 rot90
dstack dsplit diag diagflat average cumulative_sum cumulative_prod cross kron vander logspace geomspace select
trapezoid angle iscomplex isreal iscomplexobj isrealobj array_equiv indices append diag_indices diag_indices_from
fill_diagonal rollaxis unstack matvec vecmat pad convolve correlate polyval polyadd polysub polymul polyder polyint
polydiv gradient unwrap cov corrcoef block resize frexp ldexp modf spacing bitwise_count hanning hamming blackman
bartlett fromfunction ix_ searchsorted digitize isin bincount histogram histogram_bin_edges unravel_index
ravel_multi_index choose piecewise delete insert packbits unpackbits trim_zeros einsum""".split())
NEW_NN_FUNCTIONS = set("""celu selu glu hard_sigmoid hard_silu hard_swish hard_tanh log_sigmoid log1mexp mish soft_sign
sparse_plus sparse_sigmoid squareplus tanh identity logmeanexp""".split())
CHUNK_SIZE = 80
JIT_PER_FUNCTION = 1  # jit the first case of each function: an IREE compile costs ~70 ms a case here
JIT_PER_NEW_FUNCTION = 2
_FAST_XLA = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _chunks():
    by_category: dict[str, list[Case]] = {}
    for case in CASES:
        by_category.setdefault(case.chunk, []).append(case)
    chunks, seen = {}, {}
    for category, cases in by_category.items():
        size = -(-len(cases) // -(-len(cases) // CHUNK_SIZE))  # equal chunks of at most CHUNK_SIZE
        for k in range(0, len(cases), size):
            selected = []
            for case in cases[k:k + size]:
                name = case.id.rsplit("-", 1)[0]
                seen[name] = seen.get(name, 0) + 1
                limit = JIT_PER_NEW_FUNCTION if name in NEW_FUNCTIONS else JIT_PER_FUNCTION
                selected.append(case._replace(compile=case.jit and seen[name] <= limit))
            chunks[f"{category}{k // size}"] = selected
    return chunks


CHUNKS = _chunks()


def _jax_results(cases):
    """JAX's results, traced as one ``jax.jit`` (JAX's op-by-op dispatch would compile every op);
    cases that cannot be traced, or give host values, run eagerly."""
    def traced(arg_lists):
        outs = []
        for case, args in zip(cases, arg_lists):
            try:
                outs.append(case.fn(jjnp, *args) if case.jit else None)
            except Exception:  # e.g. a function that needs concrete values: run it eagerly below
                outs.append(None)
        return outs
    arg_lists = [c.args for c in cases]
    outs = jax.jit(traced).lower(arg_lists).compile(compiler_options=_FAST_XLA)(arg_lists)
    return [out if out is not None else _jax_eager(case) for case, out in zip(cases, outs)]


class Raises(NamedTuple):
    """JAX rejects the call: irax must raise the same exception type."""
    error: Exception


def _jax_eager(case):
    try:
        return case.fn(jjnp, *case.args)
    except (TypeError, ValueError, NotImplementedError) as e:
        return Raises(e)


def _describe(e):
    """One line: an assertion's whole message, another exception's first line."""
    if isinstance(e, AssertionError):
        return " ".join(str(e).split())[:600]
    return f"{type(e).__name__}: {e}".splitlines()[0][:300]


def _irax_jit(cases):
    """Every case in one ``irax.jit``; if that fails, bisects to name the cases that do not compile."""
    try:
        return _run_jitted(cases), []
    except Exception as e:
        if len(cases) == 1:
            return None, [f"jit {cases[0].id}: {_describe(e)}"]
        half = len(cases) // 2
        return None, _irax_jit(cases[:half])[1] + _irax_jit(cases[half:])[1]


def _run_jitted(cases):
    fn = irax.jit(lambda arg_lists: [c.fn(inp, *args) for c, args in zip(cases, arg_lists)])
    return fn([c.args for c in cases])


@pytest.mark.parametrize("chunk", sorted(CHUNKS))
def test_matches_jax(chunk):
    """Each case eagerly, then the jittable ones under one ``irax.jit``: values, shapes, dtypes as JAX's."""
    cases = CHUNKS[chunk]
    expected = _jax_results(cases)
    failures = []
    for case, exp in zip(cases, expected):
        try:
            if isinstance(exp, Raises):
                with pytest.raises(type(exp.error)):
                    case.fn(inp, *case.args)
            else:
                assert_same(case.fn(inp, *case.args), exp, case.tol, case.id)
        except (Exception, pytest.fail.Exception) as e:
            failures.append(f"eager {case.id}: {_describe(e)}")
    jit_cases = [(c, e) for c, e in zip(cases, expected) if c.compile and not isinstance(e, Raises)]
    outs, broken = _irax_jit([c for c, _ in jit_cases])
    failures += broken
    for (case, exp), out in zip(jit_cases, outs or []):
        try:
            assert_same(out, exp, case.tol, case.id, weak_types=False)
        except Exception as e:
            failures.append(f"jit {case.id}: {_describe(e)}")
    assert not failures, f"{len(failures)} failures among {len(cases)} cases:\n" + "\n".join(failures)


# --- the API surface ------------------------------------------------------------------------------------------
def _public_functions():
    return sorted(n for n in dir(inp) if not n.startswith("_") and callable(getattr(inp, n))
                  and not isinstance(getattr(inp, n), type))


def test_at_least_150_functions():
    assert len(_public_functions()) >= 150


def test_issue_functions_exist():
    assert [n for n in sorted(NEW_FUNCTIONS) if not callable(getattr(inp, n, None))] == []
    assert [n for n in sorted(NEW_NN_FUNCTIONS) if not callable(getattr(irax.nn, n, None))] == []


_IGNORED_PARAMS = {"out_sharding", "device", "_dot_general"}


def _signature_problems(name):
    try:
        theirs = inspect.signature(getattr(jjnp, name))
        mine = inspect.signature(getattr(inp, name))
    except (TypeError, ValueError):
        return []
    params = [p for p in theirs.parameters.values() if p.name not in _IGNORED_PARAMS]
    if any(p.kind == p.VAR_POSITIONAL for p in params) and name not in ("meshgrid", "ix_", "gradient"):
        return []  # JAX's ufunc objects take ``*args``
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    mine_positional = [p.name for p in mine.parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    problems = []
    if len(mine_positional) < len(positional):
        problems.append(f"positional parameters {mine_positional} != JAX's {positional}")
    for theirs_name, mine_name in zip(positional, mine_positional):
        if theirs_name != mine_name and theirs.parameters[theirs_name].kind != inspect.Parameter.POSITIONAL_ONLY:
            problems.append(f"positional parameter {mine_name!r} where JAX has {theirs_name!r}")
    keywords = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    mine_keywords = {p.name for p in mine.parameters.values() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if keywords - mine_keywords:
        problems.append(f"missing keyword parameters {sorted(keywords - mine_keywords)}")
    return problems


def test_signatures_accept_jax_arguments():
    """JAX's positional order and keyword names work on every function both libraries have."""
    names = [n for n in _public_functions() if hasattr(jjnp, n)]
    problems = {n: p for n in names if (p := _signature_problems(n))}
    assert problems == {}


def test_host_predicates():
    for x in [F, C, 1.0, 1j, [1, 2], None, I]:
        assert inp.iscomplexobj(x) == jjnp.iscomplexobj(x)
        assert inp.isrealobj(x) == jjnp.isrealobj(x)
    for x in [F, S, 1.0, [1.0]]:
        assert inp.isscalar(x) == jjnp.isscalar(x)
    assert inp.iterable([1]) and not inp.iterable(1.0)


def test_errors_match_jax():
    for fn in [lambda m: m.diff(S), lambda m: m.tril(V), lambda m: m.rot90(F, axes=(1, 1)),
               lambda m: m.cumulative_sum(F), lambda m: m.cumulative_sum(S), lambda m: m.max(E, axis=0),
               lambda m: m.max(F, where=MASK), lambda m: m.meshgrid(F), lambda m: m.select([B], [I, I]),
               lambda m: m.pad(F, 1, mode="edge", constant_values=1), lambda m: m.vander(F)]:
        with pytest.raises((ValueError, TypeError)) as theirs:
            fn(jjnp)
        with pytest.raises(type(theirs.value)):
            fn(inp)
    with pytest.raises(NotImplementedError):
        inp.fill_diagonal(F, 1.0)


_F, _V = np.ones((3, 4), np.float32), np.ones(4, np.float32)
JAXPR_PROGRAMS = {
    "tril": (lambda m: lambda x: m.tril(x, 1), [_F]),
    "triu": (lambda m: lambda x: m.triu(x, -1), [_F]),
    "tri": (lambda m: lambda x: m.tri(3, 4, 1) * x, [_F]),
    "diff": (lambda m: lambda x: m.diff(x, axis=0), [_F]),
    "diff_prepend": (lambda m: lambda x: m.diff(x, 2, prepend=0.0), [_F]),
    "ediff1d": (lambda m: lambda x: m.ediff1d(x), [_F]),
    "rot90": (lambda m: lambda x: m.rot90(x), [_F]),
    "rollaxis": (lambda m: lambda x: m.rollaxis(x, 1), [_F]),
    "average": (lambda m: lambda x, w: m.average(x, axis=1, weights=w), [_F, _V]),
    "fmax": (lambda m: lambda x, y: m.fmax(x, y), [_F, _V]),
    "meshgrid": (lambda m: lambda x, y: m.meshgrid(x, y), [_V, _V]),
    "vander": (lambda m: lambda x: m.vander(x), [_V]),
    "angle": (lambda m: lambda x: m.angle(x), [_F]),
    "select": (lambda m: lambda x: m.select([x > 0, x < 0], [x, -x]), [_F]),
    "indices": (lambda m: lambda x: m.indices((2, 3)) + x, [np.int32(1)]),
    "sum_where": (lambda m: lambda x: m.sum(x, axis=0, where=x > 0), [_F]),
}


@pytest.mark.parametrize("name", sorted(JAXPR_PROGRAMS))
def test_jaxpr_text_matches_jax(name):
    build, args = JAXPR_PROGRAMS[name]
    assert str(irax.make_jaxpr(build(inp))(*args)) == str(jax.make_jaxpr(build(jjnp))(*args))
