"""Operators and methods shared by ``Array`` and ``Tracer``, forwarding to ``irax.numpy``."""
from __future__ import annotations

import importlib

import numpy as np

_jnp = None


def _np():
    global _jnp
    if _jnp is None:
        _jnp = importlib.import_module("irax.numpy")
    return _jnp


def _binary(name, symbol, reflected=False, rejected=()):
    """An operator that, as JAX's, returns ``NotImplemented`` for operands that are not arrays or scalars.

    Python then tries the other operand's method, so ``x == None`` is ``False`` and ``x + "a"`` raises
    Python's own TypeError. The ``rejected`` types (lists and tuples, where ``+`` or ``*`` would mean
    concatenation or repetition; containers for ``==``) raise at once, as they do in JAX.
    """
    def method(self, other):
        convert = getattr(other, "__jax_array__", None)
        if convert is not None:
            other = convert()
        operands = (other, self) if reflected else (self, other)
        if isinstance(other, (int, float, complex, np.generic, np.ndarray, ArrayMethods)):
            return getattr(_np(), name)(*operands)
        if type(other) in rejected:
            left, right = (type(x).__name__ for x in operands)
            raise TypeError(f"unsupported operand type(s) for {symbol}: {left!r} and {right!r}")
        return NotImplemented
    method.__name__ = name
    return method


def _binaries(name, symbol, rejected=()):
    return _binary(name, symbol, False, rejected), _binary(name, symbol, True, rejected)


def _unary(name):
    def method(self):
        return getattr(_np(), name)(self)
    method.__name__ = name
    return method


def _forward(name, method_name=None):
    def method(self, *args, **kwargs):
        fn = getattr(_np(), name, None)
        if fn is None:
            raise NotImplementedError(f"Array.{method.__name__}() needs irax.numpy.{name}, which irax does not "
                                      "implement yet")
        return fn(self, *args, **kwargs)
    method.__name__ = method_name or name
    return method


_SEQUENCES = (list, tuple)
_CONTAINERS = (dict, list, set, tuple)


class ArrayMethods:
    """Mixin: the array protocol in terms of ``irax.numpy`` functions."""

    __slots__ = ()

    __add__, __radd__ = _binaries("add", "+", _SEQUENCES)
    __sub__, __rsub__ = _binaries("subtract", "-")
    __mul__, __rmul__ = _binaries("multiply", "*", _SEQUENCES)
    __truediv__, __rtruediv__ = _binaries("true_divide", "/")
    __floordiv__, __rfloordiv__ = _binaries("floor_divide", "//")
    __mod__, __rmod__ = _binaries("remainder", "%")
    __divmod__, __rdivmod__ = _binaries("divmod", "divmod()")
    __pow__, __rpow__ = _binaries("power", "**")
    __matmul__, __rmatmul__ = _binaries("matmul", "@")
    __and__, __rand__ = _binaries("bitwise_and", "&")
    __or__, __ror__ = _binaries("bitwise_or", "|")
    __xor__, __rxor__ = _binaries("bitwise_xor", "^")
    __lshift__, __rlshift__ = _binaries("left_shift", "<<")
    __rshift__, __rrshift__ = _binaries("right_shift", ">>")
    __lt__, __le__ = _binary("less", "<"), _binary("less_equal", "<=")
    __gt__, __ge__ = _binary("greater", ">"), _binary("greater_equal", ">=")
    __eq__ = _binary("equal", "==", rejected=_CONTAINERS)
    __ne__ = _binary("not_equal", "==", rejected=_CONTAINERS)  # JAX's message names == for != as well
    __neg__, __pos__, __abs__ = _unary("negative"), _unary("positive"), _unary("abs")
    __invert__ = _unary("invert")

    def __getitem__(self, index):
        return _np()._getitem(self, index)

    def __setitem__(self, index, value):
        # Python's wording for immutable types, then JAX's message word for word.
        raise TypeError(f"'{type(self).__name__}' object does not support item assignment. JAX arrays are "
                        "immutable and do not support in-place item assignment. Instead of x[idx] = y, use "
                        "x = x.at[idx].set(y) or another .at[] method: "
                        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        from irax import lax
        return (lax.index_in_dim(self, i, keepdims=False) for i in range(self.shape[0]))

    def __contains__(self, other):
        # As JAX, and unlike NumPy, ``in`` searches a 1-D array for one scalar; anything else is an error
        # rather than an elementwise comparison whose truth value is then ambiguous.
        if other is None or isinstance(other, str):
            raise TypeError(f"Array.__contains__: unsupported operand type {type(other)}.")
        if self.ndim != 1:
            raise ValueError(f"Array.__contains__: search array must be one-dimensional, got arr.shape={self.shape}.")
        if np.ndim(other) != 0:
            raise ValueError(f"Array.__contains__: query value must be a scalar, got query.shape={np.shape(other)}")
        return _np().any(_np().equal(self, other))

    def __round__(self, ndigits=None):
        # Python's round(x) with no digits returns an integer, so JAX's does too.
        out = _np().round(self, decimals=ndigits or 0)
        return out.astype(int) if ndigits is None else out

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    @property
    def flat(self):
        raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider arr.flatten() instead.")

    @property
    def at(self):
        return _np()._IndexUpdateHelper(self)

    @property
    def T(self):
        return _np().transpose(self)

    @property
    def mT(self):
        return _np().matrix_transpose(self)

    @property
    def real(self):
        return _np().real(self)

    @property
    def imag(self):
        return _np().imag(self)

    def astype(self, dtype, copy=False, device=None):
        return _np()._astype(self, dtype)

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 else shape
        if not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0:
            shape = (shape,)
        return _np().reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]
        return _np().transpose(self, axes or None)

    def __array_namespace__(self, api_version=None):
        return _np()

    sum = _forward("sum")
    prod = _forward("prod")
    mean = _forward("mean")
    var = _forward("var")
    std = _forward("std")
    max = _forward("max")
    min = _forward("min")
    all = _forward("all")
    any = _forward("any")
    argmax = _forward("argmax")
    argmin = _forward("argmin")
    cumsum = _forward("cumsum")
    cumprod = _forward("cumprod")
    ravel = _forward("ravel")
    flatten = _forward("ravel", "flatten")
    squeeze = _forward("squeeze")
    swapaxes = _forward("swapaxes")
    clip = _forward("clip")
    round = _forward("round")
    dot = _forward("dot")
    conj = _forward("conj")
    conjugate = _forward("conjugate")
    nonzero = _forward("nonzero")
    repeat = _forward("repeat")
    sort = _forward("sort")
    argsort = _forward("argsort")
    trace = _forward("trace")
    diagonal = _forward("diagonal")
    ptp = _forward("ptp")
    take = _forward("take")
    view = _forward("_view", "view")
    copy = _forward("copy")
