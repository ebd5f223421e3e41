"""The persistent compile cache under faults: corrupt, truncated and vanished entries are compiled again (never
loaded), two processes writing one entry leave a valid one, an unwritable directory falls back to compiling with
one warning, the size bound evicts the least recently used entries; and the compile log."""
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax.backends import compile_cache, iree


@pytest.fixture
def cache(tmp_path):
    old = irax.config.irax_cache_dir
    irax.config.update("irax_cache_dir", str(tmp_path / "cache"))
    iree._memory_cache.clear()
    yield tmp_path / "cache"
    irax.config.update("irax_cache_dir", old)
    iree._memory_cache.clear()


def _compile(scale):
    """A fresh module per ``scale``, compiled (or read from the cache) and run."""
    iree._memory_cache.clear()
    return np.asarray(irax.jit(lambda x: x * scale + 1)(np.ones(3, np.float32)))


def _modules(cache):
    return [e[0] for e in compile_cache.entries(str(cache), compile_cache.VMFB)]


def _only_entry(cache):
    (entry,) = _modules(cache)
    return entry


def test_hit_after_miss_and_damaged_entries_are_recompiled(cache):
    np.testing.assert_allclose(_compile(2.0), 3.0)
    entry = _only_entry(cache)
    with open(entry, "rb") as f:
        good = f.read()
    for damaged in (good[:len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"", b"IRAXC1\n" + b"\0" * 40):
        with open(entry, "wb") as f:
            f.write(damaged)
        assert compile_cache.get(os.path.basename(entry)[:-5]) is None
        assert not os.path.exists(entry)  # deleted, never loaded
        np.testing.assert_allclose(_compile(2.0), 3.0)
        with open(_only_entry(cache), "rb") as f:
            assert f.read() == good


def test_entry_removed_before_read_is_a_miss(cache):
    _compile(3.0)
    entry = _only_entry(cache)
    os.unlink(entry)
    assert compile_cache.get(os.path.basename(entry)[:-5]) is None
    np.testing.assert_allclose(_compile(3.0), 4.0)


def test_two_processes_writing_one_entry(cache):
    script = ("import numpy as np, irax\n"
              "print(irax.jit(lambda x: x * 5.0 + 1)(np.ones(3, np.float32))[0])\n")
    env = dict(os.environ, IRAX_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs) and all(o.strip() == "6.0" for o in outs)
    entry = _only_entry(cache)
    assert compile_cache.get(os.path.basename(entry)[:-5]) is not None
    assert not [n for _, _, names in os.walk(cache) for n in names if n.endswith(".tmp")]


def test_unwritable_directory_falls_back_with_one_warning(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    old = irax.config.irax_cache_dir
    irax.config.update("irax_cache_dir", str(blocker / "cache"))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.testing.assert_allclose(_compile(7.0), 8.0)
            np.testing.assert_allclose(_compile(9.0), 10.0)
        assert len([w for w in caught if "cannot be written" in str(w.message)]) == 1
    finally:
        irax.config.update("irax_cache_dir", old)


def test_size_bound_evicts_least_recently_used(cache):
    old = irax.config.irax_cache_max_bytes
    try:
        _compile(11.0)
        size = compile_cache.info()["bytes"]
        irax.config.update("irax_cache_max_bytes", int(size * 2.5))
        first = _only_entry(cache)
        time.sleep(0.05)
        _compile(12.0)
        time.sleep(0.05)
        compile_cache.get(os.path.basename(first)[:-5])  # a hit makes the first entry the most recent
        time.sleep(0.05)
        _compile(13.0)
        paths = _modules(cache)
        assert len(paths) == 2 and first in paths
        held = len(compile_cache.entries(str(cache)))  # the modules and the StableHLO entries kept beside them
        assert compile_cache.clear() == held and compile_cache.info()["entries"] == 0
    finally:
        irax.config.update("irax_cache_max_bytes", old)


def test_log_compiles_names_function_line_and_hit(tmp_path):
    script = ("import numpy as np, irax\n"
              "def scaled(x):\n    return x * 4.0\n"
              "irax.jit(scaled)(np.ones(2, np.float32))\n")
    env = dict(os.environ, IRAX_CACHE_DIR=str(tmp_path / "c"), IRAX_LOG_COMPILES="1")
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    assert "irax: compile of scaled at <string>:4:" in runs[0].stderr and "(cache miss)" in runs[0].stderr
    assert "(cache hit)" in runs[1].stderr


def test_moving_a_function_in_its_file_still_hits(cache):
    """The key leaves out source locations (as JAX's): the same program traced from other lines of another file
    is a hit; a changed program is a miss."""
    def traced_at(line, filename, body="x * 5.0 + 2"):
        namespace = {}
        exec(compile("\n" * line + f"def f(x):\n    return {body}\n", filename, "exec"), namespace)
        iree._memory_cache.clear()
        return np.asarray(irax.jit(namespace["f"])(np.ones(3, np.float32)))
    np.testing.assert_allclose(traced_at(3, "first (draft).py"), 7.0)
    entry = _only_entry(cache)
    np.testing.assert_allclose(traced_at(40, 'second "copy".py'), 7.0)
    assert _modules(cache) == [entry]
    np.testing.assert_allclose(traced_at(40, 'second "copy".py', "x * 5.0 + 3"), 8.0)
    assert len(_modules(cache)) == 2


def test_a_program_traced_again_hits(cache):
    """The private functions a trace adds (loop bodies, branches) are named by a process-wide counter; the key
    numbers them in order of definition, so the same program traced again is a hit. A declaration without a
    body (a host function, bound by name) keeps its name in the key."""
    def f(x):
        return irax.lax.while_loop(lambda c: c < 50, lambda c: c * 1.5 + 1, x) + irax.lax.cond(
            x > 0, jnp.sin, jnp.cos, x)
    for _ in range(2):
        iree._memory_cache.clear()
        irax.clear_caches()
        np.testing.assert_allclose(irax.jit(f)(np.float32(1.5)), 57.80078125 + np.sin(1.5), rtol=1e-6)
    assert len(_modules(cache)) == 1
    text = ("func.func private @host_3(tensor<f32>) -> tensor<f32>\n"
            "func.func private @body_9(%arg0: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = func.call @host_3(%arg0) : (tensor<f32>) -> tensor<f32>\n}\n"
            "func.func @main(%arg0: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = func.call @body_9(%arg0) : (tensor<f32>) -> tensor<f32>\n}\n")
    assert iree._key_text(text) == text.replace("body_9", "private0")


def _lowered(cache):
    return [e[0] for e in compile_cache.entries(str(cache), compile_cache.STABLEHLO)]


def test_a_program_lowered_before_skips_the_passes(cache, monkeypatch):
    """A traced program's StableHLO is kept beside its module, so that the next process reads it instead of
    running irax's passes (here: the memory caches cleared); a damaged entry, or edited irax sources, lower again."""
    from irax import compiled
    jitted = irax.jit(lambda x: jnp.sin(x) * 3.0 + x[::-1])
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    passes_ran = []
    original = compiled.run_pipeline
    monkeypatch.setattr(compiled, "run_pipeline", lambda *a: passes_ran.append(1) or original(*a))

    def again():  # called from one line: the module's locations name it
        irax.clear_caches()
        np.testing.assert_allclose(jitted(x), np.sin(x) * 3.0 + x[::-1], rtol=1e-6)
        return bool(passes_ran and passes_ran.pop())
    assert again()
    (entry,) = _lowered(cache)
    with open(entry, "rb") as f:
        good = f.read()
    assert b"stablehlo.sine" in good
    assert not again()
    with open(entry, "wb") as f:
        f.write(good[:-3])
    assert again() and _lowered(cache) == [entry]
    with open(entry, "rb") as f:
        assert f.read() == good
    monkeypatch.setattr(compiled, "_sources_fingerprint", lambda: "an edited checkout")
    assert again() and len(_lowered(cache)) == 2
    assert not again()


def test_a_program_calling_the_host_is_lowered_each_time(cache):
    """Its host functions are this process's Python objects: its StableHLO is never kept."""
    def f(x):
        return irax.pure_callback(np.cos, irax.ShapeDtypeStruct(x.shape, x.dtype), x) * 2
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(irax.jit(f)(x), np.cos(x) * 2, rtol=1e-6)
    assert len(_modules(cache)) == 1 and _lowered(cache) == []


def test_key_text_is_the_module_printed_without_locations():
    from iree.compiler import ir
    from irax.compiled import lower_to_stablehlo
    from irax.ir.mlir import scope

    def f(x, y):
        return irax.lax.cond(x.sum() > 0, lambda: jnp.sin(x) @ y, lambda: y) * 2
    x = np.ones((3, 3), np.float32)
    text = lower_to_stablehlo(irax.jit(f).lower(x, x)._traced)
    assert 'loc("' in text and "#loc" in text
    with scope():
        plain = ir.Module.parse(text).operation.get_asm(enable_debug_info=False)
    assert iree._LOCATION.sub("", text) == plain


def test_a_crash_of_the_compiler_raises_and_the_next_compile_works(cache, monkeypatch):
    """IREE's compiler runs in a worker process: when it dies mid-compile (killed here, as a segfault would end
    it) the caller gets a CompileError naming the signal, and the next compile starts a new worker."""
    import signal
    import threading

    from irax.ir.errors import CompileError
    worker = iree._Worker()
    monkeypatch.setattr(iree, "_worker", worker)

    def kill_when_started():
        while worker._process is None:
            time.sleep(0.005)
        worker._process.send_signal(signal.SIGKILL)
    killer = threading.Thread(target=kill_when_started)
    killer.start()
    with pytest.raises(CompileError, match="IREE's compiler crashed compiling the module \\(killed by SIGKILL\\)"):
        _compile(17.0)
    killer.join()
    try:
        np.testing.assert_allclose(_compile(17.0), 18.0)
        with pytest.raises(CompileError, match="option not found: bogus-flag"):
            iree._compile("func.func @main() {\n  return\n}", ("--bogus-flag",))
    finally:
        worker.close()
