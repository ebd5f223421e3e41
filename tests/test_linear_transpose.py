"""``linear_transpose`` against JAX: values eagerly and under jit, its jaxpr text, and JAX's errors."""
import numpy as np
import pytest

import irax
import irax.numpy as inp

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

W = np.arange(6.0, dtype=np.float32).reshape(2, 3)

CASES = {
    "scale": (lambda M, np_: lambda x: 2 * x, lambda M, np_: (1.0,), lambda M, np_: (2.0,)),
    "unused_input": (lambda M, np_: lambda x, y: x * 2, lambda M, np_: (1.0, 2.0), lambda M, np_: (3.0,)),
    "matvec": (lambda M, np_: lambda x: W @ x, lambda M, np_: (np.ones(3, np.float32),),
               lambda M, np_: (np.ones(2, np.float32),)),
    "shape_struct": (lambda M, np_: lambda x: x * 2, lambda M, np_: (M.ShapeDtypeStruct((2,), np.float32),),
                     lambda M, np_: (np.ones(2, np.float32),)),
    "closure_and_sum": (lambda M, np_: lambda x: np_.sin(1.0) * x + np_.sum(x), lambda M, np_: (np_.ones(3),),
                        lambda M, np_: (np_.arange(3.0),)),
    "integers": (lambda M, np_: lambda x: 3 * x + x, lambda M, np_: (1,), lambda M, np_: (2,)),
    "pytree_output": (lambda M, np_: lambda x: {"a": x, "b": -x}, lambda M, np_: (1.0,),
                      lambda M, np_: ({"a": 2.0, "b": 5.0},)),
    "complex_real_part": (lambda M, np_: lambda x: (x + 1j * x).real, lambda M, np_: (1.0,), lambda M, np_: (2.0,)),
    "fft": (lambda M, np_: np_.fft.fft, lambda M, np_: (np_.ones(4, np_.complex64),),
            lambda M, np_: (np_.arange(4.0).astype(np_.complex64),)),
    "scan": (lambda M, np_: lambda x: M.lax.scan(lambda c, e: (c + e, 2 * c), 0.0, x)[1],
             lambda M, np_: (np_.ones(4),), lambda M, np_: (np_.arange(4.0),)),
    "constant_output": (lambda M, np_: lambda x: (x, 1.0), lambda M, np_: (1.0,), lambda M, np_: ((2.0, 3.0),)),
}


def _run(name, M, np_, wrap):
    fun, primals, cts = (make(M, np_) for make in CASES[name])
    return wrap(M, M.linear_transpose(fun, *primals))(*cts)


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize("name", CASES)
def test_values_as_jax(name, wrap):
    wrapper = (lambda M, f: f) if wrap == "eager" else (lambda M, f: M.jit(f))
    ours, theirs = _run(name, irax, inp, wrapper), _run(name, jax, jnp, wrapper)
    assert irax.tree_util.tree_structure(ours) == irax.tree_util.tree_structure(theirs)
    for a, b in zip(irax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert type(a) is float if type(b) is float else (a.dtype, a.shape, a.weak_type) == (
            b.dtype, b.shape, b.weak_type)  # an output that is an input passes its cotangent through, as JAX's
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_jaxpr_text_as_jax():
    def text(M):
        return str(M.make_jaxpr(M.linear_transpose(lambda x: W @ x - x[:2], np.ones(3, np.float32)))(
            np.ones(2, np.float32)))
    assert text(irax) == text(jax)


ERRORS = {
    "nonlinear_primitive": (lambda M, np_: M.linear_transpose(np_.sin, 1.0)(2.0),
                            NotImplementedError, "Transpose rule .* for 'sin' not implemented"),
    "float_to_int": (lambda M, np_: M.linear_transpose(lambda x: x.astype(int), 1.0)(2),
                     TypeError, "linear_transpose only supports"),
    "cotangent_type": (lambda M, np_: M.linear_transpose(lambda x: 2 * x, 1.0)(np_.ones(2)),
                       TypeError, "cotangent type does not match function output"),
    "cotangent_tree": (lambda M, np_: M.linear_transpose(lambda x: 2 * x, 1.0)((1.0,)),
                       TypeError, "cotangent tree does not match function output"),
    "reduce_axes": (lambda M, np_: M.linear_transpose(lambda x: x, 1.0, reduce_axes=("i",)),
                    NotImplementedError, "reduce_axes argument to transpose is deprecated"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_jax(name):
    call, kind, message = ERRORS[name]
    for M, np_ in ((irax, inp), (jax, jnp)):
        with pytest.raises(kind, match=message):
            call(M, np_)


def test_product_of_inputs_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="'mul' with both operands linear: the function is not linear"):
        irax.linear_transpose(lambda x: x * x, 1.0)(2.0)
