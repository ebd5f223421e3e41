"""``make_jaxpr`` prints exactly JAX's text for the same program."""
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
