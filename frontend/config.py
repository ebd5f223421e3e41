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

    def _known(self):
        return sorted(k for k in vars(self) if not k.startswith("_"))

    def update(self, name: str, value):
        if name.startswith("_") or name not in vars(self):
            raise AttributeError(f"Unrecognized config option: {name}. Known options: {', '.join(self._known())}")
        setattr(self, name, value)
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


@contextlib.contextmanager
def _set_for_a_while(name: str, value):
    old = getattr(config, name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, old)


def enable_x64(new_val: bool = True):
    """Temporarily turns 64-bit types on (or off), as ``jax.experimental.enable_x64``."""
    return _set_for_a_while("jax_enable_x64", bool(new_val))


def disable_jit(disable: bool = True):
    """``jit`` calls its function directly (op by op, eagerly) while active, as ``jax.disable_jit``."""
    return _set_for_a_while("jax_disable_jit", bool(disable))
