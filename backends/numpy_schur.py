"""NumPy rule of ``schur``: LAPACK's ``gees`` as JAX's CPU lowering calls it (no sorting), written with NumPy alone.
A matrix is reduced to Hessenberg form by the ``hessenberg`` rule (``gehrd``), its reflectors multiplied out
(``orghr``), and the Hessenberg matrix brought to Schur form by ports of LAPACK's small-matrix QR sweeps: ``dlahqr``
(Francis double shifts, 2x2 blocks standardized by ``dlanv2``) for real matrices, ``zlahqr`` (Wilkinson single
shifts) for complex ones. The arithmetic is done in the operand's dtype, so that the deflations and the order of the
eigenvalues on the diagonal are LAPACK's. ``gees`` also balances by permutation and scales extreme matrices first,
and LAPACK uses the multishift ``laqr0`` from n = 75: irax does neither, so its Schur form there is another valid
one. A matrix holding NaN or infinity, or whose sweeps do not converge, comes out all NaN (JAX's ``info != 0``)."""
from __future__ import annotations

import numpy as np

from irax.ir.linalg import check_lapack_dtype

from . import numpy_decompositions, numpy_linalg  # read at call time: either may be the module imported first
from .numpy_rules import RULES, stack_of_matrices as _stack


_KEXSH = 10  # LAPACK's exceptional shifts: every tenth iteration without a deflation


def _sign(a, b):
    """Fortran's ``SIGN(a, b)``: ``|a|`` with the sign of ``b``."""
    return np.copysign(abs(a), b)


def _lapy2(x, y):
    """``dlapy2``: ``sqrt(x^2 + y^2)`` without overflow, as LAPACK rounds it."""
    w, z = max(abs(x), abs(y)), min(abs(x), abs(y))
    return w if z == 0 or w > np.finfo(type(w)).max else w * np.sqrt(1 + (z / w) ** 2)


def _lapy3(x, y, z):
    w = max(abs(x), abs(y), abs(z))
    return abs(x) + abs(y) + abs(z) if w == 0 else w * np.sqrt((x / w) ** 2 + (y / w) ** 2 + (z / w) ** 2)


def _larfg(alpha, x):
    """``dlarfg``/``zlarfg``: ``(beta, v, tau)`` with ``(I - tau [1 v] [1 v]^H) [alpha x] = [beta 0]``."""
    real = type(abs(alpha))
    xnorm = real(np.sqrt(np.sum(np.abs(x) ** 2))) if len(x) else real(0)
    if xnorm == 0 and np.imag(alpha) == 0:
        return alpha, x, alpha.dtype.type(0)
    beta = -_sign(_lapy3(real(np.real(alpha)), real(np.imag(alpha)), xnorm), np.real(alpha))
    if np.iscomplexobj(alpha):
        tau = alpha.dtype.type(complex((beta - alpha.real) / beta, -alpha.imag / beta))
    else:
        tau = (beta - alpha) / beta
    return alpha.dtype.type(beta), x * (alpha.dtype.type(1) / (alpha - beta)), tau


def _lanv2(a, b, c, d):
    """``dlanv2``: the 2x2 block ``[[a, b], [c, d]]`` in standard Schur form (upper triangular, or equal diagonal
    entries and ``b c < 0``), and the rotation ``(cs, sn)`` that makes it."""
    dt = type(a)
    one, half, zero = dt(1), dt(0.5), dt(0)
    eps = np.finfo(dt).eps
    safmn2 = dt(2.0 ** int(np.log(np.finfo(dt).tiny / eps) / np.log(2) / 2))
    safmx2 = one / safmn2
    if c == 0:
        cs, sn = one, zero
    elif b == 0:
        cs, sn = zero, one
        a, d, b, c = d, a, -c, zero
    elif a - d == 0 and _sign(one, b) != _sign(one, c):
        cs, sn = one, zero
    else:
        temp = a - d
        p = half * temp
        bcmax = max(abs(b), abs(c))
        bcmis = min(abs(b), abs(c)) * _sign(one, b) * _sign(one, c)
        scale = max(abs(p), bcmax)
        z = (p / scale) * p + (bcmax / scale) * bcmis
        if z >= 4 * eps:  # real eigenvalues
            z = p + _sign(np.sqrt(scale) * np.sqrt(z), p)
            a = d + z
            d = d - (bcmax / z) * bcmis
            tau = _lapy2(c, z)
            cs, sn = z / tau, c / tau
            b, c = b - c, zero
        else:  # complex or almost equal real eigenvalues: make the diagonal entries equal
            sigma = b + c
            for _ in range(21):
                scale = max(abs(temp), abs(sigma))
                if scale >= safmx2:
                    sigma, temp = sigma * safmn2, temp * safmn2
                elif scale <= safmn2:
                    sigma, temp = sigma * safmx2, temp * safmx2
                else:
                    break
            p = half * temp
            tau = _lapy2(sigma, temp)
            cs = np.sqrt(half * (one + abs(sigma) / tau))
            sn = -(p / (tau * cs)) * _sign(one, sigma)
            aa, bb = a * cs + b * sn, -a * sn + b * cs
            cc, dd = c * cs + d * sn, -c * sn + d * cs
            a, b = aa * cs + cc * sn, bb * cs + dd * sn
            c, d = -aa * sn + cc * cs, -bb * sn + dd * cs
            temp = half * (a + d)
            a = d = temp
            if c != 0:
                if b != 0:
                    if _sign(one, b) == _sign(one, c):  # real eigenvalues: make the block upper triangular
                        sab, sac = np.sqrt(abs(b)), np.sqrt(abs(c))
                        p = _sign(sab * sac, c)
                        tau = one / np.sqrt(abs(b + c))
                        a, d = temp + p, temp - p
                        b, c = b - c, zero
                        cs1, sn1 = sab * tau, sac * tau
                        cs, sn = cs * cs1 - sn * sn1, cs * sn1 + sn * cs1
                else:
                    b, c = -c, zero
                    cs, sn = -sn, cs
    return a, b, c, d, cs, sn


def _rotate(x, y, cs, sn):
    """``drot``: ``x <- cs x + sn y``, ``y <- cs y - sn x`` (views, in place)."""
    x[...], y[...] = cs * x + sn * y, cs * y - sn * x


def _cabs1(x):
    """LAPACK's ``CABS1``: ``|re x| + |im x|`` (``|x|`` for a real ``x``)."""
    return abs(np.real(x)) + abs(np.imag(x))


def _small_subdiagonal(h, i, smlnum, ulp):
    """The row ``k`` in ``(0, i]`` nearest the bottom whose subdiagonal entry is negligible (Ahues and Tisseur's
    criterion), else 0."""
    n = h.shape[0]
    for k in range(i, 0, -1):
        sub = h[k, k - 1]
        if _cabs1(sub) <= smlnum:
            return k
        tst = _cabs1(h[k - 1, k - 1]) + _cabs1(h[k, k])
        if tst == 0:
            tst += abs(np.real(h[k - 1, k - 2])) if k - 2 >= 0 else 0
            tst += abs(np.real(h[k + 1, k])) if k + 1 <= n - 1 else 0
        if abs(np.real(sub)) <= ulp * tst:
            ab, ba = max(_cabs1(sub), _cabs1(h[k - 1, k])), min(_cabs1(sub), _cabs1(h[k - 1, k]))
            diff = _cabs1(h[k - 1, k - 1] - h[k, k])
            aa, bb = max(_cabs1(h[k, k]), diff), min(_cabs1(h[k, k]), diff)
            s = aa + ab
            if ba * (ab / s) <= max(smlnum, ulp * (bb * (aa / s))):
                return k
    return 0


def _deflate(h, largest_block, step, split_off):
    """The main loop of ``lahqr``: QR steps (``step(l, i, kdefl)``) on the active rows and columns ``l..i`` until a
    block of order ``largest_block`` or less splits off at the bottom (``split_off(l, i)``), then on the rows above
    it; False if a block takes more than LAPACK's ``itmax`` steps."""
    n = h.shape[0]
    _, ulp, smlnum, itmax = _constants(h)
    i = n - 1
    while i >= 0:
        for kdefl in range(1, itmax + 2):  # steps since the last deflation
            l = _small_subdiagonal(h, i, smlnum, ulp)
            if l > 0:
                h[l, l - 1] = 0
            if l > i - largest_block:
                break
            step(l, i, kdefl)
        else:
            return False
        split_off(l, i)
        i = l - 1
    return True


def _constants(h):
    real = np.finfo(h.dtype).dtype.type
    ulp = real(np.finfo(h.dtype).eps)
    return real, ulp, real(np.finfo(h.dtype).tiny) * (real(h.shape[0]) / ulp), 30 * max(10, h.shape[0])


def _real_sweeps(h, z):
    """``dlahqr`` with ``wantt``, ``wantz``, ``ilo = 1``, ``ihi = n``, on ``h`` and ``z`` in place; False if it did
    not converge."""
    dt, ulp = _constants(h)[:2]
    dat1, dat2 = dt(0.75), dt(-0.4375)

    def step(l, i, kdefl):
        if kdefl % (2 * _KEXSH) == 0:  # exceptional shifts
            s = abs(h[i, i - 1]) + abs(h[i - 1, i - 2])
            h11 = dat1 * s + h[i, i]
            h12, h21, h22 = dat2 * s, s, h11
        elif kdefl % _KEXSH == 0:
            s = abs(h[l + 1, l]) + abs(h[l + 2, l + 1])
            h11 = dat1 * s + h[l, l]
            h12, h21, h22 = dat2 * s, s, h11
        else:  # Francis' double shift
            h11, h21, h12, h22 = h[i - 1, i - 1], h[i, i - 1], h[i - 1, i], h[i, i]
        rt1r, rt1i, rt2r, rt2i = _double_shift(h11, h12, h21, h22)
        m, v = _double_shift_start(h, l, i, rt1r, rt1i, rt2r, rt2i, ulp)
        _double_shift_sweep(h, z, l, m, i, v)

    def split_off(l, i):
        if l == i - 1:  # a 2x2 block, made standard
            a, b, c, d, cs, sn = _lanv2(h[i - 1, i - 1], h[i - 1, i], h[i, i - 1], h[i, i])
            h[i - 1, i - 1], h[i - 1, i], h[i, i - 1], h[i, i] = a, b, c, d
            _rotate(h[i - 1, i + 1:], h[i, i + 1:], cs, sn)
            _rotate(h[:i - 1, i - 1], h[:i - 1, i], cs, sn)
            _rotate(z[:, i - 1], z[:, i], cs, sn)

    return _deflate(h, 2, step, split_off)


def _double_shift(h11, h12, h21, h22):
    """The shifts: the eigenvalues of ``[[h11, h12], [h21, h22]]``, or twice the real one nearer ``h22``."""
    dt = type(h22)
    s = abs(h11) + abs(h12) + abs(h21) + abs(h22)
    if s == 0:
        return dt(0), dt(0), dt(0), dt(0)
    h11, h21, h12, h22 = h11 / s, h21 / s, h12 / s, h22 / s
    tr = (h11 + h22) / dt(2)
    det = (h11 - tr) * (h22 - tr) - h12 * h21
    rtdisc = np.sqrt(abs(det))
    if det >= 0:  # complex conjugate shifts
        return tr * s, rtdisc * s, tr * s, -(rtdisc * s)
    rt1r, rt2r = tr + rtdisc, tr - rtdisc
    shift = rt1r * s if abs(rt1r - h22) <= abs(rt2r - h22) else rt2r * s
    return shift, dt(0), shift, dt(0)


def _double_shift_start(h, l, i, rt1r, rt1i, rt2r, rt2i, ulp):
    """The row ``m`` to start the sweep from (two consecutive small subdiagonal entries), and its first column."""
    for m in range(i - 2, l - 1, -1):
        h21s = h[m + 1, m]
        s = abs(h[m, m] - rt2r) + abs(rt2i) + abs(h21s)
        h21s = h[m + 1, m] / s
        v = np.array([h21s * h[m, m + 1] + (h[m, m] - rt1r) * ((h[m, m] - rt2r) / s) - rt1i * (rt2i / s),
                      h21s * (h[m, m] + h[m + 1, m + 1] - rt1r - rt2r), h21s * h[m + 2, m + 1]], h.dtype)
        v = v / (abs(v[0]) + abs(v[1]) + abs(v[2]))
        if m == l:
            break
        if abs(h[m, m - 1]) * (abs(v[1]) + abs(v[2])) <= ulp * abs(v[0]) * (
                abs(h[m - 1, m - 1]) + abs(h[m, m]) + abs(h[m + 1, m + 1])):
            break
    return m, v


def _double_shift_sweep(h, z, l, m, i, v):
    """One Francis double-shift step on rows and columns ``m..i``: the bulge made by ``v`` chased down."""
    n = h.shape[0]
    for k in range(m, i):
        nr = min(3, i - k + 1)
        if k > m:
            v = h[k:k + nr, k - 1].copy()
        beta, tail, t1 = _larfg(v[0], v[1:nr])
        if k > m:
            h[k, k - 1] = beta
            h[k + 1:k + nr, k - 1] = 0
        elif m > l:
            h[k, k - 1] = h[k, k - 1] * (1 - t1)
        vec = np.concatenate([np.ones(1, h.dtype), tail])
        taus = t1 * vec
        rows = h[k:k + nr, k:n]
        rows -= taus[:, None] * (vec @ rows)[None, :]
        cols = h[:min(k + 3, i) + 1, k:k + nr]
        cols -= (cols @ vec)[:, None] * taus[None, :]
        zc = z[:, k:k + nr]
        zc -= (zc @ vec)[:, None] * taus[None, :]


def _complex_sweeps(h, z):
    """``zlahqr`` with ``wantt``, ``wantz``, ``ilo = 1``, ``ihi = n``, on ``h`` and ``z`` in place; False if it did
    not converge."""
    n = h.shape[0]
    real, ulp = _constants(h)[:2]
    dat1 = real(0.75)
    for i in range(1, n):  # real subdiagonal entries
        if np.imag(h[i, i - 1]) != 0:
            sc = h[i, i - 1] / _cabs1(h[i, i - 1])
            sc = np.conj(sc) / abs(sc)
            h[i, i - 1] = abs(h[i, i - 1])
            h[i, i:] *= sc
            h[:min(n - 1, i + 1) + 1, i] *= np.conj(sc)
            z[:, i] *= np.conj(sc)

    def step(l, i, kdefl):
        if kdefl % (2 * _KEXSH) == 0:  # exceptional shifts
            t = dat1 * abs(np.real(h[i, i - 1])) + h[i, i]
        elif kdefl % _KEXSH == 0:
            t = dat1 * abs(np.real(h[l + 1, l])) + h[l, l]
        else:
            t = _wilkinson_shift(h, i)
        m, v = _single_shift_start(h, l, i, t, ulp)
        _single_shift_sweep(h, z, l, m, i, v)
        temp = h[i, i - 1]  # a real subdiagonal entry
        if np.imag(temp) != 0:
            rtemp = abs(temp)
            h[i, i - 1] = rtemp
            temp = temp / rtemp
            h[i, i + 1:] *= np.conj(temp)
            h[:i, i] *= temp
            z[:, i] *= temp

    return _deflate(h, 1, step, lambda l, i: None)


def _wilkinson_shift(h, i):
    t = h[i, i]
    u = np.sqrt(h[i - 1, i]) * np.sqrt(h[i, i - 1])
    s = _cabs1(u)
    if s == 0:
        return t
    x = (h[i - 1, i - 1] - t) * type(s)(0.5)
    sx = _cabs1(x)
    s = max(s, sx)
    y = s * np.sqrt((x / s) ** 2 + (u / s) ** 2)
    if sx > 0 and np.real(x / sx) * np.real(y) + np.imag(x / sx) * np.imag(y) < 0:
        y = -y
    return t - u * (u / (x + y))


def _single_shift_start(h, l, i, t, ulp):
    for m in range(i - 1, l - 1, -1):
        h11, h22 = h[m, m], h[m + 1, m + 1]
        h11s = h11 - t
        h21 = np.real(h[m + 1, m])
        s = _cabs1(h11s) + abs(h21)
        v = np.array([h11s / s, h21 / s], h.dtype)
        if m == l or abs(np.real(h[m, m - 1])) * abs(h21 / s) <= ulp * (_cabs1(v[0]) * (_cabs1(h11) + _cabs1(h22))):
            return m, v


def _single_shift_sweep(h, z, l, m, i, v):
    """One single-shift step on rows and columns ``m..i``; ``h[m, m - 1]`` kept real."""
    n = h.shape[0]
    for k in range(m, i):
        if k > m:
            v = h[k:k + 2, k - 1].copy()
        beta, tail, t1 = _larfg(v[0], v[1:])
        if k > m:
            h[k, k - 1], h[k + 1, k - 1] = beta, 0
        v2 = tail[0]
        t2 = np.real(t1 * v2)
        rows = h[k:k + 2, k:n]
        s = np.conj(t1) * rows[0] + t2 * rows[1]
        rows[0] -= s
        rows[1] -= s * v2
        for block in (h[:min(k + 2, i) + 1], z):
            s = t1 * block[:, k] + t2 * block[:, k + 1]
            block[:, k] -= s
            block[:, k + 1] -= s * np.conj(v2)
        if k == m and m > l:
            temp = 1 - t1
            temp = temp / abs(temp)
            h[m + 1, m] *= np.conj(temp)
            if m + 2 <= i:
                h[m + 2, m + 1] *= temp
            for j in range(m, i + 1):
                if j != m + 1:
                    h[j, j + 1:] *= temp
                    h[:j, j] *= np.conj(temp)
                    z[:, j] *= np.conj(temp)


def _orthogonal_from_reflectors(reduced, taus):
    """``orghr``: the reflectors ``gehrd`` stored below the subdiagonal, multiplied out by ``householder_product``
    in the trailing block (the first row and column are the identity's)."""
    q = np.eye(reduced.shape[0], dtype=reduced.dtype)
    q[1:, 1:] = numpy_linalg.householder_product(reduced[1:, :-1], taus)
    return q


def schur(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    check_lapack_dtype(np.asarray(x).dtype)
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    a = _stack(x)
    t, vectors = np.full_like(a, np.nan), np.full_like(a, np.nan)
    sweeps = _complex_sweeps if np.iscomplexobj(a) else _real_sweeps
    for b in range(a.shape[0]):
        if not np.isfinite(a[b]).all():
            continue
        (reduced,), (taus,) = numpy_decompositions.hessenberg(a[b:b + 1])
        h = np.triu(reduced, -1)
        z = _orthogonal_from_reflectors(reduced, taus)
        if sweeps(h, z):
            t[b], vectors[b] = np.triu(h, -1), z
    shape = np.shape(x)
    return [t.reshape(shape)] + [vectors.reshape(shape)] * bool(compute_schur_vectors)


RULES["schur"] = schur
