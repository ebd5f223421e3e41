"""``irax.lax``: thin wrappers that bind one primitive each, with JAX's signatures."""
from __future__ import annotations

import builtins
import enum
import operator

import numpy as np

from irax import dtypes as _dtypes
from irax.array import Array
from irax.core import Tracer, bind1
from irax.ir.avals import ShapedArray
from irax.ir.convolution import canonicalize_precision
from irax.ir.ops import PRIMITIVES

from ._scalars import as_operand, scalar_like


class RoundingMethod(enum.IntEnum):
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1

    def __str__(self):
        return str(int(self))


class Precision(enum.Enum):
    """A matmul's precision, as ``jax.lax.Precision`` (also made from its string names: ``Precision('highest')``)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        from irax.ir.convolution import _PRECISION_STRINGS
        name = _PRECISION_STRINGS.get(value) if isinstance(value, str) else None
        return None if name is None else cls[name]

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


def _unop(name):
    def fn(x, **kwargs):
        return bind1(name, as_operand(x))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{name}`` primitive)."
    return fn


def _binop(name):
    def fn(x, y):
        if type(x) in _PY_SCALARS or type(y) in _PY_SCALARS:
            x, y = _match_scalars(x, y)
        return bind1(name, x, y)
    fn.__name__ = fn.__qualname__ = name  # printed as JAX prints lax.add, e.g. as a reduce's computation
    fn.__doc__ = f"Elementwise ``{name}`` of operands of one dtype (the ``{name}`` primitive)."
    return fn


def _match_scalars(*args):
    """Python scalars take the dtype of the array operands, weakly (as lax does)."""
    ref = next((a for a in args if type(a) not in _PY_SCALARS), None)
    if ref is None:
        return tuple(as_operand(a) for a in args)
    dtype = _dtypes.dtype(ref)
    return tuple(scalar_like(a, dtype) if type(a) in _PY_SCALARS else a for a in args)


_PY_SCALARS = (bool, int, float, builtins.complex)


for _name in ("neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "expm1", "log1p", "tanh",
              "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
              "sqrt", "rsqrt", "cbrt", "abs", "erf", "erfc", "erf_inv", "lgamma", "digamma", "square",
              "population_count", "clz", "real", "imag"):
    globals()[_name] = _unop(_name)
bitwise_not = _unop("not")

for _name in ("add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "polygamma", "eq", "ne",
              "lt", "le", "gt", "ge", "shift_left", "shift_right_arithmetic", "shift_right_logical", "complex"):
    globals()[_name] = _binop(_name)
bitwise_and, bitwise_or, bitwise_xor = _binop("and"), _binop("or"), _binop("xor")


def conj(x):
    x = as_operand(x)
    return bind1("conj", x, input_dtype=x.dtype)


def stop_gradient(x):
    """Identity whose derivative is zero; maps over pytrees as JAX's does."""
    from irax import tree_util
    return tree_util.tree_map(lambda leaf: bind1("stop_gradient", as_operand(leaf)), x)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    return bind1("round", as_operand(x), rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    return bind1("integer_pow", as_operand(x), y=operator.index(y))


def reciprocal(x):
    return integer_pow(x, -1)


def select_n(which, *cases):
    return bind1("select_n", as_operand(which), *_match_scalars(*cases))


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    min, x, max = _match_scalars(min, x, max)
    return bind1("clamp", min, x, max)


def convert_element_type(operand, new_dtype):
    new_dtype = _dtypes.canonicalize_dtype(new_dtype)
    return _convert(operand, new_dtype, weak_type=False)


def _convert(operand, new_dtype, weak_type):
    """JAX's ``_convert_element_type``: Python and NumPy scalars convert on the host
    (becoming literals under a trace); arrays and tracers bind the primitive."""
    if type(operand) in _PY_SCALARS or isinstance(operand, np.generic):
        value = operand.item() if isinstance(operand, np.generic) else operand
        return scalar_like(value, new_dtype, weak_type)
    operand = as_operand(operand)
    if operand.dtype == new_dtype and operand.weak_type == weak_type:
        return operand
    return bind1("convert_element_type", operand, new_dtype=np.dtype(new_dtype), weak_type=bool(weak_type))


def bitcast_convert_type(operand, new_dtype):
    return bind1("bitcast_convert_type", as_operand(operand), new_dtype=_dtypes.canonicalize_dtype(new_dtype))


def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    operand = as_operand(operand)
    shape, dims = tuple(builtins.map(operator.index, shape)), tuple(builtins.map(operator.index, broadcast_dimensions))
    if operand.shape == shape and dims == tuple(range(len(shape))) and not _records_identities():
        return operand
    return bind1("broadcast_in_dim", operand, shape=shape, broadcast_dimensions=dims)


def _records_identities() -> bool:
    """Whether an identity broadcast is recorded: JAX's ``linear_transpose`` traces without the forwarding that
    drops it elsewhere, so its transpose (a ``reduce_sum`` of no axes) shows in the transposed function."""
    from irax.core import current_trace
    return getattr(current_trace(), "purpose", None) == "linear_transpose"


def broadcast(operand, sizes, out_sharding=None):
    operand = as_operand(operand)
    sizes = tuple(sizes)
    nd = len(sizes)
    return broadcast_in_dim(operand, sizes + tuple(operand.shape), tuple(range(nd, nd + operand.ndim)))


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    operand = as_operand(operand)
    new_sizes = tuple(builtins.map(operator.index, new_sizes))
    dims = None if dimensions is None else tuple(builtins.map(operator.index, dimensions))
    if dims == tuple(range(operand.ndim)):
        dims = None
    if operand.shape and operand.shape == new_sizes and dims is None:
        return operand
    return bind1("reshape", operand, new_sizes=new_sizes, dimensions=dims)


def squeeze(array, dimensions):
    array = as_operand(array)
    dims = tuple(sorted(_canonical_axis(d, array.ndim) for d in dimensions))
    if not dims:
        return array
    return bind1("squeeze", array, dimensions=dims)


def expand_dims(array, dimensions):
    array = as_operand(array)
    ndim = array.ndim + len(dimensions)
    dims = sorted(_canonical_axis(d, ndim) for d in dimensions)
    shape = list(array.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(ndim) if i not in dims]
    return broadcast_in_dim(array, shape, kept)


def transpose(operand, permutation):
    operand = as_operand(operand)
    permutation = tuple(builtins.map(operator.index, permutation))
    if permutation == tuple(range(operand.ndim)):
        return operand
    return bind1("transpose", operand, permutation=permutation)


def rev(operand, dimensions):
    return bind1("rev", as_operand(operand), dimensions=tuple(builtins.map(operator.index, dimensions)))


def pad(operand, padding_value, padding_config):
    operand, padding_value = _match_scalars(operand, padding_value)
    config = tuple(tuple(builtins.map(operator.index, c)) for c in padding_config)
    return bind1("pad", operand, padding_value, padding_config=config)


def concatenate(operands, dimension):
    if len(operands) == 1 and isinstance(operands[0], (Array, Tracer)):
        return operands[0]  # as JAX's: one irax array (traced or not) is its own concatenation
    operands = [as_operand(o) for o in operands]
    return bind1("concatenate", *operands, dimension=operator.index(dimension))


def split(operand, sizes, axis=0):
    """Consecutive pieces of ``operand`` of the given ``sizes`` along ``axis``."""
    operand = as_operand(operand)
    from irax.core import bind
    return bind("split", operand, sizes=tuple(sizes), axis=_canonical_axis(axis, operand.ndim))


def stack(operands, axis=0):
    """Joins equal-shaped arrays along a new axis."""
    return bind1("stack", *[as_operand(o) for o in operands], axis=operator.index(axis))


def slice(operand, start_indices, limit_indices, strides=None):
    operand = as_operand(operand)
    start = tuple(builtins.map(operator.index, start_indices))
    limit = tuple(builtins.map(operator.index, limit_indices))
    strides = None if strides is None else tuple(builtins.map(operator.index, strides))
    return bind1("slice", operand, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    operand = as_operand(operand)
    axis = _canonical_axis(axis, operand.ndim)
    start = [0] * operand.ndim
    limit = list(operand.shape)
    strides = [1] * operand.ndim
    size = operand.shape[axis]
    start_index = 0 if start_index is None else operator.index(start_index)
    limit_index = size if limit_index is None else operator.index(limit_index)
    start[axis] = start_index + size if start_index < 0 else start_index
    limit[axis] = limit_index + size if limit_index < 0 else limit_index
    strides[axis] = operator.index(stride)
    return slice(operand, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    operand = as_operand(operand)
    axis = _canonical_axis(axis, operand.ndim)
    index = operator.index(index)
    size = operand.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    index = index + size if index < 0 else index
    result = slice_in_dim(operand, index, index + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


def _index_operand(i):
    if isinstance(i, (int, np.integer)):
        return scalar_like(int(i), _dtypes.canonicalize_dtype(np.int32), weak=False)
    return as_operand(i)


def _dynamic_slice_indices(shape, start_indices, allow_negative_indices):
    """Start indices with negative ones counted from the end, as JAX's ``allow_negative_indices=True``:
    static ones at once, traced signed ones with ``select_n(i < 0, i, i + size)``."""
    if len(start_indices) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions ({len(start_indices)} "
                         f"vs {shape})")
    result = []
    for i, size in zip(start_indices, shape):
        if isinstance(i, (int, np.integer)):
            if i < 0 and not allow_negative_indices:
                raise ValueError(f"Index {i} is out of bounds for dimension {size} if allow_negative_indices=False")
            result.append(_index_operand(int(i) + size if i < 0 else i))
            continue
        i = as_operand(i)
        if np.issubdtype(i.dtype, np.unsignedinteger) or not allow_negative_indices:
            result.append(i)
        else:
            negative = lt(i, scalar_like(0, i.dtype, weak=False))
            strong = _convert(i, i.dtype, weak_type=False)  # JAX's ``i + size`` promotes a weak index first
            result.append(select(negative, add(strong, scalar_like(size, i.dtype, weak=False)), i))
    return result


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    operand = as_operand(operand)
    indices = _dynamic_slice_indices(operand.shape, list(start_indices), allow_negative_indices)
    return bind1("dynamic_slice", operand, *indices, slice_sizes=tuple(builtins.map(operator.index, slice_sizes)))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    operand, update = as_operand(operand), as_operand(update)
    indices = _dynamic_slice_indices(operand.shape, list(start_indices), allow_negative_indices)
    return bind1("dynamic_update_slice", operand, update, *indices)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    operand = as_operand(operand)
    starts = [0] * operand.ndim
    sizes = list(operand.shape)
    axis = _canonical_axis(axis, operand.ndim)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    operand = as_operand(operand)
    starts = [0] * operand.ndim
    starts[_canonical_axis(axis, operand.ndim)] = start_index
    return dynamic_update_slice(operand, update, starts)


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension, out_sharding=None):
    dtype = _dtypes.canonicalize_dtype(dtype)
    return bind1("iota", dtype=dtype, shape=tuple(builtins.map(operator.index, shape)),
                 dimension=operator.index(dimension))


def empty(shape, dtype, *, out_sharding=None):
    """An array of undefined values (JAX's ``lax.empty``): zeros here, as on XLA's CPU."""
    shape = tuple(builtins.map(operator.index, shape if isinstance(shape, (tuple, list)) else (shape,)))
    return bind1("empty", dtype=_dtypes.canonicalize_dtype(dtype), shape=shape)


def full(shape, fill_value, dtype=None, *, sharding=None):
    shape = tuple(builtins.map(operator.index, shape)) if not isinstance(shape, int) else (shape,)
    dtype = _dtypes.canonicalize_dtype(dtype) if dtype is not None else None
    weak = dtype is None and _dtypes.is_weakly_typed(fill_value)
    if dtype is None:
        dtype = _dtypes.canonicalize_dtype(_dtypes.dtype(fill_value))
    return broadcast(_convert(fill_value, dtype, weak), shape)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` filled with ``fill_value``; weakly typed when ``x`` is and no dtype is given."""
    weak = dtype is None and _dtypes.is_weakly_typed(x)
    dtype = _dtypes.dtype(x) if dtype is None else dtype
    shape = np.shape(x) if shape is None and not hasattr(x, "shape") else (x.shape if shape is None else shape)
    shape = tuple(builtins.map(operator.index, shape))
    return broadcast(_convert(fill_value, _dtypes.canonicalize_dtype(dtype), weak), shape)


def zeros_like_array(x):
    return full_like(x, 0)


def _reducer(name):
    def fn(operand, axes):
        operand = as_operand(operand)
        axes = tuple(sorted(_canonical_axis(a, operand.ndim) for a in axes))
        return bind1(name, operand, axes=axes)
    fn.__name__ = name
    return fn


for _name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor"):
    globals()[_name] = _reducer(_name)


def argmax(operand, axis, index_dtype):
    operand = as_operand(operand)
    return bind1("argmax", operand, axes=(_canonical_axis(axis, operand.ndim),),
                 index_dtype=_dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    operand = as_operand(operand)
    return bind1("argmin", operand, axes=(_canonical_axis(axis, operand.ndim),),
                 index_dtype=_dtypes.canonicalize_dtype(index_dtype))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    ints = lambda dims: tuple(builtins.map(int, dims))  # noqa: E731
    dims = ((ints(lc), ints(rc)), (ints(lb), ints(rb)))
    pref = None if preferred_element_type is None else _dtypes.canonicalize_dtype(preferred_element_type)
    return bind1("dot_general", lhs, rhs, dimension_numbers=dims, precision=canonicalize_precision(precision),
                 preferred_element_type=pref)


def dot(lhs, rhs, precision=None, preferred_element_type=None, out_sharding=None):
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if lhs.ndim not in (1, 2) or rhs.ndim not in (1, 2):
        raise TypeError(f"dot only supports rank 1 or 2 operands, got shapes {lhs.shape} and {rhs.shape}")
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)


def _cumulative(name):
    def fn(operand, axis=0, reverse=False):
        operand = as_operand(operand)
        return bind1(name, operand, axis=_canonical_axis(axis, operand.ndim), reverse=bool(reverse))
    fn.__name__ = name
    return fn


for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    globals()[_name] = _cumulative(_name)


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def _aval(x) -> ShapedArray:
    return as_operand(x).aval


from ._parallel import (all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin,  # noqa: E402,F401
                        ppermute, pshuffle, psum, psum_scatter, pswapaxes)
from ._slicing import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather,  # noqa: E402,F401
                       scatter, scatter_add, scatter_max, scatter_min, scatter_mul, scatter_sub)
from ._sorting import sort, sort_key_val, top_k  # noqa: E402,F401
from ._fft import FftType, fft  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from ._convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,  # noqa: E402,F401
                           conv_general_permutations, conv_shape_tuple, conv_transpose, conv_with_general_padding,
                           padtype_to_pads, reduce_window, reduce_window_shape_tuple)
from ._control_flow import (associative_scan, cond, fori_loop, map, platform_dependent, scan, scatter_apply,  # noqa: E402,F401,A004
                            switch, while_loop)
from ._solves import custom_linear_solve, custom_root  # noqa: E402,F401
from ._misc import (batch_matmul, broadcast_like, broadcast_shapes, broadcast_to_rank, collapse,  # noqa: E402,F401
                    dtype, dynamic_index_in_dim, dynamic_update_index_in_dim, index_take, reduce)
from ._extras import approx_max_k, approx_min_k, mulhi, optimization_barrier, tile, unstack  # noqa: E402,F401
from ._conv_utils import (conv_general_dilated_patches, conv_general_shape_tuple,  # noqa: E402,F401
                          conv_transpose_shape_tuple)
from ._special import (bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a, igammac,  # noqa: E402,F401
                       random_gamma_grad, reduce_precision, zeta)


def _export_primitives(namespace, names):
    """JAX's primitive objects (``lax.add_p``): the op table's, under JAX's names."""
    for name in names:
        namespace[f"{_JAX_PRIMITIVE_NAMES.get(name, name)}_p"] = PRIMITIVES[name]


# Ops bound only by irax's own machinery (jit, custom derivatives, remat, literals), those JAX keeps out of lax
# (empty, empty2, platform_index, reduce_scatter, threefry2x32, the host callbacks, geqrf, geqp3), and the
# decompositions of lax.linalg have no primitive object here; custom_linear_solve is JAX's linear_solve_p.
_JAX_PRIMITIVE_NAMES = {"custom_linear_solve": "linear_solve"}
_LINALG = ["cholesky", "triangular_solve", "tridiagonal_solve", "lu", "lu_pivots_to_permutation", "eig", "eigh", "svd",
           "qr", "symmetric_product", "householder_product", "hessenberg", "schur", "ormqr",
           "cholesky_update", "tridiagonal"]
_NOT_IN_LAX = {"add_any", "checkpoint", "custom_jvp_call", "custom_lin", "custom_vjp_call", "literal", "name", "pjit",
               "empty", "empty2", "platform_index", "reduce_scatter", "threefry2x32", "pure_callback", "io_callback",
               "debug_callback", "debug_print", "geqrf", "geqp3", *_LINALG}
_export_primitives(globals(), sorted(set(PRIMITIVES) - _NOT_IN_LAX))
_export_primitives(vars(linalg), _LINALG)
