"""Lowering of ``custom_linear_solve``: a call of its solve body (JAX lowers the op as its impl, the solve); the
other bodies serve only its derivatives."""
from __future__ import annotations

from irax.ir import solves as SV

from .lower_control_flow import _call
from .to_stablehlo import lowering


@lowering("custom_linear_solve")
def _custom_linear_solve(ctx, *operands, const_lengths, jaxprs):
    consts, b = SV.split_operands(operands, const_lengths)
    return _call(ctx.emit, ctx.symbols, SV.as_tuple(jaxprs)[2], b + consts[2])
