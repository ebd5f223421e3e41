"""irax vs JAX, side by side in one process: per-call time (median, min), ratio, first-call time.

Usage: python bench/run.py [--repeat N] [--json bench/results.json] [--only NAME ...] [--platform cuda]
Each workload is warmed up, then irax and JAX calls are interleaved in rounds so
that both see the same machine state. Needs ``jax`` installed (pip install '.[bench]').
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def _block(x):
    import jax
    for leaf in jax.tree_util.tree_leaves(x):
        leaf.block_until_ready()
    return x


def _time_calls(fn, args, number):
    start = time.perf_counter()
    for _ in range(number):
        out = fn(*args)
    _block(out)
    return (time.perf_counter() - start) / number


def _calibrate(fn, args, budget=0.02):
    number = 1
    while _time_calls(fn, args, number) * number < budget and number < 1 << 16:
        number *= 2
    return number


def _workloads(jax, jnp, rng):
    def mlp(params, x):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def softmax_layernorm(x):
        s = jax.nn.softmax(x, axis=-1)
        mean = jnp.mean(s, axis=-1, keepdims=True)
        var = jnp.mean((s - mean) ** 2, axis=-1, keepdims=True)
        return (s - mean) * jax.lax.rsqrt(var + 1e-5)

    def train_step(params, x, labels):
        def loss(params):
            logits = mlp(params, x)
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))
        value, grads = jax.value_and_grad(loss)(params)
        return value, jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    def example_loss(params, x, label):
        logits = mlp(params, x[None])[0]
        return -jnp.sum(jax.nn.log_softmax(logits) * label)

    def rnn(params, xs):
        w_h, w_x = params

        def step(h, x):
            h = jnp.tanh(h @ w_h + x @ w_x)
            return h, h
        h, hs = jax.lax.scan(step, jnp.zeros((xs.shape[1], w_h.shape[0]), xs.dtype), xs)
        return jnp.sum(h) + jnp.mean(hs)

    def newton(a):
        """The cube root of a by Newton's method on f(x) = x^3 - a, until the step is tiny."""
        def body(state):
            x, _ = state
            step = (x ** 3 - a) / (3 * x ** 2)
            return x - step, jnp.abs(step)
        return jax.lax.while_loop(lambda s: s[1] > 1e-6, body, (a, jnp.float32(1.0)))[0]

    def convnet(params, images):
        """Two 3x3 conv+relu layers, 2x2 max pooling, a dense layer: the mean logit (a scalar to differentiate)."""
        (k1, k2), w = params
        dims = ("NHWC", "HWIO", "NHWC")
        x = jax.nn.relu(jax.lax.conv_general_dilated(images, k1, (1, 1), "SAME", dimension_numbers=dims))
        x = jax.nn.relu(jax.lax.conv_general_dilated(x, k2, (1, 1), "SAME", dimension_numbers=dims))
        x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.mean(x.reshape(x.shape[0], -1) @ w)

    sizes = [784, 512, 512, 10]
    params = [(rng.standard_normal((m, n), np.float32) / np.sqrt(m), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    small = [(rng.standard_normal((m, n), np.float32) / np.sqrt(m), np.zeros(n, np.float32))
             for m, n in zip([64, 32], [32, 10])]
    rnn_params = (rng.standard_normal((256, 256), np.float32) / 16, rng.standard_normal((32, 256), np.float32) / 6)
    rnn_xs = rng.standard_normal((100, 64, 32), np.float32)
    kernels = (rng.standard_normal((3, 3, 1, 16), np.float32) / 3,
               rng.standard_normal((3, 3, 16, 32), np.float32) / 12)
    conv_params = (kernels, rng.standard_normal((14 * 14 * 32, 10), np.float32) / 80)
    images = rng.standard_normal((32, 28, 28, 1), np.float32)
    spd = rng.standard_normal((256, 256), np.float32) + 16 * np.eye(256, dtype=np.float32)
    return {
        "x+1 f32[4] (dispatch)": (jax.jit(lambda x: x + 1), (np.ones(4, np.float32),), True),
        "elementwise chain 1M": (jax.jit(lambda x: jnp.sqrt(jnp.tanh(jnp.exp(jnp.cos(jnp.sin(x)))))),
                                 (rng.random(1 << 20, np.float32),), True),
        "softmax+layernorm 2048x1024": (jax.jit(softmax_layernorm),
                                        (rng.standard_normal((2048, 1024), np.float32),), True),
        "matmul 1024^2 f32": (jax.jit(lambda a, b: a @ b), (rng.standard_normal((1024, 1024), np.float32),
                                                            rng.standard_normal((1024, 1024), np.float32)), True),
        "MLP forward 784-512-512-10 b256": (jax.jit(mlp), (params, rng.standard_normal((256, 784), np.float32)),
                                            True),
        "eager jnp.sin f32[4]": (jnp.sin, (np.ones(4, np.float32),), False),
        "MLP train step 784-512-512-10 b256": (
            jax.jit(train_step), (params, rng.standard_normal((256, 784), np.float32),
                                  np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]), True),
        "per-example grads MLP 64-32-10 b128": (
            jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))),
            (small, rng.standard_normal((128, 64), np.float32),
             np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]), True),
        "vmap(matmul) 64x128x128": (jax.jit(jax.vmap(jnp.matmul)),
                                    (rng.standard_normal((64, 128, 128), np.float32),
                                     rng.standard_normal((64, 128, 128), np.float32)), True),
        "RNN scan 100 steps h256 b64": (jax.jit(rnn), (rnn_params, rnn_xs), True),
        "RNN scan 100 steps grad": (jax.jit(jax.grad(rnn)), (rnn_params, rnn_xs), True),
        "Newton while_loop (cbrt)": (jax.jit(newton), (np.float32(12345.0),), True),
        "convnet 2x conv3x3+pool+dense b32": (jax.jit(convnet), (conv_params, images), True),
        "convnet grad": (jax.jit(jax.grad(convnet)), (conv_params, images), True),
        "random.normal 1M": (jax.jit(lambda key: jax.random.normal(key, (1 << 20,))), (jax.random.PRNGKey(0),),
                             True),
        "linalg.solve 256x256": (jax.jit(jnp.linalg.solve), (spd, rng.standard_normal((256,), np.float32)), True),
        "fft.rfft 2^16": (jax.jit(jnp.fft.rfft), (rng.standard_normal(1 << 16, np.float32),), True),
        "pure_callback f32[1024] (host call)": (
            jax.jit(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1),
            (rng.standard_normal(1024, np.float32),), True),
        "linalg.eigvals 64x64 (host LAPACK)": (jax.jit(jnp.linalg.eigvals),
                                               (rng.standard_normal((64, 64), np.float32),), True),
    }


def _autodiff_passes(n_eqns=2000):
    """Seconds for jaxpr-jvp, jaxpr-linearize and jaxpr-transpose on an ``n_eqns``-equation program, and JAX's
    ``make_jaxpr(grad(f))`` on the same program for reference."""
    import jax
    import jax.numpy as jjnp
    import irax
    import irax.numpy as ijnp
    from irax.ir.mlir import scope
    from irax.passes import funcs
    from irax.passes.jvp import jvp_function
    from irax.passes.linearize import linearize_function
    from irax.passes.transpose import transpose_function

    def program(jnp):
        def f(x):
            for _ in range(n_eqns // 3):
                x = jnp.sin(x) * x + 0.5
            return jnp.sum(x)
        return f

    x = np.ones(8, np.float32)
    closed = irax.make_jaxpr(program(ijnp))(x)
    with scope():
        module = closed.jaxpr.module
        t0 = time.perf_counter()
        jvp, _ = jvp_function(module, funcs.lookup(module, "main"), [True], "main_jvp", instantiate_outputs=True)
        t1 = time.perf_counter()
        _, lin = linearize_function(module, jvp)
        t2 = time.perf_counter()
        transpose_function(module, lin)
        t3 = time.perf_counter()
    start = time.perf_counter()
    jax.make_jaxpr(jax.grad(program(jjnp)))(x)
    jax_s = time.perf_counter() - start
    print(f"autodiff passes on {len(closed.eqns)} equations: {t3 - t0:.3f}s (jvp {t1 - t0:.3f}s, linearize "
          f"{t2 - t1:.3f}s, transpose {t3 - t2:.3f}s); JAX make_jaxpr(grad) {jax_s:.3f}s", flush=True)
    return {"workload": "autodiff passes", "equations": len(closed.eqns), "jvp_s": t1 - t0, "linearize_s": t2 - t1,
            "transpose_s": t3 - t2, "total_s": t3 - t0, "jax_make_jaxpr_grad_s": jax_s}


_FIRST_CALL = """
import sys, time
start = time.perf_counter()
import numpy as np
lib = __import__(sys.argv[1])
jnp = __import__(sys.argv[1] + ".numpy", fromlist=["numpy"])
sys.path.insert(0, sys.argv[2])
import run
fn, args, _ = run._workloads(lib, jnp, np.random.default_rng(0))[sys.argv[3]]
imported = time.perf_counter()
lib.block_until_ready(fn(*args))
print(imported - start, time.perf_counter() - imported)
"""

_LOAD_ARTIFACT = """
import sys, time
start = time.perf_counter()
import numpy as np
import irax.runtime
loaded = irax.runtime.load(sys.argv[1])
import pickle
with open(sys.argv[2], "rb") as f:
    args = pickle.load(f)
ready = time.perf_counter()
loaded(*args)
print(ready - start, time.perf_counter() - ready)
"""


def _startup(name="MLP train step 784-512-512-10 b256"):
    """First-call seconds of ``name`` in fresh processes: irax with an empty persistent cache (cold), irax again
    on the now-filled cache (warm), JAX (cold: its cache is off by default), and the exported artifact loaded by
    the runtime alone."""
    import os
    import pickle
    import subprocess
    import sys
    import tempfile
    bench = os.path.dirname(os.path.abspath(__file__))

    def run(code, *argv, env=None):
        # Python's default of caching bytecode: without it (PYTHONDONTWRITEBYTECODE, set on some machines) every
        # fresh process compiles an editable install's sources again, which a pip-installed JAX never does
        env = {k: v for k, v in dict(os.environ, **(env or {})).items() if k != "PYTHONDONTWRITEBYTECODE"}
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                             env=env, timeout=600).stdout.split()
        return float(out[0]), float(out[1])
    with tempfile.TemporaryDirectory() as tmp:
        env = {"IRAX_CACHE_DIR": os.path.join(tmp, "cache")}
        cold = run(_FIRST_CALL, "irax", bench, name, env=env)
        warm = run(_FIRST_CALL, "irax", bench, name, env=env)
        jax_cold = run(_FIRST_CALL, "jax", bench, name)
        import irax
        import irax.numpy as ijnp
        from irax import export
        fn, args, _ = _workloads(irax, ijnp, np.random.default_rng(0))[name]
        path = os.path.join(tmp, "step.vmfb")
        export.export(fn)(*args).save(path)
        with open(os.path.join(tmp, "args.pkl"), "wb") as f:
            pickle.dump(args, f)
        artifact = run(_LOAD_ARTIFACT, path, os.path.join(tmp, "args.pkl"))
    row = {"workload": f"first call: {name}", "irax_cold_s": cold[1], "irax_warm_s": warm[1],
           "jax_cold_s": jax_cold[1], "warm_over_jax_cold": warm[1] / jax_cold[1], "irax_import_s": cold[0],
           "jax_import_s": jax_cold[0], "artifact_load_s": artifact[0], "artifact_first_call_s": artifact[1]}
    print(f"first call of {name} in a fresh process: irax cold {cold[1]:.2f}s, warm (persistent cache) "
          f"{warm[1]:.3f}s, JAX cold {jax_cold[1]:.2f}s; warm/JAX cold {row['warm_over_jax_cold']:.2f}; "
          f"imports irax {cold[0]:.2f}s JAX {jax_cold[0]:.2f}s; artifact load {artifact[0]:.3f}s + first call "
          f"{artifact[1]:.3f}s", flush=True)
    return row


def _put(lib, args, device=None):
    return lib.tree_util.tree_map(lambda a: lib.device_put(a, device) if isinstance(a, np.ndarray) else a, args)


def _devices(platform):
    """irax's device and JAX's for ``--platform`` (JAX has no Vulkan: its CPU stands in)."""
    if platform == "cpu":
        return None, None
    import irax
    import jax
    return irax.devices(platform)[0], jax.devices("gpu" if platform in ("cuda", "rocm", "gpu") else "cpu")[0]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds per workload")
    parser.add_argument("--json", default="bench/results.json")
    parser.add_argument("--only", nargs="*", help="substrings of workload names to run")
    parser.add_argument("--platform", default="cpu", help="cpu, cuda, rocm or vulkan: where the inputs are put")
    args = parser.parse_args(argv)

    import jax
    import jax.numpy as jjnp
    import irax
    import irax.numpy as ijnp

    mine = _workloads(irax, ijnp, np.random.default_rng(0))
    theirs = _workloads(jax, jjnp, np.random.default_rng(0))
    rows = []
    device_i, device_j = _devices(args.platform)
    for name in mine:
        if args.only and not any(s in name for s in args.only):
            continue
        (f_i, a_i, jitted), (f_j, a_j, _) = mine[name], theirs[name]
        a_i, a_j = _put(irax, a_i, device_i), _put(jax, a_j, device_j)
        first = {}
        for lib, fn, a in (("irax", f_i, a_i), ("jax", f_j, a_j)):
            start = time.perf_counter()
            _block(fn(*a))
            first[lib] = time.perf_counter() - start
        n_i, n_j = _calibrate(f_i, a_i), _calibrate(f_j, a_j)
        samples = {"irax": [], "jax": []}
        for _ in range(args.repeat):
            # each library's turn starts after a pause and an untimed call: the other library's idle threads
            # spin for a while after its last call, and on two cores they would slow this one's
            for lib, fn, a, n in (("irax", f_i, a_i, n_i), ("jax", f_j, a_j, n_j)):
                time.sleep(0.05)
                _time_calls(fn, a, 1)
                samples[lib].append(_time_calls(fn, a, n))
        med = {k: statistics.median(v) for k, v in samples.items()}
        row = {"workload": name, "irax_median_s": med["irax"], "irax_min_s": min(samples["irax"]),
               "jax_median_s": med["jax"], "jax_min_s": min(samples["jax"]), "ratio": med["irax"] / med["jax"],
               "irax_first_call_s": first["irax"], "jax_first_call_s": first["jax"], "jitted": jitted,
               "platform": args.platform}
        rows.append(row)
        print(_format(row), flush=True)
    if not args.only or any(s in "autodiff passes" for s in args.only):
        rows.append(_autodiff_passes())
    if not args.only or any(s in "first call" for s in args.only):
        rows.append(_startup())
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"wrote {args.json}")


def _fmt_t(s):
    return f"{s * 1e6:9.1f}us" if s < 1e-3 else f"{s * 1e3:9.3f}ms"


def _format(row):
    return (f"{row['workload']:34s} irax {_fmt_t(row['irax_median_s'])} (min {_fmt_t(row['irax_min_s'])})  "
            f"jax {_fmt_t(row['jax_median_s'])} (min {_fmt_t(row['jax_min_s'])})  ratio {row['ratio']:5.2f}  "
            f"first call irax {row['irax_first_call_s']:.2f}s jax {row['jax_first_call_s']:.2f}s")


if __name__ == "__main__":
    main()
