"""``irax.typing``: the annotations ``jax.typing`` gives array-accepting functions."""
from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from .basearray import Array

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
