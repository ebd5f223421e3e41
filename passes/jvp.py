"""``jaxpr-jvp``: forward-mode differentiation as a rewrite of a function.

``@f(x) -> y`` becomes ``@f_jvp(x, tx) -> (y, ty)``. Each primitive's JVP rule
(one table, ``JVP_RULES``) emits the primal op and then its tangent ops, in the
order JAX's rule binds them, so that partial evaluation and transposition
downstream yield JAX's own jaxprs. Tangents known to be zero are ``None`` and
emit nothing; integer and boolean values never carry a tangent (JAX's
``float0``).
"""
from __future__ import annotations

import functools

import numpy as np

from irax.ir import shapes
from irax.ir.dialect import decode_params
from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs
from .builder import Builder, aval
from .registry import register_pass

JVP_RULES: dict = {}
LINEAR_OPS: set = set()  # ops whose JVP is the op itself: each needs a transpose rule
NUM_TANGENT_ARGS_ATTR = "jaxpr.num_tangent_args"
NUM_TANGENT_RESULTS_ATTR = "jaxpr.num_tangent_results"
OUTPUT_ZEROS_ATTR = "jaxpr.output_zeros"


def differentiable(value) -> bool:
    return shapes.issubdtype(aval(value).dtype, np.inexact)


class JvpBuilder(Builder):
    """A builder that also knows the op being differentiated, to emit its primal."""

    def __init__(self, ip, op, primals, module, memo):
        super().__init__(ip, op.location, module)
        self.op = op
        self.primitive = op.name[len("jaxpr."):]
        self.primals = primals
        self.memo = memo  # (callee, nonzero) -> its JVP function and tangent mask, shared by equal calls

    def primal(self) -> list:
        clone = self.op.clone(ip=self.ip)
        for i, value in enumerate(self.primals):
            clone.operands[i] = value
        return list(clone.results)


def add_tangents(b, x, y):
    if x is None:
        return y
    if y is None:
        return x
    return b.add_any(x, y)


def instantiate(b, tangent, like):
    return b.zeros_like(like) if tangent is None else tangent


# --- registrars (as JAX's ad.defjvp, defjvp2, deflinear2, defjvp_zero) --------------------------

def defjvp(name, *rules):
    """``rules[i](b, g, *primals, **params)``: the tangent contributed by operand i (None: not differentiable)."""
    JVP_RULES[name] = functools.partial(_standard_jvp, rules, False)


def defjvp2(name, *rules):
    """As ``defjvp``, the rules also given the primal result: ``rules[i](b, g, ans, *primals, **params)``."""
    JVP_RULES[name] = functools.partial(_standard_jvp, rules, True)


def _standard_jvp(rules, with_ans, b, primals, tangents, **params):
    outs = b.primal()
    extra = (outs[0],) if with_ans else ()
    contributions = [rule(b, t, *extra, *primals, **params) for rule, t in zip(rules, tangents)
                     if rule is not None and t is not None]
    return outs, [functools.reduce(functools.partial(add_tangents, b), contributions, None)]


def deflinear(name):
    """The tangent is the op applied to the tangents (zeros instantiated)."""
    JVP_RULES[name] = _linear_jvp
    LINEAR_OPS.add(name)


def _linear_jvp(b, primals, tangents, **params):
    outs = b.primal()
    ts = [instantiate(b, t, p) for t, p in zip(tangents, primals)]
    return outs, b.bind(b.primitive, *ts, **params)


def defjvp_zero(*names):
    for name in names:
        JVP_RULES[name] = _zero_jvp


def _zero_jvp(b, primals, tangents, **params):
    outs = b.primal()
    return outs, [None] * len(outs)


# --- the pass ----------------------------------------------------------------------------------

@register_pass("jaxpr-jvp", "Forward-mode differentiation: @f(x) -> y becomes @f_jvp(x, tx) -> (y, ty)")
def jvp_pass(module, func="main", argnums=None):
    source = funcs.lookup(module, func)
    n_args = len(funcs.arguments(source))
    n_params = n_args - num_consts(source)
    wanted = set(funcs.parse_ints(argnums) if argnums is not None else range(n_params))
    nonzero = [i in wanted for i in range(n_args)]
    jvp_function(module, source, nonzero, f"{func}_jvp", instantiate_outputs=True)


def jvp_function(module, source, nonzero, name, *, instantiate_outputs, memo=None):
    """Builds ``@name``: ``source``'s params, a tangent for each ``nonzero`` argument, then its constants.

    Returns the new function and which outputs have a tangent. ``instantiate_outputs`` (True, or a mask)
    gives every floating-point output (those True in the mask) one, zeros where it has none; outputs left out
    (integers, ``has_aux``'s aux, False in the mask) have none, and those None in the mask keep what they have.
    """
    memo = {} if memo is None else memo
    args = funcs.arguments(source)
    n_consts = num_consts(source)
    params, consts = args[:len(args) - n_consts], args[len(args) - n_consts:]
    for i, p in enumerate(args):
        if nonzero[i] and not differentiable(p):
            raise TypeError(f"jaxpr-jvp: argument {i} of @{funcs.name_of(source)} has type {p.type}; only "
                            "floating-point and complex arguments have tangents")
    tangent_types = [p.type for p, nz in zip(args, nonzero) if nz]
    new, block = funcs.new_function(module, name, [p.type for p in params] + tangent_types
                                    + [c.type for c in consts], after=source, loc=source.location)
    new_args = list(block.arguments)
    env = dict(zip(params + consts, new_args[:len(params)] + new_args[len(params) + len(tangent_types):]))
    tangent_args = iter(new_args[len(params):len(params) + len(tangent_types)])
    tangents = {p: next(tangent_args) for p, nz in zip(args, nonzero) if nz}
    ip = ir.InsertionPoint(block)
    outs = out_tangents = None
    for op in body_ops(source):
        if op.name == "func.return":
            outs = [env[v] for v in op.operands]
            out_tangents = [tangents.get(v) for v in op.operands]
            break
        primals = [env[v] for v in op.operands]
        tins = [tangents.get(v) for v in op.operands]
        b = JvpBuilder(ip, op, primals, module, memo)
        if all(t is None for t in tins):
            results = b.primal()
            tout = [None] * len(results)
        else:
            rule = JVP_RULES.get(op.name[len("jaxpr."):])
            if rule is None:
                raise NotImplementedError(f"Differentiation rule for '{op.name[len('jaxpr.'):]}' not implemented")
            results, tout = rule(b, primals, tins, **decode_params(OPS[op.name[6:]], op))
        for old, new_value, t in zip(op.results, results, tout):
            env[old] = new_value
            if t is not None and differentiable(new_value):
                tangents[old] = t
    b = Builder(ip, source.location)
    if instantiate_outputs:
        wanted = instantiate_outputs if isinstance(instantiate_outputs, list) else [True] * len(outs)
        out_tangents = [t if w is None else (_output_zeros(b, o) if t is None else t) if w and differentiable(o)
                        else None for t, o, w in zip(out_tangents, outs, wanted)]
    has_tangent = [t is not None for t in out_tangents]
    funcs.finish(new, block, outs + [t for t in out_tangents if t is not None], n_consts=n_consts)
    new.attributes[NUM_TANGENT_ARGS_ATTR] = funcs.int_attr(len(tangent_types))
    new.attributes[NUM_TANGENT_RESULTS_ATTR] = funcs.int_attr(sum(has_tangent))
    return new, has_tangent


def _output_zeros(b, like):
    """An output's instantiated zero tangent, marked so that linearize keeps it in the linear half (as JAX's
    instantiation happens in the tangent space, not in the primal computation)."""
    zeros = b.zeros_like(like)
    op = zeros.owner.operation
    if op.name != "jaxpr.literal":
        op.attributes[OUTPUT_ZEROS_ATTR] = ir.UnitAttr.get()
    return zeros


from . import jvp_rules  # noqa: E402,F401  (fills JVP_RULES)
