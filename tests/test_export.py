"""Ahead-of-time artifacts: ``irax.export`` round trips, loading with the runtime alone (compiler import blocked,
in a fresh process), IREE's own ``iree-run-module``, the ``irax compile|run|inspect`` commands, and every kind of
bad input: corrupt, truncated and foreign files, wrong call structure, shape and dtype, unknown targets."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax import export
from irax.errors import ArtifactError
from irax.runtime import artifact

from device_programs import GPU_PROGRAMS, lavapipe_icd

W = np.arange(8, dtype=np.float32).reshape(2, 4) / 10


def predict(params, x, *, scale):
    """A closed-over constant (W), a pytree argument and a pytree result."""
    hidden = jnp.tanh(x @ params["w"] + params["b"]) @ W
    return {"logits": hidden * scale, "stats": (jnp.mean(hidden), jnp.max(hidden, axis=0))}


PARAMS = {"w": np.linspace(-1, 1, 10, dtype=np.float32).reshape(5, 2), "b": np.array([0.5, -0.5], np.float32)}
X = np.linspace(0, 1, 15, dtype=np.float32).reshape(3, 5)


def _exported():
    jitted = irax.jit(lambda params, x: predict(params, x, scale=2.0))
    x_spec = irax.ShapeDtypeStruct(X.shape, X.dtype)
    return jitted, export.export(jitted)(PARAMS, x_spec)


def _same(a, b):
    la, lb = irax.tree_util.tree_leaves(a), irax.tree_util.tree_leaves(b)
    assert irax.tree_util.tree_structure(a) == irax.tree_util.tree_structure(b)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)


def test_export_call_serialize_deserialize():
    jitted, exp = _exported()
    want = jitted(PARAMS, X)
    lowered = jitted.lower(PARAMS, X)
    assert exp.in_tree == lowered.in_tree and exp.out_tree == lowered.out_tree
    assert [a.shape for a in exp.in_avals] == [(2,), (5, 2), (3, 5)]
    assert exp.fun_name == "<lambda>" and exp.platforms == ("cpu",)
    _same(exp.call(PARAMS, X), want)
    again = export.deserialize(exp.serialize())
    assert again.in_avals == exp.in_avals and again.out_avals == exp.out_avals and again.out_tree == exp.out_tree
    _same(again.call(PARAMS, X), want)
    text = exp.mlir_module()
    assert "func.func private @main__main" in text and "ml_program.global private @irax_const_0" in text
    with pytest.raises(ValueError, match="keeps only its compiled module"):
        again.mlir_module()


def test_load_in_a_process_without_the_compiler(tmp_path):
    """The saved file runs in a fresh process where importing iree.compiler fails, and loading it imports no
    part of the tracing frontend, nor ml_dtypes (half a second) for a module without bfloat16."""
    jitted, exp = _exported()
    path = tmp_path / "model.vmfb"
    exp.save(path)
    np.savez(tmp_path / "inputs.npz", w=PARAMS["w"], b=PARAMS["b"], x=X)
    script = f"""
import sys, json
sys.modules["iree.compiler"] = None
import numpy as np
import irax.runtime
f = irax.runtime.load({str(path)!r})
a = np.load({str(tmp_path / "inputs.npz")!r})
out = f({{"w": a["w"], "b": a["b"]}}, a["x"])
np.savez({str(tmp_path / "out.npz")!r}, logits=out["logits"], mean=out["stats"][0], max=out["stats"][1])
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("irax", "ml_dtypes")))))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    modules = json.loads(result.stdout.strip().splitlines()[-1])
    assert not [m for m in modules if m.split(".")[1:2] in (["api"], ["core"], ["numpy"], ["passes"], ["lax"])]
    assert "ml_dtypes" not in modules
    got = np.load(tmp_path / "out.npz")
    want = jitted(PARAMS, X)
    np.testing.assert_allclose(got["logits"], np.asarray(want["logits"]), rtol=1e-6)
    np.testing.assert_allclose(got["max"], np.asarray(want["stats"][1]), rtol=1e-6)


def test_bfloat16_round_trip():
    """bfloat16 buffers cross into and out of a loaded artifact (the runtime knows the dtype by name)."""
    x = np.arange(-2, 3).astype(jnp.bfloat16)
    loaded = artifact.load(export.export(irax.jit(lambda a: a * 3 + 1))(x).serialize())
    out = loaded(x)
    assert out.dtype == np.dtype(jnp.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), np.arange(-2, 3) * 3.0 + 1)


@pytest.mark.skipif(shutil.which("iree-run-module") is None, reason="iree-run-module is not on PATH")
def test_iree_run_module_runs_the_artifact(tmp_path):
    exp = export.export(irax.jit(lambda x, y: (x * 2 + y, jnp.sum(x))))(np.ones(3, np.float32), np.float32(1))
    exp.save(tmp_path / "m.vmfb")
    result = subprocess.run(["iree-run-module", f"--module={tmp_path / 'm.vmfb'}", "--function=main",
                             "--device=local-sync", "--input=3xf32=1 2 3", "--input=f32=0.5"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "3xf32=2.5 4.5 6.5" in result.stdout and "f32=6" in result.stdout


def test_targets_vmvx_and_cross_compiled(tmp_path):
    f = irax.jit(lambda x: jnp.sin(x) * 3)
    x = np.linspace(0, 1, 4, dtype=np.float32)
    vmvx = export.export(f, target="vmvx")(x)
    np.testing.assert_allclose(np.asarray(vmvx.call(x)), np.sin(x) * 3, rtol=1e-5)
    for triple in ("aarch64-linux-gnu", "riscv64-linux-gnu"):
        cross = export.export(f, target="llvm-cpu", cpu="generic", triple=triple)(x)
        assert cross.target.triple == triple and cross.serialize()[:2] == b"PK"
        if not os.uname().machine.startswith(triple.split("-")[0]):
            with pytest.raises(ArtifactError, match=f"compiled for {triple}"):
                artifact.load(cross.serialize())
    with pytest.raises(ValueError, match="unknown target 'cuda9'; irax compiles for llvm-cpu, vmvx"):
        export.export(f, target="cuda9")
    with pytest.raises(ValueError, match="apply to the llvm-cpu target only"):
        export.export(f, target="vmvx", cpu="generic")


def test_artifact_for_missing_cpu_features_is_refused(monkeypatch):
    """An artifact compiled for a CPU with a feature this one lacks is refused at load time (never SIGILL)."""
    real = artifact.cpu_features()
    monkeypatch.setattr(artifact, "cpu_features", lambda: real + ["avx1024_imaginary"])
    blob = export.export(irax.jit(lambda x: x + 1))(np.ones(2, np.float32)).serialize()
    monkeypatch.setattr(artifact, "cpu_features", lambda: real)
    with pytest.raises(ArtifactError, match="avx1024_imaginary, which this CPU lacks"):
        artifact.load(blob)


def _flipped(blob, seed):
    data = bytearray(blob)
    for i in np.random.default_rng(seed).integers(0, len(data), 8):
        data[i] ^= 0xFF
    return bytes(data)


def test_corrupt_truncated_and_foreign_files(tmp_path):
    """Each is an ArtifactError naming the file, from load, deserialize and the runtime's reader; a flipped byte
    in native code would crash IREE, so the checksum is checked before IREE reads anything."""
    _, exp = _exported()
    blob = exp.serialize()
    from iree.compiler import tools
    plain = tools.compile_str("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }",
                              target_backends=["vmvx"])
    cases = {"truncated": (blob[:len(blob) // 2], "truncated"), "empty": (b"", "not an IREE module"),
             "text": (b"not a module at all\n" * 20, "not an IREE module"),
             "cut_end": (blob[:-10], "checksum does not match")}
    cases.update({f"flipped{k}": (_flipped(blob, k), "corrupt") for k in range(6)})
    cases["plain_iree"] = (plain, "not exported by irax")
    for name, (data, message) in cases.items():
        path = tmp_path / f"{name}.vmfb"
        path.write_bytes(data)
        for load in (artifact.load, lambda p: export.deserialize(p.read_bytes())):
            with pytest.raises(ArtifactError, match=message):
                load(path)
    with pytest.raises(ArtifactError, match="cannot read the artifact"):
        artifact.load(tmp_path / "missing.vmfb")


def test_call_errors_name_expected_and_given():
    jitted, exp = _exported()
    loaded = artifact.load(exp.serialize())
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[2\].*expected float32\[3,5\] and called with "
                                         r"float32\[4,5\]"):
        loaded(PARAMS, np.ones((4, 5), np.float32))
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[2\].*expected float32 and called with int32"):
        loaded(PARAMS, np.ones((3, 5), np.int32))
    with pytest.raises(ValueError, match=r"same pytree structure.*\(args, kwargs\)\[0\]\[0\] is a dict with keys "
                                         r"\['w'\] in the invocation and a dict with keys \['b', 'w'\]"):
        loaded({"w": PARAMS["w"]}, X)
    with pytest.raises(ValueError, match="a tuple of length 1 in the invocation and a tuple of length 2"):
        exp.call(PARAMS)
    with pytest.raises(ValueError, match="Function to be exported must be the result of `jit`"):
        export.export(predict)
    with pytest.raises(TypeError, match="namedtuple node"):
        import collections
        pair = collections.namedtuple("Pair", "a b")
        export.export(irax.jit(lambda p: p.a + p.b))(pair(np.ones(2), np.ones(2)))


def test_exported_call_under_jit_grad_and_vmap():
    """An Exported made in this process calls its function under transformations, checked against the exported
    signature; a deserialized one (compiled code only) says why it cannot."""
    f = irax.jit(lambda x, y: jnp.sin(x) * y)
    x, y = np.linspace(0, 1, 3, dtype=np.float32), np.float32(2.0)
    exp = export.export(f)(x, y)
    np.testing.assert_allclose(irax.jit(lambda a: exp.call(a, y) + 1)(x), np.sin(x) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(irax.grad(lambda a: exp.call(a, y).sum())(x), np.cos(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(irax.vmap(lambda a: exp.call(a, y))(np.stack([x, x + 1])),
                               np.sin(np.stack([x, x + 1])) * 2, rtol=1e-6)
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].*expected float32\[3\] and called with "
                                         r"float32\[4\]"):
        irax.jit(lambda a: exp.call(a, y))(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[0\].*expected float32 and called with int32"):
        irax.jit(lambda a: exp.call(a, y))(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="same pytree structure"):
        irax.jit(lambda a: exp.call((a, a), y))(x)
    again = export.deserialize(exp.serialize())
    np.testing.assert_allclose(again.call(x, y), np.sin(x) * 2, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="a deserialized irax artifact holds compiled code"):
        irax.jit(lambda a: again.call(a, y))(x)


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "irax.tools.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_cli_compile_inspect_run(tmp_path):
    (tmp_path / "model.py").write_text("import irax.numpy as jnp\n\ndef affine(w, x, shift=0.0):\n"
                                       "    return {'y': x @ w + shift, 'n': jnp.sum(w)}\n")
    np.save(tmp_path / "w.npy", np.eye(3, dtype=np.float32) * 2)
    out = _cli("compile", "model.py:affine", "--arg", "f32[3,3]", "--arg", "f32[2,3]", "--static", "shift=1.5",
               "-o", "m.vmfb", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    info = _cli("inspect", "m.vmfb", cwd=tmp_path)
    assert "inputs:  float32[3,3], float32[2,3]" in info.stdout and "entry: main (from affine)" in info.stdout
    meta = json.loads(_cli("inspect", "m.vmfb", "--json", cwd=tmp_path).stdout)["main"]
    assert meta["out_tree"] == {"dict": [["n", "y"], ["*", "*"]]}
    run = _cli("run", "m.vmfb", "--input", "f32[3,3]=@w.npy", "--input", "f32[2,3]=[[1,2,3],[4,5,6]]",
               "--output-dir", "outs", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "outs" / "output0.npy"), 6.0)
    np.testing.assert_allclose(np.load(tmp_path / "outs" / "output1.npy"), [[3.5, 5.5, 7.5], [9.5, 11.5, 13.5]])
    bad = _cli("run", "m.vmfb", "--input", "@w.npy", cwd=tmp_path)
    assert bad.returncode == 1 and "takes 2 flat inputs (float32[3,3], float32[2,3]); 1 --input given" in bad.stderr
    (tmp_path / "junk.vmfb").write_bytes(b"junk" * 100)
    junk = _cli("run", "junk.vmfb", cwd=tmp_path)
    assert junk.returncode == 1 and "junk.vmfb: not an IREE module" in junk.stderr and "Traceback" not in junk.stderr


@pytest.mark.skipif(lavapipe_icd() is None, reason="Mesa's lavapipe (mesa-vulkan-drivers) is not installed")
@pytest.mark.parametrize("name", list(GPU_PROGRAMS))
def test_vulkan_lavapipe_matches_llvm_cpu(name, monkeypatch):
    """Exported for Vulkan (llvmpipe), run by the runtime on Mesa's software Vulkan: the same answers as on
    llvm-cpu."""
    monkeypatch.setenv("VK_ICD_FILENAMES", lavapipe_icd())
    fn, args = GPU_PROGRAMS[name]
    args = irax.tree_util.tree_map(lambda a: np.asarray(a, np.float32), args)
    cpu = artifact.load(export.export(irax.jit(fn))(*args).serialize())(*args)
    vulkan = artifact.load(export.export(irax.jit(fn), target="vulkan", arch="llvmpipe")(*args).serialize())
    assert str(vulkan.device) == "vulkan:0"
    for got, want in zip(irax.tree_util.tree_leaves(vulkan(*args)), irax.tree_util.tree_leaves(cpu)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_gpu_targets_compile_here_and_name_missing_drivers():
    """cuda, rocm and metal artifacts compile without a GPU; loading one where its driver cannot start is a clear
    error listing the drivers built in."""
    f = irax.jit(lambda x: jnp.tanh(x) @ x.T)
    x = np.ones((4, 4), np.float32)
    for target, arch, flag in (("cuda", "sm_80", "--iree-cuda-target=sm_80"),
                               ("rocm", "gfx942", "--iree-rocm-target=gfx942"), ("metal", None, None)):
        exp = export.export(f, target=target, arch=arch)(x)
        assert exp.target.backend == target and exp.metadata["driver"] in ("cuda", "hip", "metal")
        assert flag is None or flag in exp.target.flags()
        assert exp.serialize()[:2] == b"PK"
        if target == "metal":
            with pytest.raises(RuntimeError, match="IREE driver 'metal' cannot be used here.*drivers built in"):
                artifact.load(exp.serialize())
    with pytest.raises(ValueError, match="arch= applies to the vulkan, cuda and rocm targets, not metal"):
        export.export(f, target="metal", arch="m3")


SCALE = np.array([2.0, 3.0], np.float32)


def test_export_module_training_loop_with_device_state(tmp_path):
    """Three entries in one artifact: ``step`` updates the parameters kept on the device, ``predict`` reads them,
    ``init`` replaces them; both use one closed-over constant (one global). The loaded module, in a process with
    the compiler blocked, trains as the jitted functions do."""
    def loss(params, x, y):
        return jnp.mean((x @ params["w"] * SCALE + params["b"] - y) ** 2)

    def step(params, x, y):
        value, grads = irax.value_and_grad(loss)(params, x, y)
        return irax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), value

    def predict(params, x):
        return x @ params["w"] * SCALE + params["b"]

    def init(params, seed):
        return {"w": params["w"] * 0 + seed, "b": params["b"] * 0}, jnp.float32(0)

    params = {"w": np.full((3, 2), 0.1, np.float32), "b": np.zeros(2, np.float32)}
    x, y = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
    exp = export.export_module({"init": irax.jit(init), "step": irax.jit(step), "predict": irax.jit(predict)},
                               state=params, updates_state={"init", "step"})(
        init=(np.float32(0.5),), step=(x, y), predict=(x,))
    assert exp.entries == ("init", "step", "predict")
    assert exp.mlir_module().count("ml_program.global private @irax_const") == 1
    exp.save(tmp_path / "trainer.vmfb")

    want_params, want_losses = params, []
    for _ in range(3):
        want_params, value = irax.jit(step)(want_params, x, y)
        want_losses.append(float(value))
    script = f"""
import sys, json
sys.modules["iree.compiler"] = None
import numpy as np
import irax.runtime
m = irax.runtime.load({str(tmp_path / "trainer.vmfb")!r})
x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
y = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
losses = [float(m.step(x, y)) for _ in range(3)]
state = m.state
out = m.predict(x)
m.init(np.float32(0.5))
after_init = m.state
m.state = {{"w": np.ones((3, 2), np.float32), "b": np.ones(2, np.float32)}}
print(json.dumps({{"losses": losses, "w": state["w"].tolist(), "b": state["b"].tolist(), "out": out.tolist(),
                  "init_w": after_init["w"].tolist(), "set_out": m.predict(x).tolist()}}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(got["losses"], want_losses, rtol=1e-5)
    np.testing.assert_allclose(got["w"], np.asarray(want_params["w"]), rtol=1e-5)
    np.testing.assert_allclose(got["b"], np.asarray(want_params["b"]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got["out"], np.asarray(predict(want_params, x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["init_w"], np.full((3, 2), 0.5))
    np.testing.assert_allclose(got["set_out"], np.asarray(predict({"w": np.ones((3, 2)), "b": np.ones(2)}, x)),
                               rtol=1e-5)


def test_export_module_errors():
    f = irax.jit(lambda s, x: (s, x))
    with pytest.raises(ValueError, match="updates_state names functions that are not exported: \\['nope'\\]"):
        export.export_module({"f": f}, state=np.ones(2), updates_state={"nope"})
    with pytest.raises(ValueError, match="entry names must be Python identifiers"):
        export.export_module({"irax_x": f})
    with pytest.raises(TypeError, match="give example arguments .* for each function"):
        export.export_module({"f": f})(g=(1,))
    with pytest.raises(TypeError, match="'f' updates the state, so it must return \\(new_state, outputs\\)"):
        export.export_module({"f": irax.jit(lambda s, x: x)}, state=np.ones(2, np.float32),
                             updates_state={"f"})(f=(np.ones(2, np.float32),))
    loaded = artifact.load(export.export_module({"f": irax.jit(lambda x: x * 2)})(f=(np.ones(2, np.float32),))
                           .serialize())
    np.testing.assert_allclose(loaded.f(np.ones(2, np.float32)), 2.0)
    with pytest.raises(AttributeError, match="has no function 'g'; it has f"):
        loaded.g
    with pytest.raises(ValueError, match="exported without state"):
        loaded.state
