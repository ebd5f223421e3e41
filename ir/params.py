"""Kinds of op parameters: how each is stored as an MLIR attribute and printed.

A kind converts a Python value (what a JAX primitive's ``params`` holds) to an
attribute and back, and formats it the way JAX's jaxpr printer does (``str``).
"""
from __future__ import annotations

import numpy as np

from . import avals
from .mlir import ir


class ParamKind:
    """Base: a value stored as one attribute; ``fmt`` is JAX's ``str(value)``."""

    stored = True

    def encode(self, value):
        raise NotImplementedError

    def decode(self, attr):
        raise NotImplementedError

    def fmt(self, value) -> str:
        return str(value)

    def check(self, value) -> bool:
        return True


class IntKind(ParamKind):
    def encode(self, value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))

    def decode(self, attr):
        return ir.IntegerAttr(attr).value

    def check(self, attr):
        return isinstance(attr, ir.IntegerAttr)


class BoolKind(ParamKind):
    def encode(self, value):
        return ir.BoolAttr.get(bool(value))

    def decode(self, attr):
        return ir.BoolAttr(attr).value

    def check(self, attr):
        return isinstance(attr, ir.BoolAttr)


class StrKind(ParamKind):
    def encode(self, value):
        return ir.StringAttr.get(str(value))

    def decode(self, attr):
        return ir.StringAttr(attr).value

    def check(self, attr):
        return isinstance(attr, ir.StringAttr)


class AxesKind(ParamKind):
    """A collective's axes: axis names (str) and positional axes (int) in one tuple, as JAX's ``psum`` takes
    them (vmap rewrites its own name into a positional axis). Prints as the tuple does: ``('i', 0)``."""

    def encode(self, value):
        attrs = []
        for v in value:
            if isinstance(v, str):
                attrs.append(ir.StringAttr.get(v))
            elif isinstance(v, (int, np.integer)):
                attrs.append(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v)))
            else:
                raise TypeError(f"irax's axis names are strings, got {v!r}")
        return ir.ArrayAttr.get(attrs)

    def decode(self, attr):
        return tuple(ir.StringAttr(a).value if isinstance(a, ir.StringAttr) else ir.IntegerAttr(a).value
                     for a in ir.ArrayAttr(attr))

    def check(self, attr):
        return isinstance(attr, ir.ArrayAttr) and all(isinstance(a, (ir.StringAttr, ir.IntegerAttr))
                                                      for a in ir.ArrayAttr(attr))


def _encode_ints(values):
    """``array<i64: ...>``; if some are NumPy ints, ``[1 : i64, 2 : si64]`` with those as ``si64``.

    JAX prints a NumPy int in a parameter as ``np.int64(2)`` (its rules compute some with NumPy), so
    which entries are NumPy ints is part of the text.
    """
    if not any(isinstance(v, np.integer) for v in values):
        return ir.DenseI64ArrayAttr.get([int(v) for v in values])
    python, numpy = ir.IntegerType.get_signless(64), ir.IntegerType.get_signed(64)
    return ir.ArrayAttr.get([ir.IntegerAttr.get(numpy if isinstance(v, np.integer) else python, int(v))
                             for v in values])


def _decode_ints(attr) -> list:
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return list(ir.DenseI64ArrayAttr(attr))
    values = [ir.IntegerAttr(a) for a in ir.ArrayAttr(attr)]
    return [np.int64(a.value) if ir.IntegerType(a.type).is_signed else a.value for a in values]


def _is_ints(attr) -> bool:
    return isinstance(attr, ir.DenseI64ArrayAttr) or (
        isinstance(attr, ir.ArrayAttr) and all(isinstance(a, ir.IntegerAttr) for a in ir.ArrayAttr(attr)))


class IntsKind(ParamKind):
    """A tuple of ints, stored as ``array<i64: ...>`` (see ``_encode_ints`` for NumPy ints)."""

    def encode(self, value):
        return _encode_ints(list(value))

    def decode(self, attr):
        return tuple(_decode_ints(attr))

    def check(self, attr):
        return _is_ints(attr)


class Optional(ParamKind):
    """``None`` or a value of the wrapped kind; ``None`` is an absent attribute."""

    def __init__(self, inner: ParamKind):
        self.inner = inner

    def encode(self, value):
        return None if value is None else self.inner.encode(value)

    def decode(self, attr):
        return None if attr is None else self.inner.decode(attr)

    def fmt(self, value):
        return "None" if value is None else self.inner.fmt(value)

    def check(self, attr):
        return self.inner.check(attr)


class DtypeKind(ParamKind):
    """A numpy dtype, stored as its MLIR element type; prints as ``float32``."""

    def encode(self, value):
        return ir.TypeAttr.get(ir.Type.parse(avals.mlir_element_name(value)))

    def decode(self, attr):
        return avals.dtype_from_mlir_name(str(ir.TypeAttr(attr).value))

    def fmt(self, value):
        return np.dtype(value).name

    def check(self, attr):
        return isinstance(attr, ir.TypeAttr)


class PairsKind(ParamKind):
    """A tuple of equal-length int tuples (e.g. padding configs), flattened."""

    def __init__(self, width: int):
        self.width = width

    def encode(self, value):
        return _encode_ints([v for row in value for v in row])

    def decode(self, attr):
        flat = _decode_ints(attr)
        w = self.width
        return tuple(tuple(flat[i:i + w]) for i in range(0, len(flat), w))

    def check(self, attr):
        return _is_ints(attr) and len(_decode_ints(attr)) % self.width == 0


class DotDimsKind(ParamKind):
    """``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``, printed with lists."""

    def encode(self, value):
        (lc, rc), (lb, rb) = value
        return ir.ArrayAttr.get([ir.DenseI64ArrayAttr.get([int(d) for d in dims]) for dims in (lc, rc, lb, rb)])

    def decode(self, attr):
        lc, rc, lb, rb = (tuple(ir.DenseI64ArrayAttr(a)) for a in ir.ArrayAttr(attr))
        return ((lc, rc), (lb, rb))

    def fmt(self, value):
        (lc, rc), (lb, rb) = value
        return str(((list(lc), list(rc)), (list(lb), list(rb))))

    def check(self, attr):
        return (isinstance(attr, ir.ArrayAttr) and len(ir.ArrayAttr(attr)) == 4
                and all(isinstance(a, ir.DenseI64ArrayAttr) for a in ir.ArrayAttr(attr)))


class SymbolKind(ParamKind):
    """A reference to another ``func.func`` of the module (nested jit bodies)."""

    def encode(self, value):
        return ir.FlatSymbolRefAttr.get(value)

    def decode(self, attr):
        return ir.FlatSymbolRefAttr(attr).value

    def check(self, attr):
        return isinstance(attr, ir.FlatSymbolRefAttr)


class ScalarKind(ParamKind):
    """A 0-d constant, stored as a dense elements attribute of its tensor type.

    A complex scalar is stored as ``[re, im]`` instead: the bindings cannot read
    a complex dense attribute back (the read raises, and in some paths aborts).
    """

    def encode(self, value):
        value = np.asarray(value)
        if value.dtype.kind == "c":
            part = ir.Type.parse(avals.mlir_element_name(value.real.dtype))
            return ir.ArrayAttr.get([ir.FloatAttr.get(part, float(value.real)),
                                     ir.FloatAttr.get(part, float(value.imag))])
        return dense_attr(value, ir.RankedTensorType.get([], ir.Type.parse(avals.mlir_element_name(value.dtype))))

    def decode(self, attr):
        if isinstance(attr, ir.ArrayAttr):
            re, im = (ir.FloatAttr(a) for a in attr)
            part = avals.dtype_from_mlir_name(str(re.type))
            return np.asarray(complex(re.value, im.value), np.result_type(part, np.complex64))
        attr = ir.DenseElementsAttr(attr)
        dtype = avals.dtype_from_mlir_name(str(ir.ShapedType(attr.type).element_type))
        splat = attr.get_splat_value()
        if isinstance(splat, ir.FloatAttr):
            return np.asarray(ir.FloatAttr(splat).value, dtype)
        if isinstance(splat, ir.IntegerAttr):
            return np.asarray(ir.IntegerAttr(splat).value).astype(dtype)
        return np.asarray(np.asarray(attr).reshape(()), dtype)

    def fmt(self, value):
        return str(np.asarray(value).item())

    def check(self, attr):
        if isinstance(attr, ir.ArrayAttr):
            return len(attr) == 2 and all(isinstance(a, ir.FloatAttr) for a in attr)
        return isinstance(attr, ir.DenseElementsAttr) and ir.ShapedType(ir.DenseElementsAttr(attr).type).rank == 0


def dense_attr(array: np.ndarray, tensor_type):
    """A dense elements attribute holding ``array`` (bfloat16 passes as its bits)."""
    array = np.ascontiguousarray(array)
    if array.dtype == avals.bfloat16:
        array = array.view(np.uint16)
    return ir.DenseElementsAttr.get(array, type=tensor_type)


class TokensKind(ParamKind):
    """A tuple of values irax keeps as the text JAX prints for them (``device_put``'s devices and copy semantics:
    ``CpuDevice(id=0)``, ``ArrayCopySemantics.REUSE_INPUT``); printed as the tuple of those, unquoted."""

    def encode(self, value):
        return ir.ArrayAttr.get([ir.StringAttr.get(str(v)) for v in value])

    def decode(self, attr):
        return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr))

    def fmt(self, value) -> str:
        return f"({value[0]},)" if len(value) == 1 else f"({', '.join(value)})"

    def check(self, attr):
        return isinstance(attr, ir.ArrayAttr) and all(isinstance(a, ir.StringAttr) for a in attr)


class PlatformsKind(ParamKind):
    """Platform names per branch of ``lax.platform_dependent``: a tuple of name tuples, ``None`` for the default
    branch (``(('cpu', 'cuda'), None)``); ``None`` is a unit attribute."""

    def encode(self, value):
        return ir.ArrayAttr.get([ir.UnitAttr.get() if names is None else
                                 ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names]) for names in value])

    def decode(self, attr):
        return tuple(None if isinstance(a, ir.UnitAttr) else tuple(ir.StringAttr(n).value for n in ir.ArrayAttr(a))
                     for a in ir.ArrayAttr(attr))

    def check(self, attr):
        return isinstance(attr, ir.ArrayAttr) and all(isinstance(a, (ir.UnitAttr, ir.ArrayAttr)) for a in attr)


class Fixed(ParamKind):
    """A parameter JAX always prints with one value in irax (``sharding=None``)."""

    stored = False

    def __init__(self, value=None):
        self.value = value


INT = IntKind()
BOOL = BoolKind()
STR = StrKind()
INTS = IntsKind()
DTYPE = DtypeKind()
DOT_DIMS = DotDimsKind()
SYMBOL = SymbolKind()
SCALAR = ScalarKind()
NONE = Fixed(None)
TOKENS = TokensKind()
PLATFORMS = PlatformsKind()
AXES = AxesKind()
