"""Compiling StableHLO to a ``.vmfb`` with IREE, with a cache.

Modules compile in a worker process (``compile_worker``) started on the first compile and reused: IREE's
in-process API saves ~0.1 s a compile over starting ``iree-compile`` each time, and a crash of IREE's compiler
(a segfault, an LLVM abort) raises ``CompileError`` here instead of killing this process. A module with control flow
compiles there in two stages, with a rewrite of IREE's VM-stage module in between (``vm_fixups``). When a compile fails,
``iree-compile`` is run once more to capture IREE's diagnostic text for the error message.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import re
import sys
import threading
import time

from irax.ir.errors import CompileError

from . import compile_cache
from .targets import Target


def host_cpu_flags() -> tuple[str, ...]:
    """llvm-cpu for this CPU."""
    return Target().flags()


@functools.lru_cache(maxsize=None)
def versions() -> str:
    import importlib
    from irax import __version__
    # imported by its full name: ``from iree.compiler import version`` would run iree.compiler's __init__ (8 ms)
    compiler_version = importlib.import_module("iree.compiler.version")
    from irax.runtime._native import VERSION as runtime_version
    return f"irax {__version__}|{compiler_version.VERSION}|{runtime_version}|{_cpu_id()}"


def _cpu_id() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            lines = [l for l in f if l.startswith(("model name", "flags"))]
        return hashlib.sha256("".join(sorted(set(lines))).encode()).hexdigest()[:16]
    except OSError:
        return "unknown-cpu"


_memory_cache: dict = {}


# Source locations as MLIR prints them (references to aliases, the alias lines, inline file:line:col): the cache
# key leaves them out, as JAX's does, so that moving a function in its file still hits the cache (the executable
# then carries the old lines). A location of another form stays in the key: a miss, never a wrong hit.
_LOCATION = re.compile(r' loc\((?:#loc\d*|unknown|"(?:[^"\\]|\\.)*":\d+:\d+)\)|^#loc\d* = .*\n', re.M)
# Private functions with bodies (what a trace adds for loop bodies, branches, nested jits): their names carry a
# process-wide counter, so tracing the same function again names them anew. The key numbers them in order of
# definition instead, so that a retrace (jit of a lambda made again, a fresh process tracing in another order)
# hits the cache. Declarations without a body (host functions the runtime binds by name) keep theirs.
_PRIVATE_DEFINITION = re.compile(r"^\s*func\.func private @([\w$.]+)\(.*\{$", re.M)
_SYMBOL = re.compile(r"@([\w$.]+)")
_COMPLEX_DOT = re.compile(r"stablehlo\.dot_general[^\n]*complex<")
_BATCHED_DOT = re.compile(r"stablehlo\.dot_general[^\n]*batching_dims")


def compile_stablehlo(text: str, flags=None, *, name: str = "main") -> bytes:
    """Compiles StableHLO text to a ``.vmfb``, memoised in memory and on disk (``compile_cache``)."""
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
    key = hashlib.sha256("\0".join((_key_text(text), *flags, versions())).encode()).hexdigest()
    vmfb = _memory_cache.get(key)
    if vmfb is None:
        start = time.perf_counter()
        vmfb = compile_cache.get(key)
        source = "cache hit" if vmfb is not None else "cache miss"
        if vmfb is None:
            with _slow_compile_notice(name, text):
                vmfb = _compile(text, flags)
            compile_cache.put(key, vmfb)
        _log(name, text, time.perf_counter() - start, source)
        _memory_cache[key] = vmfb
    return vmfb


def _key_text(text) -> str:
    """``text`` without locations, its private functions numbered in order of definition."""
    text = _LOCATION.sub("", text)
    names = {name: f"private{i}" for i, name in enumerate(_PRIVATE_DEFINITION.findall(text))}
    return _SYMBOL.sub(lambda m: "@" + names.get(m.group(1), m.group(1)), text) if names else text


_CALL_SITE = re.compile(r'loc\("([^"]+)":(\d+):\d+\)')
_SLOW_COMPILE_S = 2.0


def _where(text) -> str:
    """The user's source line the module was traced from: the first location in it (its arguments')."""
    match = _CALL_SITE.search(text)
    return f"{match.group(1)}:{match.group(2)}" if match else "<unknown>"


def _log(name, text, seconds, source):
    from irax.config import config
    if config.irax_log_compiles:
        print(f"irax: compile of {name} at {_where(text)}: {seconds:.2f}s ({source})", file=sys.stderr,
              flush=True)


@contextlib.contextmanager
def _slow_compile_notice(name, text):
    """With compile logging on, a compile that runs past 2 s says so while it runs."""
    from irax.config import config
    if not config.irax_log_compiles:
        yield
        return
    timer = threading.Timer(_SLOW_COMPILE_S, lambda: print(
        f"irax: compiling {name} at {_where(text)} is taking over {_SLOW_COMPILE_S:.0f}s...",
        file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


class _Worker:
    """The compiling process: started when first needed, started again after it crashed."""

    def __init__(self):
        self._process = None
        self._lock = threading.Lock()

    def compile(self, text: str, flags) -> bytes:
        from .compile_worker import read_message, write_message
        with self._lock:
            process = self._started()
            try:
                write_message(process.stdin, (text, tuple(flags)))
                reply = read_message(process.stdout)
            except (BrokenPipeError, OSError):
                reply = None
            if reply is None:
                raise CompileError(f"IREE's compiler crashed compiling the module ({self._death()}): a bug in IREE, "
                                   "not in the program (jit(f).lower(*args).as_text() gives the StableHLO to report)"
                                   + self._stderr_tail())
        ok, payload = reply
        if not ok:
            raise CompileError(f"IREE failed to compile the module:\n{payload or _diagnostics(text, flags)}")
        return payload

    def close(self):
        """Ends the worker (it exits at the end of its input)."""
        with self._lock:
            if self._process is not None:
                self._process.stdin.close()
                self._process.wait()
                self._forget()
                self._stderr.close()

    def _started(self):
        import subprocess
        import tempfile
        if self._process is not None and self._owner != os.getpid():
            self._process = None  # a forked child: the worker's pipes are its parent's to use
        if self._process is None or self._process.poll() is not None:
            self._owner = os.getpid()
            self._stderr = tempfile.TemporaryFile()
            self._process = subprocess.Popen([sys.executable, "-m", "irax.backends.compile_worker"],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        return self._process

    def _death(self) -> str:
        code = self._process.wait()
        self._forget()
        if code < 0:
            import signal
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    def _forget(self):
        """Closes the pipes of the worker, which has exited."""
        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self._process = None

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").splitlines()
        self._stderr.close()
        return "".join(f"\n{line}" for line in lines[:12])


_worker = _Worker()
atexit.register(lambda: _worker.close())


# IREE 3.13 leaves a dispatch that computes a constant outside every execution region when two partitions
# split by barriers share it (two choleskys before and in a while loop, as QDWH's polar decomposition does).
# Hoisting constant expressions into globals takes such dispatches out of the program; it stays off otherwise
# (DESIGN.md: folded PRNG keys), so only the modules this bug rejects are compiled again with it.
_STRANDED_DISPATCH = "streamable op expected to be in an execution region"
_HOISTING_OFF = "--iree-opt-const-expr-hoisting=false"


def _compile(text: str, flags) -> bytes:
    try:
        return _worker.compile(text, flags)
    except CompileError as e:
        if _STRANDED_DISPATCH not in str(e) or _HOISTING_OFF not in flags:
            raise
    return _worker.compile(text, tuple(f for f in flags if f != _HOISTING_OFF) + ("--iree-opt-const-expr-hoisting",))


def _diagnostics(text: str, flags) -> str:
    from iree.compiler import tools
    try:
        tools.compile_str(text, extra_args=list(flags))
    except tools.CompilerToolError as e:
        return str(e)
    return "(no diagnostic: the standalone compiler accepted the same module)"
