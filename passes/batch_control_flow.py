"""Batching rules of ``cond``, ``while`` and ``scan``: ports of JAX's ``_cond_batching_rule``,
``_while_loop_batching_rule`` and ``_scan_batching_rule``.

JAX's ``batch_jaxpr(jaxpr, in_batched, instantiate)`` is ``batch_function`` here, with batched
arguments at axis 0 and results where ``instantiate`` asks (``ZERO_IF_MAPPED`` where it does not).
Where JAX batches a body only to learn which of its results come out batched (the carry fixpoints),
the function built is erased again. Bodies take their constants last (``ir/control_flow.py``), so the
dims of an op's operands are put in a body's order before it is batched.
"""
from __future__ import annotations

import operator

from irax.ir import control_flow as CF
from irax.ir.dialect import encode_params
from irax.ir.jaxpr_view import num_consts
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs
from .batch import BATCH_RULES, ZERO_IF_MAPPED, batch_function
from .builder import aval


def _batch_body(b, name, in_dims, out_dims):
    func = funcs.lookup(b.module, name)
    return batch_function(b.module, func, list(in_dims), b.axis_size, f"{name}_batched", out_dims=list(out_dims),
                          axis_name=b.axis_name, memo=b.memo)


def _batched_outputs(b, name, in_batched, instantiate):
    """Which results of the body come out batched (JAX's ``batch_jaxpr(...)[1]``, the jaxpr discarded)."""
    func, dims = _batch_body(b, name, [0 if x else None for x in in_batched],
                             [0 if x else ZERO_IF_MAPPED for x in instantiate])
    func.erase()
    return [d is not None for d in dims]


def _emit(b, primitive, operands, result_types, params):
    op = ir.Operation.create(f"jaxpr.{primitive}", results=list(result_types), operands=list(operands),
                             attributes=encode_params(OPS[primitive], params), loc=b.loc, ip=b.ip)
    return list(op.results)


def _results(func):
    return list(funcs.function_type(func).results)


def _carry_fixpoint(b, name, const_bat, carry_bat, extra_bat, n_out_extra, order):
    """JAX's fixpoint of which carries are batched: batched from the start, or by the body's output.
    ``order(consts, carry, extra)`` lists the body's arguments in its order."""
    for _ in range(1 + len(carry_bat)):
        out = _batched_outputs(b, name, order(const_bat, carry_bat, extra_bat), carry_bat + [False] * n_out_extra)
        carry_out = out[:len(carry_bat)]
        if carry_out == carry_bat:
            return carry_bat, out[len(carry_bat):]
        carry_bat = list(map(operator.or_, carry_bat, carry_out))
    raise AssertionError("Fixpoint not reached")


# --- cond -----------------------------------------------------------------------------------------------

def _bcast_select_n(b, which, *cases):
    if len(aval(which).shape) != len(aval(cases[0]).shape):
        which = b.broadcast_in_dim(which, shape=aval(cases[0]).shape,
                                   broadcast_dimensions=tuple(range(len(aval(which).shape))))
    return b.select_n(which, *cases)


def _cond_batch(b, args, dims, *, branches, branches_platforms):
    index, *ops = args
    index_dim, *op_dims = dims
    n_consts = num_consts(funcs.lookup(b.module, branches[0]))
    n_out = len(b.op.results)
    if index_dim is not None:
        # JAX converts to a select of every branch's outputs, each branch run on its operands selected
        # against their stop_gradient (for reverse mode's sake, jax#1052), and its batched body inlined.
        index, *ops = (b.bdim_at_front(x, d) for x, d in zip(args, dims))
        branch_outs = []
        for i, name in enumerate(branches):
            func, _ = _batch_body(b, name, [0] * len(ops), [0] * n_out)
            predicate = b.eq(index, i)
            ops_ = [_bcast_select_n(b, predicate, b.stop_gradient(x), x) for x in ops]
            branch_outs.append(funcs.inline_body(func, CF.branch_operands(ops_, n_consts), b.ip))
            func.erase()
        return [_bcast_select_n(b, index, *outs) for outs in zip(*branch_outs)], [0] * n_out
    ops_bat = [d is not None for d in op_dims]
    ops = [b.moveaxis(x, d, 0) if d is not None else x for x, d in zip(ops, op_dims)]
    in_batched = CF.branch_operands(ops_bat, n_consts)
    out_bat = [any(bat) for bat in zip(*(_batched_outputs(b, name, in_batched, [False] * n_out)
                                        for name in branches))]
    new = [_batch_body(b, name, [0 if x else None for x in in_batched],
                       [0 if x else ZERO_IF_MAPPED for x in out_bat])[0] for name in branches]
    outs = _emit(b, "cond", [index, *ops], _results(new[0]), {"branches": tuple(map(funcs.name_of, new)),
                                                            "branches_platforms": branches_platforms})
    return outs, [0 if x else None for x in out_bat]


BATCH_RULES["cond"] = _cond_batch


# --- scan -----------------------------------------------------------------------------------------------

def _scan_batch(b, args, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    num_ys = len(b.op.results) - num_carry
    batched = [d is not None for d in dims]
    const_bat, init_bat, xs_bat = CF.split_scan(batched, num_consts, num_carry)
    carry_bat, ys_bat = _carry_fixpoint(b, jaxpr, const_bat, init_bat, xs_bat, num_ys,
                                        lambda c, carry, xs: carry + xs + c)
    consts, init, xs = CF.split_scan(args, num_consts, num_carry)
    const_dims, init_dims, xs_dims = CF.split_scan(dims, num_consts, num_carry)
    new_consts = [b.moveaxis(x, d, 0) if d is not None else x for x, d in zip(consts, const_dims)]
    new_init = [b.broadcast(x, b.axis_size, 0) if now and not was else b.moveaxis(x, d, 0) if now else x
                for x, d, was, now in zip(init, init_dims, init_bat, carry_bat)]
    new_xs = [b.moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, xs_dims)]
    in_dims = [0 if x else None for x in carry_bat + xs_bat + const_bat]
    body, _ = _batch_body(b, jaxpr, in_dims, [0 if x else ZERO_IF_MAPPED for x in carry_bat + [False] * num_ys])
    types = _results(body)
    types = types[:num_carry] + [CF.stacked_type(t, length) for t in types[num_carry:]]
    outs = _emit(b, "scan", new_consts + new_init + new_xs, types,
                 {"jaxpr": funcs.name_of(body), "length": length, "num_carry": num_carry, "num_consts": num_consts,
                  "reverse": reverse, "unroll": unroll})
    return outs, [0 if x else None for x in carry_bat] + [1 if x else None for x in ys_bat]


BATCH_RULES["scan"] = _scan_batch


# --- while ----------------------------------------------------------------------------------------------

def _while_batch(b, args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    batched = [d is not None for d in dims]
    cconst_bat, bconst_bat, init_bat = CF.split_while(batched, cond_nconsts, body_nconsts)
    cconsts, bconsts, init = CF.split_while(args, cond_nconsts, body_nconsts)
    cconst_dims, bconst_dims, init_dims = CF.split_while(dims, cond_nconsts, body_nconsts)
    carry_bat, _ = _carry_fixpoint(b, body_jaxpr, bconst_bat, init_bat, [], 0, lambda c, carry, _: carry + c)
    (pred_bat,) = _batched_outputs(b, cond_jaxpr, carry_bat + cconst_bat, [False])
    if pred_bat:
        # Every carry is then batched: the loop runs while any example's predicate holds, and an example
        # whose predicate is false keeps its carry (the op's semantics for a predicate of shape [n]).
        carry_dims = [0] * len(carry_bat)
        cond_out = [0]
    else:
        # The predicate, unbatched here, may be batched by an enclosing vmap: its shape must stay a prefix
        # of every carry's.
        cond_rank = len(ir.RankedTensorType(_results(funcs.lookup(b.module, cond_jaxpr))[0]).shape)
        carry_dims = [cond_rank if x else None for x in carry_bat]
        cond_out = [None]
    body, _ = _batch_body(b, body_jaxpr, carry_dims + bconst_dims, carry_dims)
    cond, _ = _batch_body(b, cond_jaxpr, carry_dims + cconst_dims, cond_out)
    new_init = []
    for x, old, new in zip(init, init_dims, carry_dims):
        if old is None and new is not None:
            new_init.append(b.broadcast(x, b.axis_size, new))
        elif old is None:
            new_init.append(x)
        else:
            new_init.append(b.moveaxis(x, old, new))
    outs = _emit(b, "while", cconsts + bconsts + new_init, _results(body),
                 {"cond_jaxpr": funcs.name_of(cond), "body_jaxpr": funcs.name_of(body), "cond_nconsts": cond_nconsts,
                  "body_nconsts": body_nconsts})
    return outs, carry_dims


BATCH_RULES["while"] = _while_batch


def _reduce_batch(b, args, dims, *, computation, dimensions, jaxpr):
    """JAX's ``_reduce_batch_rule``: the operands' batch axes to the front, reduced dimensions shifted past it;
    batched init values are not supported, as in JAX."""
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("lax.reduce with batched init values")
    operands = [b.bdim_at_front(x, d) for x, d in zip(args[:n], dims[:n])]
    dimensions = tuple(d + 1 for d in dimensions)
    types = [CF.reduced_type(x.type, dimensions) for x in operands]
    outs = b.emit("reduce", operands + list(args[n:]), types, computation=computation, dimensions=dimensions,
                  jaxpr=jaxpr)
    return outs, [0] * n


BATCH_RULES["reduce"] = _reduce_batch
