"""Threads trace, differentiate and run at once, as in JAX: each thread has its own trace stack (frontend/core.py
``_TraceState``), and the first traces of several threads make one MLIR context. The interpreter switches threads
every few microseconds here, so that traces interleave."""
import sys
import threading

import numpy as np
import pytest

import irax
import irax.numpy as jnp


@pytest.fixture
def switching_often():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


def _run_threads(work, n=3):
    errors = []

    def guarded(k):
        try:
            work(k)
        except Exception as e:  # noqa: BLE001 - reported below with the thread's number
            errors.append((k, e))
    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _chain(k):
    def f(x):
        for _ in range(30):
            x = jnp.sin(x) * 0.5 + k * 0.01
        return x
    return f


def _chain_numpy(k, x):
    for _ in range(30):
        x = np.sin(x) * np.float32(0.5) + np.float32(k * 0.01)
    return x


def test_threads_jit_and_grad_at_once(switching_often):
    results = {}

    def work(k):
        x = np.float32(0.5 + k)
        results[k] = (irax.jit(_chain(k))(x), irax.grad(_chain(k))(x), irax.vmap(_chain(k))(np.full(3, x)))
    _run_threads(work)
    for k, (value, slope, batch) in results.items():
        x = np.float32(0.5 + k)
        np.testing.assert_allclose(value, _chain_numpy(k, x), rtol=1e-5)
        np.testing.assert_allclose(batch, np.full(3, _chain_numpy(k, x)), rtol=1e-5)
        eps = np.float64(1e-3)
        numeric = (_chain_numpy(k, np.float64(x) + eps) - _chain_numpy(k, np.float64(x) - eps)) / (2 * eps)
        np.testing.assert_allclose(slope, numeric, rtol=1e-3)


def test_threads_print_the_jaxprs_one_thread_prints(switching_often):
    expected = {k: str(irax.make_jaxpr(_chain(k))(np.float32(1.0))) for k in range(3)}
    texts = {}

    def work(k):
        texts[k] = str(irax.make_jaxpr(_chain(k))(np.float32(1.0)))
    _run_threads(work)
    assert texts == expected
