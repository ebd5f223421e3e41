"""Devices as JAX has them: ``irax.devices``, ``device_put`` committing arrays, computations (jit and eager)
running where their committed arguments are, a clear error for arguments on two devices, and the GPU platforms
this machine has (Vulkan on Mesa's lavapipe in CI, CUDA where a GPU is lent) giving the CPU's answers."""
import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax import export
from irax.runtime import artifact

from device_programs import GPU_PROGRAMS, gpu_platforms, lavapipe_icd


def test_cpu_devices_and_commitment():
    cpu = irax.devices()[0]
    assert irax.devices("cpu") == [cpu] and cpu.platform == "cpu" and str(cpu) == "cpu:0"
    x = jnp.arange(3.0)
    committed = irax.device_put(x, cpu)
    assert not x.committed and committed.committed and committed.device == cpu
    assert irax.device_put(x) is x and irax.device_put(committed, cpu) is committed
    assert (committed + 1).committed and not (x + 1).committed
    f = irax.jit(lambda a, b: a * b)
    assert f(committed, x).committed and not f(x, x).committed
    np.testing.assert_array_equal(f(committed, x), [0.0, 1.0, 4.0])


def test_environment_info_names_versions_and_devices(capsys):
    from importlib import metadata
    text = irax.print_environment_info(return_string=True)
    assert f"iree-base-runtime:  {metadata.version('iree-base-runtime')}" in text and "numpy:  " in text
    assert "device info: cpu-1, 1 local devices" in text and "process_count: 1" in text
    assert irax.print_environment_info() is None and capsys.readouterr().out == text + "\n"


def test_unknown_backends():
    with pytest.raises(RuntimeError, match=r"Unknown backend foo. Available backends are \['cpu', 'cuda', 'gpu'"):
        irax.devices("foo")
    if "metal" not in gpu_platforms():
        with pytest.raises(RuntimeError, match="(?s)Unknown backend: 'metal' requested, but no platforms that are "
                                               "instances of metal are present.*drivers built in"):
            irax.devices("metal")


@pytest.fixture(params=gpu_platforms() or [pytest.param("none", marks=pytest.mark.skip("no GPU platform here"))])
def gpu(request, monkeypatch):
    if request.param == "vulkan" and lavapipe_icd():
        monkeypatch.setenv("VK_ICD_FILENAMES", lavapipe_icd())
    return irax.devices(request.param)[0]


@pytest.mark.parametrize("name", list(GPU_PROGRAMS))
def test_jit_on_gpu_matches_cpu(gpu, name):
    """Arguments put on the GPU run there; results stay committed to it and equal the CPU's."""
    fn, args = GPU_PROGRAMS[name]
    args = irax.tree_util.tree_map(lambda a: np.asarray(a, np.float32), args)
    want = irax.jit(fn)(*args)
    on_gpu = irax.device_put(args, gpu)
    got = irax.jit(fn)(*on_gpu)
    for g, w in zip(irax.tree_util.tree_leaves(got), irax.tree_util.tree_leaves(want)):
        assert g.device == gpu and g.committed and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def test_gpu_arrays_in_eager_ops_grad_and_mixed_calls(gpu):
    x = irax.device_put(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), gpu)
    assert str(x.device) == f"{gpu.driver}:0" and x.device.platform == "gpu"
    y = jnp.sin(x) * 2
    assert y.device == gpu
    np.testing.assert_allclose(y, np.sin(np.asarray(x)) * 2, rtol=1e-6)
    g = irax.jit(irax.grad(lambda w: jnp.sum(jnp.tanh(w) ** 2)))(x)
    assert g.device == gpu
    np.testing.assert_allclose(g, irax.grad(lambda w: jnp.sum(jnp.tanh(w) ** 2))(np.asarray(x)), rtol=1e-5)
    uncommitted = jnp.ones((2, 3))
    np.testing.assert_allclose(irax.jit(jnp.add)(x, uncommitted), np.asarray(x) + 1)
    on_cpu = irax.device_put(uncommitted, irax.devices("cpu")[0])
    message = (r"Received incompatible devices for jitted computation. Got argument a of <lambda> with shape "
               r"float32\[2,3\] and with device ids \[0\] on platform GPU \(.*:0\) and argument b of <lambda> "
               r"with shape float32\[2,3\] and with device ids \[0\] on platform CPU \(cpu:0\)")
    with pytest.raises(ValueError, match=message):
        irax.jit(lambda a, b: a - b)(x, on_cpu)
    with pytest.raises(ValueError, match="Received incompatible devices for jitted computation"):
        x - on_cpu
    back = irax.device_put(x, irax.devices("cpu")[0])
    assert back.device.platform == "cpu"
    np.testing.assert_array_equal(back, x)


def test_compile_for_a_gpu_target_and_load_an_artifact_on_it(gpu):
    """``lower().compile(target=)`` runs on the target's device; an artifact for it loads there."""
    target = "vulkan" if gpu.driver == "vulkan" else gpu.driver
    arch = "llvmpipe" if "llvmpipe" in gpu.device_kind else None
    f = irax.jit(lambda a: jnp.tanh(a) @ a.T)
    a = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    want = f(a)
    compiled = f.lower(a).compile(target=target, arch=arch)
    np.testing.assert_allclose(compiled(a), want, rtol=2e-5)
    loaded = artifact.load(export.export(f, target=target, arch=arch)(a).serialize())
    assert loaded.device == gpu
    np.testing.assert_allclose(loaded(a), want, rtol=2e-5)
