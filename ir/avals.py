"""Abstract values (shape, dtype, weak type) and their MLIR tensor types.

The dialect works on builtin ``tensor<...>`` types; weak typing is a tracing-time
notion and lives only on the Python side (JAX does not print it either).
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)

_SHORT_NAMES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16", bfloat16: "bf16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128",
}
_FROM_SHORT = {v: k for k, v in _SHORT_NAMES.items()}

# MLIR element type spelling of each dtype (StableHLO's: signless for signed ints).
_MLIR_NAMES = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8", np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32", np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16", bfloat16: "bf16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
}
_FROM_MLIR = {v: k for k, v in _MLIR_NAMES.items()}

SUPPORTED_DTYPES = tuple(_SHORT_NAMES)


def short_dtype_name(dtype) -> str:
    """JAX's short spelling (``f32``, ``bf16``...) used in printed jaxprs."""
    return _SHORT_NAMES[np.dtype(dtype)]


def dtype_from_short_name(name: str) -> np.dtype:
    try:
        return _FROM_SHORT[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; expected one of {sorted(_FROM_SHORT)}") from None


def mlir_element_name(dtype) -> str:
    try:
        return _MLIR_NAMES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"dtype {np.dtype(dtype)} has no MLIR element type in irax") from None


def dtype_from_mlir_name(name: str) -> np.dtype:
    try:
        return _FROM_MLIR[name]
    except KeyError:
        raise TypeError(f"MLIR element type {name} has no irax dtype") from None


class ShapedArray:
    """The abstract value of an array: what tracing and the shape rules see."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self.update(weak_type=False) if self.weak_type else self

    def str_short(self, short_dtypes=True) -> str:
        name = _SHORT_NAMES[self.dtype] if short_dtypes else self.dtype.name
        return f"{name}[{','.join(map(str, self.shape))}]"

    def mlir_type_str(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{_MLIR_NAMES[self.dtype]}>"

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def __str__(self):
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


def parse_aval(spec: str) -> ShapedArray:
    """Parses JAX's shape notation, e.g. ``f32[10,3]`` or ``i32[]``."""
    spec = spec.strip()
    if not spec.endswith("]") or "[" not in spec:
        raise ValueError(f"bad shape spec {spec!r}: expected DTYPE[d0,d1,...] such as 'f32[10,3]'")
    name, dims = spec[:-1].split("[", 1)
    try:
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
    except ValueError:
        raise ValueError(f"bad shape spec {spec!r}: dimensions must be integers") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"bad shape spec {spec!r}: dimensions must be non-negative")
    return ShapedArray(shape, dtype_from_short_name(name))
