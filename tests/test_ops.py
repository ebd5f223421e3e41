"""Every primitive over dtypes and shapes: eager (NumPy rule) vs jitted (IREE) vs JAX."""
from __future__ import annotations

import functools
import zlib

import numpy as np
import pytest

import irax
from irax import lax

from op_records import BF16, RECORDS, draw

try:
    import jax
except ImportError:  # JAX is an optional oracle
    jax = None


def _cases():
    for record in RECORDS:
        for dtype in record.dtypes:
            yield record, np.dtype(dtype)


CASES = list(_cases())


def _shape_pairs(record):
    if record.nargs == 1:
        return [(s,) for s in record.shapes]
    return [(s, s) for s in record.shapes] + [((3, 4), ())]


@functools.lru_cache(maxsize=None)
def _inputs(record, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{record.id}/{dtype}".encode()))
    return [tuple(draw(record, dtype, s, rng, i) for i, s in enumerate(shapes)) for shapes in _shape_pairs(record)]


def _call(record, module, args):
    """``lax.NAME``, or the primitive object where lax has no function (``lax.lt_to_p``)."""
    fn = getattr(module, record.name, None) or getattr(module, f"{record.name}_p").bind
    return fn(*args, **record.params)


def _jitted_by_dtype(library, dtype):
    """Every case of one dtype in one jitted function of ``library`` (irax or jax): one compile per dtype."""
    flat = [(r, args) for r, d in CASES if d == dtype for args in _inputs(r, d)]

    def all_ops(*arg_lists):
        return [_call(r, library.lax, args) for (r, _), args in zip(flat, arg_lists)]
    outs = library.jit(all_ops)(*[tuple(library.numpy.asarray(a) for a in args) for _, args in flat])
    results = {}
    for (r, args), out in zip(flat, outs):
        results.setdefault(r.id, []).append(np.asarray(out))
    return results


def _jitted_results(shared, dtype):
    """Once per run (conftest.py's ``shared``): the module of a dtype takes seconds to compile."""
    return shared(f"ops-irax-{dtype.name}", lambda: _jitted_by_dtype(irax, dtype))


def _jax_results(shared, dtype):
    """JAX's results, jitted as irax's are: JAX compiles each primitive it runs eagerly, which cost more than the
    rest of this file; XLA runs each of these independent ops as it runs it alone."""
    return shared(f"ops-jax-{dtype.name}", lambda: _jitted_by_dtype(jax, dtype))


def _tolerance(record, dtype):
    if dtype == BF16:
        return max(record.tol, 2e-2)
    if dtype == np.float16:
        return max(record.tol, 2e-3)
    return record.tol


def assert_same(actual, expected, tol, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if np.issubdtype(actual.dtype, np.inexact) or actual.dtype == BF16:
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"{what}: NaN positions differ")
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


@pytest.mark.parametrize("record,dtype", CASES, ids=[f"{r.id}-{d.name}" for r, d in CASES])
def test_eager_matches_jit(record, dtype, shared):
    jitted = _jitted_results(shared, dtype)[record.id]
    for args, jit_out in zip(_inputs(record, dtype), jitted):
        eager = _call(record, lax, [irax.numpy.asarray(a) for a in args])
        assert_same(jit_out, eager, _tolerance(record, dtype), f"{record.id} jit vs eager on {[a.shape for a in args]}")


@pytest.mark.skipif(jax is None, reason="jax is not installed")
@pytest.mark.parametrize("record,dtype", CASES, ids=[f"{r.id}-{d.name}" for r, d in CASES])
def test_eager_matches_jax(record, dtype, shared):
    for args, expected in zip(_inputs(record, dtype), _jax_results(shared, dtype)[record.id]):
        eager = _call(record, lax, [irax.numpy.asarray(a) for a in args])
        assert_same(eager, expected, _tolerance(record, dtype), f"{record.id} eager vs JAX on {[a.shape for a in args]}")


def test_second_call_does_not_retrace():
    traces = []

    @irax.jit
    def f(x):
        traces.append(1)
        return lax.sin(x) + 1

    x = irax.numpy.ones(3)
    f(x), f(x), f(x + 1)
    assert len(traces) == 1
    f(irax.numpy.ones(4))
    assert len(traces) == 2
