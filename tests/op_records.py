"""One table of op records drives the primitive sweeps (as JAX's ``lax_test_util``).

Each record names a ``lax`` function, its number of array operands, the dtypes
it accepts, the shapes to try, how to draw values, and the tolerance.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), BF16)
INTS = (np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.uint32))
SIGNED = (np.dtype(np.int32), np.dtype(np.int8))
BOOL = (np.dtype(np.bool_),)
SHAPES = ((), (3,), (3, 4), (2, 1, 4), (0, 3))


@dataclasses.dataclass(frozen=True, eq=False)
class OpRecord:
    name: str
    nargs: int
    dtypes: tuple
    values: str = "normal"      # normal | positive | unit | small_int | any_int | bool
    tol: float = 1e-5
    shapes: tuple = SHAPES
    special: bool = True        # mix NaN, +-inf, -0.0 into float inputs
    params: dict = dataclasses.field(default_factory=dict)

    @property
    def id(self):
        extra = "".join(f"_{k}{v}" for k, v in self.params.items())
        return self.name + extra


def rec(name, nargs, dtypes, **kw):
    return OpRecord(name, nargs, dtypes, **kw)


RECORDS = [
    rec("neg", 1, FLOATS + SIGNED), rec("sign", 1, FLOATS + SIGNED), rec("floor", 1, FLOATS),
    rec("ceil", 1, FLOATS), rec("round", 1, FLOATS), rec("round", 1, FLOATS, params={"rounding_method": 1}),
    rec("is_finite", 1, FLOATS), rec("exp", 1, FLOATS, tol=2e-5), rec("exp2", 1, FLOATS, tol=2e-5),
    rec("log", 1, FLOATS, values="positive"), rec("expm1", 1, FLOATS, tol=2e-5),
    rec("log1p", 1, FLOATS, values="positive"), rec("tanh", 1, FLOATS, tol=2e-5), rec("logistic", 1, FLOATS, tol=2e-5),
    rec("sin", 1, FLOATS, tol=2e-5), rec("cos", 1, FLOATS, tol=2e-5), rec("tan", 1, FLOATS, tol=1e-4),
    rec("asin", 1, FLOATS, values="unit", tol=2e-5), rec("acos", 1, FLOATS, values="unit", tol=2e-5),
    rec("atan", 1, FLOATS, tol=2e-5), rec("sinh", 1, FLOATS, tol=2e-5), rec("cosh", 1, FLOATS, tol=2e-5),
    rec("asinh", 1, FLOATS, tol=2e-5), rec("acosh", 1, FLOATS, values="positive", tol=2e-5),
    rec("atanh", 1, FLOATS, values="unit", tol=2e-5), rec("sqrt", 1, FLOATS, values="positive"),
    rec("rsqrt", 1, FLOATS, values="positive", tol=2e-5), rec("cbrt", 1, FLOATS, tol=2e-5),
    rec("abs", 1, FLOATS + SIGNED), rec("erf", 1, FLOATS, tol=2e-5), rec("erfc", 1, FLOATS, tol=1e-4),
    rec("erf_inv", 1, FLOATS, values="unit", tol=1e-4), rec("lgamma", 1, FLOATS, values="positive", tol=1e-4),
    rec("digamma", 1, FLOATS, values="positive", tol=1e-4), rec("square", 1, FLOATS + INTS),
    rec("integer_pow", 1, FLOATS + SIGNED, params={"y": 3}, values="small_int_or_normal", tol=1e-5),
    rec("integer_pow", 1, FLOATS, params={"y": -2}, values="positive", tol=1e-5),
    rec("bitwise_not", 1, INTS + BOOL), rec("population_count", 1, INTS),
    rec("clz", 1, INTS),
    rec("add", 2, FLOATS + INTS), rec("sub", 2, FLOATS + INTS), rec("mul", 2, FLOATS + INTS),
    rec("div", 2, FLOATS + INTS, values="nonzero"), rec("rem", 2, FLOATS + INTS, values="nonzero"),
    rec("pow", 2, FLOATS, values="positive", tol=1e-4), rec("max", 2, FLOATS + INTS + BOOL),
    rec("min", 2, FLOATS + INTS + BOOL), rec("atan2", 2, FLOATS, tol=2e-5), rec("nextafter", 2, (FLOATS[0],)),
    rec("eq", 2, FLOATS + INTS + BOOL), rec("ne", 2, FLOATS + INTS + BOOL), rec("lt", 2, FLOATS + INTS),
    rec("le", 2, FLOATS + INTS), rec("gt", 2, FLOATS + INTS), rec("ge", 2, FLOATS + INTS),
    rec("eq_to", 2, FLOATS + INTS + BOOL), rec("le_to", 2, FLOATS + INTS), rec("lt_to", 2, FLOATS + INTS),
    rec("bitwise_and", 2, INTS + BOOL), rec("bitwise_or", 2, INTS + BOOL), rec("bitwise_xor", 2, INTS + BOOL),
    rec("shift_left", 2, INTS, values="shift"), rec("shift_right_arithmetic", 2, INTS, values="shift"),
    rec("shift_right_logical", 2, INTS, values="shift"),
]


_SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0], np.float64)


def draw(record: OpRecord, dtype, shape, rng, position=0):
    """Deterministic operand values for ``record`` of ``dtype`` and ``shape``."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    kind = record.values
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if kind == "shift":
            hi = dtype.itemsize * 8 + 2 if position == 1 else 100
            return rng.integers(0, hi, shape).astype(dtype)
        if kind in ("small_int_or_normal",):
            return rng.integers(-5 if info.min < 0 else 0, 6, shape).astype(dtype)
        values = rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype)
        if kind == "nonzero" and position == 1:
            values = np.where(values == 0, 1, values).astype(dtype)
        if n >= 4 and kind != "nonzero":
            flat = values.reshape(-1)
            flat[:2] = [info.min, info.max]
        return values
    if kind == "positive":
        values = rng.uniform(0.1, 5.0, shape)
    elif kind == "unit":
        values = rng.uniform(-0.95, 0.95, shape)
    elif kind == "nonzero":
        values = rng.standard_normal(shape) * 3
        values = np.where(np.abs(values) < 0.1, 1.0, values)
    else:
        values = rng.standard_normal(shape) * 2
    values = np.asarray(values, np.float64)
    if record.special and n >= 6 and kind not in ("positive", "unit"):
        flat = values.reshape(-1)
        flat[:len(_SPECIALS)] = rng.permutation(_SPECIALS)
    return values.astype(dtype)
