"""``irax.Array``: an immutable array on an IREE device or, for eager results, on the host.

An eager result stays a NumPy array until a compiled program needs it on the
device; a compiled result stays on the device until the user reads it.
An array is committed to a device (``_dev``) once ``device_put`` names one or a
computation on committed arrays made it, as in JAX: computations run where
their committed arguments are, and arguments committed to two devices are an
error. An uncommitted array lives in host memory, which the CPU drivers share.
"""
from __future__ import annotations

import numpy as np

from irax.ir.avals import ShapedArray
from irax.runtime import device as rt_device

from . import dtypes
from .array_methods import ArrayMethods


class Array(ArrayMethods):
    """An immutable n-dimensional array, as ``jax.Array``."""

    # ``_owned``: no other array shares ``_buf``, so a computation may write its result into it (donation).
    __slots__ = ("aval", "_npy", "_buf", "_sig", "_dev", "_owned", "_python_value", "__weakref__")
    __array_priority__ = 100

    @classmethod
    def _from_host(cls, array: np.ndarray, aval: ShapedArray, device=None) -> "Array":
        self = object.__new__(cls)
        if array.dtype != aval.dtype:
            array = array.astype(aval.dtype)
        array.flags.writeable = False
        self._npy = array
        self._buf = None
        self.aval = aval
        self._dev = device
        self._owned = True
        self._sig = aval if device is None else (aval, device)
        return self

    @classmethod
    def _from_device(cls, buffer_view, aval: ShapedArray, device=None) -> "Array":
        """``buffer_view`` lives on ``device`` when that is a GPU one, else in host memory."""
        self = object.__new__(cls)
        self._npy = None
        self._buf = buffer_view
        self.aval = aval
        self._dev = device
        self._owned = True
        self._sig = aval if device is None else (aval, device)
        return self

    def _with_aval(self, aval: ShapedArray) -> "Array":
        """The same buffer seen with another aval of the same shape and dtype (a weak-type change)."""
        new = object.__new__(type(self))
        new._npy, new._buf, new.aval, new._dev = self._npy, self._buf, aval, self._dev
        new._owned = self._owned = False
        new._sig = aval if self._dev is None else (aval, self._dev)
        return new

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)
    itemsize = property(lambda self: self.aval.dtype.itemsize)

    @property
    def _value(self) -> np.ndarray:
        if self._npy is None:
            if self._buf is None:
                raise self._deleted_error()
            array = (self._dev or rt_device).to_host(self._buf, self.aval.shape, self.aval.dtype)
            array.flags.writeable = False
            self._npy = array
        return self._npy

    def _device_buffer(self, device):
        """The array's buffer on ``device``: its own when it lives there (host memory serves every CPU driver),
        else a copy, kept when the array has no buffer yet and lives on ``device``."""
        here = self._dev if self._dev is not None and self._dev.is_gpu else None
        there = device if device.is_gpu else None
        if self._buf is not None and here is there:
            return self._buf
        buf = device.put(self._value)
        if self._buf is None and here is there:
            self._buf = buf
        return buf

    def delete(self):
        """Frees the buffer now (``jit`` does this to donated arguments); any later use raises."""
        self._npy = self._buf = None

    def is_deleted(self):
        return self._npy is None and self._buf is None

    def _deleted_error(self):
        return RuntimeError(f"Array has been deleted with shape={self.dtype.name}[{','.join(map(str, self.shape))}].")

    def __array__(self, dtype=None, context=None, copy=None):
        return np.asarray(self._value, dtype=dtype, **({} if copy is None else {"copy": copy}))

    def __repr__(self):
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            s = f"[], shape={self.shape}"
        else:
            s = np.array2string(self._value, prefix=prefix, suffix=",", separator=", ", max_line_width=width)
        last_line_len = len(s) - s.rfind("\n") + 1
        sep = " " * len(prefix) if last_line_len + len(dtype_str) + 2 > width else " "
        return f"{prefix}{s},{sep}{dtype_str})"

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        # A 0-d array formats as its NumPy scalar (so f"{x:.2f}" works); any other array as its ndarray,
        # which accepts only an empty spec.
        return format(self._value if self.ndim else self._value[()], spec)

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def tobytes(self, order="C"):
        return self._value.tobytes(order)

    def _check_scalar(self):
        if self.ndim:
            raise TypeError(f"Only scalar arrays can be converted to Python scalars; got arr.ndim={self.ndim}")

    def __bool__(self):
        if self.size == 0:
            raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                             "that an array is not empty.")
        if self.size > 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() "
                             "or a.all()")
        return bool(self._value)

    def __int__(self):
        self._check_scalar()
        return int(self._value)

    def __float__(self):
        self._check_scalar()
        return float(self._value)

    def __complex__(self):
        self._check_scalar()
        return complex(self._value)

    def __index__(self):
        if not np.issubdtype(self.dtype, np.integer) or self.ndim:
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return int(self._value)

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __reduce__(self):
        return (_reconstruct, (self._value, self.weak_type))

    def block_until_ready(self):
        return self

    def copy_to_host_async(self):
        pass

    def is_ready(self):
        return True

    is_fully_addressable = property(lambda self: True)
    is_fully_replicated = property(lambda self: True)

    committed = property(lambda self: self._dev is not None)

    def devices(self):
        return {self.device}

    @property
    def device(self):
        return self._dev or rt_device.get_device()

    def to_device(self, device, *, stream=None):
        if stream is not None:
            raise NotImplementedError("stream argument of array.to_device()")
        from .device import device_put
        return device_put(self, device)

    def copy(self):
        return Array._from_host(self._value.copy(), self.aval, self._dev)


def _reconstruct(value, weak_type):
    return Array._from_host(np.array(value), ShapedArray(value.shape, value.dtype, weak_type))


def to_numpy(x) -> np.ndarray:
    """The host value of an operand, with JAX's default (canonical) dtype."""
    if isinstance(x, Array):
        return x._value
    if isinstance(x, np.ndarray):
        dtype = dtypes.canonicalize_dtype(x.dtype)
        return x if dtype == x.dtype else x.astype(dtype)
    return np.asarray(x, dtype=dtypes.canonicalize_dtype(dtypes.dtype(x)))


def is_array_like(x) -> bool:
    return isinstance(x, (Array, np.ndarray, np.generic, int, float, complex, bool))


def _register_with_core():
    from . import core
    core._bind_array_module()


_register_with_core()
