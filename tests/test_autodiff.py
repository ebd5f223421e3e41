"""Automatic differentiation: ``grad``, ``value_and_grad``, ``jvp``, ``vjp`` and ``linearize``.

1. ``make_jaxpr`` of differentiated programs prints exactly JAX's text.
2. Derivative values, eager and under ``jit``, match JAX's and central finite
   differences computed in float64 with NumPy.
3. Transformations compose: higher derivatives, ``jit`` inside and outside,
   ``jvp`` of ``grad``, Python control flow, closures, pytrees, ``has_aux``.
4. Misuse raises JAX's exception types and messages.

Programs are written once against a ``(jax, jnp, lax, nn)`` module tuple, so
the same code is traced by irax and by JAX (the optional oracle).
"""
import functools

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax as ilax
from irax import nn as inn

try:
    import jax
    import jax.numpy as jax_jnp
except ImportError:  # JAX is an optional oracle
    jax = jax_jnp = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the oracle")

F = np.float32
s = F(0.7)
v3 = np.array([0.5, 1.5, 2.5], F)
ct3 = np.ones(3, F)
m23 = np.arange(1, 7, dtype=F).reshape(2, 3) / 4
m34 = np.arange(12, dtype=F).reshape(3, 4) / 10 + 0.1
v4 = np.arange(4, dtype=F) / 5 + 0.2
i3 = np.arange(3, dtype=np.int32)

IRAX = (irax, inp, ilax, inn)


def _jax_mods():
    return (jax, jax_jnp, jax.lax, jax.nn)


# --- 1. jaxpr text --------------------------------------------------------------------------------

def _mlp(jax, jnp, lax, nn):
    params = {"w1": np.ones((3, 4), F) / 7, "b1": np.zeros(4, F), "w2": np.ones((4, 2), F) / 3,
              "b2": np.zeros(2, F)}
    y = np.array([[1.0, 0.0], [0.0, 1.0]], F)

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        out = h @ p["w2"] + p["b2"]
        return jnp.mean((out - y) ** 2)
    return jax.grad(loss), (params, m23, y)


def _mlp_relu(jax, jnp, lax, nn):
    params = (np.ones((3, 4), F) / 7, np.zeros(4, F))

    def loss(p, x):
        w, b = p
        return jnp.sum(jnp.maximum(x @ w + b, 0.0))
    return jax.value_and_grad(loss), (params, m23)


PROGRAMS = {
    # elementwise chains
    "grad_2_plus_sin": lambda jax, jnp, lax, nn: (jax.grad(lambda x: 2 + jnp.sin(x)), (s,)),
    "grad_sin": lambda jax, jnp, lax, nn: (jax.grad(jnp.sin), (s,)),
    "grad_cos": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.cos(x) * 3.0), (s,)),
    "grad_tanh_sum": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.tanh(x))), (v3,)),
    "grad_exp_log": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.log(jnp.exp(x) + 1.0))), (v3,)),
    "grad_sqrt": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.sqrt(x))), (v3,)),
    "grad_square_cube": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x ** 2 + x ** 3)), (v3,)),
    "grad_neg_int_pow": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x ** -2)), (v3,)),
    "grad_reciprocal": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(1 / x)), (v3,)),
    "grad_square": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.square(x))), (v3,)),
    "grad_rsqrt": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.rsqrt(x))), (v3,)),
    "grad_logistic": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.logistic(x))), (v3,)),
    "grad_sigmoid": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(nn.sigmoid(x))), (v3,)),
    "grad_chain": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jnp.sin(jnp.cos(jnp.tanh(jnp.exp(x)))))), (v3,)),
    "grad_fanout": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x * x + x * jnp.sin(x) + x)), (v3,)),
    "grad_literal_reuse": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x * 2.0 + 2.0) * 2.0), (v3,)),
    "grad_int_literal_mul": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x * 2 + 1)), (v3,)),
    "grad_integer_pow_scalar_chain": lambda jax, jnp, lax, nn: (jax.grad(lambda x: (x ** 2 + 1.0) ** 3), (s,)),
    "grad_div_xy": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, y: jnp.sum(x / y), argnums=(0, 1)), (v3, v3 + 1)),
    "grad_mul_argnum1": lambda jax, jnp, lax, nn: (jax.grad(lambda x, y: jnp.sum(x * y * x), argnums=1), (v3, v3)),
    "grad_sub": lambda jax, jnp, lax, nn: (jax.grad(lambda x, y: jnp.sum(x - 2.0 * y), argnums=(0, 1)), (v3, v3)),
    "grad_neg": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(-x * x)), (v3,)),
    "grad_maximum": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.maximum(x, 1.0))), (v3,)),
    "grad_minimum_xy": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, y: jnp.sum(jnp.minimum(x, y)), argnums=(0, 1)), (v3, v3[::-1].copy())),
    "grad_stop_gradient": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.stop_gradient(x) * x)), (v3,)),
    "grad_copy": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.array(x) * x.copy())), (v3,)),
    "grad_stop_all": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.stop_gradient(x * x))), (v3,)),
    "grad_astype_roundtrip": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(x.astype(jnp.float16).astype(jnp.float32) * x)), (v3,)),
    "grad_int_convert": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x * np.arange(3))), (v3,)),
    "grad_closure_const": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x * np.arange(3, dtype=F))), (v3,)),
    "grad_f16": lambda jax, jnp, lax, nn: (jax.grad(lambda x: x * jnp.sin(x)), (np.float16(0.5),)),
    "grad_weak_scalar_arg": lambda jax, jnp, lax, nn: (jax.grad(lambda x: x * x * 3.0), (1.5,)),
    "grad_python_scalar_in": lambda jax, jnp, lax, nn: (lambda: jax.grad(lambda x: jnp.sin(x) * x)(1.5), ()),
    "grad_holomorphic": lambda jax, jnp, lax, nn: (
        jax.grad(lambda z: z * z + 2.0 * z, holomorphic=True), (np.complex64(1 + 2j),)),
    "grad_complex_in_real_out": lambda jax, jnp, lax, nn: (
        jax.grad(lambda z: jnp.real(z * z)), (np.complex64(1 + 2j),)),
    "grad_const_fn": lambda jax, jnp, lax, nn: (jax.grad(lambda x: 3.0), (v3,)),
    "grad_const_fn_scalar": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.float32(3.0)), (s,)),
    "grad_identity": lambda jax, jnp, lax, nn: (jax.grad(lambda x: x), (s,)),
    "grad_unused_arg": lambda jax, jnp, lax, nn: (jax.grad(lambda x, y: jnp.sum(x * x), argnums=(0, 1)), (v3, v3)),
    "grad_size0": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.sin(x))), (np.zeros((0,), F),)),
    "grad_scalar_index": lambda jax, jnp, lax, nn: (jax.grad(lambda x: (x ** 2)[()]), (s,)),
    # more primitives' rules
    "grad_abs": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.abs(x - 1.0))), (v3,)),
    "grad_sign_zero": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.sign(x) * x)), (v3,)),
    "grad_float_pow": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x ** 1.5)), (v3,)),
    "grad_pow_xy": lambda jax, jnp, lax, nn: (jax.grad(lambda x, y: jnp.sum(x ** y), argnums=(0, 1)), (v3, v3)),
    "grad_lax_pow": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, y: jnp.sum(lax.pow(x, y)), argnums=(0, 1)), (v3, v3)),
    "grad_tan": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.tan(x))), (v3,)),
    "grad_atan": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.arctan(x))), (v3,)),
    "grad_atan2": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, y: jnp.sum(lax.atan2(x, y)), argnums=(0, 1)), (v3, v3 + 1)),
    "grad_asin_acos": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.asin(x / 4.0) + lax.acos(x / 4.0))), (v3,)),
    "grad_asinh_atanh": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.asinh(x) + lax.atanh(x / 4.0))), (v3,)),
    "grad_sinh_cosh": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.sinh(x) * jnp.cosh(x))), (v3,)),
    "grad_log1p": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.log1p(x))), (v3,)),
    "grad_expm1": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.expm1(x))), (v3,)),
    "grad_exp2_log2": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.exp2(x) + jnp.log2(x))), (v3,)),
    "grad_cbrt": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.cbrt(x))), (v3,)),
    "grad_erf": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.erf(x))), (v3,)),
    "grad_erf_inv": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.erf_inv(x / 4.0))), (v3,)),
    "grad_lgamma": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.lgamma(x))), (v3,)),
    "grad_gelu": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(nn.gelu(x))), (v3,)),
    "grad_clamp": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.clamp(1.0, x, 2.0))), (v3,)),
    "grad_select_n_int": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.select_n(i3 % 2, x, x * x))), (v3,)),
    "grad_max_reduce": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.max(x)), (v3,)),
    "grad_broadcast_to": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jnp.broadcast_to(x, (2, 3)) * m23)), (v3,)),
    "grad_rev_lax": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.rev(x, (0,)) * m23)), (m23,)),
    "grad_cumsum": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(lax.cumsum(x, 0) ** 2)), (v3,)),
    "grad_cumsum_reverse": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.cumsum(x, 1, reverse=True) ** 2)), (m23,)),
    "grad_dynamic_slice": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.dynamic_slice(x, (0, 1), (1, 2)) ** 2)), (m23,)),
    "grad_dynamic_update_slice": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, u: jnp.sum(lax.dynamic_update_slice(x, u, (0, 1)) ** 2), argnums=(0, 1)),
        (m23, np.ones((1, 2), F))),
    "grad_pad": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.sin(lax.pad(x, 0.0, [(1, 2, 1)])))), (v3,)),
    "grad_pad_negative": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.pad(x, 0.0, [(-1, 1, 0), (0, 0, 1)]) ** 2)), (m23,)),
    "grad_prod": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.prod(x)), (v3,)),
    "grad_index_and_slice": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: x[1, 2] * x[0, 0] + jnp.sum(x[:, 1:])), (m23,)),
    "grad_lax_slice": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.slice(x, (0, 1), (2, 3)) ** 2)), (m23,)),
    "grad_strided_slice": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x[::2] ** 2)), (np.arange(5, dtype=F),)),
    # broadcasting against scalars and rows
    "grad_scalar_broadcast": lambda jax, jnp, lax, nn: (
        jax.grad(lambda a, x: jnp.sum(a * x + a), argnums=(0, 1)), (s, m23)),
    "grad_scalar_times_vector": lambda jax, jnp, lax, nn: (jax.grad(lambda a: jnp.sum(jnp.exp(a * v3))), (s,)),
    "grad_row_broadcast": lambda jax, jnp, lax, nn: (
        jax.grad(lambda b, x: jnp.sum(jnp.sin(x + b)), argnums=0), (v3, m23)),
    "grad_col_broadcast": lambda jax, jnp, lax, nn: (
        jax.grad(lambda b, x: jnp.sum(x * b[:, None])), (np.ones(2, F), m23)),
    "grad_lax_broadcast": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.broadcast_in_dim(x, (2, 3, 4), (1,)) ** 2)), (v3,)),
    # reductions, shapes
    "grad_mean": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.mean(x * x)), (m23,)),
    "grad_sum_keepdims": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.sum(x, keepdims=True) * x)), (m23,)),
    "grad_reshape": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jnp.sin(x.reshape(3, 2)) * m23.reshape(3, 2))), (m23,)),
    "grad_transpose": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x.T * m23.T)), (m23,)),
    "grad_ravel": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.ravel(x) ** 2)), (m23,)),
    "grad_swapaxes": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.swapaxes(x[None], 0, 2) ** 2)), (m23,)),
    "grad_expand_squeeze": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jnp.squeeze(x[None] * 2.0, 0))), (m23,)),
    "grad_lax_squeeze_expand": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(lax.squeeze(lax.expand_dims(x, (0,)), (0,)) * m23)), (m23,)),
    # matmul / dot_general
    "grad_matmul": lambda jax, jnp, lax, nn: (jax.grad(lambda w, x: jnp.sum(x @ w), argnums=(0, 1)), (m34, m23)),
    "grad_matvec": lambda jax, jnp, lax, nn: (jax.grad(lambda w: jnp.sum(jnp.tanh(m34 @ w))), (v4,)),
    "grad_dot": lambda jax, jnp, lax, nn: (jax.grad(lambda x, y: jnp.dot(x, y), argnums=(0, 1)), (v3, v3)),
    "grad_dot_general": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, y: jnp.sum(lax.dot_general(x, y, (((1,), (1,)), ((), ())))), argnums=(0, 1)),
        (m34, m34)),
    "grad_batched_dot_general": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x, y: jnp.sum(lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))), argnums=(0, 1)),
        (np.ones((2, 3, 4), F), np.ones((2, 4, 5), F))),
    "grad_x_xT": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.matmul(x, x.T))), (m23,)),
    "grad_mlp": _mlp,
    "vg_mlp_relu_tuple": _mlp_relu,
    # pytrees, argnums, value_and_grad
    "grad_dict": lambda jax, jnp, lax, nn: (
        jax.grad(lambda p: jnp.sum(p["a"] * p["b"]) + p["c"]), ({"a": v3, "b": v3, "c": s},)),
    "grad_tuple_param": lambda jax, jnp, lax, nn: (jax.grad(lambda p: jnp.sum(jnp.sin(p[0]) * p[1])), ((v3, v3),)),
    "grad_list_param": lambda jax, jnp, lax, nn: (jax.grad(lambda p: jnp.sum(p[0] ** 2) + p[1] ** 2), ([v3, s],)),
    "grad_argnums_pytrees": lambda jax, jnp, lax, nn: (
        jax.grad(lambda p, x, q: jnp.sum(p["w"] * x) + q[0] * q[1], argnums=(0, 2)), ({"w": v3}, v3, (s, s))),
    "vg_sin_cos": lambda jax, jnp, lax, nn: (jax.value_and_grad(lambda x: jnp.sum(jnp.sin(x) * jnp.cos(x))), (v3,)),
    "vg_argnums_reversed": lambda jax, jnp, lax, nn: (
        jax.value_and_grad(lambda x, y: jnp.sum(x * jnp.exp(y)), argnums=(1, 0)), (v3, v3)),
    "vg_argnums_negative": lambda jax, jnp, lax, nn: (
        jax.value_and_grad(lambda x, y: jnp.sum(x * jnp.exp(y)), argnums=-1), (v3, v3)),
    "vg_const": lambda jax, jnp, lax, nn: (jax.value_and_grad(lambda x: jnp.sum(v3)), (v3,)),
    # higher order
    "grad_grad_sin": lambda jax, jnp, lax, nn: (jax.grad(jax.grad(jnp.sin)), (s,)),
    "grad_grad_poly": lambda jax, jnp, lax, nn: (jax.grad(jax.grad(lambda x: x ** 3 + 2.0 * x ** 2)), (s,)),
    "grad_grad_tanh": lambda jax, jnp, lax, nn: (jax.grad(jax.grad(jnp.tanh)), (s,)),
    "grad_grad_exp_mul": lambda jax, jnp, lax, nn: (jax.grad(jax.grad(lambda x: jnp.exp(x) * x)), (s,)),
    "grad_grad_grad_sin": lambda jax, jnp, lax, nn: (jax.grad(jax.grad(jax.grad(jnp.sin))), (s,)),
    "grad_grad_grad_grad_sin": lambda jax, jnp, lax, nn: (jax.grad(jax.grad(jax.grad(jax.grad(jnp.sin)))), (s,)),
    "jvp_of_jvp": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(lambda x: jax.jvp(jnp.sin, (x,), (t,))[1], (x,), (t,)), (v3, ct3)),
    "grad_grad_argnums": lambda jax, jnp, lax, nn: (
        jax.grad(jax.grad(lambda x, y: x * x * y, argnums=1), argnums=0), (s, s)),
    "grad_of_sum_grad": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jax.grad(lambda y: jnp.sum(jnp.sin(y) * y))(x))), (v3,)),
    "grad_of_vjp": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jax.vjp(jnp.sin, x)[1](x)[0])), (v3,)),
    "grad_of_jvp": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jax.jvp(jnp.tanh, (x,), (x,))[1])), (v3,)),
    "hvp": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)), (x,), (t,))[1], (v3, ct3)),
    "two_grads": lambda jax, jnp, lax, nn: (lambda x: (jax.grad(jnp.sin)(x), jax.grad(jnp.cos)(x)), (s,)),
    # closures over values of the enclosing trace
    "grad_closure_outer_tracer": lambda jax, jnp, lax, nn: (
        lambda c, x: jax.grad(lambda x: jnp.sum(jnp.sin(x * c)))(x), (v3, v3)),
    "grad_through_closure_user": lambda jax, jnp, lax, nn: (
        lambda c: jax.grad(lambda c: jnp.sum(jax.grad(lambda x: jnp.sum(x * c * x))(v3)))(c), (v3,)),
    "jvp_closure_outer": lambda jax, jnp, lax, nn: (
        lambda c, x, t: jax.jvp(lambda x: jnp.exp(x) * c, (x,), (t,)), (v3, v3, ct3)),
    "vjp_closure_outer": lambda jax, jnp, lax, nn: (
        lambda c, x, ct: jax.vjp(lambda x: jnp.cos(x) + c * x, x)[1](ct), (v3, v3, ct3)),
    # jit inside and outside
    "jit_grad": lambda jax, jnp, lax, nn: (jax.jit(jax.grad(lambda x: jnp.sum(jnp.cos(x) ** 2))), (v3,)),
    "jvp_jit": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(jax.jit(lambda x: jnp.sin(x) * x), (x,), (t,)), (v3, ct3)),
    "grad_of_jit": lambda jax, jnp, lax, nn: (jax.grad(jax.jit(lambda x: jnp.sum(jnp.sin(x) * x))), (v3,)),
    "grad_inner_jit": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jax.jit(jnp.cos)(x) * x)), (v3,)),
    "grad_where_zero": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(jnp.where(x > 1.0, x, 0.0))), (v3,)),
    "jvp_jit_closure_tracer": lambda jax, jnp, lax, nn: (
        lambda c, x, t: jax.jvp(jax.jit(lambda x: jnp.sin(x) * c), (x,), (t,)), (v3, v3, ct3)),
    "jvp_jit_closure_tangent": lambda jax, jnp, lax, nn: (
        lambda c, t: jax.jvp(lambda c: jax.jit(lambda x: jnp.sin(x) * c)(v3), (c,), (t,)), (v3, ct3)),
    "jvp_jit_nonlinear_arg": lambda jax, jnp, lax, nn: (
        lambda x, y, t: jax.jvp(lambda x: jax.jit(lambda a, b: a * b)(x, y), (x,), (t,)), (v3, v3, ct3)),
    "jvp_jit_jit": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(jax.jit(lambda x: jax.jit(jnp.sin)(x) * x), (x,), (t,)), (v3, ct3)),
    "grad_jit_all_primal": lambda jax, jnp, lax, nn: (jax.grad(lambda x: jnp.sum(x * jax.jit(jnp.cos)(v3))), (v3,)),
    "jit_vjp": lambda jax, jnp, lax, nn: (jax.jit(lambda x, ct: jax.vjp(jnp.tanh, x)[1](ct)), (v3, ct3)),
    # jvp
    "jvp_sin": lambda jax, jnp, lax, nn: (lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), (v3, ct3)),
    "jvp_poly": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(lambda x: x ** 3 + jnp.exp(x) / x, (x,), (t,)), (v3, ct3)),
    "jvp_matmul": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(lambda w: jnp.tanh(m23 @ w), (x,), (t,)), (m34, m34)),
    "jvp_two_args": lambda jax, jnp, lax, nn: (
        lambda x, y, tx, ty: jax.jvp(lambda a, b: a * jnp.sin(b), (x, y), (tx, ty)), (v3, v3, ct3, ct3)),
    "jvp_sum_mean": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(lambda x: (jnp.sum(x, 0), jnp.mean(x)), (x,), (t,)), (m23, m23)),
    "jvp_dict": lambda jax, jnp, lax, nn: (
        lambda p, t: jax.jvp(lambda p: p["a"] * p["b"], (p,), (t,)), ({"a": v3, "b": v3}, {"a": ct3, "b": ct3})),
    "jvp_of_grad": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(jax.grad(lambda x: jnp.sum(jnp.sin(x) * x)), (x,), (t,)), (v3, ct3)),
    "jvp_identity": lambda jax, jnp, lax, nn: (lambda x, t: jax.jvp(lambda x: x, (x,), (t,)), (v3, ct3)),
    "jvp_const_only": lambda jax, jnp, lax, nn: (lambda x, t: jax.jvp(lambda x: jnp.ones(3), (x,), (t,)), (v3, ct3)),
    "jvp_const_out": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.jvp(lambda x: (x * 2.0, jnp.zeros(2)), (x,), (t,)), (v3, ct3)),
    # vjp
    "vjp_sin": lambda jax, jnp, lax, nn: (lambda x, ct: jax.vjp(jnp.sin, x)[1](ct), (v3, ct3)),
    "vjp_poly": lambda jax, jnp, lax, nn: (lambda x, ct: jax.vjp(lambda x: jnp.tanh(x) * x ** 2, x)[1](ct), (v3, ct3)),
    "vjp_matmul": lambda jax, jnp, lax, nn: (
        lambda w, ct: jax.vjp(lambda w: m23 @ w, w)[1](ct), (m34, np.ones((2, 4), F))),
    "vjp_broadcast": lambda jax, jnp, lax, nn: (lambda x, ct: jax.vjp(lambda x: x + m23, x)[1](ct), (v3, m23)),
    "vjp_two_outputs": lambda jax, jnp, lax, nn: (
        lambda x, ct: jax.vjp(lambda x: (jnp.sin(x), jnp.sum(x)), x)[1](ct), (v3, (ct3, s))),
    "vjp_two_inputs": lambda jax, jnp, lax, nn: (
        lambda x, y, ct: jax.vjp(lambda x, y: x * y + x, x, y)[1](ct), (v3, v3, ct3)),
    "vjp_primal_and_ct": lambda jax, jnp, lax, nn: (
        lambda x, ct: (lambda r: (r[0], r[1](ct)))(jax.vjp(jnp.exp, x)), (v3, ct3)),
    "vjp_dict_out": lambda jax, jnp, lax, nn: (
        lambda x, ct: jax.vjp(lambda x: {"a": jnp.sin(x), "b": x * x}, x)[1](ct), (v3, {"a": ct3, "b": ct3})),
    "vjp_dup_out": lambda jax, jnp, lax, nn: (lambda x, a, b: jax.vjp(lambda x: (x, x), x)[1]((a, b)), (v3, ct3, ct3)),
    "vjp_scalar_output": lambda jax, jnp, lax, nn: (lambda x, c: jax.vjp(lambda x: jnp.sum(x ** 2), x)[1](c), (v3, s)),
    "vjp_weak_scalar": lambda jax, jnp, lax, nn: (lambda x: jax.vjp(lambda x: x * 2.0, x)[1](1.0), (3.0,)),
    "vjp_int_output": lambda jax, jnp, lax, nn: (
        lambda x, a: jax.vjp(lambda x: (jnp.sin(x), jnp.argmax(x)), x)[1]((a, np.zeros((), jax.dtypes.float0))),
        (v3, ct3)),
    "vjp_pullback_traced": lambda jax, jnp, lax, nn: (jax.vjp(lambda x: jnp.sin(x) * x, v3)[1], (ct3,)),
    "linearize_traced": lambda jax, jnp, lax, nn: (jax.linearize(lambda x: jnp.exp(x) * x, v3)[1], (ct3,)),
    # linearize
    "linearize_sin": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.linearize(lambda x: jnp.sin(x) * x, x)[1](t), (v3, ct3)),
    "linearize_primal": lambda jax, jnp, lax, nn: (
        lambda x, t: (lambda r: (r[0], r[1](t)))(jax.linearize(lambda x: jnp.exp(x) * x, x)), (v3, ct3)),
    "linearize_two_out": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.linearize(lambda x: (jnp.sin(x), x * 3.0), x)[1](t), (v3, ct3)),
    # regressions: traced aux, outputs that do not depend on the input, grad through a jitted where
    "grad_has_aux_traced": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: (jnp.sum(x * x), jnp.sin(x)), has_aux=True), (v3,)),
    "value_and_grad_aux_dict": lambda jax, jnp, lax, nn: (
        jax.value_and_grad(lambda x: (jnp.sum(jnp.sin(x)), {"a": x * 2}), has_aux=True), (v3,)),
    "vjp_constant_output": lambda jax, jnp, lax, nn: (
        lambda x, a, b: jax.vjp(lambda x: (jnp.sin(x), jnp.ones(3)), x)[1]((a, b)), (v3, ct3, ct3)),
    "linearize_constant_output": lambda jax, jnp, lax, nn: (
        lambda x, t: jax.linearize(lambda x: (jnp.sin(x), jnp.ones(3)), x)[1](t), (v3, ct3)),
    "grad_where_both_branches": lambda jax, jnp, lax, nn: (
        jax.grad(lambda x: jnp.sum(jnp.where(x > 1., x * x, jnp.sin(x)))), (v3,)),
}


@needs_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_jaxpr_text_as_jax(name):
    build = PROGRAMS[name]
    fn, args = build(*IRAX)
    mine = str(irax.make_jaxpr(fn)(*args))
    jfn, jargs = build(*_jax_mods())
    theirs = str(jax.make_jaxpr(jfn)(*jargs))
    assert mine == theirs


def test_at_least_forty_programs():
    assert len(PROGRAMS) >= 40


# --- 2. numerics ------------------------------------------------------------------------------------

# Elementwise functions of one array, written against a numpy-like module (irax.numpy, jax.numpy or NumPy
# itself for the float64 finite differences). Inputs lie in [0.35, 1.9], away from the kinks at 1.2.
UNARY = {
    "sin": lambda m: m.sin,
    "cos": lambda m: m.cos,
    "tanh": lambda m: m.tanh,
    "exp": lambda m: m.exp,
    "log": lambda m: m.log,
    "sqrt": lambda m: m.sqrt,
    "square": lambda m: lambda x: x ** 2,
    "cube": lambda m: lambda x: x ** 3,
    "reciprocal": lambda m: lambda x: 1 / x,
    "maximum": lambda m: lambda x: m.maximum(x, 1.2),
    "minimum": lambda m: lambda x: m.minimum(1.3, x * 2.0),
    "where": lambda m: lambda x: m.where(x > 1.2, x * x, m.sin(x)),
    "logistic": lambda m: lambda x: 1.0 / (1.0 + m.exp(-x)),
    "chain": lambda m: lambda x: m.tanh(x) * m.exp(-x) + m.sqrt(x) / (1.0 + x * x) - m.log(x) * m.cos(x),
    "abs": lambda m: lambda x: m.abs(x - 1.2),
    "sign_mul": lambda m: lambda x: m.sign(x - 1.2) * x,
    "clip": lambda m: lambda x: m.clip(x, 0.5, 1.2),
    "pow_float": lambda m: lambda x: x ** 1.7,
    "pow_xx": lambda m: lambda x: x ** x,
    "tan": lambda m: lambda x: m.tan(x * 0.5),
    "arctan": lambda m: m.arctan,
    "arctan2": lambda m: lambda x: m.arctan2(x, 1.0 - x),
    "arcsin_arccos": lambda m: lambda x: m.arcsin(x / 2.0) + 2.0 * m.arccos(x / 3.0),
    "arcsinh_arctanh": lambda m: lambda x: m.arcsinh(x) + m.arctanh(x / 2.0),
    "sinh_cosh": lambda m: lambda x: m.sinh(x) - m.cosh(x * 0.5),
    "log1p_expm1": lambda m: lambda x: m.log1p(x) * m.expm1(-x),
    "exp2_log2": lambda m: lambda x: m.exp2(x) + m.log2(x),
    "cbrt": lambda m: m.cbrt,
}

_W34 = (np.arange(12, dtype=F).reshape(3, 4) - 5.0) / 7.0
_C32 = (np.arange(6, dtype=F).reshape(3, 2) - 2.0) / 3.0

# Functions of a (2, 3) array that mix elements.
MIXING = {
    "matmul_tanh": lambda m: lambda x: m.tanh(x @ _W34),
    "softmax_rows": lambda m: lambda x: m.exp(x) / m.sum(m.exp(x), axis=-1, keepdims=True),
    "centered_square": lambda m: lambda x: (x - m.mean(x, axis=0)) ** 2,
    "reshape_transpose": lambda m: lambda x: m.sin(m.reshape(x, (3, 2)) * _C32).T,
    "row_normalize": lambda m: lambda x: x / m.sqrt(m.sum(x * x, axis=1, keepdims=True)),
    "times_total": lambda m: lambda x: m.exp(x) * m.sum(x),
    "outer": lambda m: lambda x: x[:, :, None] * x[:, None, :],
    "gram": lambda m: lambda x: (x @ x.T) * 0.5 + m.mean(x),
    "softmax_stable": lambda m: lambda x: (lambda e: e / m.sum(e, axis=-1, keepdims=True))(
        m.exp(x - m.max(x, axis=-1, keepdims=True))),
    "max_min_axes": lambda m: lambda x: m.max(x, axis=0) * m.min(x, axis=1)[:, None],
    "prod": lambda m: lambda x: m.prod(x, axis=1),
    "cumsum": lambda m: lambda x: m.cumsum(x * x, axis=1),
    "cumprod": lambda m: lambda x: m.cumprod(x, axis=0),
    "concat_stack": lambda m: lambda x: (m.concatenate([m.sin(x), x[:, :1] * 2.0], axis=1)
                                         + m.stack([x, x], 0).sum(0)[:, :1]),
    "slices": lambda m: lambda x: x[1:, ::2] * x[:1, 1:],
    "flip": lambda m: lambda x: m.flip(x, 1) * x,
    "pad": lambda m: lambda x: m.pad(x, ((1, 0), (0, 2))) * 2.0,
    "var_std": lambda m: lambda x: m.var(x, axis=1) + m.std(x),
}

# irax.nn / jax.nn functions (no NumPy twin: checked against JAX only).
NN = {
    "relu": lambda nn: lambda x: nn.relu(x - 1.2),
    "gelu": lambda nn: nn.gelu,
    "gelu_exact": lambda nn: lambda x: nn.gelu(x, approximate=False),
    "silu": lambda nn: nn.silu,
    "sigmoid": lambda nn: nn.sigmoid,
    "softplus": lambda nn: nn.softplus,
    "log_sigmoid": lambda nn: nn.log_sigmoid,
    "elu": lambda nn: lambda x: nn.elu(x - 1.2),
    "leaky_relu": lambda nn: lambda x: nn.leaky_relu(x - 1.2),
    "softmax": lambda nn: nn.softmax,
    "log_softmax": lambda nn: nn.log_softmax,
    "logsumexp": lambda nn: lambda x: nn.logsumexp(x, axis=-1),
    "standardize": lambda nn: nn.standardize,
}

_VALS = np.array([0.35, 0.8, 1.05, 1.45, 1.9, 0.6], F)
SHAPES = {"scalar": (), "vec3": (3,), "mat23": (2, 3), "empty": (0,)}


def _input(shape):
    n = int(np.prod(shape))
    return _VALS[1:1 + n].reshape(shape) if shape == () else _VALS[:n].reshape(shape)


def _direction(shape, seed=0):
    n = int(np.prod(shape, dtype=int))
    return (np.linspace(-1.0, 1.3, max(n, 1))[:n] * (1 if seed == 0 else -0.7) + 0.1 * seed).astype(F).reshape(shape)


def _cotangent(out_shape):
    return _direction(out_shape, seed=1)


def _derivatives(mods, f, x, t, ct):
    """grad of sum(f), (f(x), jvp tangent), (f(x), vjp cotangent) under the given (jax, jnp) modules."""
    ad, m = mods
    fn = f(m)
    g = ad.grad(lambda x: m.sum(fn(x)))(x)
    y, y_dot = ad.jvp(fn, (x,), (t,))
    y2, pullback = ad.vjp(fn, x)
    x_bar, = pullback(ct)
    return {"grad": g, "jvp_primal": y, "jvp_tangent": y_dot, "vjp_primal": y2, "vjp": x_bar}


def _fd_jacobian(f, x, h=1e-6):
    """Central differences in float64: shape ``f(x).shape + x.shape``."""
    x = np.asarray(x, np.float64)
    y = np.asarray(f(x))
    jac = np.zeros(y.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        jac[(Ellipsis,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return y, jac


def _out_shape(f, x):
    return np.shape(f(np)(np.asarray(x, np.float64)))


UNARY_CASES = [(f, sh) for f in sorted(UNARY) for sh in SHAPES]
# JAX (one XLA compile per shape) and irax's jit (one IREE compile per module) are the slow parts: they see
# fewer shapes, and jit a representative subset of the functions.
JAX_SHAPES = ["mat23", "empty"]
UNARY_JAX_CASES = [(f, sh) for f in sorted(UNARY) for sh in JAX_SHAPES]
JIT_SHAPES = ["scalar", "mat23", "empty"]
JIT_UNARY = ["abs", "chain", "clip", "maximum", "pow_float", "reciprocal", "tan", "where"]
JIT_MIXING = ["concat_stack", "cumsum", "matmul_tanh", "pad", "prod", "slices", "softmax_stable"]
MIXING_CASES = sorted(MIXING)


def _case(table, fname, shape):
    f = table[fname]
    x = _input(shape)
    t = _direction(shape)
    ct = _cotangent(_out_shape(f, x))
    return f, x, t, ct


def _check_close(mine, theirs, rtol=1e-5, atol=1e-6):
    for key in theirs:
        a, b = np.asarray(mine[key]), np.asarray(theirs[key])
        assert a.shape == b.shape, key
        assert a.dtype == b.dtype, (key, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=key)


@functools.lru_cache(maxsize=None)
def _jax_reference(table_name, shape):
    """JAX's derivatives of every function of a table at one shape, from one ``jax.jit`` (one XLA compile)."""
    table = {"unary": UNARY, "mixing": MIXING, "nn": _nn_table(jax.nn)}[table_name]
    cases = {name: _case(table, name, shape)[1:] for name in table}
    run = jax.jit(lambda cases: {name: _derivatives((jax, jax_jnp), table[name], *c) for name, c in cases.items()})
    return jax.device_get(run(cases))


@needs_jax
@pytest.mark.parametrize("fname,shape", UNARY_JAX_CASES)
def test_unary_derivatives_match_jax(fname, shape):
    f, x, t, ct = _case(UNARY, fname, SHAPES[shape])
    _check_close(_derivatives((irax, inp), f, x, t, ct), _jax_reference("unary", SHAPES[shape])[fname])


@needs_jax
@pytest.mark.parametrize("fname", MIXING_CASES)
def test_mixing_derivatives_match_jax(fname):
    f, x, t, ct = _case(MIXING, fname, (2, 3))
    _check_close(_derivatives((irax, inp), f, x, t, ct), _jax_reference("mixing", (2, 3))[fname])


def _nn_table(nn):
    """NN's functions in the form of UNARY's (a function of a numpy-like module), bound to one nn module."""
    return {name: (lambda make: lambda m: make(nn))(make) for name, make in NN.items()}


@needs_jax
@pytest.mark.parametrize("fname", sorted(NN))
def test_nn_derivatives_match_jax(fname):
    table = _nn_table(inn)
    f, x, t, ct = _case(table, fname, (2, 3))
    _check_close(_derivatives((irax, inp), f, x, t, ct), _jax_reference("nn", (2, 3))[fname])


def _check_against_fd(f, x, t, ct):
    mine = _derivatives((irax, inp), f, x, t, ct)
    y, jac = _fd_jacobian(f(np), x)
    out_axes = tuple(range(y.ndim))
    n_in = np.ndim(x)
    expected = {
        "jvp_primal": y,
        "vjp_primal": y,
        "grad": jac.sum(axis=out_axes) if out_axes else jac,
        "jvp_tangent": np.tensordot(jac, np.asarray(t, np.float64), axes=n_in),
        "vjp": np.tensordot(np.asarray(ct, np.float64), jac, axes=y.ndim),
    }
    for key, value in expected.items():
        got = np.asarray(mine[key])
        assert got.dtype == np.float32, key
        assert got.shape == np.shape(value), key
        np.testing.assert_allclose(got, value, rtol=2e-5, atol=2e-5, err_msg=key)


@pytest.mark.parametrize("fname,shape", UNARY_CASES)
def test_unary_derivatives_match_finite_differences(fname, shape):
    _check_against_fd(*_case(UNARY, fname, SHAPES[shape]))


@pytest.mark.parametrize("fname", MIXING_CASES)
def test_mixing_derivatives_match_finite_differences(fname):
    _check_against_fd(*_case(MIXING, fname, (2, 3)))


def _all_derivatives(table, names, shape):
    cases = {name: _case(table, name, shape) for name in names}
    xs = {name: c[1:] for name, c in cases.items()}

    def run(xs):
        return {name: _derivatives((irax, inp), table[name], *xs[name]) for name in names}
    return run, xs


@pytest.mark.parametrize("shape", JIT_SHAPES)
def test_unary_derivatives_under_jit_match_eager(shape):
    """Derivatives of several functions at one shape, in a single compiled module."""
    run, xs = _all_derivatives(UNARY, JIT_UNARY, SHAPES[shape])
    eager = run(xs)
    jitted = irax.jit(run)(xs)
    for name in eager:
        _check_close(jitted[name], eager[name], rtol=1e-5, atol=1e-6)


def test_mixing_derivatives_under_jit_match_eager():
    run, xs = _all_derivatives(MIXING, JIT_MIXING, (2, 3))
    eager = run(xs)
    jitted = irax.jit(run)(xs)
    for name in eager:
        _check_close(jitted[name], eager[name], rtol=1e-5, atol=1e-6)


def test_results_are_irax_arrays_with_primal_dtypes():
    g = irax.grad(lambda x: inp.sum(x * x))(v3)
    assert isinstance(g, irax.Array) and g.dtype == np.float32 and g.shape == (3,)
    g = irax.grad(lambda x: x * x)(3.0)
    assert g.dtype == np.float32 and g.weak_type and float(g) == 6.0
    g = irax.grad(lambda x: x * x)(np.float16(3.0))
    assert g.dtype == np.float16 and float(g) == 6.0
    y, t = irax.jvp(lambda x: x * 2.0, (v3,), (ct3,))
    assert isinstance(y, irax.Array) and isinstance(t, irax.Array)


# --- 3. composition ----------------------------------------------------------------------------------

def test_third_derivatives():
    xs = [F(-1.3), F(0.2), F(0.9), F(2.0)]
    cases = [
        (lambda x: inp.sin(x), lambda x: -np.cos(x)),
        (lambda x: x ** 4, lambda x: 24 * x),
        (lambda x: inp.exp(2.0 * x), lambda x: 8 * np.exp(2 * x)),
        (lambda x: inp.log(x * x + 1.0), lambda x: 4 * x * (x * x - 3) / (x * x + 1) ** 3),
        (lambda x: inp.tanh(x), lambda x: -2 * (1 - np.tanh(x) ** 2) * (1 - 3 * np.tanh(x) ** 2)),
    ]
    for f, d3 in cases:
        g3 = irax.grad(irax.grad(irax.grad(f)))
        for x in xs:
            np.testing.assert_allclose(g3(x), d3(np.float64(x)), rtol=1e-4, atol=1e-5)


def test_third_derivative_under_jit():
    g3 = irax.grad(irax.grad(irax.grad(lambda x: inp.sin(x) * x)))
    x = F(0.4)
    expected = -3 * np.sin(0.4) - 0.4 * np.cos(0.4)  # (x sin x)''' = -3 sin x - x cos x
    np.testing.assert_allclose(g3(x), expected, rtol=1e-5)
    np.testing.assert_allclose(irax.jit(g3)(x), expected, rtol=1e-5)


def _mlp_loss(m):
    def loss(params, x, y):
        h = m.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        return m.mean((out - y) ** 2)
    return loss


_MLP_PARAMS = {"w1": _W34, "b1": np.linspace(-0.2, 0.2, 4).astype(F), "w2": _W34.T[:, :2].copy(),
               "b2": np.array([0.1, -0.1], F)}
_MLP_Y = np.array([[1.0, 0.0], [0.0, 1.0]], F)


def test_jit_of_grad_equals_grad_on_pytree():
    g = irax.grad(_mlp_loss(inp))
    eager = g(_MLP_PARAMS, m23, _MLP_Y)
    jitted = irax.jit(g)(_MLP_PARAMS, m23, _MLP_Y)
    assert irax.tree_util.tree_structure(jitted) == irax.tree_util.tree_structure(_MLP_PARAMS)
    for k in _MLP_PARAMS:
        assert jitted[k].shape == _MLP_PARAMS[k].shape
        np.testing.assert_allclose(jitted[k], eager[k], rtol=1e-5, atol=1e-7)
    if jax is not None:
        theirs = jax.grad(_mlp_loss(jax_jnp))(_MLP_PARAMS, m23, _MLP_Y)
        for k in _MLP_PARAMS:
            np.testing.assert_allclose(eager[k], theirs[k], rtol=1e-5, atol=1e-7)


def test_mlp_gradient_matches_finite_differences():
    loss = _mlp_loss(np)
    g = irax.grad(_mlp_loss(inp))(_MLP_PARAMS, m23, _MLP_Y)
    params64 = {k: v.astype(np.float64) for k, v in _MLP_PARAMS.items()}
    for k in params64:
        def f(p, k=k):
            return loss({**params64, k: p}, m23.astype(np.float64), _MLP_Y.astype(np.float64))
        _, jac = _fd_jacobian(f, params64[k])
        np.testing.assert_allclose(g[k], jac, rtol=1e-4, atol=1e-6, err_msg=k)


def test_grad_of_jit():
    f = lambda x: inp.sum(inp.tanh(x) * x)  # noqa: E731
    expected = irax.grad(f)(m23)
    np.testing.assert_allclose(irax.grad(irax.jit(f))(m23), expected, rtol=1e-6)
    np.testing.assert_allclose(irax.jit(irax.grad(irax.jit(f)))(m23), expected, rtol=1e-5)


def test_jvp_of_grad_is_hessian_vector_product():
    f = lambda x: inp.sum(inp.sin(x) * x ** 2)  # noqa: E731
    x = v3
    t = np.array([0.3, -1.0, 2.0], F)
    g, hv = irax.jvp(irax.grad(f), (x,), (t,))
    x64 = x.astype(np.float64)
    diag = 2 * np.sin(x64) + 4 * x64 * np.cos(x64) - x64 ** 2 * np.sin(x64)
    np.testing.assert_allclose(hv, diag * t, rtol=1e-5)
    np.testing.assert_allclose(g, np.cos(x64) * x64 ** 2 + 2 * x64 * np.sin(x64), rtol=1e-5)


def test_python_control_flow_on_values():
    def f(x):
        if x > 0:
            return x ** 2
        return -x ** 3

    def doubling(x):
        y = x
        while y < 10.0:
            y = y * 2.0
        return y

    assert float(irax.grad(f)(F(2.0))) == 4.0
    assert float(irax.grad(f)(F(-2.0))) == -12.0
    assert float(irax.grad(doubling)(F(1.5))) == 8.0
    assert float(irax.grad(irax.grad(f))(F(-1.0))) == 6.0
    y, t = irax.jvp(f, (F(-2.0),), (F(1.0),))
    assert float(y) == 8.0 and float(t) == -12.0
    y, pullback = irax.vjp(f, F(3.0))
    assert float(y) == 9.0 and float(pullback(F(1.0))[0]) == 6.0
    with pytest.raises(irax.errors.TracerBoolConversionError):
        irax.jit(irax.grad(f))(F(2.0))


@needs_jax
def test_python_control_flow_under_jit_raises_like_jax():
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(f))(F(2.0))
    with pytest.raises(irax.errors.TracerBoolConversionError, match="Attempted boolean conversion"):
        irax.jit(irax.grad(f))(F(2.0))


def test_closures_over_outer_values():
    c = np.array([1.0, -2.0, 0.5], F)
    ca = inp.asarray(c)
    np.testing.assert_allclose(irax.grad(lambda x: inp.sum(x * c))(v3), c)
    np.testing.assert_allclose(irax.grad(lambda x: inp.sum(inp.sin(x) * ca))(v3), np.cos(v3) * c, rtol=1e-6)

    def outer(c, x):  # the closure is a tracer of the enclosing jit
        return irax.grad(lambda x: inp.sum(inp.sin(x * c)))(x)
    np.testing.assert_allclose(irax.jit(outer)(c, v3), np.cos(v3 * c) * c, rtol=1e-5)
    np.testing.assert_allclose(outer(c, v3), np.cos(v3 * c) * c, rtol=1e-5)

    # differentiating through a closure: d/dc of grad_x sum(c x^2) = d/dc (2 c x) summed = 2 sum(x)
    gc = irax.grad(lambda c: inp.sum(irax.grad(lambda x: inp.sum(c * x * x))(v3)))(F(1.5))
    np.testing.assert_allclose(gc, 2 * v3.sum(), rtol=1e-6)


def test_grad_with_respect_to_pytrees():
    params = {"a": v3, "b": [F(2.0), (m23, F(-1.0))]}

    def f(p):
        return inp.sum(p["a"] ** 2) * p["b"][0] + inp.sum(inp.sin(p["b"][1][0])) * p["b"][1][1]
    g = irax.grad(f)(params)
    assert irax.tree_util.tree_structure(g) == irax.tree_util.tree_structure(params)
    np.testing.assert_allclose(g["a"], 2 * v3 * 2.0, rtol=1e-6)
    np.testing.assert_allclose(g["b"][0], np.sum(v3 ** 2), rtol=1e-6)
    np.testing.assert_allclose(g["b"][1][0], -np.cos(m23), rtol=1e-6)
    np.testing.assert_allclose(g["b"][1][1], np.sum(np.sin(m23)), rtol=1e-6)

    ga, gb = irax.grad(lambda a, s, b: inp.sum(a[0] * b["x"]) + s, argnums=(0, 2))([v3], 1.0, {"x": v3})
    assert isinstance(ga, list) and set(gb) == {"x"}
    np.testing.assert_allclose(ga[0], v3)
    np.testing.assert_allclose(gb["x"], v3)

    y, t = irax.jvp(lambda p: p["u"] * p["v"], ({"u": v3, "v": v3},), ({"u": ct3, "v": 2 * ct3},))
    np.testing.assert_allclose(t, 3 * v3)
    out, pullback = irax.vjp(lambda p: {"s": p[0] + p[1], "d": p[0] - p[1]}, (v3, v3))
    ct, = pullback({"s": ct3, "d": 2 * ct3})
    assert isinstance(ct, tuple)
    np.testing.assert_allclose(ct[0], 3 * ct3)
    np.testing.assert_allclose(ct[1], -ct3)


def test_has_aux_with_non_traced_aux():
    g, aux = irax.grad(lambda x: (inp.sum(x * x), "label"), has_aux=True)(v3)
    np.testing.assert_allclose(g, 2 * v3)
    assert aux == "label"
    (value, aux), g = irax.value_and_grad(lambda x: (inp.sum(x * x), {"shape": x.shape}), has_aux=True)(v3)
    assert float(value) == pytest.approx(float(np.sum(v3 ** 2)))
    assert aux == {"shape": (3,)}
    np.testing.assert_allclose(g, 2 * v3)


def test_value_and_grad():
    value, g = irax.value_and_grad(lambda x, y: inp.sum(x * inp.exp(y)), argnums=(0, 1))(v3, m23[0])
    np.testing.assert_allclose(value, np.sum(v3 * np.exp(m23[0])), rtol=1e-6)
    np.testing.assert_allclose(g[0], np.exp(m23[0]), rtol=1e-6)
    np.testing.assert_allclose(g[1], v3 * np.exp(m23[0]), rtol=1e-6)
    value, g = irax.jit(irax.value_and_grad(lambda x: inp.sum(inp.sin(x))))(v3)
    np.testing.assert_allclose(value, np.sum(np.sin(v3)), rtol=1e-6)
    np.testing.assert_allclose(g, np.cos(v3), rtol=1e-6)


def test_linearize_matches_jvp():
    f = lambda x: inp.sin(x) * inp.exp(x)  # noqa: E731
    y, f_jvp = irax.linearize(f, v3)
    y2, t2 = irax.jvp(f, (v3,), (ct3 * 0.5,))
    np.testing.assert_allclose(y, y2)
    np.testing.assert_allclose(f_jvp(ct3 * 0.5), t2, rtol=1e-6)
    np.testing.assert_allclose(f_jvp(ct3), 2 * np.asarray(t2), rtol=1e-6)


def test_allow_int_gives_float0_zeros():
    gx, gi = irax.grad(lambda x, i: inp.sum(x * i), argnums=(0, 1), allow_int=True)(v3, i3)
    np.testing.assert_allclose(gx, i3.astype(F))
    assert gi.dtype == irax.dtypes.float0 and gi.shape == (3,)
    g = irax.grad(lambda i: i * 2.0, allow_int=True)(np.int32(3))
    assert g.dtype == irax.dtypes.float0 and g.shape == ()
    _, pullback = irax.vjp(lambda x, i: x * i, v3, i3)
    cx, ci = pullback(ct3)
    np.testing.assert_allclose(cx, i3.astype(F))
    assert ci.dtype == irax.dtypes.float0 and ci.shape == (3,)
    if jax is not None:
        jgi = jax.grad(lambda x, i: jax_jnp.sum(x * i), argnums=(0, 1), allow_int=True)(v3, i3)[1]
        assert jgi.dtype == gi.dtype and jgi.shape == gi.shape


def test_pullback_and_linearized_function_under_jit():
    f = lambda x: inp.sin(x) * x  # noqa: E731
    _, pullback = irax.vjp(f, v3)
    _, f_jvp = irax.linearize(f, v3)
    x64 = v3.astype(np.float64)
    deriv = np.cos(x64) * x64 + np.sin(x64)
    np.testing.assert_allclose(pullback(ct3 * 2)[0], 2 * deriv, rtol=1e-6)
    np.testing.assert_allclose(irax.jit(pullback)(ct3 * 2)[0], 2 * deriv, rtol=1e-5)
    np.testing.assert_allclose(irax.jit(f_jvp)(ct3 * 3), 3 * deriv, rtol=1e-5)


# Calls whose results (values, dtypes, weak types and tree structure) must be JAX's.
EDGE_CASES = {
    "kwargs_not_differentiated": lambda ad, m: ad.grad(lambda x, y=1.0: x * y)(2.0, y=3.0),
    "list_of_python_floats": lambda ad, m: ad.grad(lambda p: p[0] * p[1])([2.0, 3.0]),
    "fourth_derivative": lambda ad, m: ad.grad(ad.grad(ad.grad(ad.grad(m.sin))))(0.5),
    "value_and_grad_weak": lambda ad, m: ad.value_and_grad(lambda x: x * x)(3.0),
    "none_argument": lambda ad, m: ad.grad(lambda x, y: x * 2.0)(1.0, None),
    "none_leaf": lambda ad, m: ad.grad(lambda p: p["a"] * 2.0)({"a": 1.0, "b": None}),
    "empty_tuple_argnum": lambda ad, m: ad.grad(lambda x, t: x * 2.0, argnums=(0, 1))(1.0, ()),
    "jvp_none_leaves": lambda ad, m: ad.jvp(lambda x, y: x * 2.0, (1.0, None), (1.0, None)),
    "vjp_none_output": lambda ad, m: ad.vjp(lambda x: (x * 2.0, None), 1.0)[1]((1.0, None)),
    "shape_1_to_scalar": lambda ad, m: ad.grad(lambda x: (x * 2.0).reshape(()))(np.ones(1, F)),
    "int_literal_keeps_float32": lambda ad, m: ad.grad(lambda x: x + 1)(np.float32(2)),
    "bfloat16": lambda ad, m: ad.grad(lambda x: x * x)(m.bfloat16(3.0)),
    "float16_vector": lambda ad, m: ad.grad(lambda x: m.sum(m.sin(x)))(np.array([0.5, 1.0], np.float16)),
    "complex_input_real_output": lambda ad, m: ad.grad(lambda x: m.abs(x))(np.complex64(3 + 4j)),
    "holomorphic": lambda ad, m: ad.grad(lambda z: m.sin(z) * z, holomorphic=True)(np.complex64(0.5 + 1j)),
    "vjp_complex": lambda ad, m: ad.vjp(lambda z: z * z, np.complex64(1 + 2j))[1](np.complex64(1 - 1j)),
    "jvp_complex": lambda ad, m: ad.jvp(lambda z: m.exp(z), (np.complex64(0.5j),), (np.complex64(1.0),)),
    "vjp_integer_output_float0_cotangent": lambda ad, m: ad.vjp(
        lambda x: (x * 2.0, m.argmax(x)), v3)[1]((ct3, np.zeros((), ad.dtypes.float0))),
    "grad_allow_int_only": lambda ad, m: ad.grad(lambda i: i * 2.0, allow_int=True)(np.int32(3)),
    "argnums_negative": lambda ad, m: ad.grad(lambda x, y: x * m.sin(y), argnums=-1)(2.0, 0.5),
    "linearize_python_float": lambda ad, m: ad.linearize(lambda x: x * x, 3.0)[1](1.0),
}


@needs_jax
@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_match_jax(name):
    mine = EDGE_CASES[name](irax, inp)
    theirs = EDGE_CASES[name](jax, jax_jnp)
    assert str(irax.tree_util.tree_structure(mine)) == str(jax.tree_util.tree_structure(theirs))
    for a, b in zip(irax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(theirs)):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False)
        if b.dtype != jax.dtypes.float0:
            tol = 1e-2 if b.dtype in (np.float16, jax_jnp.bfloat16) else 1e-5
            np.testing.assert_allclose(np.asarray(a, np.complex128 if np.iscomplexobj(b) else np.float64),
                                       np.asarray(b, np.complex128 if np.iscomplexobj(b) else np.float64),
                                       rtol=tol, atol=1e-6)


# --- 4. errors ---------------------------------------------------------------------------------------

ERRORS = {
    "non_scalar_output": (lambda ad, m: ad.grad(lambda x: x * 2.0)(v3),
                          TypeError, r"Gradient only defined for scalar-output functions\. Output had shape: \(3,\)"),
    "value_and_grad_non_scalar": (lambda ad, m: ad.value_and_grad(lambda x: x * 2.0)(v3),
                                  TypeError, "Gradient only defined for scalar-output functions"),
    "tuple_output": (lambda ad, m: ad.grad(lambda x: (x, x))(s),
                     TypeError, "Gradient only defined for scalar-output functions. Output was"),
    "none_output": (lambda ad, m: ad.grad(lambda x: None)(s),
                    TypeError, "Gradient only defined for scalar-output functions. Output was None"),
    "complex_output": (lambda ad, m: ad.grad(lambda x: x * (1 + 1j))(s),
                       TypeError, "grad requires real-valued outputs .* but got complex64"),
    "integer_output": (lambda ad, m: ad.grad(lambda x: m.int32(3) + 0 * x.astype(m.int32))(s),
                       TypeError, "grad requires real-valued outputs .* but got int32"),
    "integer_input": (lambda ad, m: ad.grad(lambda x: x * 2)(np.int32(3)),
                      TypeError, r"grad requires real- or complex-valued inputs \(input dtype that is a sub-dtype "
                                 r"of np\.inexact\), but got int32"),
    "integer_array_input": (lambda ad, m: ad.grad(lambda x: m.sum(x * 2.0))(i3),
                            TypeError, "grad requires real- or complex-valued inputs .* but got int32"),
    "python_int_input": (lambda ad, m: ad.grad(lambda x: x * 2.0)(3),
                         TypeError, "grad requires real- or complex-valued inputs .* but got int32"),
    "bool_input": (lambda ad, m: ad.grad(lambda x: m.sum(x * 2.0))(np.array(True)),
                   TypeError, "grad requires real- or complex-valued inputs .* but got bool"),
    "integer_input_second_argnum": (lambda ad, m: ad.grad(lambda x, i: m.sum(x * i), argnums=1)(v3, i3),
                                    TypeError, "use vjp or set allow_int to True"),
    "holomorphic_real_input": (lambda ad, m: ad.grad(lambda x: x * 2.0, holomorphic=True)(s),
                               TypeError, "grad with holomorphic=True requires inputs with complex dtype, but got "
                                          "float32"),
    "argnums_out_of_range": (lambda ad, m: ad.grad(lambda x, y: x * y, argnums=2)(s, s),
                             TypeError, "differentiating with respect to argnums=2 requires at least 3 positional "
                                        "arguments to be passed by the caller, but got only 2 positional arguments"),
    "argnums_tuple_out_of_range": (lambda ad, m: ad.grad(lambda x, y: x * y, argnums=(0, 3))(s, s),
                                   TypeError, r"argnums=\(0, 3\) requires at least 4 positional arguments"),
    "argnums_keyword_only_call": (lambda ad, m: ad.grad(lambda x: x * 2.0)(x=s),
                                  TypeError, "requires at least 1 positional arguments to be passed by the caller, "
                                             "but got only 0"),
    "argnums_not_int": (lambda ad, m: ad.grad(lambda x, y: x * y, argnums=1.0)(s, s), TypeError, "not iterable"),
    "not_callable": (lambda ad, m: ad.grad(3), TypeError, "Expected a callable value, got 3"),
    "jvp_not_callable": (lambda ad, m: ad.jvp(3, (s,), (s,)), TypeError, "Expected a callable value, got 3"),
    "jvp_structure": (lambda ad, m: ad.jvp(lambda x, y: x * y, (v3, v3), (v3,)),
                      TypeError, r"primal and tangent arguments to jax\.jvp must have the same tree structure; "
                                 r"primals have tree structure PyTreeDef\(\(\*, \*\)\) whereas tangents have tree "
                                 r"structure PyTreeDef\(\(\*,\)\)"),
    "jvp_nested_structure": (lambda ad, m: ad.jvp(lambda p: p["a"], ({"a": v3},), ((v3,),)),
                             TypeError, "must have the same tree structure"),
    "jvp_shape": (lambda ad, m: ad.jvp(lambda x: x * 2.0, (v3,), (np.ones(4, F),)),
                  ValueError, r"jvp called with different primal and tangent shapes;Got primal shape \(3,\) and "
                              r"tangent shape as \(4,\)"),
    "jvp_not_tuples": (lambda ad, m: ad.jvp(lambda x: x * 2.0, v3, v3),
                       TypeError, "primal and tangent arguments to jax.jvp must be tuples or lists; found ndarray "
                                  "and ndarray"),
    "vjp_cotangent_shape": (lambda ad, m: ad.vjp(lambda x: x * 2.0, v3)[1](np.ones(4, F)),
                            ValueError, "(?i)vjp"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    call, exc, match = ERRORS[name]
    with pytest.raises(exc, match=match):
        call(irax, inp)


@needs_jax
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jax_errors(name):
    call, exc, match = ERRORS[name]
    with pytest.raises(exc, match=match):
        call(jax, jax_jnp)


def test_traced_aux_comes_back_as_values_and_integer_outputs_get_float0_tangents():
    g, aux = irax.grad(lambda x: (inp.sum(x * x), inp.sin(x)), has_aux=True)(v3)
    assert isinstance(aux, irax.Array)
    np.testing.assert_allclose(np.asarray(aux), np.sin(v3), rtol=1e-6)
    _, _, aux = irax.jvp(lambda x: (inp.sin(x), 2.0), (v3,), (v3,), has_aux=True)
    assert aux == 2.0 and type(aux) is float
    _, tangent = irax.jvp(lambda x: inp.argmax(x), (v3,), (v3,))
    assert tangent.dtype == irax.dtypes.float0


def test_jvp_tangent_dtypes_and_repeated_argnums_are_errors():
    with pytest.raises(TypeError, match="dtypes must be equal, or in case of int/bool primal dtype the tangent"):
        irax.jvp(lambda i: i * 2, (np.int32(1),), (np.int32(1),))
    with pytest.raises(TypeError, match="names an argument twice"):
        irax.grad(lambda x, y: x * y, argnums=(0, 0))(2.0, 3.0)


def test_float0_results_come_out_of_jit_as_in_jax():
    f = lambda x, i: x * i  # noqa: E731
    g, gi = irax.jit(irax.grad(f, argnums=(0, 1), allow_int=True))(1.0, 2)
    assert float(g) == 2.0 and gi.dtype == irax.dtypes.float0 and gi.shape == ()
    x, i = np.ones(3, F), np.ones(3, np.int32)
    _, gi = irax.jit(lambda x, i: irax.vjp(f, x, i)[1](x))(x, i)
    assert gi.dtype == irax.dtypes.float0 and gi.shape == (3,)
    out, tangent = irax.jit(lambda x: irax.jvp(lambda v: inp.argmax(v), (x,), (x,)))(x)
    assert int(out) == 0 and tangent.dtype == irax.dtypes.float0
    assert "dtype=float0" in repr(irax.eval_shape(irax.grad(f, argnums=(0, 1), allow_int=True), 1.0, 2)[1])


@needs_jax
def test_bfloat16_mixed_precision_gradients():
    """A gradient through a cast to bfloat16 was zero, eagerly and under jit: the convert's JVP rule took
    bfloat16 (an ml_dtypes type) for a dtype without tangents. So were bfloat16 maxima's reduce identities."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=(8, 4)).astype(np.float32)
    x = rng.normal(size=(16, 8)).astype(np.float32)

    def loss(np_module):
        bf16 = np_module.bfloat16
        return lambda w: np_module.mean(((x.astype(bf16) @ w.astype(bf16)).astype(np.float32)) ** 2)
    expected = np.asarray(jax.grad(loss(jax_jnp))(w))
    assert np.abs(expected).max() > 0.1
    for grad in (irax.grad(loss(inp)), irax.jit(irax.grad(loss(inp)))):
        np.testing.assert_allclose(np.asarray(grad(w)), expected, rtol=2e-2, atol=2e-3)
    xs = np.array([-3, -1, -2], np.float32)

    def reduce_max(lib, np_module):
        return lambda x: lib.lax.reduce(x.astype(np_module.bfloat16), -np.inf, lib.lax.max, (0,))
    assert str(irax.make_jaxpr(reduce_max(irax, inp))(xs)) == str(jax.make_jaxpr(reduce_max(jax, jax_jnp))(xs))
    np.testing.assert_array_equal(inp.i0(xs.astype(inp.bfloat16)), jax_jnp.i0(xs.astype(jax_jnp.bfloat16)))
