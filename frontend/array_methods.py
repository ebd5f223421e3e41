"""Operators and methods shared by ``Array`` and ``Tracer``, forwarding to ``irax.numpy``."""
from __future__ import annotations

import importlib

_jnp = None


def _np():
    global _jnp
    if _jnp is None:
        _jnp = importlib.import_module("irax.numpy")
    return _jnp


def _binary(name, reflected=False):
    if reflected:
        def method(self, other):
            return getattr(_np(), name)(other, self)
    else:
        def method(self, other):
            return getattr(_np(), name)(self, other)
    method.__name__ = name
    return method


def _unary(name):
    def method(self):
        return getattr(_np(), name)(self)
    method.__name__ = name
    return method


def _forward(name):
    def method(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


class ArrayMethods:
    """Mixin: the array protocol in terms of ``irax.numpy`` functions."""

    __slots__ = ()

    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("true_divide"), _binary("true_divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __pow__, __rpow__ = _binary("power"), _binary("power", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lshift__, __rlshift__ = _binary("left_shift"), _binary("left_shift", True)
    __rshift__, __rrshift__ = _binary("right_shift"), _binary("right_shift", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")
    __neg__, __pos__, __abs__ = _unary("negative"), _unary("positive"), _unary("abs")
    __invert__ = _unary("invert")

    def __divmod__(self, other):
        return _np().divmod(self, other)

    def __rdivmod__(self, other):
        return _np().divmod(other, self)

    def __getitem__(self, index):
        return _np()._getitem(self, index)

    def __setitem__(self, index, value):
        raise TypeError(f"'{type(self).__name__}' object does not support item assignment. JAX arrays are "
                        "immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] "
                        "method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

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
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
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
    flatten = _forward("ravel")
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
    view = _forward("_view")
