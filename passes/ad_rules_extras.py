"""JVP and transpose rules of ``tile`` (linear: its transpose sums the repetitions, JAX's ``_tile_transpose_rule``),
``unstack`` (linear: its transpose stacks),
``optimization_barrier`` (a barrier of the primals and one of the tangents; transposed, one of the cotangents,
zeros instantiated, as JAX's ``_opt_barrier_jvp`` and ``_opt_barrier_transpose``) and ``approx_top_k`` (the
tangent taken along the reduction axis at the indices, JAX's ``_approx_top_k_jvp``)."""
from __future__ import annotations

from irax.ir.gather_scatter import GatherDimensionNumbers, GatherScatterMode
from irax.ir.mlir import ir

from . import funcs
from .builder import Builder, aval
from .jvp import JVP_RULES, deflinear, defjvp_zero, differentiable, instantiate
from .transpose import SYMBOLIC_ZERO_CTS, TRANSPOSE_RULES

deflinear("tile")
deflinear("unstack")
defjvp_zero("mulhi")


def _tile_transpose(b, ct, x, *, reps):
    shape = x.aval.shape
    split = b.reshape(ct, new_sizes=tuple(k for pair in zip(reps, shape) for k in pair), dimensions=None)
    return [b.reduce_sum(split, axes=tuple(range(0, 2 * len(shape), 2)))]


def _unstack_transpose(b, cts, x, *, axis):
    """JAX's ``_unstack_transpose_rule``: the cotangents stacked, zeros instantiated."""
    cts = cts if isinstance(cts, list) else [cts]
    if all(ct is None for ct in cts):
        return [None]
    shape = tuple(d for i, d in enumerate(x.aval.shape) if i != axis)
    return [b.stack(*[b.full(shape, x.aval.dtype, 0) if ct is None else ct for ct in cts], axis=axis)]


def _optimization_barrier_jvp(b, primals, tangents):
    outs = b.primal()
    ts = [instantiate(b, t, p) for t, p in zip(tangents, primals) if differentiable(p)]
    barrier = iter(b.bind("optimization_barrier", *ts) if ts else [])
    return outs, [next(barrier) if differentiable(p) else None for p in primals]


def _optimization_barrier_transpose(b, cts, *operands):
    cts = cts if isinstance(cts, list) else [cts]
    full = [b.full(x.aval.shape, x.aval.dtype, 0) if ct is None else ct for ct, x in zip(cts, operands)]
    return b.bind("optimization_barrier", *full)


def _device_put_jvp(b, primals, tangents, *, devices, srcs, copy_semantics):
    """Tangents go where their primals go (JAX's ``deflinear2``), each as its primal's operand did."""
    outs = b.primal()
    kept = [i for i, (t, p) in enumerate(zip(tangents, primals)) if t is not None and differentiable(p)]
    if not kept:
        return outs, [None] * len(primals)
    moved = iter(b.bind("device_put", *[tangents[i] for i in kept], devices=tuple(devices[i] for i in kept),
                        srcs=tuple(srcs[i] for i in kept), copy_semantics=tuple(copy_semantics[i] for i in kept)))
    return outs, [next(moved) if i in kept else None for i in range(len(primals))]


def _device_put_transpose(b, cts, *operands, devices, srcs, copy_semantics):
    """Cotangents go back from each device to its source, copied (JAX's ``_device_put_transpose``)."""
    cts = cts if isinstance(cts, list) else [cts]
    kept = [i for i, ct in enumerate(cts) if ct is not None]
    if any(copy_semantics[i] == "ArrayCopySemantics.DONATE_INPUT" for i in kept):
        raise ValueError("donate=True is not allowed during tranposition of device_put. Please file an issue if you "
                         "want this to be supported.")
    if not kept:
        return [None] * len(cts)
    semantics = tuple("ArrayCopySemantics.ALWAYS_COPY" if copy_semantics[i] == "ArrayCopySemantics.REUSE_INPUT"
                      else copy_semantics[i] for i in kept)
    moved = iter(b.bind("device_put", *[cts[i] for i in kept], devices=tuple(srcs[i] for i in kept),
                        srcs=tuple(devices[i] for i in kept), copy_semantics=semantics))
    return [next(moved) if i in kept else None for i in range(len(cts))]


def _take_along_axis(b, x, indices, axis):
    """``jnp.take_along_axis`` of equal-rank arrays: indices wrapped once, out of bounds NaN."""
    shape = aval(indices).shape
    negative = b.lt(indices, 0)
    wrapped = b.select_n(negative, indices, b.add(indices, aval(x).shape[axis]))
    others = tuple(i for i in range(len(shape)) if i != axis)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                   operand_batching_dims=others, start_indices_batching_dims=others)
    return b.gather(x, b.reshape(wrapped, new_sizes=shape + (1,), dimensions=None), dimension_numbers=dnums,
                    slice_sizes=(1,) * len(shape), indices_are_sorted=False, unique_indices=False,
                    mode=GatherScatterMode.FILL_OR_DROP, fill_value=float("nan"))


def _approx_top_k_jvp(b, primals, tangents, **params):
    values, indices = b.bind("approx_top_k", *primals, **params)
    axis = params["reduction_dimension"] % len(aval(primals[0]).shape)
    gather = _staged(b, "take_along_axis", lambda inner, x, i: _take_along_axis(inner, x, i, axis),
                     [tangents[0], indices])
    return [values, indices], [gather, None]


def _staged(b, name, fn, operands):
    """``fn(builder, *operands)`` as JAX's rule writes it, inside a ``jit`` named ``name``: a private function of
    the module, called."""
    enclosing = b.ip.block.owner
    func, block = funcs.new_function(b.module, name, [v.type for v in operands], after=enclosing, loc=b.loc)
    func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    inner = Builder(ir.InsertionPoint(block), b.loc, b.module)
    funcs.finish(func, block, [fn(inner, *block.arguments)])
    return b.call(func, operands, name=name)[0]


TRANSPOSE_RULES.update({"tile": _tile_transpose, "unstack": _unstack_transpose,
                        "optimization_barrier": _optimization_barrier_transpose, "device_put": _device_put_transpose})
JVP_RULES.update({"optimization_barrier": _optimization_barrier_jvp, "approx_top_k": _approx_top_k_jvp,
                  "device_put": _device_put_jvp})
SYMBOLIC_ZERO_CTS.update({"optimization_barrier", "unstack", "device_put"})
