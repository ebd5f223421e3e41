"""``custom_jvp`` and ``custom_vjp``: functions that bring their own derivative rules.

Called eagerly they just run. Under a trace, the function and its rules are
traced into private functions of the module (once per argument signature) and
the call is a ``jaxpr.custom_jvp_call`` / ``jaxpr.custom_vjp_call`` naming them;
the autodiff passes inline the rules (``passes/custom_calls.py``), and every
other pass treats the op as a call of the function itself.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from irax.ir.mlir import ir
from irax.passes import funcs

from . import api, core, tree_util

_names = api._callee_names  # one counter for every function irax adds to a module: names stay unique


def _source_line(fn) -> str:
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return "<unknown>"


def _flat(fn, in_tree, out_trees):
    """``fn`` on flat leaves, returning flat leaves; the output tree goes to ``out_trees``."""
    def flat(*leaves):
        out = fn(*tree_util.tree_unflatten(in_tree, list(leaves)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves
    return flat


class _Custom:
    """What custom_jvp and custom_vjp share: binding the arguments, nondiff_argnums, per-module tracing."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.symbolic_zeros = False
        self._traced = weakref.WeakKeyDictionary()  # module -> {signature: entry whose rules are being traced}
        self._tracing_rules = 0  # how many of this function's rules are being traced (nested)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if getattr(self, self.RULE_KINDS[0]) is None:
            raise AttributeError(self.UNDEFINED.format(self.__name__))
        args = self._bind_args(args, kwargs)
        trace = core.current_trace()
        if isinstance(trace, core.EvalTrace):
            return self.fun(*args)
        nondiff, dyn = self._split(args)
        leaves, in_tree = tree_util.tree_flatten(dyn)
        key = (in_tree, tuple(api.abstractify(x) for x in leaves), _hashable(nondiff))
        entry = self._entry(trace, key, leaves, in_tree, nondiff, self.RULE_KINDS)
        return self._emit(trace, entry, leaves, f"{type(self).__name__}_call", **self._call_params())

    def _bind_args(self, args, kwargs):
        if not kwargs and not self.nondiff_argnums:  # a defaulted nondiff argument must be filled in, as JAX's
            return tuple(args)
        bound = inspect.signature(self.fun).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.args)

    def _split(self, args):
        nondiff = tuple(args[i] for i in self.nondiff_argnums)
        dyn = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)
        return nondiff, dyn

    def _with_nondiff(self, fn, nondiff):
        """``fn`` of the differentiable arguments only, the nondiff ones put back in their places."""
        def call(*dyn):
            it, fixed = iter(dyn), dict(zip(self.nondiff_argnums, nondiff))
            return fn(*[fixed[i] if i in fixed else next(it) for i in range(len(dyn) + len(nondiff))])
        return call

    def _entry(self, trace, key, leaves, in_tree, nondiff, rule_kinds):
        """The function and its rules traced into ``trace``'s module: anew at each call, as JAX prints a
        body per call. The function is traced first and the entry kept while the rules are traced, so that
        a rule calling the function itself (as ``defjvps`` rules do) reuses it and names the rules' functions.
        """
        in_progress = self._traced.setdefault(trace.module, {})
        entry = in_progress.get(key)
        if entry is not None:
            return entry
        name = f"{_symbol(self.fun)}_{next(_names)}"
        out_trees = []
        callee = self._trace(_flat(self._with_nondiff(self.fun, nondiff), in_tree, out_trees), leaves, name,
                             type(self).__name__, trace)
        entry = in_progress[key] = _Entry(callee, out_trees[0], {k: f"{name}_{k}" for k in rule_kinds})
        if self._tracing_rules:
            # a rule calling its function at another nondiff value (f(n - 1, x)), as JAX traces rules lazily
            del in_progress[key]
            self._defer_rules(entry, nondiff, [api.abstractify(x) for x in leaves], in_tree)
            return entry
        self._tracing_rules += 1
        try:
            self._trace_rules(entry, trace, nondiff, leaves, in_tree)
        finally:
            self._tracing_rules -= 1
            del in_progress[key]
        for rule_trace, op in entry.recursive_calls:
            self._pass_rule_constants(entry, rule_trace, op)
        return entry

    def _emit(self, trace, entry, leaves, primitive, **params):
        rules = entry.rules or {}
        consts = [c for kind in entry.names for c in (rules[kind].closure if kind in rules else [])]
        outs = trace.call(entry.callee, list(leaves) + entry.callee.closure + consts, primitive,
                          **{f"{kind}_callee": name for kind, name in entry.names.items()}, **params)
        if entry.rules is None and outs:  # a rule calls the function: its rules' constants are known when traced
            entry.recursive_calls.append((trace, outs[0].value.owner))
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _pass_rule_constants(self, entry, rule_trace, op):
        """Gives a call that a rule makes of its own function the rules' closed-over values, which the rule's
        function closes over in turn (a call nested deeper in the rule cannot reach them)."""
        rules = [entry.rules[kind] for kind in entry.names]
        if not any(r.closure for r in rules):
            return
        if rule_trace.func_name not in {r.func_name for r in rules}:
            raise NotImplementedError(f"the rules of {self.__name__} call it from a nested function while closing "
                                      "over arrays; pass those as arguments instead")
        rule_trace.close_over([c for r in rules for c in list(r.closure)])
        consts = [rule_trace.to_value(c) for r in rules for c in r.closure]
        op = op.operation
        with rule_trace.func.location:
            call = ir.Operation.create(op.name, results=[r.type for r in op.results],
                                       operands=list(op.operands) + consts, loc=op.location, ip=ir.InsertionPoint(op),
                                       attributes={name: op.attributes[name] for name in op.attributes})
        for old, new in zip(op.results, call.results):
            old.replace_all_uses_with(new)
        op.erase()

    def _defer_rules(self, entry, nondiff, avals, in_tree):
        """The rules traced when a pass first asks for them, into the module it works on."""
        structs = [api.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]

        def trace_into(module):
            self._tracing_rules += 1
            try:
                self._trace_rules(entry, core.ModuleTrace(module), nondiff, structs, in_tree, embed_constants=True)
            finally:
                self._tracing_rules -= 1
            if any(r.closure for r in entry.rules.values()):
                raise NotImplementedError(
                    f"the rules of {self.__name__}, which call it at another nondiff value and so are traced when "
                    "first differentiated, close over traced values; pass those as arguments instead")
        entry.rules = {}
        for name in entry.names.values():
            funcs.defer(name, trace_into)

    def _trace(self, fn, leaves, name, purpose, trace, embed_constants=False):
        fn.__name__ = self.__name__
        return api.trace(fn, tuple(leaves), {}, purpose=purpose, module=trace.module, func_name=name, private=True,
                         embed_constants=embed_constants)


class _Entry:
    """A custom function traced into a module: its body, output tree, and its rules' functions by kind."""

    def __init__(self, callee, out_tree, names):
        self.callee, self.out_tree, self.names = callee, out_tree, names
        self.rules = None  # kind -> Traced, once traced
        self.recursive_calls = []  # (rule's trace, call op) for each call a rule makes of the function


def _symbol(fun) -> str:
    name = getattr(fun, "__name__", "fn")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "fn"


class custom_jvp(_Custom):
    """A function with a custom JVP rule (as ``jax.custom_jvp``): ``f.defjvp(jvp)`` with
    ``jvp(primals, tangents) -> (primal_out, tangent_out)``, or ``f.defjvps(*tangent_rules)``."""

    RULE_KINDS = ("jvp",)
    UNDEFINED = "No JVP defined for custom_jvp function {} using defjvp."

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            contributions = [rule(t, primal_out, *primals) for rule, t in zip(jvps, tangents) if rule is not None]
            if not contributions:
                return primal_out, tree_util.tree_map(lambda x: np.zeros(np.shape(x), x.dtype), primal_out)
            return primal_out, tree_util.tree_map(lambda *ts: functools.reduce(_add_any, ts), *contributions)

        self.defjvp(jvp)

    def _call_params(self):
        return {"jvp": getattr(self.jvp, "__name__", "jvp"), "symbolic_zeros": self.symbolic_zeros}

    def _trace_rules(self, entry, trace, nondiff, leaves, in_tree, embed_constants=False):
        n = len(leaves)

        def flat_jvp(*xs):
            primals = tree_util.tree_unflatten(in_tree, list(xs[:n]))
            tangents = tree_util.tree_unflatten(in_tree, list(xs[n:]))
            out, tangent_out = self.jvp(*nondiff, primals, tangents)
            return tree_util.tree_leaves(out) + tree_util.tree_leaves(tangent_out)
        entry.rules = {"jvp": self._trace(flat_jvp, list(leaves) * 2, entry.names["jvp"], "custom_jvp rule", trace,
                                          embed_constants)}


def _add_any(x, y):
    return core.bind1("add_any", x, y)


def _hashable(values):
    try:
        hash(values)
        return values
    except TypeError:
        return id(values)


class custom_vjp(_Custom):
    """A function with a custom VJP (as ``jax.custom_vjp``): ``f.defvjp(fwd, bwd)`` with
    ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, out_cotangent) -> tuple of argument cotangents``."""

    RULE_KINDS = ("fwd", "bwd")
    UNDEFINED = "No VJP defined for custom_vjp function {} using defvjp."

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def _call_params(self):
        return {"fwd": getattr(self.fwd, "__name__", "fwd"), "bwd": getattr(self.bwd, "__name__", "bwd"),
                "symbolic_zeros": self.symbolic_zeros}

    def _trace_rules(self, entry, trace, nondiff, leaves, in_tree, embed_constants=False):
        res_trees = []
        dyn = tree_util.tree_unflatten(in_tree, list(leaves))

        def flat_fwd(*xs):
            out, res = self._with_nondiff(self.fwd, nondiff)(*tree_util.tree_unflatten(in_tree, list(xs)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            if out_tree != entry.out_tree:
                raise TypeError(f"Custom VJP fwd rule {self.fwd.__name__} (at {_source_line(self.fwd)}) must produce "
                                f"a pair whose first element has the structure of the primal output "
                                f"{entry.out_tree}, but got {out_tree}.")
            res_leaves, res_tree = tree_util.tree_flatten(res)
            res_trees.append(res_tree)
            return out_leaves + res_leaves
        fwd = self._trace(flat_fwd, leaves, entry.names["fwd"], "custom_vjp fwd", trace, embed_constants)
        n_out = len(entry.callee.out_avals)
        res_avals = fwd.out_avals[n_out:]

        def flat_bwd(*xs):
            res = tree_util.tree_unflatten(res_trees[0], list(xs[:len(res_avals)]))
            cts = tree_util.tree_unflatten(entry.out_tree, list(xs[len(res_avals):]))
            return _check_bwd_output(self.bwd, self.bwd(*nondiff, res, cts), dyn)
        structs = [api.ShapeDtypeStruct(a.shape, a.dtype) for a in list(res_avals) + list(entry.callee.out_avals)]
        entry.rules = {"fwd": fwd, "bwd": self._trace(flat_bwd, structs, entry.names["bwd"], "custom_vjp bwd", trace,
                                                      embed_constants)}


def _check_bwd_output(bwd, grads, dyn):
    """JAX's checks of a bwd rule's result, naming the rule's source line; ``None`` entries become zeros."""
    where = f" (bwd rule {getattr(bwd, '__name__', 'bwd')} at {_source_line(bwd)})"
    if isinstance(grads, list):
        grads = tuple(grads)
    _, dyn_tree = tree_util.tree_flatten(dyn)
    grad_tree = tree_util.tree_structure(grads, is_leaf=lambda x: x is None)
    if not isinstance(grads, tuple) or len(grads) != len(dyn):
        raise TypeError("Custom VJP bwd rule must produce an output with the same container (pytree) structure as "
                        "the args tuple of the primal function, and in particular must produce a tuple of length "
                        "equal to the number of arguments to the primal function, but got bwd output structure "
                        f"{grad_tree} for primal input structure {dyn_tree}.{where}")
    leaves = []
    for i, (g, x) in enumerate(zip(grads, dyn)):
        x_leaves, x_tree = tree_util.tree_flatten(x)
        if g is None:
            leaves += [np.zeros(np.shape(leaf), api.abstractify(leaf).dtype) for leaf in x_leaves]
            continue
        g_leaves, g_tree = tree_util.tree_flatten(g)
        if g_tree != x_tree:
            raise TypeError(f"Custom VJP bwd rule must produce an output with the same container (pytree) structure "
                            f"as the args tuple of the primal function, but at output[{i}] the bwd rule produced "
                            f"{g_tree} for an input of structure {x_tree}.{where}")
        for gl, xl in zip(g_leaves, x_leaves):
            ga, xa = api.abstractify(gl), api.abstractify(xl)
            if ga.shape != xa.shape:
                raise ValueError(f"Custom VJP bwd rule must produce an output with the same type as the args tuple "
                                 f"of the primal function, but at output[{i}] the bwd rule produced an output of "
                                 f"type {ga.str_short()} corresponding to an input of type {xa.str_short()}, so the "
                                 f"shapes do not match{where}")
        leaves += g_leaves
    return leaves


@tree_util.register_pytree_node_class
class _RuleResiduals:
    """A custom_gradient rule traced on the output cotangents: its leaves are the values the rule closes over
    (the forward pass's residuals), the traced rule rides in the tree structure."""

    def __init__(self, traced, closure):
        self.traced, self.closure = traced, closure

    def tree_flatten(self):
        return list(self.closure), self.traced

    @classmethod
    def tree_unflatten(cls, traced, closure):
        return cls(traced, list(closure))


def custom_gradient(fun):
    """``jax.custom_gradient``: ``fun(*args)`` returns ``(out, vjp)``, ``vjp(out_cotangent)`` giving the arguments'
    cotangents; a ``custom_vjp`` whose residuals are what ``vjp`` closes over, as JAX builds it."""
    @custom_vjp
    def wrapped_fun(*args, **kwargs):
        ans, _ = fun(*args, **kwargs)
        return ans

    def fwd(*args, **kwargs):
        ans, rule = fun(*args, **kwargs)
        leaves, out_tree = tree_util.tree_flatten(ans)
        avals = [api.abstractify(x) for x in leaves]
        structs = tuple(api.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals)
        traced = api.trace(lambda *cts: rule(tree_util.tree_unflatten(out_tree, list(cts))), structs, {},
                           purpose="custom_gradient")
        return ans, _RuleResiduals(traced, traced.closure)

    def bwd(res, cts):
        from irax.passes.funcs import lookup
        from irax.ir.mlir import scope
        from .ad import replay
        with scope():
            func = lookup(res.traced.module, res.traced.func_name)
        grads = res.traced.unflatten(replay(res.traced.module, func, tree_util.tree_leaves(cts) + res.closure))
        return (grads,) if tree_util.treedef_is_leaf(res.traced.out_tree) else grads

    wrapped_fun.defvjp(fwd, bwd)
    return wrapped_fun
