"""Reductions of arrays computed from constants alone under ``jit``: IREE 3.13 summed ``-jnp.full(20, 4.0)`` to -8
(its code for a reduction of a folded splat ran the wrong number of steps at sizes not a multiple of the vector
width); the lowering reads such operands through a barrier (``passes/guard_constant_reductions.py``)."""
import numpy as np
import pytest

import irax
import irax.numpy as jnp

UNARY = {"abs": (jnp.abs, np.abs), "exp": (jnp.exp, np.exp), "sqrt": (jnp.sqrt, np.sqrt), "log": (jnp.log, np.log),
         "negative": (jnp.negative, np.negative), "square": (jnp.square, np.square)}


@pytest.mark.parametrize("size", [2, 20, 1000])
def test_reductions_of_constant_expressions(size):
    def programs(m, unary):
        outs = []
        for name in sorted(UNARY):
            f = unary[name]
            x = f(m.full(size, 4.0, np.float32))
            outs += [x.sum(), x.max(), x.prod() if size < 50 else x.min(), m.full((3, size), 0.05, np.float32)]
            outs[-1] = f(outs[-1]).sum(axis=1)
        return outs
    got = irax.jit(lambda: programs(jnp, {k: v[0] for k, v in UNARY.items()}))()
    expected = programs(np, {k: v[1] for k, v in UNARY.items()})
    for name, g, e in zip([n for n in sorted(UNARY) for _ in range(4)], got, expected):
        np.testing.assert_allclose(np.asarray(g), e, rtol=2e-5, err_msg=name)


def test_only_constant_operands_are_guarded():
    text = irax.jit(lambda x: (jnp.abs(jnp.full(20, 0.5)).sum(), jnp.abs(x).sum())).lower(
        np.ones(20, np.float32)).as_text()
    assert text.count("stablehlo.optimization_barrier") == 1 and text.count("stablehlo.reduce(") == 2
