"""``irax.passes``: IR-to-IR rewrites over the jaxpr dialect, and the lowering to StableHLO."""
from __future__ import annotations

from irax.ir.verify import verify_module

from . import (ad_control_flow, batch, custom_calls, guard_constant_reductions, jvp, linearize, protect_arguments,
               simplify, to_stablehlo, transpose)
from .registry import PASSES, register_pass, run_pipeline

register_pass("jaxpr-verify", "Checks every jaxpr op against its declaration in the op table")(verify_module)
register_pass("jaxpr-to-stablehlo", "Lowers every jaxpr op to StableHLO (one rule per primitive)")(
    to_stablehlo.lower_module)
register_pass("stablehlo-protect-arguments", "Copies the arguments IREE would sort or update in place (after "
              "donations are marked)")(protect_arguments.protect_arguments)

register_pass("stablehlo-guard-constant-reductions", "Reads a reduction's constant operands through a barrier (IREE "
              "miscompiles reductions of folded splats)")(guard_constant_reductions.guard_constant_reductions)

COMPILE_PIPELINE = ("builtin.module(jaxpr-inline,jaxpr-dce,jaxpr-cse,jaxpr-to-stablehlo,"
                    "stablehlo-guard-constant-reductions)")

__all__ = ["PASSES", "COMPILE_PIPELINE", "jvp", "linearize", "register_pass", "run_pipeline", "simplify",
           "to_stablehlo", "transpose"]
