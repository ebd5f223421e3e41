"""The autodiff passes on hand-written ``.mlir``: input IR to expected functions, each verified."""
import textwrap

import pytest

from irax.ir.errors import PassPipelineError
from irax.ir.parse import parse_module
from irax.ir.printer import jaxpr_text
from irax.passes import run_pipeline

SIN_TIMES_Y = """
module {
  func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
    %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %1 = "jaxpr.mul"(%0, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %2 = "jaxpr.reduce_sum"(%1) {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}
"""

PIPELINE = "builtin.module(jaxpr-jvp{{func=f argnums={argnums}}},{rest}jaxpr-verify)"


def _run(text, argnums="0", rest=""):
    module = parse_module(text)
    run_pipeline(module, PIPELINE.format(argnums=argnums, rest=rest))
    return module


def _text(module, name):
    return jaxpr_text(module, name).strip()


def test_jvp_emits_each_primal_then_its_tangent():
    module = _run(SIN_TIMES_Y)
    assert _text(module, "f_jvp") == textwrap.dedent("""\
        { lambda ; a:f32[3] b:f32[3] c:f32[3]. let
            d:f32[3] = sin a
            e:f32[3] = cos a
            f:f32[3] = mul c e
            g:f32[3] = mul d b
            h:f32[3] = mul f b
            i:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
            j:f32[] = reduce_sum[axes=(0,) out_sharding=None] h
          in (i, j) }""")


def test_jvp_with_respect_to_the_second_argument_emits_no_tangent_for_sin():
    module = _run(SIN_TIMES_Y, argnums="1")
    assert "cos" not in _text(module, "f_jvp")


def test_linearize_splits_primal_and_linear_parts():
    module = _run(SIN_TIMES_Y, rest="jaxpr-linearize{func=f_jvp},")
    assert _text(module, "f_jvp_primal") == textwrap.dedent("""\
        { lambda ; a:f32[3] b:f32[3]. let
            c:f32[3] = sin a
            d:f32[3] = cos a
            e:f32[3] = mul c b
            f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
          in (f, d, b) }""")
    assert _text(module, "f_jvp_lin") == textwrap.dedent("""\
        { lambda ; a:f32[3] b:f32[3] c:f32[3]. let
            d:f32[3] = mul c a
            e:f32[3] = mul d b
            f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
          in (f,) }""")


def test_transpose_runs_the_linear_ops_backwards():
    module = _run(SIN_TIMES_Y, rest="jaxpr-linearize{func=f_jvp},jaxpr-transpose{func=f_jvp_lin},")
    assert _text(module, "f_jvp_lin_t") == textwrap.dedent("""\
        { lambda ; a:f32[3] b:f32[3] c:f32[]. let
            d:f32[3] = broadcast_in_dim c
            e:f32[3] = mul d b
            f:f32[3] = mul e a
          in (f,) }""")


def test_transpose_gives_zeros_to_unused_inputs():
    text = """
    module {
      func.func @g(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "jaxpr.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
        return %0 : tensor<2xf32>
      }
    }
    """
    module = parse_module(text)
    run_pipeline(module, "builtin.module(jaxpr-transpose{func=g},jaxpr-verify)")
    assert _text(module, "g_t") == textwrap.dedent("""\
        { lambda ; a:f32[2]. let
            b:f32[2] = neg a
            c:f32[2] = broadcast_in_dim 0.0:f32[]
          in (b, c) }""")


def test_jvp_of_an_integer_argument_is_an_error():
    text = """
    module {
      func.func @h(%x: tensor<i32>) -> tensor<i32> {
        return %x : tensor<i32>
      }
    }
    """
    with pytest.raises(TypeError, match="only floating-point and complex arguments have tangents"):
        run_pipeline(parse_module(text), "builtin.module(jaxpr-jvp{func=h})")


def test_linearize_needs_a_jvp_function_and_unknown_functions_are_named():
    with pytest.raises(ValueError, match="not a JVP function"):
        run_pipeline(parse_module(SIN_TIMES_Y), "builtin.module(jaxpr-linearize{func=f})")
    with pytest.raises(PassPipelineError, match="no function @nope"):
        run_pipeline(parse_module(SIN_TIMES_Y), "builtin.module(jaxpr-jvp{func=nope})")


def test_remat_recomputes_instead_of_saving():
    module = _run(SIN_TIMES_Y, rest="jaxpr-remat{func=f_jvp policy=nothing_saveable},")
    assert _text(module, "f_jvp_primal").endswith("in (e, a, b) }")  # only the inputs are saved
    assert "cos a" in _text(module, "f_jvp_lin")  # recomputed in the linear half
    saved = _run(SIN_TIMES_Y, rest="jaxpr-remat{func=f_jvp policy=everything_saveable},")
    assert "cos" not in _text(saved, "f_jvp_lin")
    with pytest.raises(ValueError, match="unknown checkpoint policy 'bogus'"):
        _run(SIN_TIMES_Y, rest="jaxpr-remat{func=f_jvp policy=bogus},")
