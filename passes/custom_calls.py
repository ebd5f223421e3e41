"""Derivative rules of the custom-derivative ops: the user's own rules, traced into functions of the module.

``custom_jvp_call``'s JVP is its ``jvp_callee`` inlined on the primals and
tangents. ``custom_vjp_call``'s JVP inlines ``fwd_callee`` (outputs and
residuals) and leaves a ``custom_lin`` of the tangents, whose transpose inlines
``bwd_callee``: so reverse mode runs the user's fwd, then their bwd, as in JAX.
"""
from __future__ import annotations

from irax.ir.jaxpr_view import num_consts
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs
from .jvp import JVP_RULES, instantiate
from .transpose import TRANSPOSE_RULES, is_undefined


def _split_args(module, callee, primals, tangents):
    func = funcs.lookup(module, callee)
    n_args = len(funcs.arguments(func))
    n_params = n_args - num_consts(func)
    if any(t is not None for t in tangents[n_params:]):
        raise NotImplementedError("a custom_jvp/custom_vjp function closes over a value being differentiated; pass "
                                  "it as an argument instead (or use closure_convert)")
    return n_args, n_params


def _custom_jvp_call_jvp(b, primals, tangents, *, name, callee, jvp, jvp_callee, symbolic_zeros):
    n_args, n_params = _split_args(b.module, callee, primals, tangents)
    ts = [instantiate(b, t, p) for t, p in zip(tangents[:n_params], primals[:n_params])]
    outs = funcs.inline_body(funcs.lookup(b.module, jvp_callee), primals[:n_params] + ts + primals[n_args:], b.ip)
    k = len(b.op.results)
    return outs[:k], outs[k:]


def _custom_vjp_call_jvp(b, primals, tangents, *, name, callee, fwd, fwd_callee, bwd, bwd_callee, symbolic_zeros):
    n_args, n_params = _split_args(b.module, callee, primals, tangents)
    fwd_func = funcs.lookup(b.module, fwd_callee)
    n_fwd_consts = num_consts(fwd_func)
    fwd_consts, bwd_consts = primals[n_args:n_args + n_fwd_consts], primals[n_args + n_fwd_consts:]
    outs = funcs.inline_body(fwd_func, primals[:n_params] + fwd_consts, b.ip)
    k = len(b.op.results)
    residuals = outs[k:] + bwd_consts
    ts = [instantiate(b, t, p) for t, p in zip(tangents[:n_params], primals[:n_params])]
    lin = ir.Operation.create("jaxpr.custom_lin", results=[r.type for r in b.op.results], operands=residuals + ts,
                              attributes=_encode("custom_lin", num_res=len(residuals), bwd=bwd, bwd_callee=bwd_callee),
                              loc=b.loc, ip=b.ip)
    return outs[:k], list(lin.results)


def _custom_lin_jvp(b, primals, tangents, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_transpose(b, cts, *operands, num_res, bwd, bwd_callee):
    """The user's bwd on the residuals and the output cotangents."""
    bwd_func = funcs.lookup(b.module, bwd_callee)
    n_consts = num_consts(bwd_func)
    residuals, consts = list(operands[:num_res - n_consts]), list(operands[num_res - n_consts:num_res])
    cts = cts if isinstance(cts, list) else [cts]
    grads = funcs.inline_body(bwd_func, residuals + cts + consts, b.ip)
    return [None] * num_res + [g if is_undefined(x) else None for g, x in zip(grads, operands[num_res:])]


def _encode(name, **params):
    from irax.ir.dialect import encode_params
    return encode_params(OPS[name], params)


JVP_RULES["custom_jvp_call"] = _custom_jvp_call_jvp
JVP_RULES["custom_vjp_call"] = _custom_vjp_call_jvp
JVP_RULES["custom_lin"] = _custom_lin_jvp
TRANSPOSE_RULES["custom_lin"] = _custom_lin_transpose
