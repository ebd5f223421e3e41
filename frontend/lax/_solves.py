"""``custom_linear_solve`` and ``custom_root``, as JAX's ``lax.control_flow.solves``.

``custom_linear_solve`` traces ``matvec``, ``solve`` and, for reverse mode, ``vecmat`` (``matvec``'s transpose,
or ``matvec`` itself when ``symmetric``) and ``transpose_solve`` into private functions of the module, each
closing over its own constants, and binds one ``custom_linear_solve`` op naming them (``ir/solves.py``): its
derivatives are solves with the same bodies (``passes/ad_solves.py``). ``vecmat`` is built by transposing
``matvec``'s body with the transpose pass, as JAX's ``linear_transpose`` does; ``transpose_solve`` calls it by
replaying that body.

``custom_root`` is a ``custom_jvp`` function of ``solve``, whose JVP solves the linearised system with
``tangent_solve`` (the implicit function theorem), as JAX writes it.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from irax import core, tree_util
from irax.custom_derivatives import custom_jvp
from irax.ir import solves as SV
from irax.ir.jaxpr_view import body_ops
from irax.passes import funcs
from irax.passes.linearize import NUM_RESIDUALS_ATTR
from irax.passes.transpose import transpose_function

from ._control_flow import _avals, _func, _in_scope, _module, _trace_body


def _check_shapes(func_name, expected_name, actual, expected):
    actual_shapes, expected_shapes = [tuple(np.shape(x)) for x in actual], [tuple(np.shape(x)) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, got {actual_shapes} and "
                         f"{expected_shapes}")


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    """JAX's ``_check_tree``: the output's structure must be ``b``'s (the first of a pair, with ``has_aux``)."""
    if has_aux:
        children = tree_util.treedef_children(actual_tree)
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual_tree}, but a pytree tuple with "
                             "auxiliary output was expected because has_aux was set to True.")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, got {actual_tree} and "
                        f"{expected_tree}.")


def _shape_checked(fun, name, has_aux, b_leaves):
    def checked(x):
        y = fun(x)
        _check_shapes(name, "b", tree_util.tree_leaves(y), b_leaves)
        return y

    def checked_aux(x):
        y, aux = fun(x)
        _check_shapes(name, "b", tree_util.tree_leaves(y), b_leaves)
        return y, aux
    return checked_aux if has_aux else checked


class _Bodies:
    """The bodies of one op being traced into ``module``, sharing its constants memo."""

    def __init__(self, b_avals, tree):
        self.module, self.host_operands = _module()
        self.b_avals, self.tree = b_avals, tree

    def trace(self, fun, kind, has_aux=False):
        traced = _trace_body(_shape_checked(fun, kind, has_aux, self.b_avals), (self.tree.unflatten(self.b_avals),),
                             self.module, f"custom_linear_solve_{kind}", self.host_operands)
        _check_tree(kind, "b", traced.out_tree, self.tree, has_aux)
        return traced

    def transpose(self, fun):
        """JAX's ``linear_transpose`` of ``fun`` (a linear map of ``b``): ``fun`` traced as JAX's transposition
        traces it, then transposed into a body taking the cotangents, then its constants."""
        traced = _trace_body(fun, (self.tree.unflatten(self.b_avals),), self.module, "linear_transpose",
                             self.host_operands)
        func = _func(self.module, traced)
        n_b, n_consts = len(self.b_avals), len(traced.closure)
        linear = funcs.rewire(self.module, func, [n_b + j for j in range(n_consts)] + list(range(n_b)),
                              list(range(n_b)), 0)
        linear.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(n_consts)
        _drop_known_identities(linear, n_consts)
        transposed = transpose_function(self.module, linear)
        linear.erase()
        body = funcs.rewire(self.module, transposed, [n_consts + i for i in range(n_b)] + list(range(n_consts)),
                            list(range(n_b)), n_consts)
        return body, traced.closure

    def replaying(self, func, consts):
        """A Python function applying the body ``func`` (closing over ``consts``) in the current trace."""
        from irax.ad import replay

        def apply(x):
            trace = core.current_trace()
            if isinstance(trace, core.JaxprTrace):
                # JAX transposes jnp's (jitted) ops as calls that take their constants before the cotangents, so
                # a transpose_solve closing over its own values lifts ``consts`` first
                for c in consts:
                    if np.ndim(c):
                        trace.to_value(c)
            return self.tree.unflatten(replay(self.module, func, [*tree_util.tree_leaves(x), *consts]))
        return apply


def _drop_known_identities(func, n_res):
    """Identity broadcasts of values that do not depend on the linear arguments removed: JAX's partial
    evaluation computes those values outside the traced function, forwarded as they are."""
    linear = set(funcs.arguments(func)[n_res:])
    for op in body_ops(func)[:-1]:
        if any(v in linear for v in op.operands):
            linear.update(op.results)
        elif op.name == "jaxpr.broadcast_in_dim" and op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


@_in_scope
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``solve(matvec, b)``, differentiated as the solution of ``matvec(x) == b`` (``jax.lax.custom_linear_solve``).

    Args:
      matvec: the linear map to invert; must be differentiable.
      b: the right-hand side, any pytree of arrays.
      solve: ``solve(matvec, b)`` returns ``x`` with ``matvec(x) == b`` (and aux values with ``has_aux``); it
        need not be differentiable.
      transpose_solve: the same for the transposed map ``vecmat``; needed for reverse mode unless ``symmetric``,
        in which case ``solve`` serves.
      symmetric: whether ``matvec`` is its own transpose.
      has_aux: whether the solves return ``(x, aux)``.

    Returns:
      ``solve(matvec, b)``, whose derivatives solve linear systems with the same bodies.
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_util.tree_flatten(b)
    bodies = _Bodies(_avals(b_leaves), tree)
    matvec_traced = bodies.trace(matvec, "matvec")
    solve_traced = bodies.trace(functools.partial(solve, matvec), "solve", has_aux)
    traced = [matvec_traced, None, solve_traced, None]
    if transpose_solve is not None:
        if symmetric:
            vecmat, vecmat_func, vecmat_consts = matvec, _func(bodies.module, matvec_traced), matvec_traced.closure
        else:
            vecmat_func, vecmat_consts = bodies.transpose(matvec)
            vecmat = bodies.replaying(vecmat_func, vecmat_consts)
        traced[1] = (vecmat_func, vecmat_consts)
        traced[3] = bodies.trace(functools.partial(transpose_solve, vecmat), "transpose_solve", has_aux)
    names, consts = [], []
    for t in traced:
        if isinstance(t, tuple):
            names.append(funcs.name_of(t[0]))
            consts.append(list(t[1]))
        else:
            names.append(None if t is None else t.func_name)
            consts.append([] if t is None else list(t.closure))
    outs = core.bind_with_bodies(
        "custom_linear_solve", bodies.module, [*(c for group in consts for c in group), *b_leaves],
        solve_traced.out_avals, {"const_lengths": tuple(map(len, consts)), "jaxprs": SV.from_tuple(names)})
    return solve_traced.out_tree.unflatten(outs)


def _replay(module, traced):
    """JAX's ``core.jaxpr_as_fun`` of a body that takes its constants first: its ops bound in the current trace."""
    from irax.ad import replay
    func = _func(module, traced)
    return lambda consts, args: replay(module, func, [*args, *consts])


class _RootBodies:
    """custom_root's traced ``f``, ``solve`` and ``l_and_s`` as functions of (constants, arguments); hashed by
    identity, as JAX's closed jaxprs are when passed as nondiff arguments."""

    def __init__(self, module, f, solve, l_and_s):
        self.f, self.solve, self.l_and_s = (_replay(module, t) for t in (f, solve, l_and_s))
        self.num_f_out = len(f.out_avals)


class _RootTuple(NamedTuple):
    f: object
    solve: object
    l_and_s: object


def _split_root_args(args, const_lengths):
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start:start + n]))
        start += n
    return _RootTuple(*groups), list(args[start:])


@_in_scope
def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``, a root of ``f``, differentiated by the implicit function theorem with respect
    to the values ``f`` closes over (``jax.lax.custom_root``).

    Args:
      f: the function whose root is sought; takes and returns pytrees of ``initial_guess``'s structure.
      initial_guess: where ``solve`` starts.
      solve: ``solve(f, initial_guess)`` returns a root (and aux values with ``has_aux``).
      tangent_solve: ``tangent_solve(g, y)`` solves ``g(x) = y`` for the linear ``g``, ``f`` linearised at its
        root (for a scalar: ``lambda g, y: y / g(1.0)``).
      has_aux: whether ``solve`` returns ``(root, aux)``.

    Returns:
      ``solve(f, initial_guess)``, whose derivatives solve ``tangent_solve``'s system.
    """
    from irax.ad import linearize
    guess_leaves, tree = tree_util.tree_flatten(initial_guess)
    guess_avals = _avals(guess_leaves)
    module, host_operands = _module()

    def trace(fun, args, kind):
        return _trace_body(fun, args, module, f"custom_root_{kind}", host_operands)
    f_traced = trace(f, (tree.unflatten(guess_avals),), "f")
    _check_tree("f", "initial_guess", f_traced.out_tree, tree, False)
    solve_traced = trace(functools.partial(solve, f), (tree.unflatten(guess_avals),), "solve")
    _check_tree("solve", "initial_guess", solve_traced.out_tree, tree, has_aux)

    def linearize_and_solve(x, b):
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)
    l_and_s_traced = trace(linearize_and_solve, (tree.unflatten(guess_avals),) * 2, "tangent_solve")
    _check_tree("tangent_solve", "x", l_and_s_traced.out_tree, tree, False)
    traced = (f_traced, solve_traced, l_and_s_traced)
    const_lengths = _RootTuple(*(len(t.closure) for t in traced))
    bodies = _RootBodies(module, *traced)
    solution = _custom_root(const_lengths, bodies, *(c for t in traced for c in t.closure), *guess_leaves)
    return solve_traced.out_tree.unflatten(solution)


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _custom_root(const_lengths, jaxprs, *args):
    params, initial_guess = _split_root_args(args, const_lengths)
    return jaxprs.solve(params.solve, initial_guess)


@_custom_root.defjvp
def _root_jvp(const_lengths, jaxprs, primals, tangents):
    """JAX's: ``∂u* = -(∂₁F)⁻¹ ∂₀F``, the tangent system solved by ``l_and_s``; aux values get zero tangents."""
    from irax.ad import jvp
    from irax.numpy import zeros_like
    params, _ = _split_root_args(primals, const_lengths)
    sol = _custom_root(const_lengths, jaxprs, *primals)
    solution, aux = list(sol[:jaxprs.num_f_out]), list(sol[jaxprs.num_f_out:])
    params_dot, _ = _split_root_args(tangents, const_lengths)
    _, rhs = jvp(lambda *p: jaxprs.f(p, solution), params.f, params_dot.f)
    solution_dot = [-x for x in jaxprs.l_and_s(params.l_and_s, [*solution, *rhs])]
    return solution + aux, solution_dot + [zeros_like(a) for a in aux]
