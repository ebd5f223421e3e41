"""Compiling StableHLO to a ``.vmfb`` with IREE, in process, with a cache.

The in-process compiler API saves ~0.1 s a compile over the ``iree-compile``
subprocess; when a compile fails, the subprocess is run once more to capture
IREE's diagnostic text for the error message.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile

from irax.ir.errors import CompileError


@functools.lru_cache(maxsize=None)
def host_cpu_flags() -> tuple[str, ...]:
    """llvm-cpu for this CPU. f64 is kept (IREE demotes it to f32 by default); multi-use fusion
    is off because, with IREE's constant hoisting, it wired a dispatch to another's result in a
    complex128 program (a silent wrong answer); it costs the bench little either way."""
    return ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host", "--iree-opt-data-tiling",
            "--iree-opt-const-expr-hoisting=false", "--iree-input-type=stablehlo",
            "--iree-llvmcpu-reassociate-fp-reductions=true", "--iree-input-demote-f64-to-f32=false",
            "--iree-dispatch-creation-fuse-multi-use=false")


@functools.lru_cache(maxsize=None)
def _versions() -> str:
    from iree.compiler import version as cv
    import iree.runtime
    return f"{cv.VERSION}|{getattr(iree.runtime, '__version__', '')}|{_cpu_id()}"


def _cpu_id() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            lines = [l for l in f if l.startswith(("model name", "flags"))]
        return hashlib.sha256("".join(sorted(set(lines))).encode()).hexdigest()[:16]
    except OSError:
        return "unknown-cpu"


_memory_cache: dict = {}


_COMPLEX_DOT = re.compile(r"stablehlo\.dot_general[^\n]*complex<")
_BATCHED_DOT = re.compile(r"stablehlo\.dot_general[^\n]*batching_dims")


def compile_stablehlo(text: str, flags=None) -> bytes:
    """Compiles StableHLO text to a ``.vmfb``, memoised in memory and on disk."""
    flags = tuple(flags or host_cpu_flags())
    if _COMPLEX_DOT.search(text):
        # Data tiling makes llvm-cpu fail on complex matmuls ("requires valid padding vector elemental type").
        flags += ("--iree-opt-data-tiling=false",)
    elif _BATCHED_DOT.search(text):
        # Batched matmuls (what vmap makes of a matmul) run 1.3-1.5x faster untiled on llvm-cpu: packing each
        # batch's operands costs more than the tiled kernel saves at these sizes (bench/run.py, vmap(matmul)).
        flags += ("--iree-opt-data-tiling=false",)
    if '"jaxpr.' in text:
        raise CompileError("the module still holds jaxpr ops; lower it with jaxpr-to-stablehlo before compiling "
                           "(IREE does not know the jaxpr dialect)")
    key = hashlib.sha256("\0".join((text, *flags, _versions())).encode()).hexdigest()
    vmfb = _memory_cache.get(key)
    if vmfb is None:
        vmfb = _disk_get(key)
        if vmfb is None:
            vmfb = _compile(text, flags)
            _disk_put(key, vmfb)
        _memory_cache[key] = vmfb
    return vmfb


def _compile(text: str, flags) -> bytes:
    from iree.compiler.api import Output, Session, Source
    session = Session()
    try:
        session.set_flags(*flags)
        invocation = session.invocation()
        source = Source.wrap_buffer(session, text.encode())
        ok = invocation.parse_source(source) and invocation.execute()
        if ok:
            output = Output.open_membuffer()
            invocation.output_vm_bytecode(output)
            return bytes(output.map_memory())
    finally:
        session.close()
    raise CompileError(f"IREE failed to compile the module:\n{_diagnostics(text, flags)}")


def _diagnostics(text: str, flags) -> str:
    from iree.compiler import tools
    try:
        tools.compile_str(text, extra_args=list(flags))
    except tools.CompilerToolError as e:
        return str(e)
    return "(no diagnostic: the standalone compiler accepted the same module)"


def cache_dir():
    from irax.config import config
    return config.irax_cache_dir


def _disk_path(key):
    root = cache_dir()
    return None if not root else os.path.join(root, key[:2], key + ".vmfb")


def _disk_get(key):
    path = _disk_path(key)
    if path is None or not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    digest, body = data[:32], data[32:]
    if hashlib.sha256(body).digest() != digest:
        os.unlink(path)
        return None
    return body


def _disk_put(key, vmfb):
    path = _disk_path(key)
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(vmfb).digest() + vmfb)
        os.replace(tmp, path)
    except OSError:
        pass
