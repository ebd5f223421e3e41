"""The dialect's textual form: round trips, hand-written modules, and verification errors."""
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
