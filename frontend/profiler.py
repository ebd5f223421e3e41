"""``irax.profiler``: JAX's trace annotations, so that programs carrying them run. irax records no profiles
(IREE's own are made with its Tracy build): starting a trace or a profile server raises ``NotImplementedError``."""
from __future__ import annotations

import contextlib
import functools

__all__ = ["StepTraceAnnotation", "TraceAnnotation", "annotate_function", "device_memory_profile",
           "save_device_memory_profile", "start_server", "start_trace", "stop_server", "stop_trace", "trace"]


class TraceAnnotation(contextlib.ContextDecorator):
    """Names a region of host code in a profile: with no profile being recorded, it marks nothing."""

    def __init__(self, name: str, **kwargs):
        self.name = name
        self.kwargs = kwargs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A training step's region (``step_num=`` among the keyword arguments), as JAX's."""


def annotate_function(func, name: str | None = None, **kwargs):
    """``func`` run inside a ``TraceAnnotation`` named ``name`` (or its qualified name)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kw):
        with TraceAnnotation(name, **kwargs):
            return func(*args, **kw)
    return wrapper


def _no_profiler(what: str):
    raise NotImplementedError(f"irax cannot {what}: it records no profiles (profile IREE's executables with "
                              "IREE's Tracy-enabled runtime, https://iree.dev/developers/performance/profiling-with-tracy/)")


def start_trace(log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False, **kwargs):
    _no_profiler("start a profiler trace")


def stop_trace():
    _no_profiler("stop a profiler trace")


def trace(log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False, **kwargs):
    _no_profiler("record a profiler trace")


def start_server(port: int):
    _no_profiler("start a profiler server")


def stop_server():
    _no_profiler("stop a profiler server")


def device_memory_profile(backend: str | None = None) -> bytes:
    _no_profiler("take a device memory profile")


def save_device_memory_profile(filename, backend: str | None = None):
    _no_profiler("save a device memory profile")
