"""``irax.ops`` segment reductions against ``jax.ops``: values eagerly and under ``jit`` over dtypes, ids out of
range (dropped), empty segments, buckets and 2-d data; jaxpr texts; gradients and ``vmap``; JAX's errors."""
import numpy as np
import pytest

import irax

jax = pytest.importorskip("jax")

NAMES = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
IDS = np.array([0, 2, 2, -1, 5, 0, 1, 2], np.int32)  # -1 and 5 fall outside 4 segments: dropped
CASES = {
    "float32": (np.array([1.5, -2, 3, 4, np.inf, -0.5, np.nan, 2], np.float32), IDS, dict(num_segments=4)),
    "int32": (np.array([3, -7, 2, 9, 4, 1, 6, -3], np.int32), IDS, dict(num_segments=4)),
    "bool": (np.array([1, 0, 1, 1, 0, 0, 1, 1], bool), IDS, dict(num_segments=4)),
    "rows": (np.arange(16, dtype=np.float32).reshape(8, 2) - 5, IDS, dict(num_segments=3, indices_are_sorted=False)),
    "inferred-count": (np.arange(6, dtype=np.float32), np.array([0, 0, 1, 3, 3, 3], np.int32), {}),
    "buckets": (np.linspace(-1, 2, 8, dtype=np.float32), IDS, dict(num_segments=4, bucket_size=3)),
    "clip-mode": (np.arange(8, dtype=np.float32), IDS, dict(num_segments=4, mode="clip")),
    "empty": (np.zeros((0, 3), np.float32), np.zeros(0, np.int32), dict(num_segments=2)),
}


def _call(lib, name, case):
    data, ids, kw = CASES[case]
    return getattr(lib.ops, name)(data, ids, **kw)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", NAMES)
def test_values_and_text_match_jax(name, case):
    if case == "bool" and name in ("segment_sum", "segment_prod"):
        pytest.skip("JAX's scatter_add/mul refuse bool operands")
    expected = np.asarray(_call(jax, name, case))
    data, ids, kw = CASES[case]
    # one compile per function for the cases whose code differs (each costs ~1 s); the others run eagerly
    jitted = [irax.jit(lambda: _call(irax, name, case))()] if case in ("float32", "buckets", "rows") else []
    for got in [_call(irax, name, case)] + jitted:
        got = np.asarray(got)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    if data.size:
        def f(lib):
            return lambda d, i: getattr(lib.ops, name)(d, i, **{k: v for k, v in kw.items()
                                                                if k != "num_segments"}, num_segments=5)
        assert str(irax.make_jaxpr(f(irax))(data, ids)) == str(jax.make_jaxpr(f(jax))(data, ids))


@pytest.mark.parametrize("name", ["segment_max", "segment_min", "segment_sum"])
def test_gradients_and_vmap_match_jax(name):
    data = np.array([[1.5, -2], [3, 4], [0.5, 2], [-1, 1], [2, 3]], np.float32)
    ids = np.array([0, 1, 1, 0, 2], np.int32)

    def loss(lib):
        return lambda d: (getattr(lib.ops, name)(d, ids, num_segments=3) ** 2).sum()
    np.testing.assert_allclose(irax.grad(loss(irax))(data), jax.grad(loss(jax))(data), rtol=1e-6)
    batched_ids = np.array([[0, 1, 1, 0, 2], [2, 2, 0, 1, 1]], np.int32)

    def per_row(lib):
        return lib.vmap(lambda i: getattr(lib.ops, name)(data, i, num_segments=3))
    np.testing.assert_allclose(per_row(irax)(batched_ids), per_row(jax)(batched_ids), rtol=1e-6)


@pytest.mark.parametrize("case", ["negative", "float-count", "traced-ids", "traced-count", "prod-gradient"])
def test_errors_match_jax(case):
    """Including JAX's refusal of segment_prod's gradient (scatter_mul's needs unique indices)."""
    data, ids = np.arange(4.0, dtype=np.float32), np.array([0, 1, 1, 0], np.int32)
    calls = {
        "negative": lambda lib: lib.ops.segment_sum(data, ids, -1),
        "float-count": lambda lib: lib.ops.segment_sum(data, ids, 2.5),
        "traced-ids": lambda lib: lib.jit(lambda d, s: lib.ops.segment_sum(d, s))(data, ids),
        "traced-count": lambda lib: lib.jit(lambda d, n: lib.ops.segment_sum(d, ids, n))(data, 3),
        "prod-gradient": lambda lib: lib.grad(lambda d: lib.ops.segment_prod(d, ids, 2).sum())(data),
    }
    with pytest.raises(Exception) as theirs:
        calls[case](jax)
    with pytest.raises(Exception) as ours:
        calls[case](irax)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value).splitlines()[:2] == str(theirs.value).splitlines()[:2]
