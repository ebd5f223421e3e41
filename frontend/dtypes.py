"""``irax.dtypes``: JAX's dtypes, canonicalization (x32 by default) and type promotion.

Promotion is JAX's lattice: Python scalars (and weakly typed arrays) are the
weak nodes ``int``/``float``/``complex``, which give way to any array dtype of
their kind; the least upper bound of the operands' nodes is the result.
Results are memoised per x64 mode, since promotion runs on every traced op.
"""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from irax.ir.avals import SUPPORTED_DTYPES, short_dtype_name  # noqa: F401
from irax.ir.shapes import issubdtype as _lattice_issubdtype, remembered

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
float0 = np.dtype([("float0", np.void, 0)])

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
# The weak nodes of the lattice: Python scalars and weakly typed arrays of each kind.
I_, F_, C_ = "int*", "float*", "complex*"
_WEAK = {"i": I_, "f": F_, "c": C_}
_WEAK_NODES = (I_, F_, C_)

# The promotion lattice: each node and the nodes immediately above it.
_LATTICE = {
    bool_: [I_], I_: [uint8, int8], uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64],
    uint64: [F_], int8: [int16], int16: [int32], int32: [int64], int64: [F_],
    F_: [bfloat16, float16, C_], bfloat16: [float32], float16: [float32], float32: [float64, complex64],
    float64: [complex128], C_: [complex64], complex64: [complex128], complex128: [],
}


def _upper_bounds(x64: bool):
    lattice = dict(_LATTICE)
    if not x64:
        lattice[uint32] = [int32, uint64]
    bounds = {}
    for node in lattice:
        seen, stack = set(), [node]
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(lattice[n])
        bounds[node] = seen
    return bounds


_BOUNDS = {False: _upper_bounds(False), True: _upper_bounds(True)}


class TypePromotionError(ValueError):
    """Raised when no implicit promotion path exists."""


def canonicalize_dtype(dtype) -> np.dtype:
    """The dtype irax uses for ``dtype``: 64-bit types become 32-bit unless x64 is on (remembered for each
    dtype, as every eager operation on a NumPy array asks)."""
    x64 = bool(config.jax_enable_x64)
    try:
        return _CANONICAL[x64, dtype]
    except (KeyError, TypeError):
        pass
    dt = _as_dtype(dtype)
    if not x64:
        dt = _TO_32.get(dt, dt)
    if isinstance(dtype, np.dtype):
        _CANONICAL[x64, dtype] = dt
    return dt


_CANONICAL = {}


_SCALAR_DEFAULTS = {bool: bool_, int: int64, float: float64, complex: complex128}


def _as_dtype(dtype) -> np.dtype:
    if isinstance(dtype, type) and dtype in _SCALAR_DEFAULTS:
        return _SCALAR_DEFAULTS[dtype]
    if hasattr(dtype, "dtype") and not isinstance(dtype, (np.dtype, type)):
        dtype = dtype.dtype
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"Cannot interpret '{dtype!r}' as a data type") from None
    if dt not in SUPPORTED_DTYPES and dt != float0:
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dt}")
    return dt


def default_int_dtype():
    return int64 if config.jax_enable_x64 else int32


def default_uint_dtype():
    return uint64 if config.jax_enable_x64 else uint32


def default_float_dtype():
    return float64 if config.jax_enable_x64 else float32


def default_complex_dtype():
    return complex128 if config.jax_enable_x64 else complex64


def _defaults():
    return {"i": default_int_dtype(), "u": default_uint_dtype(), "f": default_float_dtype(),
            "c": default_complex_dtype(), "b": bool_}


_PY_SCALARS = (bool, int, float, complex)


def is_python_scalar(x) -> bool:
    return type(x) in _PY_SCALARS


def is_weakly_typed(x) -> bool:
    """Python scalars (not bools) and arrays marked weak are weakly typed."""
    t = type(x)
    if t in _PY_SCALARS:
        return t is not bool
    return bool(getattr(x, "weak_type", False))


def dtype(x, *, canonicalize: bool = False) -> np.dtype:
    """The dtype of a value or dtype-like (Python scalars give the default dtypes)."""
    t = type(x)
    if t in _PY_SCALARS:
        dt = _SCALAR_DEFAULTS[t]
    elif hasattr(x, "dtype") and not isinstance(x, type):
        dt = np.dtype(x.dtype)
    elif isinstance(x, (list, tuple)):
        dt = np.asarray(x).dtype
    else:
        dt = _as_dtype(x)
    return canonicalize_dtype(dt) if canonicalize else dt


def _node(dt: np.dtype, weak: bool):
    if weak and dt != bool_:
        return _WEAK["f" if dt == bfloat16 else dt.kind if dt.kind in "fc" else "i"]
    return dt


@functools.lru_cache(maxsize=4096)
def _promote(x64: bool, nodes: frozenset):
    bounds = _BOUNDS[x64]
    common = set.intersection(*(bounds[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common.issubset(bounds[c])}
    if len(least) != 1:
        names = tuple(str(n) for n in nodes)
        raise TypePromotionError(f"Input dtypes {names} have no available implicit dtype promotion path. "
                                 "Try explicitly casting inputs to the desired output type.")
    return least.pop()


def _dtype_and_weak(x):
    t = type(x)
    if t in _PY_SCALARS:
        return canonicalize_dtype(_SCALAR_DEFAULTS[t]), t is not bool
    if isinstance(x, type) and x in _PY_SCALARS:
        return canonicalize_dtype(_SCALAR_DEFAULTS[x]), x is not bool
    weak = bool(getattr(x, "weak_type", False))
    return canonicalize_dtype(dtype(x)), weak


def _cache_key(x):
    t = type(x)
    if t in _PY_SCALARS:
        return t
    dt = getattr(x, "dtype", None)
    if dt is not None and not isinstance(x, type):
        return dt, getattr(x, "weak_type", False)
    return x


_result_cache: dict = {}


def result_type(*args, return_weak_type_flag: bool = False):
    """JAX's promoted dtype of ``args`` (values or dtypes); optionally its weak-type flag."""
    try:
        key = (config.jax_enable_x64, *map(_cache_key, args))
        hit = _result_cache.get(key)
    except TypeError:
        key = hit = None
    if hit is None:
        hit = _result_type(args)
        if key is not None:
            _result_cache[key] = hit
    return hit if return_weak_type_flag else hit[0]


def _result_type(args):
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = [_dtype_and_weak(default_float_dtype() if a is None else a) for a in args]
    x64 = config.jax_enable_x64
    if len(pairs) == 1:
        dt, weak = pairs[0]
    elif all(w for _, w in pairs):
        dt, weak = _lattice_dtype(_promote(x64, frozenset(d for d, _ in pairs))), True
    else:
        node = _promote(x64, frozenset(_node(d, w) for d, w in pairs))
        weak = isinstance(node, str)
        dt = _lattice_dtype(node)
    weak = weak and dt != bool_
    if weak:
        dt = _defaults()["f" if dt == bfloat16 else dt.kind]
    return canonicalize_dtype(dt), weak


def _lattice_dtype(node) -> np.dtype:
    if node == I_:
        return default_int_dtype()
    if node == F_:
        return default_float_dtype()
    if node == C_:
        return default_complex_dtype()
    return node


def promote_types(a, b) -> np.dtype:
    """The dtype two dtypes promote to, as ``jnp.promote_types`` (Python types count as weak)."""
    nodes = frozenset(_node(_as_dtype(t), isinstance(t, type) and t in (int, float, complex)) for t in (a, b))
    node = _promote(config.jax_enable_x64, nodes)
    return {I_: int64, F_: float64, C_: complex128}.get(node, node) if isinstance(node, str) else node


class extended(np.generic):
    """The abstract class of the dtypes NumPy does not know, as JAX's (typed PRNG keys' dtype is under it)."""


class prng_key(extended):
    """The class of typed PRNG keys' dtypes, as JAX's."""


def _extended_class(a):
    """``a``'s class under ``extended`` when ``a`` is one (a key dtype or the classes themselves), else None."""
    if isinstance(a, type):
        return a if issubclass(a, extended) else None
    kind = getattr(a, "type", None)
    return kind if not isinstance(a, np.dtype) and isinstance(kind, type) and issubclass(kind, extended) else None


@remembered
def issubdtype(a, b) -> bool:
    """``np.issubdtype`` that knows bfloat16 is a float and typed keys' dtypes are ``prng_key``s."""
    if a is None:
        return False
    if _extended_class(a) is not None:
        return a == b or (isinstance(b, type) and issubclass(_extended_class(a), b))
    if _extended_class(b) is not None:
        return False
    a = np.dtype(a) if not (isinstance(a, type) and issubclass(a, np.generic) and a in (
        np.floating, np.integer, np.inexact, np.number)) else a
    if isinstance(b, type) and issubclass(b, np.generic) and b in (np.floating, np.inexact, np.number, np.generic):
        return _lattice_issubdtype(np.dtype(a), b)
    return np.issubdtype(a, b)


def isdtype(dtype_, kind) -> bool:
    """The array API's ``isdtype``."""
    dt = np.dtype(dtype_)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if (k == "bool" and dt == bool_) or (k == "signed integer" and dt.kind == "i") or \
                    (k == "unsigned integer" and dt.kind == "u") or (k == "integral" and dt.kind in "iu") or \
                    (k == "real floating" and (dt.kind == "f" or dt == bfloat16)) or \
                    (k == "complex floating" and dt.kind == "c") or \
                    (k == "numeric" and dt != bool_):
                return True
        elif dt == np.dtype(k):
            return True
    return False


def to_inexact_dtype(dt) -> np.dtype:
    """Integers and bools become the default float; floats stay as they are."""
    dt = np.dtype(dt)
    return dt if dt.kind in "fc" or dt == bfloat16 else default_float_dtype()


def finfo(dt):
    return ml_dtypes.finfo(np.dtype(dt))


def iinfo(dt):
    return ml_dtypes.iinfo(np.dtype(dt))


def check_int_range(value: int, dt) -> None:
    """JAX's OverflowError for Python ints that do not fit the target integer dtype."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python int {value} too large to convert to {dt.name}")


def scalar_type_of(x):
    dt = dtype(x)
    if dt == bool_:
        return bool
    if dt.kind in "iu":
        return int
    if dt.kind == "c":
        return complex
    return float


def itemsize_bits(dtype) -> int:
    """Bits per element (bool takes a byte), as JAX's."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    if _extended_class(dtype) is None:
        if np.dtype(dtype) == np.dtype(bool):
            return 8
        if issubdtype(dtype, np.integer):
            return iinfo(dtype).bits
        if issubdtype(dtype, np.floating):
            return finfo(dtype).bits
        if issubdtype(dtype, np.complexfloating):
            return 2 * finfo(dtype).bits
    raise ValueError(f"unexpected input: {dtype=}")
