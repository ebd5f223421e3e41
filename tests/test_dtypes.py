"""irax's dtypes and type promotion against JAX's, for every pair of dtypes.

Promotion fixes the dtype of every traced op, so one wrong edge of the lattice silently
changes a program's precision or its weak types. The facts are gathered into tables the
same way for irax and for JAX. x64 is a process-global flag, so the tables of the mode this
process is not in come from one subprocess that runs this file as a script and prints them
as JSON. Run as ``python tests/test_dtypes.py [--config-update]``.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
import warnings

import ml_dtypes
import numpy as np
import pytest

import irax
import irax.numpy as jnp

try:
    import jax
    import jax.numpy as jax_jnp
except ImportError:  # JAX is an optional oracle
    jax = jax_jnp = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the oracle")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
PY_TYPES = {"py_bool": bool, "py_int": int, "py_float": float, "py_complex": complex}
DTYPE_SPECS = DTYPES + list(PY_TYPES)
PY_SCALARS = {"True": True, "1": 1, "1.0": 1.0, "1j": 1j}
WEAK_ARRAYS = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}
ARRAYS = DTYPES + list(WEAK_ARRAYS)
OPERANDS = ARRAYS + list(PY_SCALARS)

SPEC_PAIRS = [(a, b) for a in DTYPE_SPECS for b in DTYPE_SPECS]
# ``1 + 1.0`` with no array is Python's business, not the library's.
ADD_PAIRS = [(a, b) for a in OPERANDS for b in OPERANDS if a in ARRAYS or b in ARRAYS]
ASARRAY_INPUTS = [f"np_array_{n}" for n in DTYPES] + [f"np_scalar_{n}" for n in DTYPES] + list(PY_SCALARS)
MODES = ["x32", "x64"]



def _key(pair):
    return "+".join(pair)


def _spec(name):
    """The dtype, or the Python type, that a name in ``DTYPE_SPECS`` stands for."""
    if name in PY_TYPES:
        return PY_TYPES[name]
    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


@contextlib.contextmanager
def _quiet():
    """JAX warns when a 64-bit dtype is requested in x32 mode; requesting them is the point here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Explicitly requested dtype", UserWarning)
        yield


def _dtype_and_weak(x):
    return [str(x.dtype), bool(x.weak_type)]


def _operands(numpy_module):
    """Arrays holding 1 of every dtype and weakly typed arrays (``jnp.asarray`` of Python scalars), by name."""
    with _quiet():
        arrays = {n: numpy_module.asarray(1, dtype=_spec(n)) for n in DTYPES}
    arrays.update({n: numpy_module.asarray(v) for n, v in WEAK_ARRAYS.items()})
    return arrays


def _asarray_inputs():
    inputs = {f"np_array_{n}": np.ones(2, _spec(n)) for n in DTYPES}
    inputs.update({f"np_scalar_{n}": _spec(n).type(1) for n in DTYPES})
    return {**inputs, **PY_SCALARS}


def _adder(pairs, names):
    """One function adding every pair, of the arrays ``names``: jitted, it is one compile."""
    def add_all(*arrays):
        env = {**PY_SCALARS, **dict(zip(names, arrays))}
        return [env[a] + env[b] for a, b in pairs]
    return add_all


def _tables(lib, numpy_module, run_adder):
    """One library's promotion facts in the current mode, as JSON data keyed by operand names."""
    specs = {n: _spec(n) for n in DTYPE_SPECS}
    arrays = _operands(numpy_module)
    with _quiet():
        sums = run_adder(_adder(ADD_PAIRS, list(arrays)), *arrays.values())
        return {
            "promote_types": {_key(p): str(numpy_module.promote_types(*map(specs.get, p))) for p in SPEC_PAIRS},
            "result_type": {_key(p): [str(d), w] for p in SPEC_PAIRS
                            for d, w in [lib.dtypes.result_type(*map(specs.get, p), return_weak_type_flag=True)]},
            "canonicalize_dtype": {n: str(lib.dtypes.canonicalize_dtype(specs[n])) for n in DTYPE_SPECS},
            "asarray": {n: _dtype_and_weak(numpy_module.asarray(x)) for n, x in _asarray_inputs().items()},
            "add": {_key(p): _dtype_and_weak(s) for p, s in zip(ADD_PAIRS, sums)},
        }


def _jit_table():
    """Every ``a + b`` under irax.jit (one compile), checked against the same sum computed eagerly."""
    arrays = _operands(jnp)
    names = list(arrays)
    eager = _adder(ADD_PAIRS, names)(*arrays.values())
    sums = irax.jit(_adder(ADD_PAIRS, names))(*arrays.values())
    return {_key(p): {"result": _dtype_and_weak(s),
                      "same_value_as_eager": bool(np.array_equal(np.asarray(s), np.asarray(e)))}
            for p, s, e in zip(ADD_PAIRS, sums, eager)}


def irax_tables(with_jit=True):
    tables = _tables(irax, jnp, lambda f, *args: f(*args))
    if with_jit:
        tables["jit"] = _jit_table()
    return tables


def jax_tables():
    """JAX's results come from ``eval_shape``: the same dtypes as running the ops, without compiling each."""
    return _tables(jax, jax_jnp, jax.eval_shape) if jax is not None else None


def _config_update_tables():
    """irax's tables after ``config.update("jax_enable_x64", ...)`` turns x64 on, then off again."""
    add_one = irax.jit(lambda x: x + 1)
    out = {"jit_dtypes": [str(add_one(jnp.asarray(1)).dtype)]}
    irax.config.update("jax_enable_x64", True)
    out["x64"] = irax_tables(with_jit=False)
    out["jit_dtypes"].append(str(add_one(jnp.asarray(1)).dtype))
    irax.config.update("jax_enable_x64", False)
    out["x32"] = irax_tables(with_jit=False)
    out["jit_dtypes"].append(str(add_one(jnp.asarray(1)).dtype))
    return out


@functools.cache
def _start_self(x64, *args):
    """This file as a script in a subprocess, started once; stderr goes to a file so that it never blocks."""
    env = {**os.environ, "JAX_ENABLE_X64": "1" if x64 else "0"}
    stderr = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([sys.executable, __file__, *args], env=env, stdout=subprocess.PIPE, stderr=stderr,
                            text=True)
    return proc, stderr


@functools.cache
def _run_self(x64, *args):
    proc, stderr = _start_self(x64, *args)
    stdout, _ = proc.communicate(timeout=300)
    if proc.returncode:
        stderr.seek(0)
        return {"error": stderr.read()[-4000:]}
    return json.loads(stdout.splitlines()[-1])


@pytest.fixture(scope="module", autouse=True)
def _subprocesses_in_background():
    """The subprocesses compute their tables while this process computes its own."""
    started = [_start_self(not irax.config.jax_enable_x64), _start_self(False, "--config-update")]
    yield
    for proc, stderr in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        stderr.close()


@functools.cache
def _mode_tables(mode):
    """Computed once per mode: here if this process is in that mode, else in a subprocess."""
    if irax.config.jax_enable_x64 == (mode == "x64"):
        return {"irax": irax_tables(), "jax": jax_tables()}
    return _run_self(mode == "x64")


def _table(mode, lib, name):
    tables = _mode_tables(mode)
    if "error" in tables:
        pytest.fail(f"computing the {mode} tables failed:\n{tables['error']}")
    return tables[lib][name]


def _row(pairs, left):
    return [p for p in pairs if p[0] == left]


def _compare(mode, name, pairs):
    """irax's and JAX's entries of one table for ``pairs``, as two dicts (a failure shows their diff)."""
    ours, theirs = _table(mode, "irax", name), _table(mode, "jax", name)
    return {_key(p): ours[_key(p)] for p in pairs}, {_key(p): theirs[_key(p)] for p in pairs}


@needs_jax
@pytest.mark.parametrize("left", DTYPE_SPECS)
@pytest.mark.parametrize("mode", MODES)
def test_promote_types(mode, left):
    ours, theirs = _compare(mode, "promote_types", _row(SPEC_PAIRS, left))
    assert ours == theirs


@needs_jax
@pytest.mark.parametrize("left", DTYPE_SPECS)
@pytest.mark.parametrize("mode", MODES)
def test_result_type_and_weak_type(mode, left):
    ours, theirs = _compare(mode, "result_type", _row(SPEC_PAIRS, left))
    assert ours == theirs


@needs_jax
@pytest.mark.parametrize("mode", MODES)
def test_canonicalize_dtype(mode):
    """In x32 mode the 64-bit types become 32-bit ones, as JAX's."""
    assert _table(mode, "irax", "canonicalize_dtype") == _table(mode, "jax", "canonicalize_dtype")


@needs_jax
@pytest.mark.parametrize("mode", MODES)
def test_asarray_canonicalizes_numpy_and_python_inputs(mode):
    """``jnp.asarray(np.float64(1))`` is float32 in x32 mode; Python scalars are weakly typed."""
    assert _table(mode, "irax", "asarray") == _table(mode, "jax", "asarray")


@pytest.mark.parametrize("mode, float64, int64", [("x32", "float32", "int32"), ("x64", "float64", "int64")])
def test_64_bit_inputs_follow_the_mode(mode, float64, int64):
    """The defaults JAX documents, checked without JAX: 64-bit NumPy inputs are narrowed only in x32 mode."""
    table = _table(mode, "irax", "asarray")
    assert table["np_scalar_float64"] == table["np_array_float64"] == [float64, False]
    assert table["np_array_int64"] == [int64, False]
    assert table["1.0"] == [float64, True]


@needs_jax
@pytest.mark.parametrize("left", OPERANDS)
@pytest.mark.parametrize("mode", MODES)
def test_add_dtype_and_weak_type(mode, left):
    ours, theirs = _compare(mode, "add", _row(ADD_PAIRS, left))
    assert ours == theirs


@pytest.mark.parametrize("left", OPERANDS)
@pytest.mark.parametrize("mode", MODES)
def test_jit_add(mode, left):
    """Jitted sums have JAX's dtype and weak type (irax's eager ones when JAX is absent) and eager's values."""
    pairs = _row(ADD_PAIRS, left)
    rows = {_key(p): _table(mode, "irax", "jit")[_key(p)] for p in pairs}
    expected = _table(mode, "jax" if jax is not None else "irax", "add")
    assert {k: r["result"] for k, r in rows.items()} == {k: expected[k] for k in rows}
    assert [k for k, r in rows.items() if not r["same_value_as_eager"]] == []


@functools.cache
def _config_update_results():
    return _run_self(False, "--config-update")


@pytest.mark.parametrize("name", ["promote_types", "result_type", "canonicalize_dtype", "asarray", "add"])
def test_config_update_switches_x64(name):
    """``config.update("jax_enable_x64", ...)`` at run time gives the tables of the environment variable."""
    updated = _config_update_results()
    assert "error" not in updated, updated.get("error")
    assert updated["x64"][name] == _table("x64", "irax", name)
    assert updated["x32"][name] == _table("x32", "irax", name)


def test_config_update_retraces_jitted_functions():
    """A jitted function's cache is keyed on the mode: the same call gives int32, then int64, then int32."""
    updated = _config_update_results()
    assert "error" not in updated, updated.get("error")
    assert updated["jit_dtypes"] == ["int32", "int64", "int32"]


FINFO_ATTRS = ["bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal", "resolution", "nmant", "nexp",
               "dtype"]


@needs_jax
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    ours, theirs = jnp.finfo(_spec(name)), jax_jnp.finfo(_spec(name))
    assert {a: getattr(ours, a) for a in FINFO_ATTRS} == {a: getattr(theirs, a) for a in FINFO_ATTRS}
    with _quiet():
        assert jnp.finfo(jnp.ones(2, _spec(name))).dtype == jax_jnp.finfo(jax_jnp.ones(2, _spec(name))).dtype


@needs_jax
@pytest.mark.parametrize("name", [n for n in DTYPES if n[:3] in ("int", "uin")])
def test_iinfo(name):
    ours, theirs = jnp.iinfo(_spec(name)), jax_jnp.iinfo(_spec(name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    with _quiet():
        assert jnp.iinfo(jnp.ones(2, _spec(name))).max == jax_jnp.iinfo(jax_jnp.ones(2, _spec(name))).max


@pytest.mark.parametrize("info, name", [("finfo", "int32"), ("iinfo", "bool"), ("iinfo", "float32")])
def test_info_of_the_wrong_kind_raises(info, name):
    with pytest.raises(ValueError):
        getattr(jnp, info)(_spec(name))


CATEGORIES = [np.bool_, np.number, np.integer, np.signedinteger, np.unsignedinteger, np.inexact, np.floating,
              np.complexfloating]


@needs_jax
@pytest.mark.parametrize("name", DTYPES)
def test_issubdtype(name):
    """bfloat16 is a floating type to JAX, though NumPy does not know it."""
    ours = [irax.dtypes.issubdtype(_spec(name), c) for c in CATEGORIES]
    assert ours == [jax.dtypes.issubdtype(_spec(name), c) for c in CATEGORIES]


if __name__ == "__main__":
    tables = _config_update_tables() if "--config-update" in sys.argv else {"irax": irax_tables(),
                                                                             "jax": jax_tables()}
    print(json.dumps(tables))


@needs_jax
@pytest.mark.parametrize("name", DTYPES + ["complex64", "bfloat16", None, "key", "float0"])
def test_itemsize_bits_as_jax(name):
    def answer(M):
        dtype = {None: None, "key": M.random.key(0).dtype, "float0": M.dtypes.float0}.get(name, name)
        try:
            return M.dtypes.itemsize_bits(dtype)
        except ValueError as e:
            return str(e)
    assert answer(irax) == answer(jax)
