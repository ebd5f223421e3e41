"""``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize`` and the Jacobians, over the autodiff passes.

Each traces the function into a fresh ``func.func``, runs ``jaxpr-jvp`` (then
``jaxpr-linearize`` and ``jaxpr-transpose`` for reverse mode) on it, and replays
the resulting functions op by op in the current trace: evaluated on NumPy when
called eagerly, emitted into the caller's jaxpr under ``jit``/``make_jaxpr`` (so
``jit(grad(f))`` is one module, and its text is JAX's). Called eagerly, the
trace's tracers also carry values, so Python control flow on values works.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from irax.ir.avals import ShapedArray
from irax.ir.control_flow import BODY_PARAMS
from irax.ir.dialect import decode_params
from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import scope
from irax.ir.ops import CALL_BODY_PARAMS, OPS

from . import api, core, dtypes, tree_util
from .array import Array


# --- replaying a function of the module in the current trace -------------------------------------

def replay(module, func, args) -> list:
    """Binds each op of ``func`` on ``args`` in the current trace; returns the results."""
    env = dict(zip(func.regions[0].blocks[0].arguments, args))
    for op in body_ops(func):
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        name = op.name[len("jaxpr."):]
        opdef = OPS[name]
        params = decode_params(opdef, op)
        if name == "literal":
            value = params["value"]
            env[op.result] = Array._from_host(value, ShapedArray((), value.dtype, bool(params["weak_type"])))
            if params["shown"] is not None:  # a Python scalar's literal prints its Python value again
                env[op.result]._python_value = (complex if "j" in params["shown"] else float)(params["shown"])
            continue
        params = {p.name: params[p.name] for p in opdef.params if p.kind.stored}
        operands = [env[v] for v in op.operands]
        if name == "custom_lin":
            raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
        if name in CALL_BODY_PARAMS:
            outs = _replay_call(module, name, params, operands)
        elif _body_params(name, params):
            outs = _replay_control_flow(module, name, params, operands, op)
        else:
            outs = core.bind(name, *operands, **params)
        env.update(zip(op.results, outs))
    raise ValueError("function without a return")


def _replay_call(module, primitive, params, operands):
    """A call replayed: its callee evaluated in eager mode, else the call re-emitted with copies of its
    functions in the caller's module (a custom call keeps its rules)."""
    from irax.passes.funcs import arguments, lookup
    callee = lookup(module, params["callee"])
    n_args = len(arguments(callee))
    if isinstance(core.current_trace(), core.EvalTrace):
        return replay(module, callee, operands[:n_args])
    outer = core.current_trace()
    name = params.get("name", "remat")
    copied = _copy_function(module, callee, name, outer)
    if isinstance(copied, str):  # a call of a function being copied (a rule calling a jit of its function)
        from irax.ir.dialect import aval_of_type
        from irax.passes.funcs import function_type
        ftype = function_type(callee)
        copied = api.Traced(outer.module, copied, [], [aval_of_type(t) for t in ftype.inputs],
                            [aval_of_type(t) for t in ftype.results], None, None, name)
    rules = {key: _copy_rule(module, value, name, outer) for key, value in params.items() if key.endswith("_callee")}
    rest = {k: v for k, v in params.items() if k not in ("name", "callee") and not k.endswith("_callee")}
    return outer.call(copied, list(operands), primitive, **rest,
                      **{k: v if isinstance(v, str) else v.func_name for k, v in rules.items()})


def _copy_rule(module, rule, name, outer):
    """A custom call's rule copied into ``outer``'s module; a deferred rule (not yet traced) is copied when a pass
    first asks for it, as it is traced then: copying it now would trace it, and the rules it calls in turn."""
    from irax.passes import funcs
    if not funcs.is_deferred(module, rule):
        return _copy_function(module, funcs.lookup(module, rule), name, outer)
    target = f"{_symbol(name)}_{next(api._callee_names)}"

    def copy_into(target_module):
        _copy_function(module, funcs.lookup(module, rule), name, core.ModuleTrace(target_module), target)
    funcs.defer(target, copy_into)
    return target


def _replay_control_flow(module, primitive, params, operands, op):
    """A control-flow op replayed: evaluated on ``module``'s bodies in eager mode, else re-emitted naming
    copies of its bodies in the caller's module."""
    from irax.ir.dialect import aval_of_type
    from irax.passes.funcs import lookup
    avals_out = [aval_of_type(r.type) for r in op.results]
    if isinstance(core.current_trace(), core.EvalTrace):
        return core.bind_with_bodies(primitive, module, operands, avals_out, params)
    outer = core.current_trace()

    def copy(name):
        copied = _copy_function(module, lookup(module, name), name, outer)
        return copied if isinstance(copied, str) else copied.func_name
    params = dict(params)
    for key in _body_params(primitive, params):
        params[key] = tuple(map(copy, params[key])) if isinstance(params[key], tuple) else copy(params[key])
    return core.bind_with_bodies(primitive, outer.module, operands, avals_out, params)


def _body_params(primitive, params):
    """The params naming functions of the module: a control-flow op's bodies, scatter_apply's function."""
    if primitive == "scatter" and params.get("update_jaxpr") is not None:
        return ("update_jaxpr",)
    return BODY_PARAMS.get(primitive, ())


_copies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # caller's module -> {source: copy}


def _copy_function(module, func, name, outer, target=None):
    """``func`` replayed into a private function of ``outer``'s module, with the same signature; copied once
    per module (``target`` names a copy made anew). A function being copied (a rule that calls its own function)
    is returned by name."""
    from irax.ir.dialect import aval_of_type
    from irax.ir.jaxpr_view import NUM_CONSTS_ATTR
    from irax.passes.funcs import arguments, int_attr, lookup, name_of
    done = _copies.setdefault(outer.module, {})
    key = (id(module), name_of(func))  # the entry holds the module, so its id is not reused meanwhile
    if key in done and target is None:
        return done[key][1]
    target = target or f"{_symbol(name)}_{next(api._callee_names)}"
    done[key] = (module, target)

    def body(*xs):
        return replay(module, func, list(xs))
    body.__name__ = name
    structs = [api.ShapeDtypeStruct(a.shape, a.dtype) for a in (aval_of_type(v.type) for v in arguments(func))]
    try:
        traced = api.trace(body, tuple(structs), {}, purpose="differentiation", module=outer.module,
                           func_name=target, private=True)
    except BaseException:
        del done[key]
        raise
    if num_consts(func):
        with scope():
            lookup(outer.module, target).attributes[NUM_CONSTS_ATTR] = int_attr(num_consts(func))
    done[key] = (module, traced)
    return traced


def _symbol(name) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_") or "fn"


# --- the transformed functions -----------------------------------------------------------------

class _Traceable:
    """``fun`` of flat leaves (``in_tree``), returning its output leaves then ``has_aux``'s aux leaves."""

    def __init__(self, fun, in_tree, has_aux):
        self.fun, self.in_tree, self.has_aux = fun, in_tree, has_aux
        self.__name__ = getattr(fun, "__name__", "fun")

    def __call__(self, *leaves):
        out = self.fun(*tree_util.tree_unflatten(self.in_tree, list(leaves)))
        aux = None
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("expected function with aux output to return a two-element tuple, but got type "
                                f"{type(out)} with value {out!r}")
            out, aux = out
        out_leaves, self.out_tree = tree_util.tree_flatten(out)
        self.aux_leaves, self.aux_tree = tree_util.tree_flatten(aux)
        self.n_out = len(out_leaves)
        return out_leaves + [x for x in self.aux_leaves if isinstance(x, core.Tracer)]

    def split(self, outs):
        """``(output leaves, aux)`` from the replayed outputs; aux values that were not traced pass as they are."""
        if not self.has_aux:
            return outs[:self.n_out], None
        traced = iter(outs[self.n_out:])
        aux = [next(traced) if isinstance(x, core.Tracer) else x for x in self.aux_leaves]
        return outs[:self.n_out], tree_util.tree_unflatten(self.aux_tree, aux)


class _Derivatives:
    """A ``_Traceable`` traced on ``leaves`` and differentiated with respect to the ``nonzero`` ones: its JVP,
    split into primal and linear parts when ``split``, the linear part transposed when ``transpose``."""

    def __init__(self, traceable, leaves, nonzero, *, split=False, transpose=False):
        from irax.passes import funcs
        from irax.passes.jvp import jvp_function
        from irax.passes.linearize import linearize_function
        from irax.passes.transpose import transpose_function
        self.traced = api.trace(traceable, tuple(leaves), {}, purpose="differentiation", concrete=True)
        self.module = self.traced.module
        self.n_all = len(self.traced.out_avals)
        mask = [i < traceable.n_out for i in range(self.n_all)]
        with scope():
            source = funcs.lookup(self.module, self.traced.func_name)
            all_nonzero = list(nonzero) + [False] * len(self.traced.closure)
            self.jvp, self.has_tangent = jvp_function(self.module, source, all_nonzero, "main_jvp",
                                                      instantiate_outputs=mask)
            if split or transpose:
                self.primal, self.lin = linearize_function(self.module, self.jvp)
            if transpose:
                self.lin_t = transpose_function(self.module, self.lin)

    def run_jvp(self, primals, tangents):
        outs = replay(self.module, self.jvp, list(primals) + list(tangents) + list(self.traced.closure))
        return outs[:self.n_all], outs[self.n_all:]

    def run_primal(self, primals):
        outs = replay(self.module, self.primal, list(primals) + list(self.traced.closure))
        return outs[:self.n_all], outs[self.n_all:]

    def run_lin(self, residuals, tangents):
        return replay(self.module, self.lin, list(residuals) + list(tangents))

    def run_transposed(self, residuals, cotangents):
        return replay(self.module, self.lin_t, list(residuals) + list(cotangents))

    def spread_tangents(self, tangents, n_out):
        """One tangent per output: float0 zeros for those without (integer outputs)."""
        it = iter(tangents)
        return [next(it) if has else _zeros_float0(a) for has, a in
                zip(self.has_tangent[:n_out], self.traced.out_avals[:n_out])]


def _aval(x) -> ShapedArray:
    return api.abstractify(x)


def _is_inexact(aval) -> bool:
    return np.issubdtype(aval.dtype, np.inexact) or aval.dtype == dtypes.bfloat16


def _one_like(aval):
    return Array._from_host(np.ones((), aval.dtype), ShapedArray((), aval.dtype, aval.weak_type))


def _with_weak_type(x, weak: bool):
    """A gradient takes its primal's weak type, as in JAX (no op is emitted for it)."""
    aval = getattr(x, "aval", None)
    if aval is None or aval.weak_type == weak:
        return x
    if isinstance(x, core.Tracer):
        return core.Tracer(x._trace, aval.update(weak_type=weak), x.value, x.concrete)
    return x._with_aval(aval.update(weak_type=weak))


def _zeros_float0(aval):
    return np.zeros(aval.shape, dtypes.float0)


def _type_str(aval) -> str:
    return f"{aval.dtype.name}{list(aval.shape)}".replace(" ", "")


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """``(fun(*primals), vjp_fun)`` as ``jax.vjp``; ``vjp_fun(ct)`` returns one cotangent per primal."""
    _check_callable(fun)
    leaves, in_tree = tree_util.tree_flatten(primals)
    avals = [_aval(x) for x in leaves]
    traceable = _Traceable(fun, in_tree, has_aux)
    nonzero = [_is_inexact(a) for a in avals]
    d = _Derivatives(traceable, leaves, nonzero, transpose=True)
    outs, residuals = d.run_primal(leaves)
    outs, aux = traceable.split(outs)
    out_tree, out_avals = traceable.out_tree, d.traced.out_avals[:traceable.n_out]

    def vjp_fun(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(f"unexpected tree structure.\n\nThe argument to a VJP function returned by `jax.vjp` "
                             f"must match the pytree structure of the differentiated function {traceable.__name__}."
                             f"\n\nBut the tree structures differ: {ct_tree} and {out_tree}.")
        for c, a in zip(ct_leaves, out_avals):
            c_aval = _aval(c)
            if (c_aval.shape, c_aval.dtype) != (a.shape, a.dtype) and _is_inexact(a):
                raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                                 f"{_type_str(c_aval)}, but expected {_type_str(a)} because the corresponding "
                                 f"output of the differentiated function had JAX type {_type_str(a)}")
        cts = iter(d.run_transposed(residuals, [c for c, has in zip(ct_leaves, d.has_tangent) if has]))
        grads = [_with_weak_type(next(cts), a.weak_type) if nz else _zeros_float0(a) for nz, a in zip(nonzero, avals)]
        return tree_util.tree_unflatten(in_tree, grads)

    primal_out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return primal_out, vjp_fun, aux
    return primal_out, vjp_fun


def _check_argnums(argnums, n_args):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError("argnums must name at least one argument to differentiate with respect to, got ()")
    for i in nums:
        if not isinstance(i, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if i >= n_args:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at least {max(nums) + 1} "
                            f"positional arguments to be passed by the caller, but got only {n_args} positional "
                            "arguments.")
        if i < -n_args:
            raise ValueError("Positional argument indices, e.g. for `static_argnums`, must have value greater than or "
                             f"equal to -len(args) and less than len(args), but got value {i} for len(args) == "
                             f"{n_args}.")
    canonical = tuple(i % n_args for i in nums)
    if len(set(canonical)) != len(canonical):
        raise TypeError(f"argnums {argnums} names an argument twice")
    return canonical


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """``(fun(*args), gradient)`` as ``jax.value_and_grad``."""
    _check_callable(fun)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        for leaf in tree_util.tree_leaves(dyn):
            _check_input_dtype(_aval(leaf), holomorphic, allow_int)
        result = vjp(_partial(fun, args, kwargs, nums), *dyn, has_aux=has_aux)
        ans, vjp_fun = result[0], result[1]
        _check_scalar(ans, holomorphic)
        g = vjp_fun(_one_like(_aval(ans)))
        g = g[0] if isinstance(argnums, int) else g
        return ((ans, result[2]), g) if has_aux else (ans, g)

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of scalar-valued ``fun`` with respect to ``argnums``, as ``jax.grad``."""
    value_and_grad_f = value_and_grad(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        if has_aux:
            (_, aux), g = value_and_grad_f(*args, **kwargs)
            return g, aux
        _, g = value_and_grad_f(*args, **kwargs)
        return g

    return grad_f


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _check_input_dtype(aval, holomorphic, allow_int, name="grad"):
    dtype = aval.dtype
    if holomorphic:
        if not np.issubdtype(dtype, np.complexfloating):
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, but got "
                            f"{dtype.name}.")
    elif not _is_inexact(aval) and not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                        f"np.inexact), but got {dtype.name}. If you want to use Boolean- or integer-valued "
                        "inputs, use vjp or set allow_int to True.")


def _check_scalar(x, holomorphic):
    if not isinstance(x, (Array, core.Tracer, np.ndarray, np.generic, int, float, complex)):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x}.")
    aval = _aval(x)
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
    _check_output_dtype(aval, holomorphic, "grad")


def _check_output_dtype(aval, holomorphic, name):
    if holomorphic:
        if not np.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                            f"{aval.dtype.name}.")
    elif not (np.issubdtype(aval.dtype, np.floating) or aval.dtype == dtypes.bfloat16):
        hint = ("For holomorphic differentiation, pass holomorphic=True. For differentiation of non-holomorphic "
                "functions involving complex outputs, use jax.vjp directly." if np.issubdtype(aval.dtype,
                                                                                           np.complexfloating)
                else "For differentiation of functions with integer outputs, use jax.vjp directly.")
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {aval.dtype.name}. {hint}")


def _tangent_dtype(aval):
    return aval.dtype if _is_inexact(aval) else dtypes.float0


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), the directional derivative along tangents)`` as ``jax.jvp``."""
    _check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree structure; primals have "
                        f"tree structure {p_tree} whereas tangents have tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = _aval(p), _aval(t)
        if pa.shape != ta.shape:
            raise ValueError(f"jvp called with different primal and tangent shapes;Got primal shape {pa.shape} "
                             f"and tangent shape as {ta.shape}")
        if ta.dtype != _tangent_dtype(pa):
            raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case "
                            "of int/bool primal dtype the tangent dtype must be float0.Got primal dtype "
                            f"{pa.dtype.name} and so expected tangent dtype {_tangent_dtype(pa)}, but got tangent "
                            f"dtype {ta.dtype} instead.")
    traceable = _Traceable(fun, p_tree, has_aux)
    nonzero = [_is_inexact(_aval(p)) for p in p_leaves]
    d = _Derivatives(traceable, p_leaves, nonzero)
    outs, tangents_out = d.run_jvp(p_leaves, [t for t, nz in zip(t_leaves, nonzero) if nz])
    outs, aux = traceable.split(outs)
    tangents_out = d.spread_tangents(tangents_out, traceable.n_out)
    result = (tree_util.tree_unflatten(traceable.out_tree, outs),
              tree_util.tree_unflatten(traceable.out_tree, tangents_out))
    return (*result, aux) if has_aux else result


def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` as ``jax.linearize``: ``f_jvp`` evaluates only the linear part."""
    _check_callable(fun)
    leaves, in_tree = tree_util.tree_flatten(primals)
    avals = [_aval(p) for p in leaves]
    traceable = _Traceable(fun, in_tree, has_aux)
    nonzero = [_is_inexact(a) for a in avals]
    d = _Derivatives(traceable, leaves, nonzero, split=True)
    outs, residuals = d.run_primal(leaves)
    outs, aux = traceable.split(outs)

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with the original "
                            f"primal values: expected structure {in_tree}, got {t_tree}")
        for t, a in zip(t_leaves, avals):
            ta = _aval(t)
            if (ta.shape, ta.dtype) != (a.shape, _tangent_dtype(a)):
                raise ValueError("linearized function called on tangent values inconsistent with the original "
                                 f"primal values:\nGot tangent aval {_type_str(ta)} for primal aval "
                                 f"{_type_str(a)} but expected {_type_str(a.update(dtype=_tangent_dtype(a)))}.")
        lin_out = d.run_lin(residuals, [t for t, nz in zip(t_leaves, nonzero) if nz])
        return tree_util.tree_unflatten(traceable.out_tree, d.spread_tangents(lin_out, traceable.n_out))

    result = tree_util.tree_unflatten(traceable.out_tree, outs), f_jvp
    return (*result, aux) if has_aux else result


def _partial(fun, args, kwargs, nums):
    def partial_f(*dyn_args):
        full = list(args)
        for i, a in zip(nums, dyn_args):
            full[i] = a
        return fun(*full, **kwargs)
    return partial_f


def _std_basis(pytree):
    """One row of the identity per element of ``pytree``'s leaves, split into the leaves' shapes (JAX's)."""
    from . import numpy as jnp
    leaves = tree_util.tree_leaves(pytree)
    n = sum(_aval(x).size for x in leaves)
    flat = jnp.eye(n, dtype=dtypes.result_type(*leaves))
    return _unravel_array_into_pytree(pytree, 1, None, flat, always_convert=True)


def _unravel_array_into_pytree(pytree, axis, example, arr, always_convert=False):
    """``arr``'s ``axis`` split into pieces shaped as ``pytree``'s leaves, each cast to its leaf's (or
    ``example``'s) dtype. JAX's basis binds that cast even when the dtype is the same (it passes a sharding);
    its unravelling does not."""
    from . import numpy as jnp
    leaves, treedef = tree_util.tree_flatten(pytree)
    shape = tuple(arr.shape)
    parts = jnp.split(arr, np.cumsum([_aval(x).size for x in leaves[:-1]]), axis)
    out = []
    for part, leaf in zip(parts, leaves):
        target = _aval(leaf if example is None else example)
        x = np.reshape(part, shape[:axis] + _aval(leaf).shape + shape[axis + 1:])
        if np.issubdtype(x.dtype, np.complexfloating) and not np.issubdtype(target.dtype, np.complexfloating):
            x = x.real
        if always_convert or x.dtype != target.dtype or _aval(x).weak_type != target.weak_type:
            x = core.bind1("convert_element_type", x, new_dtype=target.dtype, weak_type=target.weak_type)
        out.append(x)
    return tree_util.tree_unflatten(treedef, out)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by forward mode: ``jvp`` vmapped over the standard basis of the inputs, as in JAX."""
    _check_callable(fun)
    from .batching import vmap

    def jacfun(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        for leaf in tree_util.tree_leaves(dyn):
            _check_input_dtype_jacfwd(_aval(leaf), holomorphic)
        f_partial = _partial(fun, args, kwargs, nums)

        def pushfwd(tangents):
            return jvp(f_partial, dyn, tangents, has_aux=has_aux)
        if has_aux:
            y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(_std_basis(dyn))
        else:
            (y, jac), aux = vmap(pushfwd, out_axes=(None, -1))(_std_basis(dyn)), None
        if holomorphic:
            for leaf in tree_util.tree_leaves(y):
                if not np.issubdtype(_aval(leaf).dtype, np.complexfloating):
                    raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype, but got "
                                    f"{_aval(leaf).dtype.name}.")
        example = dyn[0] if isinstance(argnums, int) else dyn
        jac_tree = tree_util.tree_map(lambda y_leaf, arr: _unravel_array_into_pytree(example, -1 % arr.ndim, y_leaf,
                                                                                      arr), y, jac)
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def _check_input_dtype_jacfwd(aval, holomorphic):
    if holomorphic:
        if not np.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(f"jacfwd with holomorphic=True requires inputs with complex dtype, but got "
                            f"{aval.dtype.name}.")
    elif not (np.issubdtype(aval.dtype, np.floating) or aval.dtype == dtypes.bfloat16):
        raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
                        f"got {aval.dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex inputs or integer inputs, "
                        "use jax.jvp directly.")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian by reverse mode: the pullback vmapped over the standard basis of the outputs, as in JAX."""
    _check_callable(fun)
    from .batching import vmap

    def jacfun(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        for leaf in tree_util.tree_leaves(dyn):
            _check_input_dtype(_aval(leaf), holomorphic, allow_int, "jacrev")
        res = vjp(_partial(fun, args, kwargs, nums), *dyn, has_aux=has_aux)
        y, pullback = res[0], res[1]
        for leaf in tree_util.tree_leaves(y):
            _check_output_dtype(_aval(leaf), holomorphic, "jacrev")
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if isinstance(argnums, int) else jac
        example = dyn[0] if isinstance(argnums, int) else dyn
        jac_tree = tree_util.tree_map(lambda leaf, arr: _unravel_array_into_pytree(y, 0, leaf, arr), example, jac)
        jac_tree = tree_util.tree_transpose(tree_util.tree_structure(example), tree_util.tree_structure(y), jac_tree)
        return (jac_tree, res[2]) if has_aux else jac_tree

    return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """``jacfwd(jacrev(fun))``, as in JAX."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux,
                  holomorphic=holomorphic)


def closure_convert(fun, *example_args):
    """``(converted, consts)`` as ``jax.closure_convert``: ``converted(*args, *consts)`` is ``fun(*args)``
    with the floating-point values ``fun`` closes over passed explicitly (what custom_vjp rules need)."""
    from irax.passes.funcs import lookup
    traced = api.trace(fun, example_args, {}, purpose="closure_convert")
    hoist = [_is_inexact(_aval(c)) for c in traced.closure]
    hoisted = [c for c, h in zip(traced.closure, hoist) if h]

    def converted(*args_and_consts):
        args, consts = args_and_consts[:len(args_and_consts) - len(hoisted)], iter(
            args_and_consts[len(args_and_consts) - len(hoisted):])
        closure = [next(consts) if h else c for c, h in zip(traced.closure, hoist)]
        with scope():
            func = lookup(traced.module, traced.func_name)
        outs = replay(traced.module, func, tree_util.tree_leaves(args) + closure)
        return traced.unflatten(outs)

    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, hoisted


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear ``fun`` as ``jax.linear_transpose``: traced on ``primals``' shapes and dtypes
    only (they need no values), so a function that is not linear fails in the transpose pass, as JAX's."""
    from irax.passes.funcs import lookup
    from irax.passes.transpose import transpose_function
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_util.tree_flatten(primals)
    in_avals = [_aval(x) for x in leaves]
    traceable = _Traceable(fun, in_tree, False)
    structs = [api.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in in_avals]
    traced = api.trace(traceable, tuple(structs), {}, purpose="linear_transpose")
    out_avals = traced.out_avals
    in_dtypes, out_dtypes = [a.dtype for a in in_avals], [a.dtype for a in out_avals]
    if not (all(_is_inexact(a) for a in in_avals + out_avals)
            or all(np.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
                        f"integer functions, but got {in_dtypes} -> {out_dtypes}.")
    with scope():
        transposed = transpose_function(traced.module, lookup(traced.module, traced.func_name),
                                        trailing_residuals=len(traced.closure))

    def transposed_fun(closure, out_cotangent):
        cts, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != traceable.out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected {traceable.out_tree} but got "
                            f"{ct_tree}")
        if not all(_aval(c).shape == a.shape and _aval(c).dtype == a.dtype for c, a in zip(cts, out_avals)):
            raise TypeError(f"cotangent type does not match function output, expected {tuple(out_avals)} but got "
                            f"{cts}")
        in_cts = replay(traced.module, transposed, list(closure) + cts)
        return tree_util.tree_unflatten(in_tree, [_with_weak_type(c, a.weak_type) for c, a in zip(in_cts, in_avals)])

    return tree_util.Partial(transposed_fun, list(traced.closure))
