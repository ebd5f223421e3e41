"""``irax.config``: JAX's configuration object, for the options irax honours.

Options read on hot paths (``jax_enable_x64``) are plain attributes.
"""
from __future__ import annotations

import contextlib
import os

_TRUE = ("1", "true", "yes", "on")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _cache_dir_from_env():
    """``$IRAX_CACHE_DIR`` (empty or ``none``: no cache), else the per-user cache directory."""
    value = os.environ.get("IRAX_CACHE_DIR")
    if value is not None:
        return None if value.strip().lower() in ("", "none") else value
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irax")


# The options whose values are one of a few (JAX's enum states, with its message for another value).
_ENUMS = {
    "jax_numpy_rank_promotion": ("allow", "warn", "raise"),
    "jax_default_matmul_precision": (
        None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F8_ANY_F8_F32",
        "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
        "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
        "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"),
}


def _check_enum(name, value):
    allowed = _ENUMS.get(name)
    if allowed is not None and value not in allowed:
        values = [v for v in allowed if v is not None]
        none = "None or " if None in allowed else ""
        raise ValueError(f"new enum value must be {none}in {values}, got {value} of type {type(value)}.")


class Config:
    """Holds option values; ``update(name, value)`` changes one and notifies listeners."""

    def __init__(self):
        self.jax_enable_x64 = _env_flag("JAX_ENABLE_X64")
        self.irax_cache_dir = _cache_dir_from_env()
        self.irax_cache_max_bytes = int(os.environ.get("IRAX_CACHE_MAX_BYTES", 1 << 30))
        self.irax_log_compiles = _env_flag("IRAX_LOG_COMPILES")
        self.jax_numpy_rank_promotion = "allow"
        self.jax_default_matmul_precision = None
        self.jax_disable_jit = False
        self._listeners: dict = {}
        self._refresh_trace_context()

    def _refresh_trace_context(self):
        """What a trace depends on besides its arguments: part of every jit cache key, as JAX's trace context."""
        self._trace_context = (self.jax_enable_x64, self.jax_numpy_rank_promotion)

    def _known(self):
        return sorted(k for k in vars(self) if not k.startswith("_"))

    def update(self, name: str, value):
        if name.startswith("_") or name not in vars(self):
            raise AttributeError(f"Unrecognized config option: {name}. Known options: {', '.join(self._known())}")
        _check_enum(name, value)
        setattr(self, name, value)
        self._refresh_trace_context()
        for callback in self._listeners.get(name, ()):
            callback(value)

    def read(self, name: str):
        if name not in self._known():
            raise AttributeError(f"Unrecognized config option: {name}")
        return getattr(self, name)

    def on_change(self, name: str, callback):
        self._listeners.setdefault(name, []).append(callback)

    def __repr__(self):
        return "Config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._known()) + ")"


config = Config()


class State:
    """One option as JAX's ``jax.config`` states: ``.value`` reads it, calling it with a value sets it for a
    ``with`` block (``with irax.enable_x64(True):``)."""

    def __init__(self, name: str, default_on_call=None):
        self._name = name
        self._default_on_call = default_on_call

    @property
    def value(self):
        return getattr(config, self._name)

    @contextlib.contextmanager
    def __call__(self, new_val=None):
        if new_val is None:
            new_val = self._default_on_call
        old = getattr(config, self._name)
        config.update(self._name, new_val)
        try:
            yield
        finally:
            config.update(self._name, old)

    def __repr__(self):
        return f"<irax.config.State {self._name}={self.value!r}>"


enable_x64 = State("jax_enable_x64", True)
numpy_rank_promotion = State("jax_numpy_rank_promotion")
default_matmul_precision = State("jax_default_matmul_precision")
log_compiles = State("irax_log_compiles", True)


def disable_jit(disable: bool = True):
    """``jit`` calls its function directly (op by op, eagerly) while active, as ``jax.disable_jit``."""
    return State("jax_disable_jit")(bool(disable))
