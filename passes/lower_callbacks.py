"""Lowering of the host callbacks, and of ``eig`` and ``schur`` (JAX's CPU ones are LAPACK on the host too): a
``func.call`` of a function the program imports from the ``irax_host`` module (``irax.runtime.host_callbacks``),
declared once per call site as ``irax_host.callback_<i>``.

The declaration carries the Python callable's key while the module is lowered; ``take_host_callbacks`` removes it
and returns the callables in import order, so that the compiled text, and the compile cache's key with it, is the
same in every process.
"""
from __future__ import annotations

import functools

from irax.backends.numpy_eig import eig
from irax.backends.numpy_schur import schur
from irax.ir.callbacks import CALLBACK_OPS, checked_call, object_key, object_of, print_callback
from irax.ir.dialect import aval_of_type
from irax.ir.mlir import func_op, ir, module_body
from irax.runtime.host_callbacks import MODULE_NAME, import_name

from .to_stablehlo import lowering

_KEY_ATTR = "irax.host_callback"


@lowering(*CALLBACK_OPS)
def _callback(ctx, *operands, **params):
    if ctx.op.name == "jaxpr.debug_print":
        return host_call(ctx, print_callback(params), operands)
    return host_call(ctx, functools.partial(checked_call, params["callback"], params.get("result_avals", ())),
                     operands)


@lowering("eig")
def _eig(ctx, x, **params):
    """LAPACK's geev on the host, as JAX's CPU eig (IREE has no nonsymmetric eigensolver)."""
    return host_call(ctx, functools.partial(eig, **params), [x])


@lowering("schur")
def _schur(ctx, x, **params):
    """LAPACK's gees on the host, as JAX's CPU schur; its sorting is refused when lowered, as JAX refuses it."""
    if params["sort_eig_vals"]:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    return host_call(ctx, functools.partial(schur, **params), [x])


def host_call(ctx, callback, operands) -> list:
    """A call of ``callback`` (NumPy arrays in, a list of them out) on the host, for the op being lowered."""
    module = ctx.op.operation.parent.parent
    result_types = [r.type for r in ctx.op.results]
    name = _declare(module, callback, [v.type for v in operands], result_types, ctx.loc)
    call = ctx.emit("func.call", operands, result_types, {"callee": ir.FlatSymbolRefAttr.get(name)})
    return list(call.results)


def _declare(module, callback, operand_types, result_types, loc) -> str:
    body = module.regions[0].blocks[0]
    index = sum(1 for op in body.operations if _KEY_ATTR in op.attributes)
    name = f"{MODULE_NAME}.{import_name(index)}"
    with loc:
        decl, _ = func_op(name, operand_types, result_types, ip=ir.InsertionPoint.at_block_begin(body),
                          declaration=True)
    decl.attributes["sym_visibility"] = ir.StringAttr.get("private")
    decl.attributes[_KEY_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), object_key(callback))
    return name


def take_host_callbacks(module) -> list:
    """``(callable, operand avals, result avals)`` of each import, in import order; the keys are removed."""
    found = []
    for op in module_body(module).operations:
        if _KEY_ATTR not in op.attributes:
            continue
        index = int(ir.StringAttr(op.attributes["sym_name"]).value.rsplit("_", 1)[1])
        fn_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        found.append((index, object_of(ir.IntegerAttr(op.attributes[_KEY_ATTR]).value),
                      [aval_of_type(t) for t in fn_type.inputs], [aval_of_type(t) for t in fn_type.results]))
        del op.attributes[_KEY_ATTR]
    return [entry[1:] for entry in sorted(found, key=lambda entry: entry[0])]
