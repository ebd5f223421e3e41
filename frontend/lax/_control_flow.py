"""``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map`` and ``associative_scan``, as JAX's
``lax.control_flow``.

Each body is traced into a private function of the module being built (a fresh one in eager mode, where the
op is then evaluated by the reference interpreter), and the op names it (``ir/control_flow.py``). What JAX
does to the traced bodies before binding is done too, because it shows in the jaxpr: branches share their
constants; outputs every branch forwards from an input are pruned; carries a loop body passes through
unchanged become constants; scan outputs that are slices of its xs are pruned; a weakly-typed initial carry
is promoted to the body's output type and the body traced again.
"""
from __future__ import annotations

import functools
import inspect
import operator
import re
from collections.abc import Sequence

import numpy as np

from irax import core, dtypes, tree_util
from irax.ir.avals import ShapedArray
from irax.ir.extras import platform_branch
from irax.ir.jaxpr_view import NUM_CONSTS_ATTR, body_ops, num_consts
from irax.ir.mlir import ir, scope
from irax.passes import funcs

from .. import api, errors
from . import (_canonical_axis, add, bitwise_or, clamp, concatenate, convert_element_type, lt, ne, pad, rev,
               slice_in_dim)
from ._scalars import as_operand


# --- tracing bodies ---------------------------------------------------------------------------------

def _abstract(aval: ShapedArray):
    return api.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


def _trace_body(fun, args, module, kind, host_operands, seed=()):
    """``fun(*args)`` traced (args a pytree of avals) into a private function of ``module``, its closed-over
    values starting with ``seed``. The bodies of one op and the trace around it share ``host_operands``, so
    that a NumPy array they all close over is one constant, as JAX dedups constants by identity."""
    args = tree_util.tree_map(_abstract, args, is_leaf=lambda x: isinstance(x, ShapedArray))
    name = f"{api._symbol_name(fun)}_{kind}_{next(api._callee_names)}"

    def sharing_constants(*args):
        core.current_trace().host_operands = host_operands
        return fun(*args)
    sharing_constants.__name__ = api._fun_name(fun)  # error messages name the user's function
    return api.trace(sharing_constants, args, {}, purpose=kind, module=module, func_name=name, private=True,
                     seed=seed)


def _in_scope(fun):
    """Runs ``fun`` in irax's MLIR context: in eager mode no trace has entered it."""
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        with scope():
            return fun(*args, **kwargs)
    return wrapped


def _module():
    """The module the bodies go into, and the NumPy constants memo they share with the trace around them."""
    trace = core.current_trace()
    if isinstance(trace, core.JaxprTrace):
        return trace.module, trace.host_operands
    return core.new_module(), {}


def _avals(leaves):
    return [api.abstractify(x) for x in leaves]


def _func(module, traced):
    return funcs.lookup(module, traced.func_name)


def _pad_consts(module, traced, closure):
    """``traced`` taking all of ``closure`` as constants, the ones it does not use included (its own come
    first: they were its seed)."""
    func = _func(module, traced)
    block = func.regions[0].blocks[0]
    for x in closure[len(traced.closure):]:
        block.add_argument(_tensor_type(x), func.location)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], list(funcs.function_type(func).results)))
    if closure:
        func.attributes[NUM_CONSTS_ATTR] = funcs.int_attr(len(closure))


def _tensor_type(x):
    from irax.ir.dialect import tensor_type_of
    aval = x.aval if isinstance(x, core.Tracer) else api.abstractify(np.asarray(x))
    return tensor_type_of(aval)


def _forwarding(func):
    """For each result of ``func``, the index of the argument it returns in JAX's order (constants first),
    or None (JAX's ``_jaxpr_forwarding``)."""
    args = funcs.arguments(func)
    n_consts = num_consts(func)
    n_params = len(args) - n_consts
    jax_index = {a: (i - n_params if i >= n_params else i + n_consts) for i, a in enumerate(args)}
    return [jax_index.get(v) for v in body_ops(func)[-1].operands]


def _types_match(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def _type_str(aval) -> str:
    """An aval in an error message, as JAX's ``str_short`` writes it (full dtype names)."""
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"


class _AvalText:
    """An aval shown in a message as JAX's ``ShapedArray`` is: ``str`` alone, ``repr`` inside containers."""

    def __init__(self, aval):
        self.aval = aval

    def __str__(self):
        return _type_str(self.aval)

    def __repr__(self):
        return f"ShapedArray({_type_str(self.aval)}{', weak_type=True' if self.aval.weak_type else ''})"


def _mismatch(a, b) -> str:
    """JAX's ``aval_mismatch_extra``: what differs between two avals."""
    problems = [p for p, differ in (("the dtypes do not match", a.dtype != b.dtype),
                                    ("the shapes do not match", a.shape != b.shape)) if differ]
    if len(problems) < 2:
        return "".join(f", so {p}" for p in problems)
    return ", so " + ", ".join(problems[:-1]) + ", and " + problems[-1]


def _capitalize(s):
    return s[0].upper() + s[1:]


class _LeafMeta(type):
    def __repr__(cls):
        return "pytree leaf"


_TreeLeaf = _LeafMeta("Leaf", (), {})


def _equality_errors(path, t1, t2):
    """JAX's ``tree_util.equality_errors``: ``(path, thing1, thing2, explanation)`` for each place where two
    pytrees' structures differ."""
    node1, node2 = tree_util._node_of(t1), tree_util._node_of(t2)
    if node1 is None and node2 is None:
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}", f"{type(t2).__name__} of length {len(t2)}",
               "the lengths do not match")
        return
    children1, meta1 = node1.flatten(t1)
    children2, meta2 = node2.flatten(t2)
    keys1 = [k for k, _ in tree_util._keyed_children(t1, node1)]
    keys2 = [k for k, _ in tree_util._keyed_children(t2, node2)]
    if len(children1) != len(children2):
        try:
            diff = " ".join(repr(k.key) for k in set(keys1).symmetric_difference(keys2))
        except (AttributeError, TypeError):
            diff = ""
        things = [f"{type(t)} with {len(c)} child{'ren' if len(c) > 1 else ''}"
                  for t, c in ((t1, children1), (t2, children2))]
        yield (path, *things, "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    if meta1 != meta2:
        yield (path, f"{type(t1)} with pytree metadata {meta1}", f"{type(t2)} with pytree metadata {meta2}",
               "the pytree node metadata does not match")
        return
    for key, c1, c2 in zip(keys1, children1, children2):
        yield from _equality_errors(path + (key,), c1, c2)


def _sourceinfo(fun) -> str:
    """JAX's ``fun_sourceinfo``: where a branch or body was defined."""
    while hasattr(fun, "func") and not hasattr(fun, "__code__"):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


def _paths(tree):
    leaves = tree_util.tree_flatten_with_path(tree)[0]
    return [tree_util.keystr(p) for p, _ in leaves]


def _listing(diffs, capitalize=True, spaced=False):
    """The differences as JAX lists them: one as a sentence, several as bullets (``spaced``: each but the last
    followed by an empty line, as JAX writes them for pytree structures and loop carries)."""
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0]) if capitalize else diffs[0]}.\n"
    if spaced:
        return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


# --- cond and switch ---------------------------------------------------------------------------------

def cond(pred, true_fun, false_fun, *operands, operand=inspect.Parameter.empty):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, both traced (``jax.lax.cond``)."""
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not inspect.Parameter.empty:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be passed, got "
                            f"operand={operand!r} and positional operands {operands}")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of " +
                        (f"type {type(pred)}" if isinstance(pred, Sequence) else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = ne(pred, 0)
    index = convert_element_type(pred, np.int32)
    return _switch(index, (false_fun, true_fun), operands, ("false_fun", "true_fun"), "cond")


def switch(index, branches, *operands, operand=inspect.Parameter.empty):
    """``branches[index](*operands)``, the index clamped into range (``jax.lax.switch``)."""
    if not all(callable(branch) for branch in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if operand is not inspect.Parameter.empty:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be passed, got "
                            f"operand={operand!r} and positional operands {operands}")
        operands = (operand,)
    if len(np.shape(index)) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.array(0, np.int32), index, np.array(len(branches) - 1, np.int32))
    return _switch(index, branches, operands, _branch_names(len(branches)), "switch")


def _branch_names(n):
    """How JAX's switch names its branches in errors."""
    return ("branch 0",) + tuple(f"branch{i}" for i in range(1, n))


@_in_scope
def _switch(index, branches, operands, names, api_name, branches_platforms=None):
    """Traces the branches (the first is checked against the others, in the order JAX traces them: a cond's
    true_fun first), shares their constants, prunes forwarded outputs and binds ``cond``."""
    module, host_operands = _module()
    leaves, in_tree = tree_util.tree_flatten(operands)
    avals = tree_util.tree_unflatten(in_tree, _avals(leaves))
    order = list(range(len(branches)))[::-1] if api_name == "cond" else list(range(len(branches)))
    traced, closure = {}, []
    for i in order:
        traced[i] = _trace_body(branches[i], avals, module, api_name, host_operands, seed=closure)
        closure = list(traced[i].closure)
    for t in traced.values():
        _pad_consts(module, t, closure)
    first = order[0]
    for i in order[1:]:
        _check_branch_outputs(api_name, names[first], names[i], branches[first], branches[i], traced[first],
                              traced[i])
    bodies = [_func(module, traced[i]) for i in range(len(branches))]
    forwards = [_forwarding(f) for f in bodies]
    in_fwd = [fs[0] if len(set(fs)) == 1 else None for fs in zip(*forwards)]
    keep = [i for i, f in enumerate(in_fwd) if f is None]
    if len(keep) < len(in_fwd):
        n_args = len(funcs.arguments(bodies[0]))
        bodies = [funcs.rewire(module, f, list(range(n_args)), keep, len(closure)) for f in bodies]
    out_avals = [traced[0].out_avals[i] for i in keep]  # branch 0's weak types, as JAX's abstract eval
    outs = iter(core.bind_with_bodies("cond", module, [index, *closure, *leaves], out_avals,
                                      {"branches": tuple(funcs.name_of(f) for f in bodies),
                                       "branches_platforms": branches_platforms}))
    all_inputs = [*closure, *leaves]
    results = [next(outs) if f is None else as_operand(all_inputs[f]) for f in in_fwd]
    return tree_util.tree_unflatten(traced[first].out_tree, results)


def _check_branch_outputs(api_name, name1, name2, f1, f2, traced1, traced2):
    info = f"{name1} is {_sourceinfo(f1)}\n{name2} is {_sourceinfo(f2)}\n\n"
    if traced1.out_tree != traced2.out_tree:
        trees = [t.out_tree.unflatten([_TreeLeaf()] * t.out_tree.num_leaves) for t in (traced1, traced2)]
        diffs = [f"{name1} output{f' at path {tree_util.keystr(p)}' if p else ''} is a {thing1} but {name2} output"
                 f"{f' at path {tree_util.keystr(p)}' if p else ''} is a {thing2}, so {why}"
                 for p, thing1, thing2, why in _equality_errors((), *trees)]
        if diffs:
            raise TypeError(f"{api_name} branch outputs must have the same pytree structure, but they differ:\n\n"
                            f"{info}{_listing(diffs, capitalize=False, spaced=True)}\nRevise {name1} and/or {name2} "
                            "so that they have the same pytree structure.")
    paths = _paths(tree_util.tree_unflatten(traced1.out_tree, traced1.out_avals))
    diffs = [f"the output of {name1}{f' at path {p}' if p else ''} has type {_type_str(a1)} but the "
             f"corresponding output of {name2} has type {_type_str(a2)}{_mismatch(a1, a2)}"
             for p, a1, a2 in zip(paths, traced1.out_avals, traced2.out_avals) if not _types_match(a1, a2)]
    if diffs:
        raise TypeError(f"{api_name} branches must have equal output types but they differ.\n\n{info}"
                        f"{_listing(diffs)}\nRevise {name1} and/or {name2} so that all output types match.")


# --- loops -------------------------------------------------------------------------------------------

def _promote_weak(init_leaves, init_avals, out_avals):
    """A weakly-typed initial carry whose body output has another type takes that type (JAX's
    ``_promote_weak_typed_input``); returns the new leaves and whether any changed."""
    changed = False
    leaves = list(init_leaves)
    for i, (x, a, b) in enumerate(zip(init_leaves, init_avals, out_avals)):
        if a.weak_type and not _types_match(a, b):
            leaves[i] = convert_element_type(x, dtypes.result_type(x, b.dtype))
            changed = True
    return leaves, changed


def _check_carry_type(name, body_fun, in_tree, in_avals, out_tree, out_avals):
    try:
        carry_name = list(inspect.signature(body_fun).parameters)[0]
    except (ValueError, TypeError, IndexError):
        carry_name = None

    def component(p):
        if carry_name:
            return f"the input carry component {carry_name}{p}" if p else f"the input carry {carry_name}"
        return f"the input carry at path {p}" if p else "the input carry"
    if in_tree != out_tree:
        diffs = [f"{component(tree_util.keystr(p))} is a {thing1} but the corresponding component of the carry "
                 f"output is a {thing2}, so {why}" for p, thing1, thing2, why in
                 _equality_errors((), in_tree.unflatten(in_avals), out_tree.unflatten(out_avals))]
        if diffs:
            raise TypeError(f"{name} function carry input and carry output must have the same pytree structure, "
                            f"but they differ:\n\n{_listing(diffs, spaced=True)}\nRevise the function so that the "
                            "carry output has the same pytree structure as the carry input.")
    paths = _paths(tree_util.tree_unflatten(in_tree, in_avals))
    diffs = [f"{component(p)} has type {_type_str(a)} but the corresponding output carry component has type "
             f"{_type_str(b)}{_mismatch(a, b)}" for p, a, b in zip(paths, in_avals, out_avals)
             if not _types_match(a, b)]
    if diffs:
        raise TypeError(f"{name} function carry input and carry output must have equal types, but they differ:"
                        f"\n\n{_listing(diffs, spaced=True)}\nRevise the function so that all output types match "
                        "the corresponding input types.")


def _live_arguments(func):
    """Which arguments the results of ``func`` depend on."""
    body = body_ops(func)
    live = set(body[-1].operands)
    for op in reversed(body[:-1]):
        if any(r in live for r in op.results):
            live.update(op.operands)
    return [a in live for a in funcs.arguments(func)]


@_in_scope
def while_loop(cond_fun, body_fun, init_val):
    """Applies ``body_fun`` to the carry while ``cond_fun`` of it is true (``jax.lax.while_loop``)."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    module, host_operands = _module()
    leaves, in_tree = tree_util.tree_flatten(init_val)
    init_avals = _avals(leaves)

    # Conditions shared by this trace's loops, as JAX's trace cache shares them: (cond_fun, tree, avals) -> the
    # traced condition, (its name, kept carries) -> its copy reading those carries alone (``_cond_reading``).
    conds = getattr(core.current_trace(), "loop_conds", {})

    def trace_both(avals):
        carry = tree_util.tree_unflatten(in_tree, avals)
        key = (cond_fun, in_tree, tuple(avals))
        cond_traced = conds.get(key) or _trace_body(cond_fun, (carry,), module, "while_cond", host_operands)
        if cond_traced.out_tree.num_leaves != 1 or not tree_util.treedef_is_leaf(cond_traced.out_tree):
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_traced.out_tree}.")
        pred = cond_traced.out_avals[0]
        if pred.shape != () or pred.dtype != np.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) {[_AvalText(pred)]}.")
        if not cond_traced.closure:
            conds.setdefault(key, cond_traced)
        return cond_traced, _trace_body(body_fun, (carry,), module, "while_body", host_operands)

    cond_traced, body_traced = trace_both(init_avals)
    if body_traced.out_tree.num_leaves != len(leaves):
        _check_carry_type("while_loop body", body_fun, in_tree, init_avals, body_traced.out_tree,
                          body_traced.out_avals)
    leaves, changed = _promote_weak(leaves, init_avals, body_traced.out_avals)
    if changed:
        for t in (cond_traced, body_traced) if cond_traced.closure else (body_traced,):
            _func(module, t).erase()
        init_avals = _avals(leaves)
        cond_traced, body_traced = trace_both(init_avals)
    _check_carry_type("while_loop body", body_fun, in_tree, init_avals, body_traced.out_tree,
                      body_traced.out_avals)
    cond_func, body_func = _func(module, cond_traced), _func(module, body_traced)
    cond_consts, body_consts = list(cond_traced.closure), list(body_traced.closure)
    n = len(leaves)
    body_fwd = _forwarding(body_func)
    cond_live = _live_arguments(cond_func)[:n]
    move = [body_fwd[i] == len(body_consts) + i and not cond_live[i] for i in range(n)]
    if any(move):
        kept = [i for i in range(n) if not move[i]]
        moved = [i for i in range(n) if move[i]]
        all_consts = [n + j for j in range(len(body_consts))]
        body_func = funcs.rewire(module, body_func, kept + moved + all_consts, kept, len(moved) + len(body_consts))
        cond_func = _cond_reading(module, conds, cond_traced, kept, n)
        body_consts = [leaves[i] for i in moved] + body_consts
        leaves_kept = [leaves[i] for i in kept]
    else:
        kept, leaves_kept = list(range(n)), leaves
    outs = core.bind_with_bodies(
        "while", module, [*cond_consts, *body_consts, *leaves_kept], [body_traced.out_avals[i] for i in kept],
        {"cond_jaxpr": funcs.name_of(cond_func), "body_jaxpr": funcs.name_of(body_func),
         "cond_nconsts": len(cond_consts), "body_nconsts": len(body_consts)})
    results = list(leaves)
    for i, out in zip(kept, outs):
        results[i] = out
    results = [as_operand(r) for r in results]
    return tree_util.tree_unflatten(body_traced.out_tree, results)


def _cond_reading(module, conds, traced, kept, n):
    """The loop condition reading only the ``kept`` carries. A shared one (see ``JaxprTrace.loop_conds``) is
    copied once per kept set, as JAX caches the DCE of a jaxpr too; one traced for this loop is rewired."""
    func = _func(module, traced)
    arg_order = kept + [n + j for j in range(len(traced.closure))]
    if traced.closure:
        return funcs.rewire(module, func, arg_order, [0], len(traced.closure))
    key = (traced.func_name, tuple(kept))
    if key not in conds:
        conds[key] = funcs.copy_function(module, func, arg_order, [0], 0, traced.func_name)
    return conds[key]


def _fori_cond(carry):
    return lt(carry[0], carry[1])


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``body_fun(i, x)`` for i from lower to upper: a ``scan`` when both bounds are known, else a
    ``while_loop`` (as ``jax.lax.fori_loop``)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower_dtype, upper_dtype = (dtypes.canonicalize_dtype(dtypes.dtype(x)) for x in (lower, upper))
    dtype = lower_dtype if lower_dtype == upper_dtype else None
    if dtype is None:
        if np.issubdtype(lower_dtype, np.signedinteger) and np.issubdtype(upper_dtype, np.signedinteger):
            lower_weak, upper_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
            if lower_weak and not upper_weak:
                dtype = upper_dtype
            elif upper_weak and not lower_weak:
                dtype = lower_dtype
        if dtype is None:
            raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                            f"{lower_dtype.name} and {upper_dtype.name}")
    if _is_concrete(lower) and _is_concrete(upper):
        lower_, upper_ = int(_concrete(lower)), int(_concrete(upper))
        (_, result), _ = scan(lambda carry, _: ((carry[0] + 1, body_fun(*carry)), None), (lower_, init_val), None,
                              length=max(upper_ - lower_, 0), unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    if lower_dtype != dtype:
        lower = convert_element_type(lower, dtype)
    if upper_dtype != dtype:
        upper = convert_element_type(upper, dtype)

    def while_body(carry):
        i, stop, x = carry
        return i + 1, stop, body_fun(i, x)
    _, _, result = while_loop(_fori_cond, while_body, (lower, upper, init_val))
    return result


def _is_concrete(x) -> bool:
    return not isinstance(x, core.Tracer) or x.concrete is not None


def _concrete(x):
    return x.concrete if isinstance(x, core.Tracer) else x


@_in_scope
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs``, stacking the ys (``jax.lax.scan``)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    module, host_operands = _module()
    init_leaves, init_tree = tree_util.tree_flatten(init)
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    length = _scan_length(xs_leaves, length)
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in _avals(xs_leaves)]
    n_carry = len(init_leaves)

    def trace_body(avals):
        """The traced body and its carry's structure (any pytree node with two children is a pair to JAX:
        the output keeps its type)."""
        args = (tree_util.tree_unflatten(init_tree, avals), tree_util.tree_unflatten(xs_tree, x_avals))
        traced = _trace_body(f, args, module, "scan", host_operands)
        children = tree_util.treedef_children(traced.out_tree)
        if len(children) != 2:
            shown = traced.out_tree.unflatten([_AvalText(a) for a in traced.out_avals])
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        return traced, children[0]

    init_avals = _avals(init_leaves)
    traced, carry_tree = trace_body(init_avals)
    if carry_tree.num_leaves != n_carry:
        _check_carry_type("scan body", f, init_tree, init_avals, carry_tree, traced.out_avals[:carry_tree.num_leaves])
    init_leaves, changed = _promote_weak(init_leaves, init_avals, traced.out_avals[:n_carry])
    if changed:
        _func(module, traced).erase()
        init_avals = _avals(init_leaves)
        traced, carry_tree = trace_body(init_avals)
    _check_carry_type("scan body", f, init_tree, init_avals, carry_tree, traced.out_avals[:n_carry])
    unroll = int(unroll) if not isinstance(unroll, bool) else (max(length, 1) if unroll else 1)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")

    func = _func(module, traced)
    consts = list(traced.closure)
    n_x, n_ys = len(xs_leaves), len(traced.out_avals) - n_carry
    fwd = _forwarding(func)
    move = [fwd[i] == len(consts) + i for i in range(n_carry)]
    moved = [i for i in range(n_carry) if move[i]]
    kept = [i for i in range(n_carry) if not move[i]]
    ext_fwd = [f - len(consts) - n_carry if f is not None and f >= len(consts) + n_carry else None
               for f in fwd[n_carry:]]
    keep_ys = [j for j in range(n_ys) if ext_fwd[j] is None]
    if moved or len(keep_ys) < n_ys:
        x_args = [n_carry + j for j in range(n_x)]
        const_args = [n_carry + n_x + j for j in range(len(consts))]
        func = funcs.rewire(module, func, kept + x_args + moved + const_args,
                            kept + [n_carry + j for j in keep_ys], len(moved) + len(consts))
    carry_avals = [traced.out_avals[i] for i in kept]
    ys_avals = [ShapedArray((length,) + traced.out_avals[n_carry + j].shape, traced.out_avals[n_carry + j].dtype,
                            traced.out_avals[n_carry + j].weak_type) for j in keep_ys]
    all_consts = [init_leaves[i] for i in moved] + consts
    outs = core.bind_with_bodies(
        "scan", module, [*all_consts, *[init_leaves[i] for i in kept], *xs_leaves], carry_avals + ys_avals,
        {"jaxpr": funcs.name_of(func), "length": length, "num_carry": len(kept), "num_consts": len(all_consts),
         "reverse": bool(reverse), "unroll": unroll})
    carry_out = [as_operand(x) for x in init_leaves]
    for i, out in zip(kept, outs[:len(kept)]):
        carry_out[i] = out
    ys_out = iter(outs[len(kept):])
    ys = [next(ys_out) if e is None else as_operand(xs_leaves[e]) for e in ext_fwd]
    return traced.out_tree.unflatten(carry_out + ys)


def _scan_length(xs_leaves, length):
    """JAX's ``_infer_scan_length``, down to its errors (a 0-d array's missing leading axis is an
    ``IndexError`` there too)."""
    if not all(hasattr(x, "shape") for x in xs_leaves):
        raise ValueError("scan got value with no leading axis to scan over: "
                         f"{', '.join(str(x) for x in xs_leaves if not hasattr(x, 'shape'))}.")
    lengths = [x.shape[0] for x in xs_leaves]
    if length is not None:
        if isinstance(length, core.Tracer) and length.concrete is None:
            raise errors.ConcretizationTypeError(
                f"Abstract tracer value encountered where concrete value is expected: {length._describe()}\n"
                "The `length` argument to `scan` expects a concrete `int` value. For scan-like iteration with a "
                f"dynamic length, use `while_loop` or `fori_loop`.{length._context_message()}\n")
        length = operator.index(_concrete(length))
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{lengths}.")
        return length
    if len(set(lengths)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: {', '.join(str(n) for n in lengths)}.")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def map(f, xs, *, batch_size=None):  # noqa: A001 (JAX's name)
    """``f`` applied to each slice of ``xs``'s leading axis, as a ``scan`` (``batch_size``: a scan of vmaps,
    the remainder one more vmap; ``0``: one vmap), in JAX's order of ops."""
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from irax.batching import vmap
    scan_xs, remainder_xs = _batch_and_remainder(xs, batch_size)
    scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)[1] if scan_xs is not None else None
    if scan_ys is None:
        return vmap(f)(remainder_xs)
    if remainder_xs is not None:
        remainder_ys = vmap(f)(remainder_xs)
        return tree_util.tree_map(lambda y, r: concatenate([_unbatch(y), r], 0), scan_ys, remainder_ys)
    return tree_util.tree_map(_unbatch, scan_ys)


def _unbatch(y):
    return y.reshape((-1,) + y.shape[2:])


def _batch_and_remainder(xs, batch_size):
    leaves, tree = tree_util.tree_flatten(xs)
    if not leaves:
        return xs, None
    n = leaves[0].shape[0]
    n_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    split = n_batches * batch_size
    if not n_batches:
        return None, tree.unflatten([x[split:] for x in leaves])
    pieces = [(x[:split].reshape((n_batches, batch_size) + x.shape[1:]), x[split:] if remainder else None)
              for x in leaves]
    return tree.unflatten([p[0] for p in pieces]), tree.unflatten([p[1] for p in pieces]) if remainder else None


# --- associative_scan ----------------------------------------------------------------------------------

def associative_scan(fn, elems, reverse=False, axis=0):
    """The prefix combinations of ``elems`` along ``axis`` under the associative ``fn``, in O(log n) rounds of
    slices, one ``fn`` call each, and interleaving pads (Blelloch's algorithm, as ``jax.lax.associative_scan``
    builds it: no primitive of its own)."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    elems_flat, tree = tree_util.tree_flatten(elems)
    if reverse:
        elems_flat = [rev(elem, [axis]) for elem in elems_flat]

    def combine(a_flat, b_flat):
        return tree_util.tree_leaves(fn(tree.unflatten(a_flat), tree.unflatten(b_flat)))

    axis = _canonical_axis(axis, elems_flat[0].ndim)
    num_elems = int(elems_flat[0].shape[axis])
    if not all(int(elem.shape[axis]) == num_elems for elem in elems_flat[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first dimension. (saw: "
                         f"{[elem.shape for elem in elems_flat]})")

    def scan_(elems):
        """The odd results are the scan of the pairwise-combined elems; the even ones each combine an odd
        result with the next element."""
        n = elems[0].shape[axis]
        if n < 2:
            return elems
        reduced = combine([slice_in_dim(e, 0, -1, stride=2, axis=axis) for e in elems],
                          [slice_in_dim(e, 1, None, stride=2, axis=axis) for e in elems])
        odd = scan_(reduced)
        firsts = [slice_in_dim(e, 0, -1, axis=axis) for e in odd] if n % 2 == 0 else odd
        even = combine(firsts, [slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        even = [concatenate([slice_in_dim(e, 0, 1, axis=axis), r], axis) for e, r in zip(elems, even)]
        return [_interleave(a, b, axis) for a, b in zip(even, odd)]

    scans = scan_(elems_flat)
    if reverse:
        scans = [rev(s, [axis]) for s in scans]
    return tree.unflatten(scans)


def _interleave(a, b, axis):
    """``a`` and ``b`` (as long, or one shorter) alternating along ``axis``: each padded with zeros between
    its elements, then summed (or-ed for bool)."""
    a_pad, b_pad = [(0, 0, 0)] * a.ndim, [(0, 0, 0)] * b.ndim
    same = a.shape[axis] == b.shape[axis]
    a_pad[axis] = (0, 1 if same else 0, 1)
    b_pad[axis] = (1, 0 if same else 1, 1)
    op = bitwise_or if a.dtype == np.bool_ else add
    return op(pad(a, np.array(0, a.dtype), a_pad), pad(b, np.array(0, b.dtype), b_pad))


# --- scatter_apply ------------------------------------------------------------------------------------------

@_in_scope
def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """``lax.scatter_apply``: ``func`` applied to ``operand`` where the indices point, once per index (twice where
    one comes twice), bound as JAX binds it: a ``scatter`` whose ``update_jaxpr`` is ``func`` traced on a scalar,
    beside an update it ignores. Not differentiable, as in JAX."""
    from . import full
    from ._slicing import _mode
    operand = as_operand(operand)
    module, host_operands = _module()
    scalar = ShapedArray((), operand.dtype)
    traced = _trace_body(lambda x, _: func(x), (scalar, scalar), module, "scatter_apply", host_operands)
    if traced.closure:
        raise NotImplementedError("lax.scatter_apply of a function that closes over arrays (JAX's update_consts)")
    unused = full(update_shape, 0, operand.dtype)
    (out,) = core.bind_with_bodies("scatter", module, [operand, as_operand(scatter_indices), unused],
                                   [ShapedArray(operand.shape, operand.dtype, weak_type=operand.weak_type)],
                                   {"dimension_numbers": dimension_numbers, "indices_are_sorted": indices_are_sorted,
                                    "unique_indices": unique_indices, "mode": _mode(mode, None),
                                    "update_jaxpr": funcs.name_of(_func(module, traced)), "transposed": None})
    return out


# --- reduce ---------------------------------------------------------------------------------------------------

@_in_scope
def general_reduce(flat_operands, flat_init_values, tree, computation, dimensions):
    """``lax.reduce`` of a computation that is no monoid, bound as JAX binds it: the ``reduce`` primitive, its
    ``jaxpr`` the computation traced on two scalars (pytrees like ``tree``) of the init values' types."""
    operands = [as_operand(x) for x in flat_operands]
    inits = [as_operand(x) for x in flat_init_values]
    dimensions = tuple(operator.index(d) for d in dimensions)
    n = len(operands)

    def body(*scalars):
        out = computation(tree_util.tree_unflatten(tree, scalars[:n]), tree_util.tree_unflatten(tree, scalars[n:]))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"reduction computation returned {out_tree}, expected the init values' {tree}")
        return out_leaves
    module, host_operands = _module()
    scalars = _avals(inits) * 2
    traced = _trace_body(body, tuple(scalars), module, "reduce", host_operands)
    if traced.closure:
        raise NotImplementedError("lax.reduce of a computation that closes over arrays (JAX's reduce consts)")
    avals = [ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in dimensions), x.dtype)
             for x in operands]
    printed = re.sub(r" at 0x[0-9a-fA-F]+", " at 0xXXXXXXXXXXXX", repr(computation))  # as JAX prints it
    return core.bind_with_bodies("reduce", module, operands + inits, avals, {
        "computation": printed, "dimensions": dimensions, "jaxpr": funcs.name_of(_func(module, traced))})


def platform_dependent(*args, default=None, **per_platform):
    """``per_platform[platform](*args)``, or ``default(*args)`` for a platform not named, as
    ``jax.lax.platform_dependent``: eagerly the branch of irax's platform runs; traced, every branch is, under a
    cond on ``platform_index`` that lowering resolves (JAX's equations)."""
    branches = []  # (platform names, branch), identical branches joined as JAX joins them
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        same = [names for names, b in branches if b == branch]
        if same:
            same[0].append(name)
        else:
            branches.append(([name], branch))
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    platforms = tuple(tuple(names) for names, _ in branches) + ((None,) if default is not None else ())
    functions = [branch for _, branch in branches] + ([default] if default is not None else [])
    if isinstance(core.current_trace(), core.EvalTrace):
        return functions[platform_branch(platforms)](*args)
    index = core.bind1("platform_index", platforms=platforms)
    return _switch(index, functions, args, _branch_names(len(functions)), "switch", branches_platforms=platforms)
