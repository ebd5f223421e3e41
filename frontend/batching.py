"""``vmap`` over the ``jaxpr-batch`` pass.

``vmap(f)`` traces ``f`` on one example (the mapped axes removed from its
arguments; unmapped arguments passed as they are, so Python control flow on
them works), runs ``jaxpr-batch`` on the traced function, and replays the
batched function in the current trace: evaluated on NumPy when called eagerly,
emitted into the caller's jaxpr under ``jit``/``make_jaxpr``/``grad``.
While ``f`` is traced its axis name is bound, for the collectives in ``lax``.
"""
from __future__ import annotations

import collections
import contextlib
import functools
import inspect

from irax.ir.mlir import scope

from . import api, tree_util
from .ad import replay


# --- named axes ----------------------------------------------------------------------------------

_axis_env: list = []  # (name, size) of the vmaps whose functions are being traced, innermost last


@contextlib.contextmanager
def extend_axis_env(name, size):
    _axis_env.append((name, size))
    try:
        yield
    finally:
        _axis_env.pop()


def axis_size(name, primitive="psum") -> int:
    """The size of the named axis, NameError (as JAX's) when no enclosing vmap binds it."""
    for bound, size in reversed(_axis_env):
        if bound == name:
            return size
    raise NameError(f"Found an unbound axis name: {name}. To fix this, please call {primitive} under "
                    "`jax.shard_map`.")


# --- axis specs ----------------------------------------------------------------------------------

def _check_axes_type(name, axes, top_level):
    kinds = "an int, None, or a tuple of entries corresponding to the positional arguments passed to the function"
    if top_level and not (axes is None or type(axes) in (int, tuple)):
        raise TypeError(f"vmap {name} must be {kinds}, but got {axes}.")
    if not all(type(leaf) is int for leaf in tree_util.tree_leaves(axes)):
        raise TypeError(f"vmap {name} must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {axes}.")


def flatten_axes(name, treedef, axis_tree):
    """One axis (or None) per leaf of ``treedef``: ``axis_tree`` is a prefix of it, None its leaf too."""
    axis_leaves, axis_def = tree_util.tree_flatten(axis_tree, is_leaf=lambda x: x is None)
    dummy = tree_util.tree_unflatten(treedef, [object()] * treedef.num_leaves)
    try:
        subtrees = axis_def.flatten_up_to(dummy)
    except ValueError as e:
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding value; \n"
                         f"  Mismatch details (1 found):\n  {e}") from None
    return [axis for axis, sub in zip(axis_leaves, subtrees) for _ in range(len(tree_util.tree_leaves(sub)))]


def _mapped_axis_size(fun, in_tree, leaves, dims, requested):
    if not leaves:
        if requested is not None:
            return requested
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        raise ValueError("vmap wrapped function must be passed at least one argument containing an array or "
                         f"axis_size must be specified, got empty *args={args} and **kwargs={kwargs}")
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            sizes.append(None)
            continue
        shape = api.abstractify(x).shape
        if not -len(shape) <= d < len(shape):
            raise ValueError(f"vmap was requested to map its argument along axis {d}, which implies that its rank "
                             f"should be at least {d + 1 if d >= 0 else -d}, but is only {len(shape)} (its shape "
                             f"is {shape})")
        sizes.append(shape[d])
    distinct = {s for s in sizes if s is not None} | ({requested} if requested is not None else set())
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")
    raise ValueError(_inconsistent_sizes(fun, in_tree, leaves, dims, sizes, requested))


def _inconsistent_sizes(fun, in_tree, leaves, dims, sizes, requested) -> str:
    """JAX's message: each distinct size with an example argument that has it."""
    args, kwargs = tree_util.tree_unflatten(in_tree, list(leaves))
    try:
        parameters = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        parameters = None

    def arg_name(path):
        i = path[0].idx
        if parameters is None or i >= len(parameters):
            return f"args{tree_util.keystr(path)}"
        return f"argument {parameters[i]}" + tree_util.keystr(path[1:])

    def type_str(x):
        aval = api.abstractify(x)
        return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"

    paths = [f"{arg_name(p)} of type {type_str(x)}" for p, x in tree_util.tree_flatten_with_path(args)[0]]
    paths += [f"kwargs{tree_util.keystr(p)} of type {type_str(x)}"
              for p, x in tree_util.tree_flatten_with_path(kwargs)[0]]
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if requested is not None:
        msg.append(f"  * the `axis_size` argument was {requested};\n")
    for k, (size, count) in enumerate(counts):
        i = sizes.index(size)
        if count == 1:
            msg.append(f"  * one axis had size {size}: axis {dims[i]} of {paths[i]};\n")
        else:
            which = "most axes" if k == 0 else "some axes"
            msg.append(f"  * {which} ({count} of them) had size {size}, e.g. axis {dims[i]} of {paths[i]};\n")
    return "".join(msg)[:-2]


# --- vmap --------------------------------------------------------------------------------------------

def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """``fun`` mapped over an axis of its arguments, as ``jax.vmap``."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_type("in_axes", in_axes, True)
    _check_axes_type("out_axes", out_axes, False)

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                             "positional arguments passed to the function, but got "
                             f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        dims = _flatten_in_axes(in_tree, in_axes)
        size = _mapped_axis_size(fun, in_tree, leaves, dims, axis_size)
        return _batched_call(fun, leaves, in_tree, dims, size, out_axes, axis_name)

    return vmap_f


def _flatten_in_axes(in_tree, in_axes):
    args_tree, kwargs_tree = in_tree.children()
    dims = flatten_axes("vmap in_axes", args_tree, in_axes)
    return dims + [0] * kwargs_tree.num_leaves


def _batched_call(fun, leaves, in_tree, dims, size, out_axes, axis_name):
    avals = [api.abstractify(x) for x in leaves]
    dims = [None if d is None else d % len(a.shape) for d, a in zip(dims, avals)]
    mapped = [i for i, d in enumerate(dims) if d is not None]
    structs = [api.ShapeDtypeStruct(avals[i].shape[:dims[i]] + avals[i].shape[dims[i] + 1:], avals[i].dtype,
                                    weak_type=avals[i].weak_type) for i in mapped]

    def per_example(*mapped_leaves):
        full = list(leaves)
        for i, x in zip(mapped, mapped_leaves):
            full[i] = x
        args, kwargs = tree_util.tree_unflatten(in_tree, full)
        return fun(*args, **kwargs)
    per_example.__name__ = getattr(fun, "__name__", "fun")

    with extend_axis_env(axis_name, size):
        traced = api.trace(per_example, tuple(structs), {}, purpose="vmap")
    out_dims = flatten_axes("vmap out_axes", traced.out_tree, out_axes)
    from irax.passes import funcs
    from irax.passes.batch import SpecMatchError, batch_function
    with scope():
        source = funcs.lookup(traced.module, traced.func_name)
        try:
            batched, _ = batch_function(traced.module, source, [dims[i] for i in mapped] + [None] * len(traced.closure),
                                        size, "main_batched", out_dims=out_dims, axis_name=axis_name)
        except SpecMatchError as e:
            if axis_name is not None:
                raise ValueError(f"vmap has mapped output (axis_name={axis_name}) but out_axes is {e.dst}") from None
            path = tree_util.tree_flatten_with_path(tree_util.tree_unflatten(traced.out_tree, out_dims),
                                                     is_leaf=lambda x: x is None)[0]
            raise ValueError(f"at vmap out_axes{tree_util.keystr(path[e.leaf_index][0])}, got axis spec {e.dst} but "
                             f"output was batched on axis {e.src}") from None
    outs = replay(traced.module, batched, [leaves[i] for i in mapped] + list(traced.closure))
    return traced.unflatten(outs)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, backend=None,
         axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """``fun`` mapped over one device per element of an axis, as ``jax.pmap``. irax has one device per platform,
    so an axis fits only when it has at most that many elements; the map then is ``jit`` of ``vmap``, collectives
    over ``axis_name`` included."""
    from . import device
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    available = len(devices) if devices is not None else device.local_device_count(backend)

    def dynamic(args):
        dyn = [i for i in range(len(args)) if i not in static]
        axes = tuple(in_axes[i] for i in dyn) if isinstance(in_axes, (tuple, list)) else in_axes
        return dyn, axes

    def mapped(*args, **kwargs):
        dyn, axes = dynamic(args)

        def per_device(*dyn_args):
            full = list(args)
            for i, x in zip(dyn, dyn_args):
                full[i] = x
            return fun(*full, **kwargs)
        per_device.__name__ = getattr(fun, "__name__", "fun")
        return vmap(per_device, axes, out_axes, axis_name=axis_name, axis_size=axis_size)(*[args[i] for i in dyn])
    jitted = api.jit(mapped, static_argnums=static, donate_argnums=donate_argnums)

    @functools.wraps(fun)
    def pmap_f(*args, **kwargs):
        dyn, axes = dynamic(args)
        leaves, in_tree = tree_util.tree_flatten((tuple(args[i] for i in dyn), kwargs))
        size = _mapped_axis_size(fun, in_tree, leaves, _flatten_in_axes(in_tree, axes), axis_size)
        if size > available:
            raise ValueError(f"compiling computation that requires {size} logical devices, but only {available} "
                             "devices are available")
        return jitted(*args, **kwargs)
    return pmap_f
