"""``jaxpr-batch`` on hand-written ``.mlir``: each batched function checked against its expected jaxpr, verified."""
import textwrap

import numpy as np
import pytest

from irax.backends import interpreter
from irax.ir.errors import PassPipelineError
from irax.ir.parse import parse_module
from irax.ir.printer import jaxpr_text
from irax.passes import run_pipeline

PROGRAM = """
module {
  func.func @f(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> (tensor<3xf32>, tensor<2xf32>, tensor<f32>, tensor<2x3xf32>,
                                                         tensor<3x1xf32>, tensor<3xf32>) {
    %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %1 = "jaxpr.mul"(%0, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %2 = "jaxpr.dot_general"(%x, %w) {dimension_numbers = [array<i64: 0>, array<i64: 0>, array<i64>, array<i64>]}
         : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
    %3 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
    %4 = "jaxpr.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 2, 3>}
         : (tensor<3xf32>) -> tensor<2x3xf32>
    %5 = "jaxpr.reshape"(%x) {new_sizes = array<i64: 3, 1>} : (tensor<3xf32>) -> tensor<3x1xf32>
    %6 = "jaxpr.pjit"(%x) {callee = @sin_0, name = "sin"} : (tensor<3xf32>) -> tensor<3xf32>
    return %1, %2, %3, %4, %5, %6 : tensor<3xf32>, tensor<2xf32>, tensor<f32>, tensor<2x3xf32>, tensor<3x1xf32>,
                                     tensor<3xf32>
  }
  func.func private @sin_0(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "jaxpr.sin"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""


def _batched(options, text=PROGRAM):
    module = parse_module(text)
    run_pipeline(module, f"builtin.module(jaxpr-batch{{func=f {options}}},jaxpr-verify)")
    return module


def test_x_batched_on_axis_0():
    module = _batched("in_axes=0,none axis_size=4")
    assert jaxpr_text(module, "f_batched").strip() == textwrap.dedent("""\
        { lambda ; a:f32[4,3] b:f32[3,2]. let
            c:f32[4,3] = sin a
            d:f32[4,3] = mul c a
            e:f32[4,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
            f:f32[4] = reduce_sum[axes=(np.int64(1),) out_sharding=None] a
            g:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] a
            h:f32[4,3,1] = reshape[dimensions=None new_sizes=(4, 3, 1) sharding=None] a
            i:f32[4,3] = jit[
              name=sin
              jaxpr={ lambda ; a:f32[4,3]. let i:f32[4,3] = sin a in (i,) }
            ] a
          in (d, e, f, g, h, i) }""")


def test_batch_on_last_axis_keeps_elementwise_in_place_and_moves_outputs_to_out_axes():
    module = _batched("in_axes=1,none axis_size=5")
    text = jaxpr_text(module, "f_batched")
    assert "c:f32[3,5] = sin a\n    d:f32[3,5] = mul c a" in text
    assert "reduce_sum[axes=(np.int64(0),)" in text
    assert "f32[5,3] = transpose[permutation=(1, 0)] d" in text


def test_unbatched_argument_ops_are_copied_unbatched():
    module = _batched("in_axes=none,0 axis_size=2")
    text = jaxpr_text(module, "f_batched")
    assert "c:f32[3] = sin a" in text and "d:f32[3] = mul c a" in text
    assert "dot_general" in text and "f32[2,2]" in text


def test_batched_function_computes_stacked_examples():
    module = _batched("in_axes=0,none axis_size=4")
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    w = np.arange(6, dtype=np.float32).reshape(3, 2) / 5
    got = interpreter.evaluate(module, [x, w], "f_batched")
    single = [interpreter.evaluate(parse_module(PROGRAM), [x[i], w], "f") for i in range(4)]
    for k, out in enumerate(got):
        np.testing.assert_allclose(out, np.stack([s[k] for s in single]), rtol=1e-6)


def test_zero_sized_batch():
    module = _batched("in_axes=0,0 axis_size=0")
    assert "a:f32[0,3] b:f32[0,3,2]" in jaxpr_text(module, "f_batched")


@pytest.mark.parametrize("options, message", [
    ("in_axes=0,none", "axis_size"),
    ("in_axes=0 axis_size=3 out_axes=none", "out_axes"),
    ("in_axes=0,0,0 axis_size=3", "in_axes names 3 axes"),
    ("in_axes=2,none axis_size=3", "out of bounds"),
])
def test_bad_options_are_reported(options, message):
    with pytest.raises((PassPipelineError, ValueError), match=message):
        _batched(options)
