"""A two-layer MLP written for JAX, run by irax: its jaxpr, eager vs jitted forward passes, and a few
jitted SGD steps through grad (one IREE module for loss, gradient and update)."""
import time

import numpy as np

import irax as jax
import irax.numpy as jnp


def init(rng, sizes):
    return [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def loss(params, x, labels):
    return -jnp.mean(jnp.sum(predict(params, x) * labels, axis=-1))


@jax.jit
def sgd_step(params, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def main():
    rng = np.random.default_rng(0)
    params = init(rng, [784, 512, 512, 10])
    x = jnp.asarray(rng.standard_normal((256, 784)).astype(np.float32))
    print(jax.make_jaxpr(predict)(params, x[:2]))
    eager = predict(params, x)
    fast = jax.jit(predict)
    start = time.perf_counter()
    compiled = fast(params, x)
    print(f"first jitted call (trace + IREE compile): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    for _ in range(20):
        compiled = fast(params, x)
    np.asarray(compiled)
    print(f"steady state: {(time.perf_counter() - start) / 20 * 1e3:.2f} ms per call")
    err = float(jnp.max(jnp.abs(eager - compiled)))
    print(f"max |eager - jit| = {err:.2e}; predicted classes of the first 8: {np.asarray(jnp.argmax(compiled, 1))[:8]}")
    assert err < 1e-3, err

    labels = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)])
    losses = []
    for _ in range(10):
        value, params = sgd_step(params, x, labels)
        losses.append(float(value))
    print(f"SGD on one batch, loss by step: {' '.join(f'{v:.3f}' for v in losses)}")
    assert losses[-1] < losses[0], losses


if __name__ == "__main__":
    main()
