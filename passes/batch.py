"""``jaxpr-batch``: vectorisation (``vmap``) as a rewrite of a function.

``@f(x) -> y`` becomes ``@f_batched(xs) -> ys``, where each argument either
carries the batch along one of its axes or is shared by every example. Each
value of the new function has a batch dimension (an axis index) or ``None``;
a primitive's batching rule (one table, ``BATCH_RULES``, ported from JAX's
``primitive_batchers``) gets its operands with their batch dimensions and
returns its results with theirs, moving axes only where the primitive needs
it. Ops whose operands are all unbatched are copied unchanged, so a shared
subcomputation stays computed once. Collectives over the mapped axis's name
(``psum``, ``axis_index`` ...) are the exception: their rules always run.
"""
from __future__ import annotations

import numpy as np

from irax.ir.control_flow import BODY_PARAMS, referenced_symbols
from irax.ir.dialect import decode_params
from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import ir
from irax.ir.ops import CALL_BODY_PARAMS, OPS

from . import funcs
from .builder import Builder, aval
from .registry import register_pass

BATCH_RULES: dict = {}
ZERO_IF_MAPPED = "zero_if_mapped"  # an out_dims entry: a batched result moves to 0, an unbatched one stays
AXIS_NAME_PARAMS: dict = {}  # collective primitive -> the param naming the axes it reduces or indexes


def canonicalize_axis(axis, ndim) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis % ndim) if axis < 0 else int(axis)


class BatchBuilder(Builder):
    """A builder that also knows the mapped axis: its size and name, and the op being batched."""

    def __init__(self, ip, loc, module, axis_size, axis_name, memo, op=None):
        super().__init__(ip, loc, module)
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.memo = memo  # (callee, dims) -> its batched function and result dims
        self.op = op
        self.primitive = op.name[len("jaxpr."):] if op is not None else None

    def same(self, *operands, **params) -> list:
        """The op being batched, bound again on new operands (with new params where given)."""
        return self.bind(self.primitive, *operands, **params)

    def moveaxis(self, x, src, dst):
        """``jnp.moveaxis`` as JAX's batching uses it: a transpose, nothing when ``src == dst``."""
        if src == dst:
            return x
        ndim = len(aval(x).shape)
        src, dst = canonicalize_axis(src, ndim), canonicalize_axis(dst, ndim)
        perm = [i for i in range(ndim) if i != src]
        perm.insert(dst, src)
        return self.transpose(x, permutation=tuple(perm))

    def broadcast(self, x, size, axis):
        """``x`` repeated ``size`` times along a new axis ``axis`` (JAX's ``batching.broadcast``)."""
        shape = list(aval(x).shape)
        shape.insert(axis, size)
        return self.broadcast_in_dim(x, shape=tuple(shape),
                                     broadcast_dimensions=tuple(np.delete(np.arange(len(shape)), axis)))

    def bdim_at_front(self, x, bdim, size=None):
        if bdim is None:
            return self.broadcast(x, self.axis_size if size is None else size, 0)
        return self.moveaxis(x, bdim, 0)

    def expand_dims(self, x, dimensions):
        """``lax.expand_dims``: size-1 axes inserted at ``dimensions`` (of the result)."""
        shape = list(aval(x).shape)
        ndim_out = len(shape) + len(dimensions)
        dims = sorted(canonicalize_axis(d, ndim_out) for d in dimensions)
        for d in dims:
            shape.insert(d, 1)
        return self.broadcast_in_dim(x, shape=tuple(shape),
                                     broadcast_dimensions=tuple(i for i in range(ndim_out) if i not in dims))

    def matchaxis(self, x, src, dst):
        """``x`` batched at ``src`` moved to ``dst`` (broadcast when ``src`` is None)."""
        if src == dst:
            return x
        if src is None:
            return self.broadcast(x, self.axis_size, canonicalize_axis(dst, len(aval(x).shape) + 1))
        if dst is None:
            raise SpecMatchError(src, dst)
        return self.moveaxis(x, src, dst)


class SpecMatchError(ValueError):
    """A batched output asked to be unbatched (``out_axes=None``)."""

    def __init__(self, src, dst):
        super().__init__(f"output batched on axis {src} cannot be returned with out_axes {dst}")
        self.src, self.dst = src, dst


# --- registrars (as JAX's defvectorized, defbroadcasting, defreducer) ---------------------------

def defvectorized(*names):
    """Elementwise ops of one operand: the batch dimension passes through."""
    for name in names:
        BATCH_RULES[name] = _vectorized


def _vectorized(b, args, dims, **params):
    return b.same(*args, **params), dims[0]


def defbroadcasting(*names):
    """Elementwise ops of several operands: an unbatched operand gets a size-1 axis, not a copy."""
    for name in names:
        BATCH_RULES[name] = _broadcasting


def _broadcasting(b, args, dims, **params):
    shape, dim = next((aval(x).shape, d) for x, d in zip(args, dims) if d is not None)
    if all(aval(x).shape == shape and d == dim for x, d in zip(args, dims) if aval(x).shape != ()):
        return b.same(*args, **params), dim
    args = [b.bdim_at_front(x, d, 1) if aval(x).shape != () else x for x, d in zip(args, dims)]
    ndim = max(len(aval(x).shape) for x in args)
    args = [x if d is None or ndim == len(aval(x).shape) else b.expand_dims(x, tuple(range(len(aval(x).shape), ndim)))
            for x, d in zip(args, dims)]
    return b.same(*args, **params), 0


def defreducer(*names):
    """Reductions over ``axes``: the axes shift past the batch dimension."""
    for name in names:
        BATCH_RULES[name] = _reducer


def _reducer(b, args, dims, *, axes, **params):
    (operand,), (bdim,) = args, dims
    axes = tuple(np.where(np.less(axes, bdim), axes, np.add(axes, 1)))
    kept = list(np.delete(np.arange(len(aval(operand).shape)), axes))
    return b.same(operand, axes=axes, **params), int(kept.index(bdim))


# --- the pass ----------------------------------------------------------------------------------

def _parse_axes(text) -> list:
    axes = []
    for item in str(text).split(","):
        item = item.strip().lower()
        axes.append(None if item == "none" else int(item))
    return axes


@register_pass("jaxpr-batch", "Vectorisation (vmap): @f(x) -> y becomes @f_batched(xs) -> ys, mapped over axis "
               "in_axes[i] of argument i (none: shared), results batched along out_axes")
def batch_pass(module, func="main", in_axes="0", axis_size=None, out_axes="0", axis_name=None):
    source = funcs.lookup(module, func)
    args = funcs.arguments(source)
    n_params = len(args) - num_consts(source)
    dims = _parse_axes(in_axes)
    if len(dims) == 1:
        dims = dims * n_params
    if len(dims) != n_params:
        raise ValueError(f"jaxpr-batch: in_axes names {len(dims)} axes but @{func} has {n_params} arguments")
    dims = [None if d is None else canonicalize_axis(d, len(aval(a).shape) + 1) for d, a in zip(dims, args)]
    if axis_size is None:
        raise ValueError("jaxpr-batch: give axis_size, the size of the mapped axis")
    out = _parse_axes(out_axes)
    batch_function(module, source, dims + [None] * num_consts(source), int(axis_size), f"{func}_batched",
                   out_dims=out, axis_name=axis_name)


def batched_type(t, dim, size):
    if dim is None:
        return t
    shape = list(ir.RankedTensorType(t).shape)
    shape.insert(dim, size)
    return ir.RankedTensorType.get(shape, ir.RankedTensorType(t).element_type)


def batch_function(module, source, in_dims, axis_size, name, *, out_dims=None, axis_name=None, memo=None):
    """Builds ``@name``, ``source`` with argument i batched along ``in_dims[i]`` (None: shared); returns the
    new function and its results' batch dimensions.

    ``in_dims`` counts ``source``'s constants too (they are usually None). ``out_dims`` (a list, or one
    entry for all results) moves each result's batch dimension there, broadcasting unbatched results; an
    entry None requires an unbatched result (``SpecMatchError`` otherwise). Without it, results keep the
    dimensions their rules gave them.
    """
    memo = {} if memo is None else memo
    args = funcs.arguments(source)
    new, block = funcs.new_function(module, name, [batched_type(a.type, d, axis_size) for a, d in zip(args, in_dims)],
                                    after=source, loc=source.location)
    env = dict(zip(args, block.arguments))
    dims = dict(zip(block.arguments, in_dims))
    ip = ir.InsertionPoint(block)
    for op in body_ops(source):
        if op.name == "func.return":
            outs = [env[v] for v in op.operands]
            break
        operands = [env[v] for v in op.operands]
        operand_dims = [dims[v] for v in operands]
        primitive = op.name[len("jaxpr."):]
        if all(d is None for d in operand_dims) and not _names_axis(module, op, axis_name, memo):
            clone = op.clone(ip=ip)
            for i, v in enumerate(operands):
                clone.operands[i] = v
            results, result_dims = list(clone.results), [None] * len(op.results)
        else:
            rule = BATCH_RULES.get(primitive)
            if rule is None:
                raise NotImplementedError(f"Batching rule for '{primitive}' not implemented")
            b = BatchBuilder(ip, op.location, module, axis_size, axis_name, memo, op)
            results, result_dims = rule(b, operands, operand_dims, **decode_params(OPS[primitive], op))
            if not isinstance(result_dims, (list, tuple)):  # a rule of a one-result primitive
                results, result_dims = (results if isinstance(results, list) else [results]), [result_dims]
        env.update(zip(op.results, results))
        dims.update(zip(results, result_dims))
    out_value_dims = [dims[v] for v in outs]
    if out_dims is not None:
        wanted = out_dims * len(outs) if len(out_dims) == 1 else out_dims
        wanted = [(None if d is None else 0) if w == ZERO_IF_MAPPED else w for w, d in zip(wanted, out_value_dims)]
        b = BatchBuilder(ip, source.location, module, axis_size, axis_name, memo)
        for i, (v, d, w) in enumerate(zip(outs, out_value_dims, wanted)):
            try:
                outs[i] = b.matchaxis(v, d, w)
            except SpecMatchError as e:
                e.leaf_index = i
                raise
        out_value_dims = [None if w is None else canonicalize_axis(w, len(aval(v).shape))
                          for v, w in zip(outs, wanted)]
    funcs.finish(new, block, outs, n_consts=num_consts(source))
    return new, out_value_dims


def _names_axis(module, op, axis_name, memo) -> bool:
    """Whether ``op`` is a collective over ``axis_name``, or calls or loops over a function containing one
    (which must then be batched even when no operand is). The answer for each callee is kept in ``memo``."""
    if axis_name is None:
        return False
    primitive = op.name[len("jaxpr."):]
    param = AXIS_NAME_PARAMS.get(primitive)
    if param is not None:
        names = decode_params(OPS[primitive], op)[param]
        return axis_name in (names if isinstance(names, tuple) else (names,))
    if primitive not in CALL_BODY_PARAMS and primitive not in BODY_PARAMS:
        return False
    for callee in referenced_symbols(op):
        key = ("names_axis", callee)
        if key not in memo:
            memo[key] = False  # a callee reached again while being searched adds nothing
            memo[key] = any(_names_axis(module, inner, axis_name, memo)
                            for inner in body_ops(funcs.lookup(module, callee)))
        if memo[key]:
            return True
    return False


def batch_call(b, callee, args, dims, out_dims=None):
    """``callee`` batched for operands batched along ``dims``, memoised per (callee, dims, out_dims)."""
    key = (funcs.name_of(callee), tuple(dims), None if out_dims is None else tuple(out_dims))
    if key not in b.memo:
        b.memo[key] = batch_function(b.module, callee, list(dims), b.axis_size, f"{key[0]}_batched",
                                     out_dims=out_dims, axis_name=b.axis_name, memo=b.memo)
    return b.memo[key]


from . import batch_collectives, batch_control_flow, batch_custom, batch_rules  # noqa: E402,F401  (fill BATCH_RULES)
