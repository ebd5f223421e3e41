"""JAX's primitive objects: ``lax.add_p`` and friends, ``eqn.primitive``, ``Primitive.bind``."""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax import lax

jax = pytest.importorskip("jax")


def _irax_primitives(module):
    return {n: getattr(module, n) for n in dir(module) if n.endswith("_p")}


@pytest.mark.parametrize("namespace", ["lax", "lax.linalg"])
def test_names_and_multiple_results_match_jax(namespace):
    ours = _irax_primitives(lax if namespace == "lax" else lax.linalg)
    theirs = jax.lax if namespace == "lax" else jax.lax.linalg
    assert len(ours) >= (100 if namespace == "lax" else 7)
    for attr, prim in ours.items():
        jax_prim = getattr(theirs, attr)
        assert (prim.name, prim.multiple_results) == (jax_prim.name, jax_prim.multiple_results), attr
        assert repr(prim) == repr(jax_prim)


def test_equations_name_the_primitive_objects():
    jaxpr = irax.make_jaxpr(lambda x: lax.sort(jnp.sin(x) * 2))(np.ones(3, np.float32)).jaxpr
    prims = [eqn.primitive for eqn in jaxpr.eqns]
    assert prims[0] is lax.sin_p and prims[1] is lax.mul_p and prims[-1] is lax.sort_p
    assert str(prims) == "[sin, mul, sort]"


def test_bind_evaluates_traces_and_differentiates():
    x = np.array([0.5, -1.0], np.float32)
    np.testing.assert_allclose(lax.sin_p.bind(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(irax.jit(lambda a: lax.mul_p.bind(a, a))(x), x * x)
    assert float(irax.grad(lambda a: lax.sin_p.bind(a))(0.0)) == 1.0
    keys, vals = lax.sort_p.bind(np.array([3, 1, 2]), np.array([0, 1, 2]), dimension=0, is_stable=True, num_keys=1)
    assert keys.tolist() == [1, 2, 3] and vals.tolist() == [1, 2, 0]
    assert "reduce_sum[axes=(0,)" in str(irax.make_jaxpr(
        lambda a: lax.reduce_sum_p.bind(a, axes=(0,), out_sharding=None))(x))
