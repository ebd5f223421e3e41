"""``jit``, ``make_jaxpr``, ``eval_shape``: tracing a Python function into the jaxpr dialect."""
from __future__ import annotations

import contextlib
import functools
import itertools
import weakref

import numpy as np

from irax.ir import printer
from irax.ir.avals import ShapedArray
from irax.ir.jaxpr_view import view
from irax.ir.mlir import context, ir, module_body, scope

from . import core, dtypes, tree_util
from .array import Array
from .config import config
from .placement import committed_device


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (``jax.ShapeDtypeStruct``)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type=False, sharding=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        name = "float0" if self.dtype == dtypes.float0 else self.dtype.name
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape and self.dtype == other.dtype
                and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def abstractify(x, name="argument") -> ShapedArray:
    """The abstract value jit traces an argument with."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype))
    if type(x) in (bool, int, float, complex):
        return ShapedArray((), dtypes.canonicalize_dtype(dtypes.dtype(x)), type(x) is not bool)
    raise TypeError(f"Error interpreting {name}: {x!r} of type {type(x)} is not a valid JAX type")


class Traced:
    """A function traced into ``func_name`` of ``module``, with what calling it needs."""

    def __init__(self, module, func_name, closure, in_avals, out_avals, in_tree, out_tree, fun_name,
                 float0_outputs=None):
        self.module = module
        self.func_name = func_name
        self.closure = closure  # values of the trailing arguments: constants, or tracers of an outer trace
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.fun_name = fun_name
        self.float0_outputs = float0_outputs or {}  # output leaf index -> shape; float0 has no IR type
        self.donated = ()  # argument leaves whose buffers the computation may reuse (jit's donate_argnums)

    def unflatten(self, results):
        """The output pytree from the function's results, float0 outputs put back (as zeros)."""
        if self.float0_outputs:  # rare: keep the dispatch path to one unflatten
            results = list(results)
            for i, shape in sorted(self.float0_outputs.items()):
                results.insert(i, np.zeros(shape, dtypes.float0))
        return tree_util.tree_unflatten(self.out_tree, results)

    def out_structs(self):
        structs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in self.out_avals]
        for i, shape in sorted(self.float0_outputs.items()):
            structs.insert(i, ShapeDtypeStruct(shape, dtypes.float0))
        return tree_util.tree_unflatten(self.out_tree, structs)


def _fun_name(fun) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def trace(fun, args, kwargs, *, purpose, module=None, func_name="main", private=False, concrete=False,
          seed=(), embed_constants=False) -> Traced:
    """Traces ``fun(*args, **kwargs)`` (array leaves abstract) into a new ``func.func``; ``concrete`` tracers
    also carry the arguments' values where all of them have one. ``seed`` lists values to take as the first
    closed-over ones, in order. With ``embed_constants`` the function builds the arrays it closes over itself
    (as it is traced after its callers, which cannot pass them)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    in_avals = [abstractify(x, f"argument {i}") for i, x in enumerate(leaves)]
    module = module if module is not None else core.new_module()
    parent = core.current_trace()
    values = [_host_value(x) for x in leaves] if concrete else None
    if values is not None and any(v is None for v in values):
        values = None
    t = core.JaxprTrace(module, func_name, [a for a in in_avals], fun_name=_fun_name(fun), purpose=purpose,
                        parent=parent, concrete_args=values, embed_constants=embed_constants)
    if private:
        t.func.attributes["sym_visibility"] = ir.StringAttr.get("private", context=context())
    core.push_trace(t)
    with scope():
        try:
            t.seed_closure(seed)
            targs, tkwargs = tree_util.tree_unflatten(in_tree, t.in_tracers)
            out = fun(*targs, **tkwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            _check_outputs(fun, out_leaves)
            float0 = {i: np.shape(x) for i, x in enumerate(out_leaves) if getattr(x, "dtype", None) == dtypes.float0}
            out_avals = t.finish([x for i, x in enumerate(out_leaves) if i not in float0])
        finally:
            core.pop_trace(t)
    return Traced(module, func_name, t.closure, in_avals, out_avals, in_tree, out_tree, _fun_name(fun), float0)


def _host_value(x):
    if isinstance(x, core.Tracer):
        return x.concrete
    from .array import to_numpy
    return to_numpy(x)


def _check_outputs(fun, leaves):
    for leaf in leaves:
        if not (isinstance(leaf, (core.Tracer, Array, np.ndarray, np.generic))
                or type(leaf) in (bool, int, float, complex)):
            raise TypeError(f"function {_fun_name(fun)} returned a value of type {type(leaf)}, which is not a "
                            "valid JAX type")


class Jaxpr:
    """A jaxpr (a ``func.func`` of the dialect) seen the way ``jax.core.Jaxpr`` is."""

    def __init__(self, module, func_name):
        self.module = module
        self.func_name = func_name

    @functools.cached_property
    def _view(self):
        return view(_lookup(self.module, self.func_name))

    constvars = property(lambda self: self._view.constvars)
    invars = property(lambda self: self._view.invars)
    outvars = property(lambda self: self._view.outvars)
    eqns = property(lambda self: self._view.eqns)

    def __str__(self):
        return printer.jaxpr_text(self.module, self.func_name)

    __repr__ = __str__

    def pretty_print(self, **kwargs):
        return str(self)

    @property
    def mlir(self) -> str:
        """The dialect form of the whole module, with source locations."""
        return self.module.operation.get_asm(enable_debug_info=True)


class ClosedJaxpr:
    """What ``make_jaxpr`` returns: a jaxpr plus the values of its constvars."""

    def __init__(self, traced: Traced):
        self._traced = traced
        self.jaxpr = Jaxpr(traced.module, traced.func_name)
        self.consts = list(traced.closure)
        self.in_avals = list(traced.in_avals)
        self.out_avals = list(traced.out_avals)

    literals = property(lambda self: self.consts)

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **kwargs):
        return str(self)

    @property
    def eqns(self):
        return self.jaxpr.eqns


def _lookup(module, name):
    for op in module_body(module).operations:
        if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise KeyError(name)


def _split_static(fun, args, kwargs, static_argnums, static_argnames):
    if not static_argnums and not static_argnames:
        return args, kwargs, ()
    n = len(args)
    nums = {i if i >= 0 else i + n for i in static_argnums} & set(range(n))  # the others came by keyword
    statics = tuple((i, args[i]) for i in sorted(nums)) + tuple(
        (k, kwargs[k]) for k in sorted(static_argnames) if k in kwargs)
    for _, v in statics:
        try:
            hash(v)
        except TypeError:
            raise ValueError(f"Non-hashable static arguments are not supported. An error occurred while trying to "
                             f"hash an object of type {type(v)}, {v}. The error was:\nTypeError: unhashable type: "
                             f"'{type(v).__name__}'") from None
    dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    return dyn_args, dyn_kwargs, statics


def _with_statics(fun, statics, n_args_total):
    def call(*dyn_args, **dyn_kwargs):
        args = list(dyn_args)
        kwargs = dict(dyn_kwargs)
        for key, value in statics:
            if isinstance(key, int):
                args.insert(key, value)
            else:
                kwargs[key] = value
        return fun(*args, **kwargs)
    functools.update_wrapper(call, fun)
    return call


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """Returns a function that traces ``fun`` and gives its ``ClosedJaxpr`` (as ``jax.make_jaxpr``)."""
    static_argnums = _as_tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        dyn_args, dyn_kwargs, statics = _split_static(fun, args, kwargs, static_argnums, ())
        with contextlib.ExitStack() as names:  # axis_env binds names for collectives, as a vmap would
            from .batching import extend_axis_env
            for name, size in axis_env or ():
                names.enter_context(extend_axis_env(name, size))
            traced = trace(_with_statics(fun, statics, len(args)), dyn_args, dyn_kwargs, purpose="make_jaxpr")
        closed = ClosedJaxpr(traced)
        if return_shape:
            return closed, traced.out_structs()
        return closed
    return make


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    return tuple(x)


def _as_names(x):
    return (x,) if isinstance(x, str) else _as_tuple(x)


def eval_shape(fun, *args, **kwargs):
    """Shapes and dtypes of ``fun``'s outputs, found by tracing alone."""
    return trace(fun, args, kwargs, purpose="eval_shape").out_structs()


_callee_names = itertools.count()


_SCALAR_TYPES = (int, float, bool, complex)


def _flat_key(args):
    """The dispatch fast path's key: the signature of each positional argument that is one array or scalar
    (``None`` when one is not). NumPy arguments take it too: flattening and hashing a pytree key costs twice the
    whole IREE call of a small function."""
    key = [config._trace_context]
    for a in args:
        kind = type(a)
        if kind is Array:
            key.append(a._sig)
        elif kind is np.ndarray or isinstance(a, np.generic):
            key.append((a.shape, a.dtype))
        elif kind in _SCALAR_TYPES:
            key.append(kind)
        else:
            return None
    return tuple(key)


def _leaf_signature(x):
    sig = getattr(x, "_sig", None)
    if sig is not None:
        return sig
    if isinstance(x, (np.ndarray, np.generic)):
        return (np.shape(x), x.dtype)
    if isinstance(x, core.Tracer):
        return x.aval
    if type(x) in _SCALAR_TYPES:
        return _scalar_aval(type(x), config.jax_enable_x64)
    return type(x)


@functools.lru_cache(maxsize=None)
def _scalar_aval(kind, x64):
    """A Python scalar's aval (weakly typed, as JAX's): one jit traced for ``1.0`` and for a weak ``f32[]`` tracer
    is one trace, as JAX's cache keys them."""
    from .lax._scalars import as_operand
    return as_operand(kind(0)).aval


def _infer_argnums_and_argnames(fun, argnums, argnames, kind="static"):
    """As JAX: static (or donated) arguments given one way only are also static when passed the other way (by the
    signature)."""
    import inspect
    nums, names = _as_tuple(argnums), _as_names(argnames)
    try:
        parameters = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        for i in nums:
            if not -len(positional) <= i < len(positional):
                raise ValueError(f"Jitted function has {kind}_argnums={nums}, but only accepts "
                                 f"{len(positional)} positional arguments.")
    by_name = [p.kind == p.POSITIONAL_OR_KEYWORD for p in positional]
    if names and not nums:
        nums = tuple(i for i, p in enumerate(positional) if by_name[i] and p.name in names)
    elif nums and not names:
        wanted = {i % len(positional) for i in nums if -len(positional) <= i < len(positional)}  # else *args'
        names = tuple(p.name for i, p in enumerate(positional) if by_name[i] and i in wanted)
    return nums, names


def _leaf_names(fun, args, kwargs):
    """Each argument leaf's name for error messages, as JAX writes it: the parameter's name, then the leaf's key
    path within it (``params['w']``)."""
    import inspect
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, arg in enumerate(args):
        base = params[i] if i < len(params) else f"args[{i}]"
        names += [base + tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(arg)[0]]
    for key, arg in kwargs.items():
        names += [key + tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(arg)[0]]
    return names


_JITTED = weakref.WeakSet()
_CACHES = weakref.WeakKeyDictionary()  # function -> jit options -> its caches


def _caches_of(fun, options):
    """The trace and compiled-call caches of ``fun`` jitted with ``options``, shared by every ``jit`` of that
    function with those options as JAX's trace cache is: ``jit(f)(x)`` written in a loop traces and compiles
    once, and two ``jit(f)`` calls in one trace print one jaxpr."""
    try:
        per_fun = _CACHES.setdefault(fun, {})
    except TypeError:  # a callable that is not hashable or weakly referenceable: caches of its own
        return {}, {}, weakref.WeakKeyDictionary()
    return per_fun.setdefault(options, ({}, {}, weakref.WeakKeyDictionary()))


def clear_caches():
    """Forgets every jitted function's traces and compiled calls, and the compiled modules kept in memory (the
    persistent cache stays), as ``jax.clear_caches``."""
    for jitted in list(_JITTED):
        jitted.clear_cache()
    for per_options in list(_CACHES.values()):  # those of jits already gone too: their calls hold devices
        for caches in per_options.values():
            for cache in caches:
                cache.clear()
    from irax.backends import iree
    iree._memory_cache.clear()


def typeof(x):
    """The abstract value of ``x``: its ShapedArray (weakly typed for Python scalars)."""
    aval = getattr(x, "aval", None)
    if aval is None:
        from .lax._scalars import as_operand
        aval = as_operand(x).aval
    return aval


def named_call(fun, *, name=None):
    """``fun`` itself: JAX's name only labels the compiled program's metadata, never the jaxpr."""
    return fun


@contextlib.contextmanager
def named_scope(name: str):
    """A no-op scope: JAX's names only label the compiled program's metadata."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


class Wrapped:
    """What ``jit`` returns: a base class for ``isinstance`` checks, as ``jax.stages.Wrapped``."""


class JitWrapped(Wrapped):
    """A jitted function: traced and compiled once per argument signature."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(), donate_argnames=(),
                 inline=False, keep_unused=False, eager_inline=False):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums, self._static_argnames = _infer_argnums_and_argnames(fun, static_argnums,
                                                                                  static_argnames)
        self._donate_argnums, self._donate_argnames = _infer_argnums_and_argnames(fun, donate_argnums,
                                                                                  donate_argnames, "donate")
        both = set(self._static_argnames) & set(self._donate_argnames)
        if both:
            raise ValueError("static_argnames and donate_argnames cannot intersect. Argument names "
                             f"{both} appear in both static_argnames and donate_argnames")
        self._has_statics = bool(self._static_argnums or self._static_argnames)
        self._eager_inline = eager_inline
        self._dispatches_directly = not (eager_inline or self._has_statics or self._donate_argnums or
                                         self._donate_argnames)
        options = (self._static_argnums, self._static_argnames, self._donate_argnums, self._donate_argnames,
                   inline, keep_unused, eager_inline)
        # traces and compiled calls by key; by (x64, avals of positional Array arguments); by caller's module
        self._cache, self._flat_cache, self._nested = _caches_of(fun, options)
        _JITTED.add(self)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _key(self, args, kwargs):
        if self._has_statics:
            args, kwargs, statics = _split_static(self._fun, args, kwargs, self._static_argnums,
                                                  self._static_argnames)
        else:
            statics = ()
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        key = (treedef, tuple(map(_leaf_signature, leaves)), statics, config._trace_context)
        return key, leaves, args, kwargs, statics

    def __call__(self, *args, **kwargs):
        if self._dispatches_directly and not kwargs and len(core._state.stack) == 1 and not config.jax_disable_jit:
            entry = self._flat_cache.get(_flat_key(args))
            if entry is not None:  # the fast path: a call like an earlier one, outside any trace
                return entry.call_arrays(args)
        if config.jax_disable_jit:
            return self._fun(*args, **kwargs)
        if core.tracing() and not (core._state.compile_time_eval and core.evaluates_now(tree_util.tree_leaves(
                (args, kwargs)))):
            return self._call_under_trace(args, kwargs)
        if self._eager_inline:
            return self._fun(*args, **kwargs)
        if self._donate_argnums or self._donate_argnames:
            return self._call_donating(args, kwargs)
        flat_key = None if kwargs else _flat_key(args)  # calls seen before took the fast path above
        entry, leaves = self._lookup(args, kwargs)
        if not self._has_statics and flat_key is not None and len(leaves) == len(args):
            self._flat_cache[flat_key] = entry
        return entry(leaves)

    def _lookup(self, args, kwargs):
        key, leaves, dargs, dkwargs, statics = self._key(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile(dargs, dkwargs, statics)
        return entry, leaves

    def _call_donating(self, args, kwargs):
        """Runs the call (IREE writes outputs into the donated buffers it could pair with one), then deletes the
        donated arrays whose buffers were used, as JAX does."""
        entry, leaves = self._lookup(args, kwargs)
        out = entry(leaves)
        for i in entry.aliased:
            if isinstance(leaves[i], Array):
                leaves[i].delete()
        return out

    def _trace(self, args, kwargs, statics, **trace_kwargs):
        fun = _with_statics(self._fun, statics, len(args)) if statics else self._fun
        traced = trace(fun, args, kwargs, **trace_kwargs)
        if self._donate_argnums or self._donate_argnames:
            traced.donated = self._donated_leaves(args, kwargs, statics)
        return traced

    def _donated_leaves(self, args, kwargs, statics):
        """Flat indices of the leaves of the donated arguments (``args`` lacks the static ones)."""
        static_nums = {key for key, _ in statics if isinstance(key, int)}
        total = len(args) + len(static_nums)
        positions = [i for i in range(total) if i not in static_nums]
        donated_nums = {i % total if i < 0 else i for i in self._donate_argnums} if total else set()
        donated, start = [], 0
        for position, arg in zip(positions, args):
            n = len(tree_util.tree_leaves(arg))
            if position in donated_nums:
                donated += range(start, start + n)
            start += n
        for key in sorted(kwargs):
            n = len(tree_util.tree_leaves(kwargs[key]))
            if key in self._donate_argnames:
                donated += range(start, start + n)
            start += n
        return tuple(donated)

    def _compile(self, args, kwargs, statics):
        from .compiled import compile_traced
        leaves = tree_util.tree_leaves((args, kwargs))
        device = committed_device(leaves, _fun_name(self._fun), _leaf_names(self._fun, args, kwargs))
        call = compile_traced(self._trace(args, kwargs, statics, purpose="jit"), device)
        unusable = [call.in_avals[i] for i in call.traced.donated if i not in call.aliased]
        if unusable:
            import warnings
            warnings.warn("Some donated buffers were not usable: "
                          f"{', '.join(a.str_short(short_dtypes=False) for a in unusable)}.\nSee an explanation at "
                          "https://docs.jax.dev/en/latest/faq.html#buffer-donation.", stacklevel=5)
        return call

    def _call_under_trace(self, args, kwargs):
        """Nested jit: trace into a private function of the caller's module and call it (``jaxpr.pjit``)."""
        outer = core.current_trace()
        key, leaves, dargs, dkwargs, statics = self._key(args, kwargs)
        per_module = self._nested.setdefault(outer.module, {})
        traced = per_module.get(key)
        if traced is None:
            name = f"{_symbol_name(self._fun)}_{next(_callee_names)}"
            traced = per_module[key] = self._trace(dargs, dkwargs, statics, purpose="jit", module=outer.module,
                                                   func_name=name, private=True)
        operands = list(leaves) + list(traced.closure)
        return traced.unflatten(outer.call(traced, operands))

    def lower(self, *args, **kwargs):
        from .stages import Lowered
        _, _, dargs, dkwargs, statics = self._key(args, kwargs)
        return Lowered(self._trace(dargs, dkwargs, statics, purpose="jit"))

    def eval_shape(self, *args, **kwargs):
        return eval_shape(self._fun, *args, **kwargs)

    def trace(self, *args, **kwargs):
        from .stages import Traced
        _, _, dargs, dkwargs, statics = self._key(args, kwargs)
        return Traced(self._trace(dargs, dkwargs, statics, purpose="jit"))

    def clear_cache(self):
        """Forgets this function's traces and executables (the persistent compile cache keeps its entries)."""
        self._cache.clear()
        self._flat_cache.clear()
        self._nested.clear()


def staged(fun=None, *, static_argnums=(), static_argnames=()):
    """A jit used inside irax.numpy for JAX's jaxpr structure: a ``pjit`` under a trace,
    a plain Python call in eager mode (where every primitive already runs on NumPy)."""
    if fun is None:
        return functools.partial(staged, static_argnums=static_argnums, static_argnames=static_argnames)
    return JitWrapped(fun, static_argnums, static_argnames, eager_inline=True)


def _symbol_name(fun) -> str:
    name = _fun_name(fun)
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_")
    return cleaned or "fn"


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None, donate_argnames=None,
        keep_unused=False, device=None, backend=None, inline=False, abstracted_axes=None, in_shardings=None,
        out_shardings=None, compiler_options=None):
    """Compiles ``fun`` through StableHLO and IREE, once per input signature (as ``jax.jit``).

    Args:
      fun: the function to compile; its array arguments may be pytrees.
      static_argnums, static_argnames: arguments treated as compile-time constants (must be hashable).
      donate_argnums: arguments whose buffers the computation may reuse.

    Returns:
      A callable with the same signature, plus ``lower``, ``eval_shape`` and ``trace``.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    return JitWrapped(fun, static_argnums, static_argnames, donate_argnums, donate_argnames)
