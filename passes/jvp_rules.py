"""The JVP rule of every primitive, each a port of JAX's (``jax/_src/lax/lax.py``, ``slicing.py``,
``special.py``, ``control_flow/loops.py``).

A rule binds the same primitives in the same order as JAX's, which is what makes
``make_jaxpr(grad(f))`` print JAX's text.
"""
from __future__ import annotations

import functools

import numpy as np

from . import ad_util as U
from .builder import Builder, aval
from irax.ir.jaxpr_view import num_consts
from irax.ir.shapes import issubdtype

from .funcs import lookup
from .jvp import JVP_RULES, add_tangents, deflinear, defjvp, defjvp2, defjvp_zero, instantiate, jvp_function


def _is_complex(x) -> bool:
    return np.issubdtype(aval(x).dtype, np.complexfloating)


# --- non-differentiable: the result's tangent is zero ---------------------------------------------

defjvp_zero("sign", "floor", "ceil", "round", "is_finite", "not", "and", "or", "xor", "population_count", "clz",
            "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge",
            "eq_to", "le_to", "lt_to", "argmax", "argmin", "bitcast_convert_type", "iota", "empty", "empty2",
            "platform_index", "stop_gradient", "reduce_and", "reduce_or", "reduce_xor", "threefry2x32",
            "lu_pivots_to_permutation")

# --- linear -----------------------------------------------------------------------------------------

for _name in ("neg", "reduce_sum", "reshape", "squeeze", "transpose", "rev", "pad", "concatenate", "stack",
              "real", "imag", "complex", "conj", "cumsum", "add_any", "slice", "split", "copy"):
    deflinear(_name)


def _add_jvp(b, primals, tangents, **params):
    out, = b.primal()
    xdot, ydot = tangents
    shape = aval(out).shape
    if xdot is None:
        return [out], [U.maybe_broadcast(b, shape, ydot)]
    if ydot is None:
        return [out], [U.maybe_broadcast(b, shape, xdot)]
    return [out], [b.add(xdot, ydot)]


def _sub_jvp(b, primals, tangents, **params):
    out, = b.primal()
    xdot, ydot = tangents
    shape = aval(out).shape
    if xdot is None:
        return [out], [U.maybe_broadcast(b, shape, b.neg(ydot))]
    if ydot is None:
        return [out], [U.maybe_broadcast(b, shape, xdot)]
    return [out], [b.sub(xdot, ydot)]


JVP_RULES["add"] = _add_jvp
JVP_RULES["sub"] = _sub_jvp
defjvp("mul", lambda b, xdot, x, y: b.mul(xdot, y), lambda b, ydot, x, y: b.mul(x, ydot))
defjvp("div", lambda b, g, x, y: b.div(g, y),
       lambda b, g, x, y: b.mul(b.mul(b.neg(g), x), b.integer_pow(y, y=-2)))
defjvp2("rem", lambda b, g, ans, x, y: U.maybe_broadcast(b, aval(ans).shape, g),
        lambda b, g, ans, x, y: b.mul(b.neg(g), b.mul(b.sign(b.div(x, y)), b.floor(b.abs(b.div(x, y))))))
defjvp2("max", lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, x, ans, y)),
        lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, y, ans, x)))
defjvp2("min", lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, x, ans, y)),
        lambda b, g, ans, x, y: b.mul(g, U.balanced_eq(b, y, ans, x)))

# --- elementwise transcendental --------------------------------------------------------------------

defjvp2("exp", lambda b, g, ans, x: b.mul(g, ans))
defjvp2("exp2", lambda b, g, ans, x: b.mul(b.log(b.literal(2, aval(x).dtype)), b.mul(g, ans)))
defjvp("log", lambda b, g, x: b.div(g, x))
defjvp2("expm1", lambda b, g, ans, x: b.mul(g, b.add(ans, 1)))
defjvp("log1p", lambda b, g, x: b.div(g, b.add(x, 1)))
defjvp("sin", lambda b, g, x: b.mul(g, b.cos(x)))
defjvp("cos", lambda b, g, x: b.neg(b.mul(g, b.sin(x))))
defjvp2("tan", lambda b, g, ans, x: b.mul(g, b.add(1, b.square(ans))))
defjvp("asin", lambda b, g, x: b.mul(g, b.rsqrt(b.sub(1, b.square(x)))))
defjvp("acos", lambda b, g, x: b.mul(g, b.neg(b.rsqrt(b.sub(1, b.square(x))))))
defjvp("atan", lambda b, g, x: b.div(g, b.add(1, b.square(x))))
defjvp("atan2", lambda b, g, x, y: b.mul(g, b.div(y, b.add(b.square(x), b.square(y)))),
       lambda b, g, x, y: b.mul(g, b.div(b.neg(x), b.add(b.square(x), b.square(y)))))
defjvp("sinh", lambda b, g, x: b.mul(g, b.cosh(x)))
defjvp("cosh", lambda b, g, x: b.mul(g, b.sinh(x)))
defjvp("asinh", lambda b, g, x: b.mul(g, b.rsqrt(b.add(b.square(x), 1))))
defjvp("acosh", lambda b, g, x: b.mul(g, b.rsqrt(b.sub(b.square(x), 1))))
defjvp("atanh", lambda b, g, x: b.mul(b.integer_pow(b.add(1, x), y=-1), b.div(g, b.sub(1, x))))
defjvp2("tanh", lambda b, g, ans, x: b.mul(b.add(g, b.mul(g, ans)), b.sub(1, ans)))
defjvp2("logistic", lambda b, g, ans, x: b.mul(g, b.mul(ans, b.sub(1, ans))))
defjvp2("sqrt", lambda b, g, ans, x: b.mul(g, b.div(0.5, ans)))
defjvp2("rsqrt", lambda b, g, ans, x: b.mul(g, b.mul(-0.5, b.div(ans, x))))
defjvp2("cbrt", lambda b, g, ans, x: b.mul(g, b.mul(1 / 3, b.integer_pow(ans, y=-2))))
defjvp2("square", lambda b, g, ans, x: b.mul(g, b.mul(2, x)))


def _integer_pow_jvp(b, g, x, *, y):
    if y == 0:
        return b.zeros_like(g)
    if y == 1:
        return g
    if y == 2:
        return b.mul(g, b.mul(y, x))
    return b.mul(g, b.mul(y, b.integer_pow(x, y=y - 1)))


defjvp("integer_pow", _integer_pow_jvp)


def _replace_zero(b, x):
    return U.select(b, b.eq(x, 0), b.full_like(x, 1), x)


def _abs_jvp(b, g, ans, x):
    if _is_complex(x):
        return b.real(b.mul(g, b.div(b.conj(x), _replace_zero(
            b, b.convert_element_type(ans, new_dtype=aval(x).dtype, weak_type=False)))))
    return U.select(b, b.ge(x, 0), g, b.neg(g))


defjvp2("abs", _abs_jvp)


def _pow_jvp_lhs(b, g, ans, x, y):
    """JAX's branch for an integer exponent never applies: irax's pow takes two operands of one inexact dtype."""
    return b.mul(g, b.mul(y, b.pow(x, b.sub(y, b.full_like(y, 1)))))


defjvp2("pow", _pow_jvp_lhs, lambda b, g, ans, x, y: b.mul(g, b.mul(b.log(_replace_zero(b, x)), ans)))


def _raising(message):
    """A rule for an op that JAX cannot differentiate either, or only through a primitive irax lacks."""
    def rule(b, primals, tangents, **params):
        raise NotImplementedError(message)
    return rule


for _name in ("nextafter", "symmetric_product", "householder_product", "hessenberg", "schur", "geqrf", "geqp3",
              "ormqr", "cholesky_update", "tridiagonal"):
    JVP_RULES[_name] = _raising(f"Differentiation rule for '{_name}' not implemented")

# --- special functions (``jax/_src/lax/special.py``) ---------------------------------------------------

defjvp("erf", lambda b, g, x: b.mul(2 / np.sqrt(np.pi), b.mul(g, b.exp(b.neg(b.square(x))))))
defjvp("erfc", lambda b, g, x: b.mul(-2 / np.sqrt(np.pi), b.mul(g, b.exp(b.neg(b.square(x))))))
defjvp2("erf_inv", lambda b, g, ans, x: b.mul(np.sqrt(np.pi) / 2, b.mul(g, b.exp(b.square(ans)))))
defjvp("lgamma", lambda b, g, x: b.mul(g, b.digamma(x)))
defjvp("digamma", lambda b, g, x: b.mul(g, b.polygamma(b.literal(1, aval(x).dtype), x)))


def _polygamma_gradm(b, g, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


defjvp("polygamma", _polygamma_gradm,
       lambda b, g, m, x: b.mul(g, b.polygamma(b.add(m, b.literal(1, aval(m).dtype)), x)))

# --- structural --------------------------------------------------------------------------------------


def _broadcast_in_dim_jvp(b, primals, tangents, **params):
    out, = b.primal()
    operand_dot = tangents[0]
    if operand_dot is None:
        return [out], [None]
    return [out], [b.broadcast_in_dim(operand_dot, **params)]


JVP_RULES["broadcast_in_dim"] = _broadcast_in_dim_jvp


def _convert_element_type_jvp(b, g, ans, operand, *, new_dtype, weak_type):
    if not issubdtype(new_dtype, np.inexact):  # bfloat16 included: its tangent was dropped
        return None
    return b.convert_element_type(g, new_dtype=new_dtype, weak_type=weak_type)


defjvp2("convert_element_type", _convert_element_type_jvp)


def _select_n_jvp(b, primals, tangents, **params):
    which, *cases = primals
    case_tangents = tangents[1:]
    out, = b.primal()
    if all(t is None for t in case_tangents):
        return [out], [None]
    z = b.zeros_like(next(t for t in case_tangents if t is not None))
    return [out], [b.select_n(which, *[z if t is None else t for t in case_tangents])]


JVP_RULES["select_n"] = _select_n_jvp
defjvp("dot_general", lambda b, g, x, y, **p: b.dot_general(g, y, **p),
       lambda b, g, x, y, **p: b.dot_general(x, g, **p))


def _clamp_jvp(b, primals, tangents):
    """As JAX's ``defjvp`` rule, whose standard JVP computes every operand's term before adding them up."""
    lo, x, hi = primals
    out, = b.primal()
    rules = (lambda g: U.select(b, b.bind("and", b.gt(lo, x), b.lt(lo, hi))[0], g, b.zeros_like(x)),
             lambda g: U.select(b, b.bind("and", b.gt(x, lo), b.lt(x, hi))[0], g, b.zeros_like(x)),
             lambda g: U.select(b, b.lt(hi, x), g, b.zeros_like(x)))
    terms = [rule(g) for rule, g in zip(rules, tangents) if g is not None]
    return [out], [functools.reduce(functools.partial(add_tangents, b), terms, None)]


JVP_RULES["clamp"] = _clamp_jvp


def _dynamic_slice_jvp(b, primals, tangents, *, slice_sizes):
    """JAX slices the tangent before the primal."""
    operand_dot = tangents[0]
    if operand_dot is not None:
        operand_dot = b.dynamic_slice(operand_dot, *primals[1:], slice_sizes=slice_sizes)
    return b.primal(), [operand_dot]


def _dynamic_update_slice_jvp(b, primals, tangents):
    operand, update, *indices = primals
    out = b.primal()
    g_operand, g_update = tangents[:2]
    if g_operand is None and g_update is None:
        return out, [None]
    g_operand, g_update = instantiate(b, g_operand, operand), instantiate(b, g_update, update)
    return out, [b.dynamic_update_slice(g_operand, g_update, *indices)]


JVP_RULES["dynamic_slice"] = _dynamic_slice_jvp
JVP_RULES["dynamic_update_slice"] = _dynamic_update_slice_jvp

# --- reductions and scans ------------------------------------------------------------------------------


def _reshape(b, x, shape, dimensions=None):
    """``lax.reshape``, which binds nothing for a non-scalar already in ``shape``. irax's reshape has no
    ``dimensions``: a permutation is a transpose first, where JAX binds one ``reshape[dimensions=...]``."""
    if dimensions is not None:
        x = U.transpose(b, x, dimensions)
    if aval(x).shape and aval(x).shape == tuple(shape):
        return x
    return b.reshape(x, new_sizes=tuple(shape), dimensions=None)


def _reduce_chooser_jvp(b, g, ans, operand, *, axes):
    shape = tuple(1 if i in axes else d for i, d in enumerate(aval(operand).shape))
    location_indicators = b.convert_element_type(b.eq(operand, _reshape(b, ans, shape)),
                                                 new_dtype=aval(g).dtype, weak_type=False)
    counts = b.reduce_sum(location_indicators, axes=axes)
    return b.div(b.reduce_sum(b.mul(g, location_indicators), axes=axes), counts)


defjvp2("reduce_max", _reduce_chooser_jvp)
defjvp2("reduce_min", _reduce_chooser_jvp)


class _NestedBuilder(Builder):
    """The builder of an op that a rule binds on (primal, tangent) pairs, as JAX's rules that call ``api.jvp``
    on lax functions: the op's own rule emits it and its tangent."""

    def __init__(self, b, name, primals, params):
        super().__init__(b.ip, b.loc)
        self.primitive, self.primals, self.params = name, primals, params

    def primal(self) -> list:
        return self.bind(self.primitive, *self.primals, **self.params)


def _jvp(b, name, *pairs, **params):
    """``name`` bound on (primal, tangent) pairs (None: a zero tangent), through its JVP rule; returns the pair."""
    primals, tangents = map(list, zip(*pairs))
    outs, tangents_out = JVP_RULES[name](_NestedBuilder(b, name, primals, params), primals, tangents, **params)
    return outs[0], tangents_out[0]


def _slice_in_dim(b, pair, start, limit, stride, axis):
    """``lax.slice_in_dim`` of a pair: ``limit`` None is the axis' end, a negative one counts from it."""
    shape = aval(pair[0]).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis] = start
    limits[axis] = shape[axis] if limit is None else limit + shape[axis] if limit < 0 else limit
    strides[axis] = stride
    return _jvp(b, "slice", pair, start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides))


def _pad(b, pair, fill, axis, low, high, interior):
    config = [(0, 0, 0)] * len(aval(pair[0]).shape)
    config[axis] = (low, high, interior)
    return _jvp(b, "pad", pair, (b.literal(fill, aval(pair[0]).dtype), None), padding_config=tuple(config))


def _reduce_prod_jvp(b, primals, tangents, *, axes):
    """JAX's ``_reduce_jvp``: the reduced axes moved to the front and flattened, then halved by pairwise products
    until one row is left. Primal and tangent both come out of that tree; ``reduce_prod`` itself is not bound."""
    x, = primals
    shape = aval(x).shape
    non_axes = tuple(i for i in range(len(shape)) if i not in axes)
    new_shape = (int(np.prod([shape[a] for a in axes], dtype=np.int64)),) + tuple(shape[i] for i in non_axes)
    pair = tuple(_reshape(b, v, new_shape, tuple(axes) + non_axes) for v in (x, tangents[0]))
    while aval(pair[0]).shape[0] > 1:
        n = aval(pair[0]).shape[0]
        n1 = (n + 1) // 2
        first, second = _slice_in_dim(b, pair, 0, n1, 1, 0), _slice_in_dim(b, pair, n1, None, 1, 0)
        if n - n1 != n1:
            second = _pad(b, second, 1, 0, 0, 1, 0)
        pair = _jvp(b, "mul", first, second)
    if new_shape[0] == 0:
        return [b.full(new_shape[1:], aval(x).dtype, 1)], [b.full(new_shape[1:], aval(x).dtype, 0)]
    out, tangent = _jvp(b, "squeeze", pair, dimensions=(0,))
    return [out], [tangent]


JVP_RULES["reduce_prod"] = _reduce_prod_jvp


def _cumulative_jvp(combine, b, primals, tangents, *, axis, reverse):
    """JAX differentiates a cumulative reduction as ``associative_scan`` over ``combine`` (reduce_window, its
    lowering, is not differentiable); the primal comes out of the scan too."""
    pair = (primals[0], tangents[0])
    if reverse:
        pair = _jvp(b, "rev", pair, dimensions=(axis,))
    pair = _associative_scan(b, combine, pair, axis)
    if reverse:
        pair = _jvp(b, "rev", pair, dimensions=(axis,))
    return [pair[0]], [pair[1]]


def _associative_scan(b, combine, pair, axis):
    """``associative_scan``'s ``_scan``: combines adjacent pairs, scans those recursively (the odd elements) and
    combines the result with the remaining elements (the even ones)."""
    n = aval(pair[0]).shape[axis]
    if n < 2:
        return pair
    reduced = combine(b, _slice_in_dim(b, pair, 0, -1, 2, axis), _slice_in_dim(b, pair, 1, None, 2, axis))
    odd = _associative_scan(b, combine, reduced, axis)
    if n % 2 == 0:
        even = combine(b, _slice_in_dim(b, odd, 0, -1, 1, axis), _slice_in_dim(b, pair, 2, None, 2, axis))
    else:
        even = combine(b, odd, _slice_in_dim(b, pair, 2, None, 2, axis))
    even = _jvp(b, "concatenate", _slice_in_dim(b, pair, 0, 1, 1, axis), even, dimension=axis)
    return _interleave(b, even, odd, axis)


def _interleave(b, x, y, axis):
    same = aval(x[0]).shape[axis] == aval(y[0]).shape[axis]
    return _jvp(b, "add", _pad(b, x, 0, axis, 0, 1 if same else 0, 1), _pad(b, y, 0, axis, 1, 0 if same else 1, 1))


def _logaddexp(b, x, y):
    """``logaddexp`` and its custom JVP. JAX binds the primal as a ``custom_jvp_call`` of this body, a primitive
    irax does not have (``irax.numpy.logaddexp`` emits the body too)."""
    (x1, t1), (x2, t2) = x, y
    amax = b.max(x1, x2)
    if _is_complex(x1):
        out = b.add(amax, b.log1p(b.exp(b.sub(b.add(x1, x2), b.mul(amax, 2)))))
        out = b.complex(b.real(out), _wrap_between(b, b.imag(out), np.pi))
    else:
        # JAX's value; a second derivative must not see abs' kink at ties (JAX's custom_jvp hides it), so the
        # value is carried by amax + log(exp(x1 - amax) + exp(x2 - amax)), whose derivative is right at ties.
        delta = b.sub(x1, x2)
        precise = b.add(amax, b.log1p(b.exp(b.neg(b.abs(delta)))))
        smooth = b.add(amax, b.log(b.add(b.exp(b.sub(x1, amax)), b.exp(b.sub(x2, amax)))))
        out = U.select(b, b.ne(delta, delta), b.add(x1, x2),
                       b.add(smooth, b.stop_gradient(b.sub(precise, smooth))))
    tangent = b.add(b.mul(t1, b.exp(b.sub(_replace_inf(b, x1), _replace_inf(b, out)))),
                    b.mul(t2, b.exp(b.sub(_replace_inf(b, x2), _replace_inf(b, out)))))
    return out, tangent


def _wrap_between(b, x, a):
    rem = b.rem(b.add(x, a), 2 * a)
    rem = U.select(b, b.lt(rem, 0), b.add(rem, 2 * a), rem)
    return b.sub(rem, a)


def _replace_inf(b, x):
    re_x = b.real(x) if _is_complex(x) else x
    return U.select(b, b.eq(re_x, np.inf), b.zeros_like(x), x)


for _name, _op in (("cumprod", "mul"), ("cummax", "max"), ("cummin", "min")):
    JVP_RULES[_name] = functools.partial(_cumulative_jvp, lambda b, x, y, op=_op: _jvp(b, op, x, y))
JVP_RULES["cumlogsumexp"] = functools.partial(_cumulative_jvp, _logaddexp)


def _call_jvp(b, primals, tangents, *, callee, **params):
    """The callee's JVP as a new function, called with the nonzero tangents (as JAX's ``_pjit_jvp`` and
    ``remat_jvp``)."""
    source = lookup(b.module, callee)
    nonzero = [t is not None for t in tangents]
    key = (callee, tuple(nonzero))
    if key not in b.memo:  # two calls of one jit share one JVP (JAX prints it once)
        b.memo[key] = jvp_function(b.module, source, nonzero, f"{callee}_jvp", instantiate_outputs=False,
                                   memo=b.memo)
    new, has_tangent = b.memo[key]
    n_params = len(primals) - num_consts(source)
    operands = primals[:n_params] + [t for t in tangents if t is not None] + primals[n_params:]
    outs = b.call(new, operands, b.primitive, **params)
    n = len(b.op.results)
    return outs[:n], _spread(outs[n:], has_tangent)


def _spread(values, mask):
    it = iter(values)
    return [next(it) if m else None for m in mask]


JVP_RULES["pjit"] = JVP_RULES["checkpoint"] = _call_jvp
deflinear("name")

# --- collectives over named axes ----------------------------------------------------------------------

for _name in ("psum", "all_gather", "reduce_scatter", "ppermute", "all_to_all"):
    deflinear(_name)
for _name in ("pmax", "pmin"):  # JAX has no JVP rule for them
    JVP_RULES[_name] = _raising(f"Differentiation rule for '{_name}' not implemented")
defjvp_zero("axis_index")
from . import ad_rules_sort  # noqa: E402,F401  (fills JVP_RULES with sort and top_k)
from . import ad_solves  # noqa: E402,F401  (fills JVP_RULES and TRANSPOSE_RULES with custom_linear_solve)
from . import ad_reduce  # noqa: E402,F401  (fills JVP_RULES with the general reduce)
from . import ad_rules_extras  # noqa: E402,F401  (fills JVP_RULES and TRANSPOSE_RULES with tile, optimization_barrier)
from . import ad_rules_special  # noqa: E402,F401  (fills JVP_RULES with igamma, betainc, the Bessel functions, ...)
from . import ad_rules_callbacks  # noqa: E402,F401  (fills JVP_RULES with the host callbacks)
