"""Batching of ``custom_linear_solve``, as JAX's ``_linear_solve_batching_rule``: which parts of ``x`` and ``b``
are batched is grown to a fixpoint consistent across the four bodies (a solve's output batched makes matvec's
input batched, and so on), then each body is batched accordingly and ``b`` broadcast where it must be."""
from __future__ import annotations

import operator

from irax.ir import solves as SV

from . import funcs
from .batch import BATCH_RULES, ZERO_IF_MAPPED
from .batch_control_flow import _batch_body, _batched_outputs, _emit, _results


def _in_order(arg_bat, const_bat):
    """A body's arguments (``b`` or ``x``, then its constants)."""
    return list(arg_bat) + list(const_bat)


def _body_masks(b, bodies, params_bat, x_bat, b_bat, orig_b_bat):
    """One step of JAX's fixpoint: the batched parts of ``x`` and ``b`` the bodies give for these, and whether
    solve's outputs come out batched."""
    matvec, vecmat, solve, solve_t = bodies
    n_b = len(b_bat)
    solve_x_bat = _batched_outputs(b, solve, _in_order(b_bat, params_bat[2]), x_bat)
    x_bat_out = solve_x_bat
    if vecmat is not None:
        vecmat_x_bat = _batched_outputs(b, vecmat, _in_order(b_bat, params_bat[1]), b_bat)
        x_bat_out = list(map(operator.or_, vecmat_x_bat + [True] * (len(x_bat) - n_b), solve_x_bat))
    x_bat_noaux = x_bat_out[:n_b]
    matvec_b_bat = _batched_outputs(b, matvec, _in_order(x_bat_noaux, params_bat[0]), b_bat)
    b_bat_out = list(map(operator.or_, matvec_b_bat, orig_b_bat))
    if solve_t is not None:
        solve_t_bat = _batched_outputs(b, solve_t, _in_order(x_bat_noaux, params_bat[3]), x_bat_out)[:n_b]
        b_bat_out = list(map(operator.or_, b_bat_out, solve_t_bat))
    return x_bat_out, b_bat_out, solve_x_bat


def _custom_linear_solve_batch(b, args, dims, *, const_lengths, jaxprs):
    bodies = SV.as_tuple(jaxprs)
    params, b_args = SV.split_operands(args, const_lengths)
    params_dims, b_dims = SV.split_operands(dims, const_lengths)
    params_bat = [[d is not None for d in group] for group in params_dims]
    orig_b_bat = [d is not None for d in b_dims]
    n_b, n_x = len(b_args), len(b.op.results)
    b_bat, x_bat = orig_b_bat, [False] * n_x
    for _ in range(1 + n_b + n_x):
        x_bat_out, b_bat_out, solve_x_bat = _body_masks(b, bodies, params_bat, x_bat, b_bat, orig_b_bat)
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:
        raise AssertionError("Fixedpoint not reached")
    x_noaux = x_bat[:n_b]
    spec = [(x_noaux, b_bat), (b_bat, b_bat), (b_bat, x_bat), (x_noaux, x_bat)]  # (arguments, results) batched
    batched, made = [], {}  # a body batched alike is one function, as JAX's batch_jaxpr caches it
    for body, group, (arg_bat, out_bat) in zip(bodies, params_bat, spec):
        if body is None:
            batched.append(None)
            continue
        in_dims = tuple(0 if x else None for x in _in_order(arg_bat, group))
        out_dims = tuple(0 if x else ZERO_IF_MAPPED for x in out_bat)
        if (body, in_dims, out_dims) not in made:
            made[body, in_dims, out_dims] = funcs.name_of(_batch_body(b, body, in_dims, out_dims)[0])
        batched.append(made[body, in_dims, out_dims])
    new_params = [b.moveaxis(x, d, 0) if d is not None else x
                  for x, d in zip([x for g in params for x in g], [d for g in params_dims for d in g])]
    new_b = [b.broadcast(x, b.axis_size, 0) if now and not was else b.moveaxis(x, d, 0) if now else x
             for x, d, was, now in zip(b_args, b_dims, orig_b_bat, b_bat)]
    solve_func = funcs.lookup(b.module, batched[2])
    outs = _emit(b, "custom_linear_solve", new_params + new_b, _results(solve_func),
                 {"const_lengths": const_lengths, "jaxprs": SV.from_tuple(batched)})
    return outs, [0 if x else None for x in solve_x_bat]


BATCH_RULES["custom_linear_solve"] = _custom_linear_solve_batch
