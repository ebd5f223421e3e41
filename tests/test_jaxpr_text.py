"""``make_jaxpr`` prints exactly JAX's text for the same program."""
import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax as ilax
from irax import nn as inn

from jaxpr_programs import JIT_PROGRAMS, PROGRAMS

jax = pytest.importorskip("jax")


def _texts(build_irax, build_jax):
    fn, args = build_irax
    mine = str(irax.make_jaxpr(fn)(*args))
    jfn, jargs = build_jax
    theirs = str(jax.make_jaxpr(jfn)(*jargs))
    return mine, theirs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_text_as_jax(name):
    build = PROGRAMS[name]
    mine, theirs = _texts(build(inp, ilax, inn), build(jax.numpy, jax.lax, jax.nn))
    assert mine == theirs


@pytest.mark.parametrize("name", sorted(JIT_PROGRAMS))
def test_nested_jit_same_text_as_jax(name):
    build = JIT_PROGRAMS[name]
    mine, theirs = _texts(build(irax, inp, ilax, inn), build(jax, jax.numpy, jax.lax, jax.nn))
    assert mine == theirs


def test_at_least_fifty_programs():
    assert len(PROGRAMS) + len(JIT_PROGRAMS) >= 50


LITERALS = {
    "python_float": lambda M, np_: lambda x: x * 0.1,
    "python_float_in_a_function": lambda M, np_: lambda x: np_.sin(2 / 3) * x,
    "python_float_to_lax": lambda M, np_: lambda x: M.lax.sin(0.1) * x,
    "python_complex": lambda M, np_: lambda x: x * (0.1 + 0.2j),
    "numpy_float32": lambda M, np_: lambda x: np_.float32(0.1) * x,
    "tiny_and_huge": lambda M, np_: lambda x: x * 1e-50 + 1e40,
    "under_grad": lambda M, np_: M.grad(lambda x: np_.sin(x * 0.1)),
    "in_a_cond": lambda M, np_: lambda x: M.lax.cond(x > 0.3, lambda y: y * 0.1, lambda y: y + 0.7, x),
}


@pytest.mark.parametrize("name", LITERALS)
def test_python_scalar_literals_print_their_python_value(name):
    """JAX's literals keep a Python scalar's value: ``0.1:f32[]``, not its float32 0.10000000149011612."""
    ours = irax.make_jaxpr(LITERALS[name](irax, inp))(1.0)
    assert str(ours) == str(jax.make_jaxpr(LITERALS[name](jax, jax.numpy))(1.0))


def _jit_closures(M):
    c, d = np.arange(3.0, dtype=np.float32), np.full(3, 2.0, np.float32)
    g = M.jit(lambda x: x * d)
    return {
        "const_inside_and_outside": lambda x: M.jit(lambda y: y + c)(x) * c,
        "nested": lambda x: M.jit(lambda y: g(y) + c)(x),
        "called_twice": lambda x: g(x) + g(x + 1),
        "traced_closure": lambda x: M.jit(lambda y: y + x)(x * 2),
        "grad": M.grad(lambda x: M.jit(lambda y: (y * c).sum())(x)),
        "vmap": M.vmap(lambda x: M.jit(lambda y: y + c)(x)),
        "jit_of_jit": M.jit(lambda x: M.jit(lambda y: y - c)(x)),
    }


@pytest.mark.parametrize("name", list(_jit_closures(irax)))
def test_jit_bodies_keep_their_closed_over_constants_as_jax(name):
    """JAX 0.10 keeps a jit body's constants inside it unless the body also closes over traced values."""
    x = np.ones((2, 3) if name == "vmap" else 3, np.float32)
    ours = irax.make_jaxpr(_jit_closures(irax)[name])(x)
    assert str(ours) == str(jax.make_jaxpr(_jit_closures(jax)[name])(x))
