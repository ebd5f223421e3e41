"""Python-side registration of the ``jaxpr`` dialect, derived from the op table.

The bundled MLIR has no IRDL, so ``jaxpr.*`` ops are unregistered in C++; an
OpView class per op makes ``block.operations[i]`` come back typed, and gives
each op its params as Python values.
"""
from __future__ import annotations

import functools

import numpy as np

from . import avals as A
from .mlir import ir
from .ops import OPS, OpDef

_registered = False
_DIALECT_NAMESPACES = ("jaxpr", "stablehlo", "chlo", "builtin", "func")


def register_dialect():
    global _registered
    if _registered:
        return
    from iree.compiler._mlir_libs import _mlir as cext

    @cext.register_dialect
    class JaxprDialect(ir.Dialect):
        DIALECT_NAMESPACE = "jaxpr"

    for opdef in OPS.values():
        cext.register_operation(JaxprDialect)(_opview_class(opdef))
    _mark_dialect_module_loaded(cext)
    _registered = True


def _mark_dialect_module_loaded(cext):
    """Each time the bindings wrap an op they import its dialect's Python module (``<prefix>.<namespace>`` for
    each search prefix) unless one was found before. There is none for jaxpr, stablehlo or chlo, and the failed
    imports searched the file system on every op (50-80 us each, most of a pass's time); this module stands in
    for the three, under a prefix of irax's own searched first, and for builtin and func, whose modules irax does
    not use (see ``mlir.func_op``)."""
    import sys
    cext.globals.dialect_search_modules = [__name__, *cext.globals.dialect_search_modules]
    for namespace in _DIALECT_NAMESPACES:
        sys.modules.setdefault(f"{__name__}.{namespace}", sys.modules[__name__])


def _opview_class(opdef: OpDef):
    def params(self):
        return decode_params(opdef, self.operation)

    name = "".join(part.capitalize() for part in opdef.name.split("_")) + "Op"
    return type(name, (ir.OpView,), {
        "OPERATION_NAME": opdef.mlir_name, "_ODS_REGIONS": (0, True),
        "opdef": opdef, "params": property(params), "__doc__": opdef.doc})


def encode_params(opdef: OpDef, params: dict) -> dict:
    attrs = {}
    for p in opdef.params:
        if p.kind.stored:
            attr = p.kind.encode(params[p.name])
            if attr is not None:
                attrs[p.name] = attr
    return attrs


def decode_params(opdef: OpDef, op) -> dict:
    attrs = op.attributes
    out = {}
    for p in opdef.params:
        if not p.kind.stored:
            out[p.name] = p.kind.value
        else:
            out[p.name] = p.kind.decode(attrs[p.name] if p.name in attrs else None)
    return out


@functools.lru_cache(maxsize=4096)
def tensor_type(shape: tuple, dtype: np.dtype):
    element = ir.Type.parse(A.mlir_element_name(dtype))
    return ir.RankedTensorType.get(list(shape), element)


_avals_by_type: dict = {}


def aval_of_type(t) -> A.ShapedArray:
    """The ShapedArray of an MLIR ranked tensor type (raises TypeError otherwise).

    Keyed by the type itself: types are uniqued in irax's one long-lived context, so this is a pointer hash.
    """
    aval = _avals_by_type.get(t)
    if aval is None:
        if not isinstance(t, ir.RankedTensorType):
            raise TypeError(f"expected a ranked tensor type, got {t}")
        aval = _avals_by_type[t] = A.ShapedArray(t.shape, A.dtype_from_mlir_name(str(t.element_type)))
    return aval


def tensor_type_of(aval: A.ShapedArray):
    return tensor_type(aval.shape, aval.dtype)
