"""Host callbacks against JAX: ``pure_callback``, ``experimental.io_callback``, ``debug.callback`` and
``debug.print``, eagerly and from IREE-compiled code (an ``irax_host`` module of Python functions beside the
program's), under ``vmap`` (each ``vmap_method``), ``grad``, control flow and on a Vulkan device; their jaxpr text;
what the user's callback raising, or returning the wrong shape, dtype or structure, gives; and that a process
using them exits cleanly."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irax
import irax.experimental
import irax.numpy as inp
from irax import lax as ilax
from irax.errors import JaxRuntimeError

jax = pytest.importorskip("jax")
import jax.experimental  # noqa: E402

X = np.array([0.5, -1.0, np.inf, np.nan], np.float32)


def host_sin(x):
    with np.errstate(invalid="ignore"):  # sin(inf)
        return np.sin(np.asarray(x))


def host_pair(x, y):
    return np.asarray(x) * 2, {"n": np.asarray(y) + 1}


def _program(lib, io_callback):
    """Every callback kind in one function of ``lib`` (irax or JAX)."""
    def f(x, n):
        y = lib.pure_callback(host_sin, lib.ShapeDtypeStruct(x.shape, x.dtype), x)
        lib.debug.print("x={x} y={} n={n} {s}", y, x=x, n=n, s="static")
        doubled, rest = lib.pure_callback(
            host_pair, (lib.ShapeDtypeStruct(x.shape, x.dtype), {"n": lib.ShapeDtypeStruct((), np.int32)}), x, y=n)
        z = io_callback(host_sin, lib.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True)
        lib.debug.callback(lambda a, b: None, x, b=n)
        return y + z + doubled, rest["n"]
    return f


IRAX_PROGRAM = _program(irax, irax.experimental.io_callback)
JAX_PROGRAM = _program(jax, jax.experimental.io_callback)


def _same(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_jaxpr_text_is_jaxs():
    assert str(irax.make_jaxpr(IRAX_PROGRAM)(X, 3)) == str(jax.make_jaxpr(JAX_PROGRAM)(X, 3))


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_values_and_prints_are_jaxs(mode, capsys):
    got = (IRAX_PROGRAM if mode == "eager" else irax.jit(IRAX_PROGRAM))(X, 3)
    printed = capsys.readouterr().out
    want = jax.jit(JAX_PROGRAM)(X, 3)
    jax.effects_barrier()
    _same(got, want)
    assert printed == capsys.readouterr().out and "static" in printed


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16, np.complex64])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_pure_callback_dtypes_and_shapes(dtype, shape):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
    def f(lib):
        return lambda a: lib.pure_callback(lambda v: np.asarray(v)[..., None].repeat(2, -1),
                                           lib.ShapeDtypeStruct(shape + (2,), dtype), a)
    want = jax.jit(f(jax))(x)
    _same(f(irax)(x), want)
    _same(irax.jit(f(irax))(x), want)


def test_callback_sees_arrays_and_kwargs():
    seen = []
    def host(a, *, scale):
        seen.append((type(a), type(scale)))
        return a * scale
    f = irax.jit(lambda x: irax.pure_callback(host, x, x, scale=2.0))
    np.testing.assert_array_equal(f(np.ones(2, np.float32)), [2, 2])
    assert seen == [(type(irax.numpy.ones(1)),) * 2] and issubclass(seen[0][0], irax.Array)


def test_different_callbacks_share_a_compile_but_not_a_function():
    """The compiled text names imports by position, so the compile cache serves both; each runs its own."""
    def make(k):
        return irax.jit(lambda x: irax.pure_callback(lambda v: np.asarray(v) + k, x, x))
    first, second = make(1.0), make(2.0)
    def code(f):
        return re.sub(r"\s*loc\(.*\)|#loc.*", "", f.lower(X).as_text())
    assert code(first) == code(second)
    np.testing.assert_array_equal(first(np.zeros(2, np.float32)), [1, 1])
    np.testing.assert_array_equal(second(np.zeros(2, np.float32)), [2, 2])


def test_io_callbacks_run_in_program_order_and_are_kept():
    log = []
    def record(tag):
        return lambda v: log.append((tag, float(np.asarray(v)))) or np.asarray(v)
    def f(x):
        a = irax.experimental.io_callback(record("a"), x, x, ordered=True)
        irax.experimental.io_callback(record("unused"), x, a * 2, ordered=True)
        irax.pure_callback(record("pure unused"), x, x)
        return irax.experimental.io_callback(record("b"), x, a + 1, ordered=True)
    assert float(irax.jit(f)(np.float32(1))) == 2
    assert log == [("a", 1.0), ("unused", 2.0), ("b", 2.0)]


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                                    "legacy_vectorized"])
def test_vmap_methods_are_jaxs(method):
    def f(lib, calls):
        def host(x, y):
            calls.append((np.shape(x), np.shape(y)))
            return np.asarray(x) + np.asarray(y)
        return lib.vmap(lambda x, y: lib.pure_callback(host, x, x, y, vmap_method=method), in_axes=(0, None))
    xs, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    irax_calls, jax_calls = [], []
    want = jax.jit(f(jax, jax_calls))(xs, y)
    _same(irax.jit(f(irax, irax_calls))(xs, y), want)
    assert irax_calls == jax_calls
    assert str(irax.make_jaxpr(f(irax, []))(xs, y)) == str(jax.make_jaxpr(f(jax, []))(xs, y))


def test_vmap_refusals_are_jaxs():
    xs = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match="vmap_method=None"):
        irax.vmap(lambda x: irax.pure_callback(host_sin, x, x))(xs)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        irax.vmap(lambda x: irax.experimental.io_callback(host_sin, x, x, ordered=True))(xs)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        irax.pure_callback(host_sin, xs, xs, vmap_method="vectorized")
    def unordered(lib, io_callback):
        return lib.vmap(lambda x: io_callback(host_sin, x, x))
    assert (str(irax.make_jaxpr(unordered(irax, irax.experimental.io_callback))(xs))
            == str(jax.make_jaxpr(unordered(jax, jax.experimental.io_callback))(xs)))


def _printing_program(lib):
    def body(i, c):
        lib.debug.print("i={i} c={c}", i=i, c=c)
        return c * 2

    def g(x):
        lib.debug.print("x {}", x)
        lib.lax.cond(x.sum() > 0, lambda: lib.debug.print("positive"), lambda: lib.debug.print("not"))
        return lib.lax.fori_loop(0, 2, body, x).sum()
    return g


@pytest.mark.parametrize("transform", ["jit-vmap", "jit-grad", "grad"])
def test_debug_print_under_vmap_grad_and_loops_is_jaxs(transform, capsys):
    def apply(lib):
        g = _printing_program(lib)
        return {"jit-vmap": lambda: lib.jit(lib.vmap(g)), "jit-grad": lambda: lib.jit(lib.grad(g)),
                "grad": lambda: lib.grad(g)}[transform]()
    x = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    x = x if transform == "jit-vmap" else x[0]
    got = apply(irax)(x)
    printed = capsys.readouterr().out
    want = apply(jax)(x)
    jax.effects_barrier()
    assert sorted(printed.splitlines()) == sorted(capsys.readouterr().out.splitlines())  # unordered effects
    _same(got, want)


def test_print_options_static_args_and_forms(capsys):
    def f(lib):
        def g(x):
            lib.debug.print("{} {s} {n}", x, s="text", n=None)
            lib.debug.print("no placeholders", x, skip_format_check=True)
            lib.debug.print(ordered=True)("two-call {}", x)
        return g
    x = np.array([1 / 3, 2 / 3], np.float32)
    with np.printoptions(precision=3):
        irax.jit(f(irax))(x)
        printed = capsys.readouterr().out
        jax.jit(f(jax))(x)
        jax.effects_barrier()
    assert printed == capsys.readouterr().out and "0.333" in printed
    with pytest.raises(ValueError, match="Unused positional arguments"):
        irax.debug.print("{}", 1, 2)
    with pytest.raises(ValueError, match="Unused keyword arguments"):
        irax.jit(lambda x: irax.debug.print("x", x=x))(x)
    with pytest.raises(TypeError, match="two-call form"):
        irax.debug.print(None, 1)


def test_gradients_refuse_and_custom_jvp_gives_them():
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        irax.grad(lambda x: irax.pure_callback(host_sin, x, x))(1.0)
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        irax.grad(lambda x: irax.experimental.io_callback(host_sin, x, x))(1.0)

    def make(lib):
        @lib.custom_jvp
        def sin(x):
            return lib.pure_callback(host_sin, x, x)

        @sin.defjvp
        def _(primals, tangents):
            (x,), (t,) = primals, tangents
            return sin(x), lib.pure_callback(lambda v: np.cos(np.asarray(v)), x, x) * t
        return lib.jit(lib.grad(lambda x: sin(x) * x))
    _same(make(irax)(np.float32(0.7)), make(jax)(np.float32(0.7)))


def test_callback_errors_name_the_problem():
    x = np.ones(3, np.float32)
    for f in (irax.jit(lambda v: irax.pure_callback(lambda a: 1 / 0, v, v)),
              lambda v: irax.pure_callback(lambda a: 1 / 0, v, v)):
        with pytest.raises(JaxRuntimeError, match=r"test_callbacks.py:\d+\) failed: ZeroDivisionError") as info:
            f(x)
        assert isinstance(info.value.__cause__, ZeroDivisionError)
    with pytest.raises(JaxRuntimeError, match=r"Incorrect output shape for return value #0: Expected: \(3,\), "
                                              r"Actual: \(2,\)"):
        irax.jit(lambda v: irax.pure_callback(lambda a: np.asarray(a)[:2], v, v))(x)
    with pytest.raises(JaxRuntimeError, match="Incorrect output dtype for return value #0: Expected: float32, "
                                              "Actual: int32"):
        irax.jit(lambda v: irax.pure_callback(lambda a: np.asarray(a).astype(np.int32), v, v))(x)
    with pytest.raises(JaxRuntimeError, match=r"structure PyTreeDef\(\(\*, \*\)\), but result_shape_dtypes"):
        irax.jit(lambda v: irax.pure_callback(lambda a: (a, a), v, v))(x)
    with pytest.raises(JaxRuntimeError, match="host callback"):
        irax.jit(lambda v: irax.debug.callback(lambda a: [][1], v))(x)
    g = irax.jit(lambda v: irax.pure_callback(host_sin, v, v))
    np.testing.assert_allclose(g(x), np.sin(x))  # the process and the executable go on


def test_export_refuses_host_callbacks():
    with pytest.raises(NotImplementedError, match="serialization of host_callbacks is not yet implemented"):
        irax.export.export(irax.jit(lambda v: irax.pure_callback(host_sin, v, v)))(X)


def test_module_round_trips_in_process_and_not_beyond():
    from irax.ir.parse import parse_module
    from irax.ir.verify import verify_module
    text = irax.jit(lambda v: irax.pure_callback(host_sin, v, v)).lower(X).as_text(dialect="jaxpr")
    verify_module(parse_module(text))
    stale = re.sub(r"callback = \d+ : i64", "callback = 99999999 : i64", text)
    with pytest.raises(irax.errors.VerificationError, match="host object #99999999 is not in this process"):
        verify_module(parse_module(stale))


def test_vulkan_device():
    from test_devices import lavapipe_icd
    if not lavapipe_icd():
        pytest.skip("no Vulkan driver")
    gpu = irax.devices("vulkan")[0]
    x = irax.device_put(inp.arange(4.0), gpu)
    out = irax.jit(lambda v: irax.pure_callback(lambda a: np.asarray(a) * 10, v, v) + 1)(x)
    np.testing.assert_array_equal(out, [1, 11, 21, 31])
    assert out.devices() == {gpu}


def test_process_exits_cleanly():
    """IREE's module of Python functions holds them from C++: no reference cycle may keep it alive at exit
    (nanobind reports leaked instances then)."""
    script = textwrap.dedent("""
        import numpy as np, irax
        def host(x):
            f  # the jitted function, through this module's globals: a cycle through IREE's module
            return np.asarray(x) + 1
        f = irax.jit(lambda x: irax.pure_callback(host, x, x) * 2)
        print(f(np.ones(2, np.float32)))
        irax.jit(lambda x: irax.debug.print("done {}", x))(np.float32(1))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[4.", "4.]", "done", "1.0"]
    assert "leaked" not in run.stderr, run.stderr


def test_scan_and_while_bodies_keep_their_effects():
    log = []
    def f(x):
        def body(c, v):
            irax.experimental.io_callback(lambda a: log.append(float(np.asarray(a))), None, v, ordered=True)
            return c, None
        ilax.scan(body, 0.0, x)
        return x.sum()
    assert float(irax.jit(f)(np.array([1.0, 2.0], np.float32))) == 3
    assert log == [1.0, 2.0]


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_checkpoint_reruns_its_prints_as_jax(mode, capsys):
    """A checkpointed function runs again in the backward pass, its prints too."""
    def grad_of(lib):
        def inner(y):
            lib.debug.print("ck {}", y * 2)
            return (y * 2).sum()
        g = lib.grad(lambda x: lib.checkpoint(inner)(x))
        return g if mode == "eager" else lib.jit(g)
    x = np.array([1.0, 2.0], np.float32)
    got = grad_of(irax)(x)
    printed = capsys.readouterr().out
    want = grad_of(jax)(x)
    jax.effects_barrier()
    assert printed == capsys.readouterr().out == "ck [2. 4.]\nck [2. 4.]\n"
    _same(got, want)
