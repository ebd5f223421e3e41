"""``fft`` (``lax.fft``) and ``irax.numpy.fft`` against JAX and NumPy: every function eagerly (NumPy rule) and under
``irax.jit`` (IREE, the cases of a group in one compile), over float32/complex64 (float64/complex128 under x64),
lengths that are powers of two, odd, prime and 1, empty batches, several axes, ``n=``/``s=`` pads and cuts, every
norm; long transforms (2^16, a prime over 2^16) to float32 tolerance; ``make_jaxpr`` text; gradients (JAX's and
``check_grads``); vmap; and JAX's exceptions for bad arguments.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax
from irax.config import enable_x64
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)


def _real(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _cplx(*shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _close(got, want, rtol=1e-5):
    """Equal dtypes and shapes, values within ``rtol`` of the norm of ``want`` (float32 FFT tolerance)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    scale = max(np.linalg.norm(want.astype(np.complex128)), 1.0)
    assert np.linalg.norm((got - want).astype(np.complex128)) <= rtol * scale


def _run_group(cases, rtol=1e-5):
    """Each case eagerly, then all of them in one ``irax.jit``, against JAX's jitted results."""
    args = [x for _, _, x in cases]
    want = jax.jit(lambda *xs: [f(jnp)(x) for (_, f, _), x in zip(cases, xs)])(*args)
    for got in ([f(inp)(x) for _, f, x in cases],
                irax.jit(lambda *xs: [f(inp)(x) for (_, f, _), x in zip(cases, xs)])(*args)):
        for (label, _, _), g, w in zip(cases, got, want):
            try:
                _close(g, w, rtol)
            except AssertionError as err:
                raise AssertionError(f"case {label}: {err}") from None


R = {n: _real(3, n) for n in (1, 2, 5, 7, 8, 12, 13, 64, 97)}
C = {n: _cplx(3, n) for n in (1, 2, 5, 7, 8, 12, 13, 64, 97)}

LENGTHS = {"fft": (1, 5, 8, 12, 97), "ifft": (2, 7, 13), "rfft": (1, 8, 12, 13, 97), "irfft": (2, 5, 8),
           "hfft": (5, 8), "ihfft": (7, 12)}
ONE_D = [(f"{name}_{n}", lambda m, name=name: getattr(m.fft, name), (R if name in ("rfft", "ihfft") else C)[n])
         for name, lengths in LENGTHS.items() for n in lengths]
ONE_D += [(f"{name}_real_input", lambda m, name=name: getattr(m.fft, name), R[8]) for name in ("fft", "irfft")]
OPTIONS = [
    ("fft_n_pad", lambda m: lambda x: m.fft.fft(x, n=11), C[7]),
    ("fft_n_cut", lambda m: lambda x: m.fft.fft(x, n=4), C[7]),
    ("rfft_n_pad", lambda m: lambda x: m.fft.rfft(x, n=16), R[12]),
    ("irfft_n_odd", lambda m: lambda x: m.fft.irfft(x, n=9), C[5]),
    ("irfft_n_long", lambda m: lambda x: m.fft.irfft(x, n=30), C[8]),
    ("hfft_n", lambda m: lambda x: m.fft.hfft(x, n=7), C[5]),
    ("ihfft_n", lambda m: lambda x: m.fft.ihfft(x, n=6), R[8]),
    ("fft_axis0", lambda m: lambda x: m.fft.fft(x, axis=0), C[5]),
    ("fft2", lambda m: m.fft.fft2, _cplx(2, 6, 5)),
    ("ifft2_s", lambda m: lambda x: m.fft.ifft2(x, s=(4, 7)), _cplx(2, 6, 5)),
    ("rfft2", lambda m: m.fft.rfft2, _real(2, 6, 5)),
    ("irfft2", lambda m: m.fft.irfft2, _cplx(2, 6, 5)),
    ("irfft2_s_axes", lambda m: lambda x: m.fft.irfft2(x, s=(3, 8), axes=(0, 2)), _cplx(4, 2, 5)),
    ("fftn", lambda m: m.fft.fftn, _cplx(3, 4, 5)),
    ("ifftn_axes", lambda m: lambda x: m.fft.ifftn(x, axes=(2, 0)), _cplx(3, 4, 5)),
    ("rfftn_s", lambda m: lambda x: m.fft.rfftn(x, s=(2, 6)), _real(3, 4, 5)),
    ("irfftn", lambda m: m.fft.irfftn, _cplx(3, 4, 5)),
    ("fftn_4d", lambda m: m.fft.fftn, _cplx(2, 3, 2, 3)),
    ("rfftn_5d", lambda m: m.fft.rfftn, _real(2, 2, 3, 2, 4)),
    ("irfftn_4d", lambda m: m.fft.irfftn, _cplx(2, 3, 2, 3)),
    ("fft_empty_batch", lambda m: m.fft.fft, _cplx(0, 8)),
    ("rfft_empty_batch", lambda m: m.fft.rfft, _real(2, 0, 6)),
    ("fft_int_input", lambda m: m.fft.fft, np.arange(6, dtype=np.int32)),
    ("rfft_int_input", lambda m: m.fft.rfft, np.arange(6, dtype=np.int32)),
    ("fft_scalar_lengths_none", lambda m: lambda x: m.fft.fftn(x, axes=()), C[5]),
    ("fftshift", lambda m: m.fft.fftshift, _real(4, 5)),
    ("ifftshift_axis", lambda m: lambda x: m.fft.ifftshift(x, axes=1), _real(4, 5)),
    ("lax_fft_enum", lambda m: lambda x: m.lax.fft(x, m.lax.FftType.IFFT, (3, 5)), C[5]),
    ("lax_fft_string", lambda m: lambda x: m.lax.fft(x, "IRFFT", (3, 8)), C[5]),
    ("lax_fft_no_lengths", lambda m: lambda x: m.lax.fft(x, "fft", ()), R[5]),
]
NORMS = [(f"{name}_{norm}", lambda m, name=name, norm=norm: lambda x: getattr(m.fft, name)(x, norm=norm),
          R[12] if name in ("rfft", "ihfft", "rfftn") else C[12])
         for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "rfftn", "ifft2")
         for norm in (None, "backward", "ortho", "forward")]


class _Lib:
    """``m.fft`` and ``m.lax`` of one library, for the case lambdas."""

    def __init__(self, numpy, lax_module):
        self.fft, self.lax = numpy.fft, lax_module


def _with_lax(cases):
    libs = {jnp: _Lib(jnp, jax.lax), inp: _Lib(inp, lax)}
    return [(label, lambda m, f=f: f(libs[m]), x) for label, f, x in cases]


@pytest.mark.parametrize("group", ["one_d", "options", "norms"])
def test_functions_eager_and_jit_vs_jax(group):
    cases = {"one_d": ONE_D, "options": OPTIONS, "norms": NORMS}[group]
    _run_group(_with_lax(cases))


def test_against_numpy_fft():
    """NumPy's own functions: float32 input gives complex64 (JAX's dtype, where NumPy 2 agrees)."""
    x, z = _real(4, 10), _cplx(4, 10)
    for got, want in [(inp.fft.rfft(x), np.fft.rfft(x)), (inp.fft.fft2(z), np.fft.fft2(z)),
                      (irax.jit(inp.fft.irfftn)(z), np.fft.irfftn(z).astype(np.float32)),
                      (irax.jit(inp.fft.hfft)(z), np.fft.hfft(z).astype(np.float32))]:
        _close(got, want.astype(np.asarray(got).dtype), 1e-5)


LONG = [("rfft_65536", "rfft", {}, _real(65536)), ("irfft_65536", "irfft", {}, _cplx(32769)),
        ("fft_65536", "fft", {}, _cplx(65536)), ("fft_prime_65537", "fft", {}, _cplx(65537)),
        ("rfft_prime_4099", "rfft", {}, _real(2, 4099)), ("irfft_odd_6561", "irfft", {"n": 6561}, _cplx(3281))]


def test_long_transforms_to_float32_tolerance():
    """Bluestein (primes), four-step (composites) and IREE's power-of-two FFT, within 1e-4 of the output's norm
    (NumPy's transform in float64 as the reference)."""
    got = irax.jit(lambda *xs: [getattr(inp.fft, name)(x, **kw) for (_, name, kw, _), x in zip(LONG, xs)])(
        *[x for *_, x in LONG])
    for (label, name, kw, x), g in zip(LONG, got):
        want = getattr(np.fft, name)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), **kw)
        g = np.asarray(g)
        assert g.dtype == (np.float32 if name == "irfft" else np.complex64), label
        assert np.linalg.norm(g - want) <= 1e-4 * np.linalg.norm(want), label


def test_float64_under_x64():
    x, z = _real(3, 12, dtype=np.float64), _cplx(3, 13, dtype=np.complex128)
    with enable_x64(), jax.enable_x64(True):
        def program(m):
            return lambda x, z: (m.fft.rfft(x), m.fft.fft(z), m.fft.irfft(z), m.fft.ifftn(z), m.fft.rfft(x[0], n=1000),
                                 m.fft.fftfreq(6), m.fft.fft(x.astype(np.float32)))
        want = jax.jit(program(jnp))(x, z)
        for got in (program(inp)(x, z), irax.jit(program(inp))(x, z)):
            for g, w in zip(got, want):
                _close(g, w, 1e-12 if np.asarray(w).dtype in (np.float64, np.complex128) else 1e-5)


@pytest.mark.parametrize("args", [(5,), (8, 0.5), (7, 2.0)])
def test_fftfreq_rfftfreq(args):
    for name in ("fftfreq", "rfftfreq"):
        want = getattr(jnp.fft, name)(*args)
        _close(getattr(inp.fft, name)(*args), want, 1e-7)
        _close(irax.jit(lambda: getattr(inp.fft, name)(*args))(), want, 1e-7)
    _close(inp.fft.fftfreq(4, dtype=inp.int32), jnp.fft.fftfreq(4, dtype=jnp.int32))


# --- make_jaxpr text ---------------------------------------------------------------------------------------------

TEXT_CASES = [
    ("rfft_n_ortho", lambda m: lambda x: m.fft.rfft(x, n=6, norm="ortho"), R[8][0]),
    ("fft_n_pad", lambda m: lambda x: m.fft.fft(x, n=10), R[8]),
    ("irfft", lambda m: m.fft.irfft, C[8]),
    ("fft2_s_forward", lambda m: lambda x: m.fft.fft2(x, s=(3, 8), norm="forward"), C[5]),
    ("rfftn_axes", lambda m: lambda x: m.fft.rfftn(x, axes=(0,)), R[8]),
    ("fftn_5d", lambda m: m.fft.fftn, _cplx(1, 2, 2, 1, 3)),
    ("irfftn_5d", lambda m: m.fft.irfftn, _cplx(1, 2, 2, 1, 3)),
    ("fftshift", lambda m: m.fft.fftshift, R[8]),
    ("lax_fft_types", lambda m: lambda x: [m.lax.fft(x, t, (3, 8)) for t in ("fft", "IFFT", m.lax.FftType.IRFFT)],
     C[8]),
    ("lax_rfft", lambda m: lambda x: m.lax.fft(x, m.lax.FftType.RFFT, (8,)), R[8]),
    ("vmap_fft", lambda m: m.vmap(lambda x: m.lax.fft(x, "fft", (3,)), in_axes=1), C[8]),
    ("jvp_rfft", lambda m: lambda x: m.jvp(m.numpy.fft.rfft, (x,), (x,)), R[8]),
    ("grad_fft2", lambda m: m.grad(lambda x: m.numpy.sum(m.fft.fft2(x).real)), R[8]),
    ("grad_ifft_vector", lambda m: m.grad(lambda x: m.numpy.sum(m.fft.ifft(x).imag)), R[8][0]),
]


class _Full:
    def __init__(self, top, numpy, lax_module):
        self.fft, self.lax, self.numpy, self.vmap, self.jvp, self.grad = (numpy.fft, lax_module, numpy, top.vmap,
                                                                          top.jvp, top.grad)


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_make_jaxpr_text_matches_jax(case):
    _, f, x = case
    got = str(irax.make_jaxpr(f(_Full(irax, inp, lax)))(x))
    want = str(jax.make_jaxpr(f(_Full(jax, jnp, jax.lax)))(x))
    assert got == want


# --- autodiff and vmap -------------------------------------------------------------------------------------------

GRAD_CASES = [
    ("rfft_power", lambda m: lambda x: m.sum(m.abs(m.fft.rfft(x)) ** 2), _real(3, 8)),
    ("rfft_odd_power", lambda m: lambda x: m.sum(m.abs(m.fft.rfft(x, n=7)) ** 2), _real(3, 8)),
    ("irfft_cubed", lambda m: lambda x: m.sum(m.fft.irfft(x * (1 + 2j)) ** 3), _real(3, 5)),
    ("irfft_odd", lambda m: lambda x: m.sum(m.sin(m.fft.irfft(x * (1 - 1j), n=9))), _real(2, 5)),
    ("fft2_real_part", lambda m: lambda x: m.sum(m.fft.fft2(x).real ** 3 + m.fft.ifft2(x).imag), _real(3, 4)),
    ("rfftn_irfftn", lambda m: lambda x: m.sum(m.fft.irfftn(m.fft.rfftn(x) * m.fft.rfftn(x ** 2))), _real(2, 4, 6)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_vs_jax(case):
    _, f, x = case
    want = jax.grad(f(jnp))(x)
    _close(irax.grad(f(inp))(x), want, 1e-5)
    _close(irax.jit(irax.grad(f(inp)))(x), want, 1e-5)


def test_check_grads_complex_transforms():
    z = _cplx(2, 6)
    for fn in (lambda z: inp.fft.fft(z), lambda z: inp.fft.ifftn(z), lambda z: inp.fft.irfft(z, n=7),
               lambda z: inp.fft.rfft(z.real, n=5)):
        check_grads(fn, (z,), order=2, modes=("fwd", "rev"), atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap_vs_jax(in_axes):
    z, x = _cplx(3, 4, 6), _real(3, 4, 6)

    def program(top, m):
        def per_example(z, x):
            return m.fft.fft(z), m.fft.irfft(z, n=5), m.fft.rfft2(x), top.lax.fft(z, "ifft", z.shape[-1:])
        return top.vmap(per_example, in_axes=in_axes)
    want = program(jax, jnp)(z, x)
    for got in (program(irax, inp)(z, x), irax.jit(program(irax, inp))(z, x)):
        for g, w in zip(got, want):
            _close(g, w, 1e-5)


# --- errors ------------------------------------------------------------------------------------------------------

ERROR_CASES = [
    ("rfft_complex", lambda m: m.lax.fft(C[8], "rfft", (8,))),
    ("unknown_type", lambda m: m.lax.fft(C[8], "xfft", (8,))),
    ("type_not_str_or_enum", lambda m: m.lax.fft(C[8], 3.0, (8,))),
    ("lengths_mismatch", lambda m: m.lax.fft(C[8], "fft", (7,))),
    ("too_many_lengths", lambda m: m.lax.fft(C[8][0], "fft", (3, 8))),
    ("rfft_float16", lambda m: m.lax.fft(R[8].astype(np.float16), "rfft", (8,))),
    ("irfft_lengths", lambda m: m.lax.fft(_cplx(3, 4, 5), "irfft", (5, 8))),
    ("rfft_lengths", lambda m: m.lax.fft(R[8], "rfft", (3, 7))),
    ("shape_not_positive", lambda m: m.fft.fft(C[8], n=0)),
    ("s_axes_lengths", lambda m: m.fft.fftn(C[8], s=(3, 8), axes=(0,))),
    ("repeated_axes", lambda m: m.fft.fftn(C[8], axes=(0, 0))),
    ("fft_multiple_axes", lambda m: m.fft.fft(C[8], axis=(0, 1))),
    ("fft2_three_axes", lambda m: m.fft.fft2(_cplx(2, 2, 2), axes=(0, 1, 2))),
    ("bad_norm", lambda m: m.fft.fft(C[8], norm="sideways")),
    ("fftfreq_list", lambda m: m.fft.fftfreq([3, 4])),
    ("rfftfreq_d_list", lambda m: m.fft.rfftfreq(4, d=[1.0])),
    ("list_input", lambda m: m.fft.fft([1.0, 2.0])),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_jax(case):
    _, f = case
    with pytest.raises(Exception) as want:
        f(_Lib(jnp, jax.lax))
    with pytest.raises(want.type) as got:
        f(_Lib(inp, lax))
    assert str(got.value) == str(want.value)


def test_more_than_three_lengths_rejected_when_run():
    """JAX traces a 4-length ``lax.fft`` and fails when it compiles it (XLA's limit): so do eager and jit here."""
    x = _cplx(2, 2, 2, 2)
    text = str(irax.make_jaxpr(lambda x: lax.fft(x, "fft", (2, 2, 2, 2)))(x))
    assert "fft[fft_lengths=(2, 2, 2, 2) fft_type=0]" in text
    four = lambda x: lax.fft(x, "fft", (2, 2, 2, 2))  # noqa: E731
    for run in (four, irax.jit(four)):
        with pytest.raises(ValueError, match="rank must be between 1 and 3, but got 4"):
            run(x)
