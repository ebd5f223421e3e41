"""The ``irax`` command, run as a user runs it (a subprocess)."""
import os
import subprocess
import sys
import textwrap

import pytest

MODEL = textwrap.dedent("""
    import irax.numpy as jnp

    def predict(x, w, scale=1.0):
        return jnp.tanh(x @ w) * scale
""")


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "irax.tools.cli", *args], capture_output=True, text=True,
                          input=stdin, timeout=300)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return str(path)


def test_jaxpr_prints_the_jaxpr(model):
    out = run("jaxpr", f"{model}:predict", "--arg", "f32[2,3]", "--arg", "f32[3,4]", "--static", "scale=2.0")
    assert out.returncode == 0, out.stderr
    assert "dot_general" in out.stdout and "tanh" in out.stdout and "mul" in out.stdout
    assert out.stdout.startswith("{ lambda ; a:f32[2,3] b:f32[3,4]. let")


def test_jaxpr_mlir_has_user_locations(model):
    out = run("jaxpr", f"{model}:predict", "--arg", "f32[2,3]", "--arg", "f32[3,4]", "--mlir")
    assert out.returncode == 0, out.stderr
    assert '"jaxpr.tanh"' in out.stdout and "model.py\":5:" in out.stdout


def test_opt_lowers_and_prints_after_each_pass(model, tmp_path):
    mlir = run("jaxpr", f"{model}:predict", "--arg", "f32[2,3]", "--arg", "f32[3,4]", "--mlir").stdout
    path = tmp_path / "m.mlir"
    path.write_text(mlir)
    out = run("opt", str(path), "--pass-pipeline=builtin.module(jaxpr-dce,jaxpr-to-stablehlo,canonicalize)",
              "--print-ir-after-all", "-o", str(tmp_path / "out.mlir"))
    assert out.returncode == 0, out.stderr
    assert "IR Dump After" in out.stderr
    lowered = (tmp_path / "out.mlir").read_text()
    assert "stablehlo.dot_general" in lowered and "jaxpr." not in lowered


def test_passes_lists_every_pass():
    out = run("passes")
    assert out.returncode == 0
    for name in ("jaxpr-inline", "jaxpr-dce", "jaxpr-cse", "jaxpr-verify", "jaxpr-to-stablehlo", "jaxpr-jvp",
                 "jaxpr-linearize", "jaxpr-transpose"):
        assert name in out.stdout


@pytest.mark.parametrize("args,message", [
    (("jaxpr", "missing.py:f", "--arg", "f32[3]"), "no such file"),
    (("jaxpr", "nofunction"), "expected FILE.py:FUNCTION"),
    (("opt", "missing.mlir"), "no such file"),
])
def test_user_errors_are_one_line(args, message):
    out = run(*args)
    assert out.returncode == 1
    assert message in out.stderr and "Traceback" not in out.stderr


def test_bad_spec_unknown_pass_and_bad_ir(model, tmp_path):
    out = run("jaxpr", f"{model}:predict", "--arg", "f32[2,x]")
    assert out.returncode == 1 and "bad shape spec" in out.stderr and "Traceback" not in out.stderr
    good = tmp_path / "ok.mlir"
    good.write_text("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  return %a : tensor<3xf32>\n}\n")
    out = run("opt", str(good), "--pass-pipeline=builtin.module(no-such-pass)")
    assert out.returncode == 1 and "no-such-pass" in out.stderr and "Traceback" not in out.stderr
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  %0 = \"jaxpr.sin\"(%a) :\n}\n")
    out = run("opt", str(bad))
    assert out.returncode == 1 and "bad.mlir:" in out.stderr and "Traceback" not in out.stderr


def test_jaxpr_transform_grad_prints_jax_text(tmp_path):
    path = tmp_path / "loss.py"
    path.write_text("import irax.numpy as jnp\n\ndef loss(x, w):\n    return jnp.sum(jnp.tanh(x @ w))\n")
    out = run("jaxpr", f"{path}:loss", "--arg", "f32[2,3]", "--arg", "f32[3,4]", "--transform", "grad")
    assert out.returncode == 0, out.stderr
    jax = pytest.importorskip("jax")
    expected = jax.make_jaxpr(jax.grad(lambda x, w: jax.numpy.sum(jax.numpy.tanh(x @ w)), argnums=(0, 1)))(
        jax.numpy.ones((2, 3)), jax.numpy.ones((3, 4)))
    assert out.stdout.strip() == str(expected).strip()


def test_jaxpr_transform_prints_each_autodiff_pass(tmp_path):
    path = tmp_path / "loss.py"
    path.write_text("import irax.numpy as jnp\n\ndef loss(x):\n    return jnp.sum(jnp.sin(x))\n")
    out = run("jaxpr", f"{path}:loss", "--arg", "f32[3]", "--transform", "grad", "--print-ir-after-all")
    assert out.returncode == 0, out.stderr
    for name in ("jaxpr-jvp", "jaxpr-linearize", "jaxpr-transpose"):
        assert f"IR Dump After {name}" in out.stderr
    assert "@main_jvp_lin_t" in out.stderr and out.stdout.startswith("{ lambda ; a:f32[3]. let")


def test_jaxpr_transform_vmap_prints_jax_text(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("import irax.numpy as jnp\n\ndef f(x, w):\n    return jnp.tanh(x @ w)\n")
    out = run("jaxpr", f"{path}:f", "--arg", "f32[5,3]", "--arg", "f32[3,4]", "--transform", "vmap",
              "--in-axes", "0,none")
    assert out.returncode == 0, out.stderr
    jax = pytest.importorskip("jax")
    expected = jax.make_jaxpr(jax.vmap(lambda x, w: jax.numpy.tanh(x @ w), in_axes=(0, None)))(
        jax.numpy.ones((5, 3)), jax.numpy.ones((3, 4)))
    assert out.stdout.strip() == str(expected).strip()


def test_jaxpr_transform_vmap_prints_the_batch_pass(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("import irax.numpy as jnp\n\ndef f(x):\n    return jnp.sum(jnp.sin(x))\n")
    out = run("jaxpr", f"{path}:f", "--arg", "f32[7,3]", "--transform", "vmap", "--print-ir-after-all")
    assert out.returncode == 0, out.stderr
    assert "IR Dump After jaxpr-batch" in out.stderr and "@main_batched" in out.stderr
    assert "tensor<7x3xf32>" in out.stderr and out.stdout.startswith("{ lambda ; a:f32[7,3]. let")


def test_opt_runs_the_batch_pass_on_a_file(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(textwrap.dedent("""
        func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
          %0 = "jaxpr.mul"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
          return %0 : tensor<3xf32>
        }
    """))
    out = run("opt", str(path), "--pass-pipeline",
              "builtin.module(jaxpr-batch{func=f in_axes=1,none axis_size=5},jaxpr-verify)")
    assert out.returncode == 0, out.stderr
    assert "func.func @f_batched(%arg0: tensor<3x5xf32>, %arg1: tensor<3xf32>) -> tensor<5x3xf32>" in out.stdout
    assert '"jaxpr.transpose"' in out.stdout and "(tensor<5x3xf32>, tensor<1x3xf32>)" in out.stdout


def test_opt_runs_the_autodiff_passes_on_a_file(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(textwrap.dedent("""
        func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
          %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
          %1 = "jaxpr.reduce_sum"(%0) {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
          return %1 : tensor<f32>
        }
    """))
    out = run("opt", str(path), "--pass-pipeline=builtin.module(jaxpr-jvp{func=f argnums=0},"
              "jaxpr-linearize{func=f_jvp},jaxpr-transpose{func=f_jvp_lin},jaxpr-verify)")
    assert out.returncode == 0, out.stderr
    assert "func.func @f_jvp_lin_t" in out.stdout and '"jaxpr.cos"' in out.stdout
