"""irax vs JAX, side by side in one process: per-call time (median, min), ratio, first-call time.

Usage: python bench/run.py [--repeat N] [--json bench/results.json] [--only NAME ...]
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
    for leaf in x if isinstance(x, (tuple, list)) else (x,):
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

    sizes = [784, 512, 512, 10]
    params = [(rng.standard_normal((m, n), np.float32) / np.sqrt(m), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
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
    }


def _put(lib, args):
    return lib.tree_util.tree_map(lambda a: lib.device_put(a) if isinstance(a, np.ndarray) else a, args)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds per workload")
    parser.add_argument("--json", default="bench/results.json")
    parser.add_argument("--only", nargs="*", help="substrings of workload names to run")
    args = parser.parse_args(argv)

    import jax
    import jax.numpy as jjnp
    import irax
    import irax.numpy as ijnp

    mine = _workloads(irax, ijnp, np.random.default_rng(0))
    theirs = _workloads(jax, jjnp, np.random.default_rng(0))
    rows = []
    for name in mine:
        if args.only and not any(s in name for s in args.only):
            continue
        (f_i, a_i, jitted), (f_j, a_j, _) = mine[name], theirs[name]
        a_i, a_j = _put(irax, a_i), _put(jax, a_j)
        first = {}
        for lib, fn, a in (("irax", f_i, a_i), ("jax", f_j, a_j)):
            start = time.perf_counter()
            _block(fn(*a))
            first[lib] = time.perf_counter() - start
        n_i, n_j = _calibrate(f_i, a_i), _calibrate(f_j, a_j)
        samples = {"irax": [], "jax": []}
        for _ in range(args.repeat):
            samples["irax"].append(_time_calls(f_i, a_i, n_i))
            samples["jax"].append(_time_calls(f_j, a_j, n_j))
        med = {k: statistics.median(v) for k, v in samples.items()}
        row = {"workload": name, "irax_median_s": med["irax"], "irax_min_s": min(samples["irax"]),
               "jax_median_s": med["jax"], "jax_min_s": min(samples["jax"]), "ratio": med["irax"] / med["jax"],
               "irax_first_call_s": first["irax"], "jax_first_call_s": first["jax"], "jitted": jitted}
        rows.append(row)
        print(_format(row), flush=True)
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
