"""``vmap`` of ``cond``/``switch``, ``while_loop``/``fori_loop`` and ``scan``/``map``: the jaxpr text is JAX's, and
the values (eager and under ``jit``) are those of stacking per-example results, and JAX's.

Cases are written once against a ``(lax, jnp)`` pair, so the same code is traced by irax and by JAX (the
optional oracle).
"""
import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax as ilax

try:
    import jax
    import jax.numpy as jax_jnp
except ImportError:  # JAX is an optional oracle
    jax = jax_jnp = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the oracle")

F = np.float32
x23 = np.arange(6, dtype=F).reshape(2, 3) / 4 - 0.5
x32 = x23.T.copy()
x243 = np.arange(24, dtype=F).reshape(2, 4, 3) / 10
v2 = np.array([0.5, -1.5], F)
p2 = np.array([True, False])
n2 = np.array([1, 3], np.int32)
i3 = np.array([0, 2, 1], np.int32)


def _cond_select(lax, jnp):
    return lambda p, x: lax.cond(p, lambda x: x + 1.0, lambda x: x * 2.0, x)


def _switch3(lax, jnp):
    return lambda i, x: lax.switch(i, [lambda x: x + 1.0, lambda x: x * 2.0, jnp.sin], x)


def _count_to(lax, jnp):
    return lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))


def _cumsum_scan(lax, jnp):
    return lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs)


# name -> (lax, jnp) -> (f, in_axes, out_axes, args); in_axes has one int or None per argument (for all its
# leaves), out_axes one int for every output leaf.
CASES = {
    # cond and switch
    "cond_batched_pred": lambda lax, jnp: (_cond_select(lax, jnp), 0, 0, (p2, v2)),
    "cond_batched_pred_matrix_operand": lambda lax, jnp: (_cond_select(lax, jnp), 0, 0, (p2, x23)),
    "cond_batched_pred_shared_operand": lambda lax, jnp: (_cond_select(lax, jnp), (0, None), 0, (p2, x32[0])),
    "cond_batched_pred_operand_axis1": lambda lax, jnp: (_cond_select(lax, jnp), (0, 1), 0, (p2, x32)),
    "cond_shared_pred": lambda lax, jnp: (_cond_select(lax, jnp), (None, 0), 0, (True, x23)),
    "cond_shared_pred_operand_axis1_out_axis1": lambda lax, jnp: (_cond_select(lax, jnp), (None, 1), 1, (False, x32)),
    "cond_shared_pred_closed_over_batched": lambda lax, jnp: (
        lambda p, x, y: lax.cond(p, lambda x: x + y, lambda x: x * 2.0, x), (None, 1, 0), 0, (True, x32, x23)),
    "cond_batched_pred_closed_over_batched": lambda lax, jnp: (
        lambda p, x, y, z: lax.cond(p, lambda x: x + y, lambda x: x * z, x), (0, None, 0, None), 0,
        (p2, x23[0], x23, F(3.0))),
    "cond_branch_unbatched_in_one_branch": lambda lax, jnp: (
        lambda x: lax.cond(True, lambda x: x + 1.0, lambda x: jnp.zeros(3, F), x), 0, 0, (x23,)),
    "cond_forwarded_output": lambda lax, jnp: (
        lambda p, x, y: lax.cond(p, lambda a, b: (a, b * 2.0), lambda a, b: (a, b + 1.0), x, y), (0, None, 0), 0,
        (p2, v2[0], x23)),
    "cond_batched_pred_int_operand": lambda lax, jnp: (
        lambda p, k, x: lax.cond(p, lambda k, x: (k + 1, x * 2.0), lambda k, x: (k * 3, x), k, x), 0, 0,
        (p2, n2, v2)),
    "cond_pytree_operands": lambda lax, jnp: (
        lambda p, x: lax.cond(p, lambda a: (a[0], a[1] + 1.0), lambda a: (a[1], a[0]), (x, x * 3.0)), (0, None), 0,
        (p2, x23[0])),
    "cond_no_operands": lambda lax, jnp: (
        lambda p: lax.cond(p, lambda: F(1.0), lambda: F(2.0)), 0, 0, (p2,)),
    "cond_numeric_pred": lambda lax, jnp: (
        lambda n, x: lax.cond(n > 1, lambda x: x + 1.0, lambda x: x, x), 0, 0, (n2, x23)),
    "switch_batched_index": lambda lax, jnp: (_switch3(lax, jnp), 0, 0, (i3, x32)),
    "switch_batched_index_shared_operand": lambda lax, jnp: (_switch3(lax, jnp), (0, None), 1, (i3, x23)),
    "switch_shared_index": lambda lax, jnp: (_switch3(lax, jnp), (None, 0), 0, (2, x23)),
    "cond_batch_of_one": lambda lax, jnp: (_cond_select(lax, jnp), 0, 0, (p2[:1], x23[:1])),
    # while_loop and fori_loop
    "while_batched_pred": lambda lax, jnp: (_count_to(lax, jnp), 0, 0, (n2, x23)),
    "while_shared_pred": lambda lax, jnp: (_count_to(lax, jnp), (None, 1), 0, (3, x32)),
    "while_shared_pred_out_axis_last": lambda lax, jnp: (_count_to(lax, jnp), (None, 0), -1, (2, x23)),
    "while_batched_body_const": lambda lax, jnp: (
        lambda w, x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w), (0, x)), (1, None), 0,
        (x32, x23[0])),
    "while_batched_pred_consts_axis1": lambda lax, jnp: (
        lambda w, n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * w), (0, x)), (1, 0, None), 0,
        (x32, n2, x23[0])),
    "while_batched_pred_by_cond_const_axis1": lambda lax, jnp: (
        lambda v, x: lax.while_loop(lambda c: c[1].sum() < v.sum(), lambda c: (c[0] + 1, c[1] + 1.0), (0, x)),
        (1, None), 0, (x32 * 8, x23[0])),
    "while_carry_batched_by_the_body": lambda lax, jnp: (
        lambda w, x: lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[2], c[1] * w), (0, x, x)),
        (0, None), 0, (x23, x23[0])),
    "while_pred_batched_by_carry": lambda lax, jnp: (
        lambda x: lax.while_loop(lambda c: c[1] < 4.0, lambda c: (c[0] * 2.0, c[1] + 1.0), (x, x[0])), 0, 0,
        (x23 * 4,)),
    "while_batch_of_one": lambda lax, jnp: (_count_to(lax, jnp), 0, 0, (n2[1:], x23[1:])),
    "fori_loop_dynamic_bounds": lambda lax, jnp: (
        lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x), 0, 0, (n2, x23)),
    "fori_loop_dynamic_lower": lambda lax, jnp: (
        lambda n, x: lax.fori_loop(n, 4, lambda i, c: c * 2.0 + i, x), (0, 1), 0, (n2, x32)),
    "fori_loop_static_bounds": lambda lax, jnp: (
        lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x), 0, 0, (x23,)),
    # scan and map
    "scan_batched_xs": lambda lax, jnp: (_cumsum_scan(lax, jnp), (None, 0), 0, (F(0.5), x23)),
    "scan_batched_xs_axis1": lambda lax, jnp: (_cumsum_scan(lax, jnp), (None, 1), 0, (F(0.5), x32)),
    "scan_batched_init": lambda lax, jnp: (_cumsum_scan(lax, jnp), (0, None), 0, (v2, x23[0])),
    "scan_batched_init_and_xs_out_axis1": lambda lax, jnp: (
        _cumsum_scan(lax, jnp), (0, 1), 1, (x23, x243.transpose(1, 0, 2))),
    "scan_batched_consts": lambda lax, jnp: (
        lambda w, xs: lax.scan(lambda c, x: (c + w * x, c), jnp.zeros(3, F), xs), (0, None), 0, (x23, x23)),
    "scan_batched_consts_axis1": lambda lax, jnp: (
        lambda w, xs: lax.scan(lambda c, x: (c * w + x, x * w), jnp.zeros(3, F), xs), (1, None), 0, (x32, x243[0])),
    "scan_reverse_pytree_carry": lambda lax, jnp: (
        lambda c, d, xs: lax.scan(lambda c, x: ((c[0] + x, c[1] * 2.0), {"y": c[0], "z": c[1].sum()}), (c, d), xs,
                                  reverse=True), (0, 1, 1), 0, (x23[:, 0], x32, x32)),
    "scan_no_xs": lambda lax, jnp: (
        lambda c: lax.scan(lambda c, _: (c * 2.0, c.sum()), c, None, length=3), 0, 0, (x23,)),
    "scan_batch_of_one": lambda lax, jnp: (_cumsum_scan(lax, jnp), (0, 0), 0, (v2[:1], x23[:1])),
    "map": lambda lax, jnp: (lambda xs: lax.map(lambda x: jnp.sin(x) * 2.0, xs), 0, 0, (x243,)),
    "map_axis1_out_axis1": lambda lax, jnp: (lambda xs: lax.map(lambda x: jnp.sin(x) * 2.0, xs), 1, 1, (x243,)),
    # nested
    "scan_of_cond_batched_pred": lambda lax, jnp: (
        lambda xs: lax.scan(lambda c, x: (lax.cond(x > 0.1, lambda c: c + x, lambda c: c * 2.0, c), c), 0.0, xs),
        0, 0, (x23,)),
    "scan_of_while": lambda lax, jnp: (
        lambda xs: lax.scan(lambda c, x: (lax.while_loop(lambda y: y < 2.0, lambda y: y + x + 1.0, c), c), 0.0, xs),
        0, 0, (x23,)),
    "cond_of_scan": lambda lax, jnp: (
        lambda p, xs: lax.cond(p, lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs)[1], lambda xs: xs, xs),
        0, 0, (p2, x23)),
}

def _jax_pair():
    return jax.lax, jax_jnp


def _per_arg(axes, n):
    return tuple(axes) if isinstance(axes, tuple) else (axes,) * n


def _stacked(f, in_axes, out_axes, args):
    """What vmap must equal: ``f`` of each example, stacked along ``out_axes``."""
    size = next(irax.tree_util.tree_leaves(a)[0].shape[d] for a, d in zip(args, in_axes) if d is not None)
    outs = []
    for i in range(size):
        example = [a if d is None else irax.tree_util.tree_map(lambda x: np.take(x, i, axis=d), a)
                   for a, d in zip(args, in_axes)]
        outs.append([np.asarray(y) for y in irax.tree_util.tree_leaves(f(*example))])
    return [np.stack(ys, axis=out_axes) for ys in zip(*outs)]


def _close(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a = np.asarray(a)
        assert a.shape == np.shape(e) and a.dtype == np.asarray(e).dtype
        np.testing.assert_allclose(a, e, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_eager_and_jitted_equal_stacked_examples_and_jax(name):
    f, in_axes, out_axes, args = CASES[name](ilax, inp)
    in_axes = _per_arg(in_axes, len(args))
    mapped = irax.vmap(f, in_axes=in_axes, out_axes=out_axes)
    expected = _stacked(f, in_axes, out_axes, args)
    _close(irax.tree_util.tree_leaves(mapped(*args)), expected)
    _close(irax.tree_util.tree_leaves(irax.jit(mapped)(*args)), expected)
    if jax is not None:
        jf, _, _, jargs = CASES[name](*_jax_pair())
        _close(jax.tree_util.tree_leaves(jax.vmap(jf, in_axes=in_axes, out_axes=out_axes)(*jargs)), expected)


@needs_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_jaxpr_text_as_jax(name):
    f, in_axes, out_axes, args = CASES[name](ilax, inp)
    in_axes = _per_arg(in_axes, len(args))
    mine = str(irax.make_jaxpr(irax.vmap(f, in_axes=in_axes, out_axes=out_axes))(*args))
    jf, _, _, jargs = CASES[name](*_jax_pair())
    assert mine == str(jax.make_jaxpr(jax.vmap(jf, in_axes=in_axes, out_axes=out_axes))(*jargs))


# --- compositions: programs over (jax, lax, jnp) ---------------------------------------------------------

PROGRAMS = {
    "jit_of_vmap_of_scan": lambda jax, lax, jnp: (
        jax.jit(jax.vmap(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs))), (x23,)),
    "scan_inside_vmap_inside_jit_with_shared_init": lambda jax, lax, jnp: (
        jax.jit(lambda c, xs: jax.vmap(lambda xs: lax.scan(lambda c, x: (c * x, c), c, xs))(xs)),
        (np.full(3, 1.5, F), x243)),
    "vmap_of_jit_of_cond": lambda jax, lax, jnp: (
        jax.vmap(jax.jit(lambda p, x: lax.cond(p, lambda x: x + 1.0, lambda x: -x, x))), (p2, x23)),
    "vmap_of_vmap_of_while_batched_pred": lambda jax, lax, jnp: (
        jax.vmap(jax.vmap(_count_to(lax, jnp))), (np.array([[1, 3, 0], [2, 2, 4]], np.int32), x23)),
    "vmap_of_vmap_of_while_inner_pred_batched": lambda jax, lax, jnp: (
        jax.vmap(jax.vmap(_count_to(lax, jnp)), in_axes=(None, 1)), (np.array([1, 3, 0], np.int32), x32)),
    "vmap_of_vmap_of_scan": lambda jax, lax, jnp: (
        jax.vmap(jax.vmap(_cumsum_scan(lax, jnp), in_axes=(0, 1)), in_axes=(None, 0)), (x23[0], x243)),
    "vmap_of_scan_of_cond_of_batched_pred": lambda jax, lax, jnp: (
        jax.vmap(lambda ps, x: lax.scan(lambda c, p: (lax.cond(p, lambda c: c + 1.0, lambda c: c * 2.0, c), c), x, ps)),
        (np.array([[True, False, True], [False, False, True]]), v2)),
    "psum_in_scan_body_batched_operands": lambda jax, lax, jnp: (
        jax.vmap(lambda xs, c: lax.scan(lambda c, x: (c + lax.psum(x, "i"), c), c, xs), in_axes=(None, 0),
                 axis_name="i"), (x23[0], v2)),
    "psum_in_scan_body_unbatched_operands": lambda jax, lax, jnp: (
        jax.vmap(lambda xs: lax.scan(lambda c, x: (c + lax.psum(x, "i"), c), 0.0, xs), in_axes=None, axis_name="i",
                 axis_size=2), (x23[0],)),
    "psum_in_cond_branch_unbatched_operands": lambda jax, lax, jnp: (
        jax.vmap(lambda x: lax.cond(True, lambda x: lax.psum(x, "i"), lambda x: x, x), in_axes=None, axis_name="i",
                 axis_size=3), (x23[0],)),
    "psum_in_while_body_unbatched_operands": lambda jax, lax, jnp: (
        jax.vmap(lambda x: lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, lax.psum(c[1], "i")), (0, x)),
                 in_axes=None, axis_name="i", axis_size=2), (x23[0],)),
    "scan_unbatched_carry_out_axes_none": lambda jax, lax, jnp: (
        jax.vmap(lambda xs: lax.scan(lambda c, x: (c + 1.0, x * c), 0.0, xs), out_axes=(None, 0)), (x23,)),
    "cond_unbatched_output_out_axes_none": lambda jax, lax, jnp: (
        jax.vmap(lambda p, x, y: lax.cond(p, lambda x, y: (x + 1.0, y * 2.0), lambda x, y: (x * 3.0, y), x, y),
                 in_axes=(None, 0, None), out_axes=(0, None)), (False, x23, v2)),
    "while_unbatched_carry_out_axes_none": lambda jax, lax, jnp: (
        jax.vmap(lambda w, x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w, c[2] + 1.0),
                                             (0, x, 0.0)), in_axes=(0, None), out_axes=(None, 0, None)),
        (x23, x23[0])),
    "map_with_batch_size": lambda jax, lax, jnp: (
        jax.vmap(lambda xs: lax.map(lambda x: x * 2.0 + 1.0, xs, batch_size=2)), (x243[:, :3],)),
}


@needs_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_text_same_as_jax(name):
    fn, args = PROGRAMS[name](irax, ilax, inp)
    jfn, jargs = PROGRAMS[name](jax, jax.lax, jax_jnp)
    assert str(irax.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*jargs))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_values_eager_and_jitted(name):
    fn, args = PROGRAMS[name](irax, ilax, inp)
    eager = irax.tree_util.tree_leaves(fn(*args))
    _close(irax.tree_util.tree_leaves(irax.jit(fn)(*args)), [np.asarray(e) for e in eager])
    if jax is not None:
        jfn, jargs = PROGRAMS[name](jax, jax.lax, jax_jnp)
        _close(eager, [np.asarray(t) for t in jax.tree_util.tree_leaves(jfn(*jargs))])


def test_batched_predicate_keeps_finished_examples():
    """Each example stops at its own bound although the loop runs until the last one is done."""
    out = irax.jit(irax.vmap(lambda n: ilax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0),
                                                     (0, F(1.0)))))(np.array([0, 1, 4], np.int32))
    np.testing.assert_array_equal(np.asarray(out[0]), [0, 1, 4])
    np.testing.assert_array_equal(np.asarray(out[1]), [1.0, 2.0, 16.0])



@needs_jax
def test_batched_predicate_cond_of_booleans():
    """A cond with a batched predicate selects its operands against their stop_gradient, which refused bool
    operands (JAX's takes every dtype)."""
    flags = np.array([True, False, True])

    def f(lib, np_module):
        return lib.vmap(lambda p, x: lib.lax.cond(p, lambda x: x, np_module.logical_not, x))
    np.testing.assert_array_equal(f(irax, inp)(flags, flags), f(jax, jax.numpy)(flags, flags))
    np.testing.assert_array_equal(irax.jit(f(irax, inp))(flags, flags), f(jax, jax.numpy)(flags, flags))
    assert str(irax.make_jaxpr(ilax.stop_gradient)(flags)) == str(jax.make_jaxpr(jax.lax.stop_gradient)(flags))
