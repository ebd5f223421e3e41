"""Collectives over named axes under ``vmap(..., axis_name=...)``: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``psum_scatter``, ``axis_index``, ``axis_size``, ``ppermute``, ``pshuffle``, ``all_to_all``,
``pswapaxes``.

1. ``make_jaxpr(vmap(...))`` prints exactly JAX's text, nested vmaps with two names and derivatives included.
2. Values, eager and under ``jit``, match JAX's (the optional oracle) run on the same program.
3. A name no enclosing vmap binds raises JAX's NameError, with the words JAX uses at that point; so does a
   named collective that reaches evaluation or lowering.

Programs are written once against a ``(jax, lax)`` module pair, so the same code is traced by irax and by JAX.
"""
import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax as ilax
from irax.ir.parse import parse_module

try:
    import jax
except ImportError:  # JAX is an optional oracle
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the oracle")

F = np.float32
x43 = np.arange(12, dtype=F).reshape(4, 3) / 4 - 1
x243 = np.arange(24, dtype=F).reshape(2, 4, 3) / 8 - 1
x48 = np.arange(32, dtype=F).reshape(4, 8) / 8
x443 = np.arange(48, dtype=F).reshape(4, 4, 3) / 16
x423 = np.arange(24, dtype=F).reshape(4, 2, 3)


def _v(jax, f, **kw):
    return jax.vmap(f, axis_name="i", **kw)


def _vv(jax, f, **kw):
    """Two nested vmaps: 'i' outside, 'j' inside."""
    return jax.vmap(jax.vmap(f, axis_name="j", **kw), axis_name="i")


PROGRAMS = {
    "psum": lambda jax, lax: (_v(jax, lambda a: lax.psum(a, "i")), (x43,)),
    "psum_in_axes_1": lambda jax, lax: (_v(jax, lambda a: lax.psum(a, "i"), in_axes=1), (x43,)),
    "psum_out_axes_none": lambda jax, lax: (_v(jax, lambda a: lax.psum(a, "i"), out_axes=None), (x43,)),
    "psum_int": lambda jax, lax: (_v(jax, lambda a: lax.psum(a.astype(int), "i")), (x43 * 4,)),
    "psum_bool": lambda jax, lax: (_v(jax, lambda a: lax.psum(a > 0, "i")), (x43,)),
    "psum_pytree": lambda jax, lax: (_v(jax, lambda a: lax.psum((a, {"z": a * 2}), "i")), (x43,)),
    "psum_named_and_positional": lambda jax, lax: (_v(jax, lambda a: lax.psum(a, ("i", 0))), (x43,)),
    "psum_python_scalar": lambda jax, lax: (_v(jax, lambda a: lax.psum(1.0, "i")), (x43,)),
    "psum_unmapped": lambda jax, lax: (_v(jax, lambda a, b: lax.psum(b, "i"), in_axes=(0, None)), (x43, x43[0])),
    "pmax": lambda jax, lax: (_v(jax, lambda a: lax.pmax(a, "i")), (x43,)),
    "pmax_bool": lambda jax, lax: (_v(jax, lambda a: lax.pmax(a > 1, "i")), (x43,)),
    "pmax_named_and_positional": lambda jax, lax: (_v(jax, lambda a: lax.pmax(a, ("i", 0))), (x43,)),
    "pmax_unmapped": lambda jax, lax: (_v(jax, lambda a, b: lax.pmax(b, "i"), in_axes=(0, None)), (x43, x43[0])),
    "pmin": lambda jax, lax: (_v(jax, lambda a: lax.pmin(a, "i")), (x43,)),
    "pmean": lambda jax, lax: (_v(jax, lambda a: lax.pmean(a, "i")), (x43,)),
    "pmean_int": lambda jax, lax: (_v(jax, lambda a: lax.pmean(a.astype(int), "i")), (x43 * 4,)),
    "pmean_python_scalar": lambda jax, lax: (_v(jax, lambda a: lax.pmean(1.0, "i")), (x43,)),
    "axis_size": lambda jax, lax: (_v(jax, lambda a: lax.axis_size("i") + a), (x43,)),
    "axis_index": lambda jax, lax: (_v(jax, lambda a: lax.axis_index("i")), (x43,)),
    "axis_index_arithmetic": lambda jax, lax: (_v(jax, lambda a: a * lax.axis_index("i")), (x43,)),
    "all_gather": lambda jax, lax: (_v(jax, lambda a: lax.all_gather(a, "i")), (x43,)),
    "all_gather_in_axes_1": lambda jax, lax: (_v(jax, lambda a: lax.all_gather(a, "i"), in_axes=1), (x43,)),
    "all_gather_tiled": lambda jax, lax: (_v(jax, lambda a: lax.all_gather(a, "i", tiled=True)), (x43,)),
    "all_gather_axis_1": lambda jax, lax: (_v(jax, lambda a: lax.all_gather(a, "i", axis=1)), (x423,)),
    "all_gather_axis_1_tiled": lambda jax, lax: (_v(jax, lambda a: lax.all_gather(a, "i", axis=1, tiled=True)),
                                                 (x423,)),
    "all_gather_unmapped": lambda jax, lax: (_v(jax, lambda a, c: lax.all_gather(c, "i", axis=1),
                                                in_axes=(0, None)), (x43, x43)),
    "psum_scatter": lambda jax, lax: (_v(jax, lambda a: lax.psum_scatter(a, "i")), (x443,)),
    "psum_scatter_tiled": lambda jax, lax: (_v(jax, lambda a: lax.psum_scatter(a, "i", tiled=True)), (x48,)),
    "psum_scatter_dimension_1": lambda jax, lax: (_v(jax, lambda a: lax.psum_scatter(a, "i", scatter_dimension=1),
                                                     in_axes=1), (x443.reshape(3, 4, 4),)),
    "psum_scatter_unmapped": lambda jax, lax: (_v(jax, lambda a, c: lax.psum_scatter(c, "i"), in_axes=(0, None)),
                                              (x43, x43)),
    "psum_scatter_unmapped_tiled": lambda jax, lax: (_v(jax, lambda a, c: lax.psum_scatter(
        c, "i", scatter_dimension=1, tiled=True), in_axes=(0, None)), (x43, x48[:3])),
    # nested vmaps: the inner pass ('j') leaves a collective over 'i' as an op for the outer one
    "nested_psum_both_names": lambda jax, lax: (_vv(jax, lambda a: lax.psum(a, ("i", "j"))), (x243,)),
    "nested_psum_outer_name": lambda jax, lax: (_vv(jax, lambda a: lax.psum(a, "i")), (x243,)),
    "nested_psum_inner_name": lambda jax, lax: (_vv(jax, lambda a: lax.psum(a, "j")), (x243,)),
    "nested_psum_outer_positional": lambda jax, lax: (_vv(jax, lambda a: lax.psum(a, ("i", 0))), (x243,)),
    "nested_pmax_outer_name": lambda jax, lax: (_vv(jax, lambda a: lax.pmax(a, "i")), (x243,)),
    "nested_pmean_both": lambda jax, lax: (_vv(jax, lambda a: lax.pmean(a, "i") - lax.pmean(a, "j")), (x243,)),
    "nested_all_gather_outer_name": lambda jax, lax: (_vv(jax, lambda a: lax.all_gather(a, "i")), (x243,)),
    "nested_axis_index_outer_name": lambda jax, lax: (_vv(jax, lambda a: lax.axis_index("i")), (x243,)),
    "nested_axis_index_both_names": lambda jax, lax: (_vv(jax, lambda a: lax.axis_index(("i", "j"))), (x243,)),
    "nested_psum_scatter_outer_name": lambda jax, lax: (_vv(jax, lambda a: lax.psum_scatter(a, "i")),
                                                        (x243[:, :3, :2],)),
    # derivatives
    "grad_of_vmap_psum": lambda jax, lax: (jax.grad(lambda x: _v(jax, lambda a: (lax.psum(a, "i") * a).sum())(x)
                                                    .sum()), (x43,)),
    "vmap_of_grad_psum": lambda jax, lax: (_v(jax, jax.grad(lambda a: (lax.psum(a, "i") * a).sum())), (x43,)),
    "vmap_of_grad_pmean": lambda jax, lax: (_v(jax, jax.grad(lambda a: (a - lax.pmean(a, "i")) @ a)), (x43,)),
    "vmap_of_grad_all_gather": lambda jax, lax: (_v(jax, jax.grad(lambda a: (lax.all_gather(a, "i") ** 2).sum())),
                                                 (x43,)),
    "grad_of_vmap_all_gather": lambda jax, lax: (jax.grad(lambda x: _v(jax, lambda a: (
        lax.all_gather(a, "i") ** 2).sum())(x).sum()), (x43,)),
    "vmap_of_grad_psum_scatter": lambda jax, lax: (_v(jax, jax.grad(lambda a: (lax.psum_scatter(a, "i") ** 2)
                                                                    .sum())), (x443,)),
    "vmap_of_jvp_psum": lambda jax, lax: (_v(jax, lambda a, t: jax.jvp(lambda a: lax.psum(a * a, "i"), (a,), (t,))),
                                          (x43, x43 + 1)),
    "vmap_of_grad_unmapped_psum": lambda jax, lax: (_v(jax, lambda a, b: jax.grad(lambda b: (
        lax.psum(b, "i") * b).sum())(b), in_axes=(0, None)), (x43, x43[0])),
    "vmap_of_grad_unmapped_axis_index": lambda jax, lax: (_v(jax, lambda a, b: jax.grad(lambda b: (
        b * lax.axis_index("i")).sum())(b), in_axes=(0, None)), (x43, x43[0])),
    "vmap_of_jit_psum": lambda jax, lax: (_v(jax, jax.jit(lambda a: lax.psum(a, "i") * a)), (x43,)),
}


def _build(name, mods):
    fn, args = PROGRAMS[name](*mods)
    return fn, args


def _irax_args(args):
    return [inp.asarray(a) for a in args]


@needs_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_text_as_jax(name):
    fn, args = _build(name, (irax, ilax))
    jfn, jargs = _build(name, (jax, jax.lax))
    assert str(irax.make_jaxpr(fn)(*_irax_args(args))) == str(jax.make_jaxpr(jfn)(*jargs))


def _assert_same(actual, expected, what):
    leaves, tree = irax.tree_util.tree_flatten(actual)
    expected_leaves, expected_tree = jax.tree_util.tree_flatten(expected)
    assert len(leaves) == len(expected_leaves), what
    for a, e in zip(leaves, expected_leaves):
        a, e = np.asarray(a), np.asarray(e)
        assert (a.dtype, a.shape) == (e.dtype, e.shape), what
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6, err_msg=what)


@needs_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_eager_values_match_jax(name):
    fn, args = _build(name, (irax, ilax))
    jfn, jargs = _build(name, (jax, jax.lax))
    _assert_same(fn(*_irax_args(args)), jfn(*jargs), name)


@needs_jax
def test_jitted_values_match_jax():
    """Every program in one jitted function: one IREE compile."""
    names = sorted(PROGRAMS)
    built = [_build(name, (irax, ilax)) for name in names]

    def everything(*arg_lists):
        return [fn(*args) for (fn, _), args in zip(built, arg_lists)]
    outs = irax.jit(everything)(*[tuple(_irax_args(args)) for _, args in built])
    for name, out in zip(names, outs):
        jfn, jargs = _build(name, (jax, jax.lax))
        _assert_same(out, jfn(*jargs), name)


def test_inner_batch_dimension_after_the_scatter_dimension():
    """JAX's rule moves the batch dimension up where a non-tiled psum_scatter removes the axis before it (and
    fails); each example (i, j) gets the sum over i of its row i."""
    x = np.arange(12, dtype=F).reshape(2, 2, 3)
    f = irax.vmap(irax.vmap(lambda a: ilax.psum_scatter(a, "i"), in_axes=1, axis_name="j"), axis_name="i")
    expected = x.sum(0)
    np.testing.assert_array_equal(np.asarray(f(x)), expected)
    np.testing.assert_array_equal(np.asarray(irax.jit(f)(x)), expected)


def test_positional_axes_outside_vmap():
    x = inp.asarray(x43)
    np.testing.assert_array_equal(np.asarray(ilax.psum(x, 0)), x43.sum(0))
    np.testing.assert_array_equal(np.asarray(irax.jit(lambda a: ilax.pmax(a, 1))(x)), x43.max(1))
    np.testing.assert_array_equal(np.asarray(irax.jit(lambda a: ilax.pmin(a, (0, 1)))(x)), x43.min())


# --- 3. errors ---------------------------------------------------------------------------------------

def _found(name, api):
    return f"Found an unbound axis name: {name}. To fix this, please call {api} under `jax.shard_map`."


UNBOUND = {  # JAX's words differ where a psum is folded at trace time (constants, axis sizes) from a bound op's
    "psum_traced": (lambda jax, lax: jax.jit(lambda a: lax.psum(a, "j"))(x43), _found("j", "psum")),
    "psum_constant": (lambda jax, lax: lax.psum(x43, "j"), "unbound axis name: j"),
    "pmean_constant": (lambda jax, lax: lax.pmean(1.0, "j"), "unbound axis name: j"),
    "pmax": (lambda jax, lax: lax.pmax(x43, "j"), _found("j", "psum")),
    "pmin_traced": (lambda jax, lax: jax.jit(lambda a: lax.pmin(a, "j"))(x43), _found("j", "psum")),
    "axis_index": (lambda jax, lax: lax.axis_index("j"), _found("j", "axis_index")),
    "axis_size": (lambda jax, lax: lax.axis_size("j"), "unbound axis name: j"),
    "all_gather": (lambda jax, lax: lax.all_gather(x43, "j"), "unbound axis name: j"),
    "psum_scatter": (lambda jax, lax: lax.psum_scatter(x43, "j"), "unbound axis name: j"),
    "vmap_psum": (lambda jax, lax: _v(jax, lambda a: lax.psum(a, "j"))(x43), _found("j", "psum")),
    "vmap_pmean": (lambda jax, lax: _v(jax, lambda a: lax.pmean(a, "j"))(x43), _found("j", "psum")),
    "vmap_pmax": (lambda jax, lax: _v(jax, lambda a: lax.pmax(a, "j"))(x43), _found("j", "psum")),
    "vmap_axis_index": (lambda jax, lax: _v(jax, lambda a: a + lax.axis_index("j"))(x43), _found("j", "axis_index")),
    "vmap_all_gather": (lambda jax, lax: _v(jax, lambda a: lax.all_gather(a, "j"))(x43), "unbound axis name: j"),
    "vmap_psum_scatter": (lambda jax, lax: _v(jax, lambda a: lax.psum_scatter(a, "j"))(x43), "unbound axis name: j"),
    "unnamed_vmap": (lambda jax, lax: jax.vmap(lambda a: lax.psum(a, "i"))(x43), _found("i", "psum")),
    "after_the_vmap": (lambda jax, lax: (_v(jax, lambda a: a)(x43), lax.psum(x43, "i")), "unbound axis name: i"),
}


@pytest.mark.parametrize("name", sorted(UNBOUND))
def test_unbound_axis_name_raises_jax_name_error(name):
    program, message = UNBOUND[name]
    with pytest.raises(NameError) as e:
        program(irax, ilax)
    assert str(e.value) == message
    if jax is not None:
        with pytest.raises(NameError) as e:
            program(jax, jax.lax)
        assert str(e.value) == message


@pytest.mark.parametrize("mods", [(irax, ilax)] + ([(jax, jax.lax)] if jax is not None else []))
def test_pmax_has_no_derivative(mods):
    jax_, lax = mods
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'pmax' not implemented"):
        jax_.grad(lambda x: _v(jax_, lambda a: lax.pmax(a, "i"))(x).sum())(x43)


NAMED = """
func.func @main(%x: tensor<4x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.psum"(%x) {axes = ["i", 0]} : (tensor<4x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def test_a_named_axis_left_for_evaluation_or_lowering_is_unbound():
    from irax.backends import interpreter
    from irax.passes import run_pipeline
    with pytest.raises(NameError, match=_found("i", "psum").replace("(", r"\(").replace(")", r"\)")):
        interpreter.evaluate(parse_module(NAMED), [x43], "main")
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        run_pipeline(parse_module(NAMED), "builtin.module(jaxpr-to-stablehlo)")


def test_the_batch_pass_turns_the_name_into_a_positional_axis():
    module = parse_module(NAMED)
    from irax.passes import run_pipeline
    run_pipeline(module, "builtin.module(jaxpr-batch{in_axes=0 axis_size=2 axis_name=i})")
    text = module.operation.get_asm()
    assert '"jaxpr.psum"(%arg0) {axes = [0, 1]}' in text, text


RING = [(0, 1), (1, 2), (2, 3), (3, 0)]


def _ppermute_programs(jax):
    lax = jax.lax
    w = np.arange(12, dtype=F).reshape(4, 3)
    return {
        "ring": lambda x: _v(jax, lambda v: lax.ppermute(v, "i", RING))(x),
        "shuffle": lambda x: _v(jax, lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0]))(x),
        "repeated_source": lambda x: _v(jax, lambda v: lax.ppermute(v, "i", [(0, 0), (0, 1), (2, 2), (3, 3)]))(x),
        "unbatched": lambda x: _v(jax, lambda v: lax.ppermute(1.0, "i", RING) + v)(x),
        "axis1": lambda x: jax.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), in_axes=1, out_axes=1,
                                    axis_name="i")(x[:, :3]),
        "inner_name": lambda x: _vv(jax, lambda v: lax.ppermute(v, "i", [(0, 1), (1, 0)]))(x[:2, :3]),
        "grad": jax.grad(lambda x: (_v(jax, lambda v: lax.ppermute(v, "i", RING))(x) * w).sum()),
        "jvp": lambda x: jax.jvp(_v(jax, lambda v: lax.ppermute(v * v, "i", RING)), (x,), (w,))[1],
    }


@needs_jax
@pytest.mark.parametrize("name", ["ring", "shuffle", "repeated_source", "unbatched", "axis1", "inner_name", "grad",
                                  "jvp"])
def test_ppermute_and_pshuffle_match_jax(name):
    """Under vmap, eagerly and under jit; JAX has no text for these beyond its jnp.take of the batch."""
    want = _ppermute_programs(jax)[name](x43)
    np.testing.assert_allclose(_ppermute_programs(irax)[name](x43), want)
    np.testing.assert_allclose(irax.jit(_ppermute_programs(irax)[name])(x43), want)


@needs_jax
def test_ppermute_text_and_errors_match_jax():
    text = str(irax.make_jaxpr(lambda x: ilax.ppermute(x, "i", [(0, 1), (1, 0)]), axis_env=[("i", 2)])(x43))
    assert text == str(jax.make_jaxpr(lambda x: jax.lax.ppermute(x, "i", [(0, 1), (1, 0)]),
                                      axis_env=[("i", 2)])(x43))
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'ppermute' not implemented"):
        ilax.ppermute(x43, "i", [(0, 1)])
    with pytest.raises(AssertionError, match="Permutation doesn't match the axis size!"):
        _v(irax, lambda v: ilax.ppermute(v, "i", [(0, 1), (1, 0)]))(x43)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        _v(irax, lambda v: ilax.pshuffle(v, "i", [0, 0, 1, 2]))(x43)


Y442 = np.arange(32, dtype=F).reshape(4, 4, 2)
Z438 = np.arange(96, dtype=F).reshape(4, 3, 8)


def _all_to_all_programs(jax):
    lax = jax.lax
    w = np.arange(32, dtype=F).reshape(4, 2, 4) / 8
    return {
        "same_axis": (lambda y: _v(jax, lambda v: lax.all_to_all(v, "i", 0, 0))(y), Y442),
        "split0_concat1": (lambda y: _v(jax, lambda v: lax.all_to_all(v, "i", 0, 1))(y), Y442),
        "split1_concat0": (lambda y: _v(jax, lambda v: lax.all_to_all(v.T, "i", 1, 0))(y), Y442),
        "tiled": (lambda z: _v(jax, lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True))(z), Z438),
        "tiled_same_axis": (lambda z: _v(jax, lambda v: lax.all_to_all(v, "i", 1, 1, tiled=True))(z), Z438),
        "in_axes1": (lambda y: _v(jax, lambda v: lax.all_to_all(v, "i", 0, 1), in_axes=1)(y), Y442),
        "pswapaxes": (lambda y: _v(jax, lambda v: lax.pswapaxes(v, "i", 0))(y), Y442),
        "inner_name": (lambda y: _vv(jax, lambda v: lax.all_to_all(v, "i", 0, 0))(y[:2, :, :2].reshape(2, 4, 2)),
                       Y442),
        "grad": (jax.grad(lambda y: (_v(jax, lambda v: lax.all_to_all(v, "i", 0, 1))(y) * w).sum()), Y442),
    }


@needs_jax
@pytest.mark.parametrize("name", ["same_axis", "split0_concat1", "split1_concat0", "tiled", "tiled_same_axis",
                                  "in_axes1", "pswapaxes", "inner_name", "grad"])
def test_all_to_all_matches_jax(name):
    fn, arg = _all_to_all_programs(irax)[name]
    jax_fn, _ = _all_to_all_programs(jax)[name]
    want = jax_fn(arg)
    np.testing.assert_allclose(fn(arg), want)
    np.testing.assert_allclose(irax.jit(fn)(arg), want)
    assert str(irax.make_jaxpr(fn)(arg)) == str(jax.make_jaxpr(jax_fn)(arg))


def test_all_to_all_under_vmap_of_grad_sends_cotangents_back():
    """JAX's transpose of the primitive fails here (a cotangent of the wrong shape); irax's sends each chunk's
    cotangent back to the example it came from."""
    grads = _v(irax, irax.grad(lambda v: (ilax.all_to_all(v, "i", 0, 1) * 1.5 * ilax.axis_index("i")).sum()))(Y442)
    np.testing.assert_allclose(grads, np.broadcast_to((1.5 * np.arange(4, dtype=F))[None, :, None], (4, 4, 2)))


def test_all_to_all_errors_match_jax():
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis axis_name to equal "
                                         r"x.shape\[split_axis\], but they are 4 and 3 respectively."):
        _v(irax, lambda v: ilax.all_to_all(v, "i", 0, 1))(Z438)
    with pytest.raises(ValueError, match=r"has to be divisible by the size of the named axis i \(4\)"):
        _v(irax, lambda v: ilax.all_to_all(v, "i", 0, 1, tiled=True))(Z438)


@pytest.mark.parametrize("name", ["psum", "axis_index", "pmean_of_psum"])
def test_make_jaxpr_axis_env_binds_names_as_jax(name):
    def program(M):
        return {"psum": lambda x: M.lax.psum(x, "i"), "axis_index": lambda x: M.lax.axis_index("i") + x,
                "pmean_of_psum": lambda x: M.lax.pmean(x, "i") * M.lax.psum(1, "i")}[name]
    example = 1 if name == "axis_index" else 1.0
    ours = irax.make_jaxpr(program(irax), axis_env=[("i", 4)])(example)
    assert str(ours) == str(jax.make_jaxpr(program(jax), axis_env=[("i", 4)])(example))
