"""Derivatives of ``custom_linear_solve``, as JAX's ``_custom_linear_solve_jvp`` and
``_linear_solve_transpose_rule``.

JVP: from ``A x = b``, ``∂x = A⁻¹ (∂b - ∂A x)``: one more solve with the same bodies, whose right-hand side takes
``matvec``'s tangent in its constants (its JVP body inlined, as JAX's ``_tangent_linear_map`` traces it); aux
outputs get no tangent. Partial evaluation stages that solve whole into the linear half, its constants becoming
residuals. Transpose: the cotangent of ``b`` is the solve of the transposed system (``vecmat`` with
``transpose_solve``).
"""
from __future__ import annotations

from irax.ir import solves as SV

from . import funcs
from .jvp import JVP_RULES, add_tangents, jvp_function
from .transpose import SYMBOLIC_ZERO_CTS, TRANSPOSE_RULES, is_undefined


def _flatten(groups):
    return [x for group in groups for x in group]


def _tangent_linear_map(b, name, x, params, params_dot):
    """``∂A x``: the tangent of the body ``name`` (``A x``) at ``x`` for tangents of its constants only."""
    func = funcs.lookup(b.module, name)
    nonzero = [False] * len(x) + [t is not None for t in params_dot]
    new, _ = jvp_function(b.module, func, nonzero, f"{name}_jvp", instantiate_outputs=True)
    outs = funcs.inline_body(new, [*x, *(t for t in params_dot if t is not None), *params], b.ip)
    new.erase()
    return outs[len(x):]


def _custom_linear_solve_jvp(b, primals, tangents, *, const_lengths, jaxprs):
    types = [r.type for r in b.op.results]
    x = b.emit("custom_linear_solve", primals, types, const_lengths=const_lengths, jaxprs=jaxprs)
    params, _ = SV.split_operands(primals, const_lengths)
    params_dot, b_dot = SV.split_operands(tangents, const_lengths)
    n_x = len(b_dot)
    rhs = b_dot
    if any(t is not None for t in params_dot[0]):
        matvec_tangents = _tangent_linear_map(b, SV.as_tuple(jaxprs)[0], x[:n_x], params[0], params_dot[0])
        rhs = [add_tangents(b, t, b.neg(m)) for t, m in zip(b_dot, matvec_tangents)]
    rhs = [b.zeros_like(x_i) if t is None else t for t, x_i in zip(rhs, x)]
    x_dot = b.emit("custom_linear_solve", _flatten(params) + rhs, types, const_lengths=const_lengths,
                   jaxprs=jaxprs)
    return x, x_dot[:n_x] + [None] * (len(x) - n_x)


def _linear_solve_transpose(b, cts, *operands, const_lengths, jaxprs):
    bodies = SV.as_tuple(jaxprs)
    if bodies[3] is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of "
                        "custom_linear_solve")
    params, b_args = SV.split_operands(operands, const_lengths)
    if any(is_undefined(x) for group in params for x in group):
        raise NotImplementedError("open an issue at https://github.com/google/jax !!")
    cts = cts if isinstance(cts, list) else [cts]
    if any(ct is not None for ct in cts[len(b_args):]):
        raise NotImplementedError("open an issue at https://github.com/google/jax !!")
    x_ct = [b.full(u.aval.shape, u.aval.dtype, 0) if ct is None else ct for ct, u in zip(cts, b_args)]
    t_bodies = SV.transposed(bodies)
    types = list(funcs.function_type(funcs.lookup(b.module, t_bodies[2])).results)
    ct_b = b.emit("custom_linear_solve", _flatten(SV.transposed(params)) + x_ct, types,
                  const_lengths=SV.transposed(const_lengths), jaxprs=SV.from_tuple(t_bodies))
    return [None] * sum(const_lengths) + ct_b[:len(b_args)]


JVP_RULES["custom_linear_solve"] = _custom_linear_solve_jvp
TRANSPOSE_RULES["custom_linear_solve"] = _linear_solve_transpose
SYMBOLIC_ZERO_CTS.add("custom_linear_solve")
