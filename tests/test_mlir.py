"""The dialect's textual form: round trips, hand-written modules, and verification errors."""
import json
import subprocess
import sys

import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax.backends.iree import compile_stablehlo
from irax.errors import ArtifactError, MLIRParseError, VerificationError
from irax.ir.parse import parse_module
from irax.ir.verify import verify_module
from irax.passes import run_pipeline
from irax.runtime.executable import Executable


def _traced_text(fn, *args):
    return irax.make_jaxpr(fn)(*args).jaxpr.mlir


def test_print_parse_print_round_trip():
    text = _traced_text(lambda x, y: (jnp.sin(x) @ y, jnp.argmax(x, 1)), jnp.ones((2, 3)), jnp.ones((3, 4)))
    module = parse_module(text)
    assert module.operation.get_asm(enable_debug_info=True) == text


HAND_WRITTEN = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %0 = "jaxpr.mul"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "jaxpr.reduce_sum"(%0) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %2 = "jaxpr.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<f32>
}
"""


def test_hand_written_module_verifies_lowers_compiles_and_runs():
    module = parse_module(HAND_WRITTEN)
    run_pipeline(module, "builtin.module(jaxpr-verify,jaxpr-dce,jaxpr-to-stablehlo)")
    text = module.operation.get_asm()
    assert "stablehlo.sine" not in text  # dead code removed
    exe = Executable(compile_stablehlo(text))
    x = np.arange(4, dtype=np.float32)
    (out,) = exe.call(exe.function("main"), [exe.device.put(x), exe.device.put(x)], 1)
    from irax.runtime.device import to_host
    assert float(to_host(out, (), np.float32)) == float(x @ x)


def _valid_vmfb():
    return compile_stablehlo(irax.jit(lambda x: x * 2).lower(np.ones(3, np.float32)).as_text())


@pytest.mark.parametrize("corrupt", [
    lambda good: b"",
    lambda good: b"not a module at all",
    lambda good: good[: len(good) // 2],
    lambda good: good[:16] + bytes(len(good) - 16),
], ids=["empty", "garbage", "truncated", "zeroed-body"])
def test_corrupt_vmfb_raises_artifact_error_not_a_crash(corrupt):
    """The runtime aborts the process on some bad flatbuffers, so loading must reject them first."""
    with pytest.raises(ArtifactError, match="not a valid IREE module"):
        Executable(corrupt(_valid_vmfb()), name="model.vmfb")


@pytest.mark.parametrize("body,message", [
    ('%0 = "jaxpr.sin"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>', "expects 1 operands, got 2"),
    ('%0 = "jaxpr.reduce_sum"(%x) : (tensor<4xf32>) -> tensor<4xf32>', "requires attribute 'axes'"),
    ('%0 = "jaxpr.reduce_sum"(%x) {axes = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>', "wrong kind"),
    ('%0 = "jaxpr.sin"(%x) : (tensor<4xf32>) -> tensor<5xf32>', "differ from the types its shape rule gives"),
    ('%0 = "jaxpr.frobnicate"(%x) : (tensor<4xf32>) -> tensor<4xf32>', "unknown op 'jaxpr.frobnicate'"),
    ('%0 = "jaxpr.sin"(%i) : (tensor<4xi32>) -> tensor<4xi32>', "sin does not accept dtype int32"),
    ('%0 = "jaxpr.literal"() {value = dense<(1.0,2.0)> : tensor<complex<f32>>} : () -> tensor<complex<f32>>',
     r"cannot be read.*\[re, im\]"),
])
def test_verifier_rejects_malformed_ops_at_their_location(body, message):
    text = ("func.func @f(%x: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<4xf32> {\n"
            f"  {body}\n  return %x : tensor<4xf32>\n}}\n")
    module = parse_module(text, "bad.mlir")
    with pytest.raises(VerificationError, match=message) as info:
        verify_module(module)
    assert ":2:" in str(info.value)


def test_malformed_text_names_file_and_line():
    with pytest.raises(MLIRParseError, match=r"model.mlir:2:\d+"):
        parse_module("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  %0 = \"jaxpr.sin\"(%a) :\n}\n",
                     "model.mlir")
    with pytest.raises(MLIRParseError):
        parse_module("this is not mlir")


def test_locations_reach_the_jaxpr_ops():
    def f(x):
        return jnp.exp(x)
    text = _traced_text(f, jnp.ones(3))
    assert "test_mlir.py" in text


def _lowered_op_names(fn, *args):
    from irax.ir.mlir import ir, scope
    from irax.passes import COMPILE_PIPELINE
    with scope():
        module = irax.jit(fn).trace(*args)._traced.module.operation.clone()
        run_pipeline(module.opview, COMPILE_PIPELINE)
        names = set()
        module.walk(lambda op: names.add(op.name) or ir.WalkResult.ADVANCE)
    return names


def _broad_program(x, m, i):
    """Lowerings from most of the rule modules: elementwise and f64-free special functions, reductions, control
    flow, sorts, gathers and scatters, convolution, linear algebra, FFT, random bits and autodiff through them."""
    def loss(x):
        y = jnp.sort(jnp.tanh(x) * irax.scipy.special.erf(x) + irax.lax.lgamma(x * x + 1.0))
        y = irax.lax.fori_loop(0, 3, lambda k, c: c * 0.5 + jnp.cumsum(c), y)
        y = irax.lax.cond(y[0] > 0, jnp.sin, jnp.cos, y)
        return (y[i] ** 2).sum() + jnp.linalg.slogdet(m @ m.T + 4 * jnp.eye(3))[1]
    conv = irax.lax.conv(x.reshape(1, 1, 2, 3), jnp.ones((1, 1, 2, 2)), (1, 1), "SAME")
    chol = jnp.linalg.cholesky(m @ m.T + jnp.eye(3))
    return (irax.grad(loss)(x.ravel()), conv, chol, jnp.linalg.eigh(chol @ chol.T)[0], jnp.fft.rfft(x),
            irax.random.normal(irax.random.PRNGKey(0), (3,)), x.ravel().at[i].add(1.0), jnp.argsort(m, axis=0))


def test_tracing_and_lowering_load_no_python_dialect_module():
    """irax builds func.func ops generically and stands in for the builtin and func dialects' Python modules:
    theirs (and typing_extensions with them) cost ~5 ms of a fresh process's first call."""
    script = """
import sys, json
import numpy as np
import irax, irax.numpy as jnp
print(irax.jit(lambda x: irax.grad(lambda y: jnp.sin(y).sum())(x) * 2)(np.ones(3, np.float32)))
print(json.dumps(sorted(m for m in sys.modules if m.startswith("iree.compiler.dialects"))))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_every_lowered_op_is_registered_in_the_context():
    """irax's context loads only the dialects irax creates ops of (mlir.LOADED_DIALECTS); an op of a dialect left
    out would come out unregistered and skip verification and folding."""
    from irax.ir.mlir import context
    names = _lowered_op_names(_broad_program, np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
                              np.arange(9, dtype=np.float32).reshape(3, 3) / 9, np.array([0, 2], np.int32))
    assert {"stablehlo.sort", "stablehlo.while", "stablehlo.convolution", "stablehlo.gather",
            "stablehlo.scatter"} <= names
    unregistered = sorted(n for n in names if not context().is_registered_operation(n))
    assert not unregistered, f"ops of dialects irax's context did not load: {unregistered}"
