"""Lowering of ``cond``, ``while`` and ``scan`` to ``stablehlo.case`` and ``stablehlo.while``, so that a loop runs
on the device with no host round trip per step. Each region calls the body function (``func.call``), which IREE
inlines; the regions read the loop's constants from above, as StableHLO allows.

A scan is a while loop over a counter, as XLA lowers it: step i slices its xs at i (``length - 1 - i`` when
reversed) and writes its ys there, into buffers that start as zeros.
"""
from __future__ import annotations

import numpy as np

from irax.ir import control_flow as CF
from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.extras import platform_branch
from irax.ir.jaxpr_view import num_consts
from irax.ir.mlir import ir
from irax.ir.params import dense_attr

from .to_stablehlo import lowering

_I32 = np.dtype(np.int32)


class _Region:
    """Emits ops into one block of a region op (or, with no region, in front of the op being lowered)."""

    def __init__(self, ctx, region=None, arg_types=()):
        self.ctx = ctx
        if region is None:
            self.ip, self.args = ctx.ip, []
            return
        with ctx.loc:
            block = region.blocks.append(*arg_types)
        self.ip = ir.InsertionPoint(block)
        self.args = list(block.arguments)

    def emit(self, name, operands, result_types, attributes=None):
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attributes or {}, loc=self.ctx.loc, ip=self.ip).results

    def call(self, name, operands):
        return _call(self.emit, self.ctx.symbols, name, operands)

    def constant(self, value, dtype):
        t = tensor_type((), np.dtype(dtype))
        return self.emit("stablehlo.constant", [], [t], {"value": dense_attr(np.array(value, dtype), t)})[0]

    def below(self, counter, stop):
        """Whether the int32 ``counter`` is less than ``stop``."""
        less = ir.Attribute.parse("#stablehlo<comparison_direction LT>")
        return self.emit("stablehlo.compare", [counter, self.constant(stop, _I32)],
                         [tensor_type((), np.dtype(np.bool_))], {"comparison_direction": less})[0]

    def any(self, pred):
        """Whether any element of the bool array ``pred`` is true."""
        t = tensor_type((), np.dtype(np.bool_))
        op = ir.Operation.create("stablehlo.reduce", results=[t], operands=[pred, self.constant(False, np.bool_)],
                                 attributes={"dimensions": ir.DenseI64ArrayAttr.get(
                                     list(range(len(aval_of_type(pred.type).shape))), context=self.ctx.loc.context)},
                                 regions=1, loc=self.ctx.loc, ip=self.ip)
        reducer = _Region(self.ctx, op.regions[0], [t, t])
        reducer.finish(reducer.emit("stablehlo.or", reducer.args, [t]))
        return op.results[0]

    def select(self, pred, on_true, on_false):
        """``on_true`` where ``pred`` (whose shape prefixes theirs) is true, else ``on_false``."""
        shape = aval_of_type(on_true.type).shape
        mask = self.emit("stablehlo.broadcast_in_dim", [pred], [tensor_type(shape, np.dtype(np.bool_))],
                         {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(
                             list(range(len(aval_of_type(pred.type).shape))), context=self.ctx.loc.context)})[0]
        return self.emit("stablehlo.select", [mask, on_true, on_false], [on_true.type])[0]

    def finish(self, values):
        self.emit("stablehlo.return", values, [])


@lowering("cond")
def _cond(ctx, index, *operands, branches, branches_platforms):
    """A ``stablehlo.case``; a cond on the platform (``lax.platform_dependent``) is its platform's branch alone,
    as JAX lowers it."""
    args = CF.branch_operands(operands, num_consts(ctx.symbols[branches[0]]))
    if branches_platforms is not None:
        return _call(ctx.emit, ctx.symbols, branches[platform_branch(branches_platforms)], args)
    op = ctx.emit("stablehlo.case", [index], [r.type for r in ctx.op.results], regions=len(branches))
    for region, name in zip(op.regions, branches):
        block = _Region(ctx, region, [])
        block.finish(block.call(name, args))
    return list(op.results)


@lowering("while")
def _while(ctx, *operands, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """A loop of scalars runs inside one dispatch (see ``_in_one_dispatch``). Any other is a rotated loop: the
    predicate is computed after each step and carried, so a trip evaluates the body and the predicate together;
    a small body runs several guarded steps per trip (see ``_speculative_steps``)."""
    cond_consts, body_consts, carry = CF.split_while(operands, cond_nconsts, body_nconsts)
    if _scalar_elementwise(ctx, [body_jaxpr, cond_jaxpr], list(carry) + cond_consts + body_consts):
        return [_mapped_while(ctx, cond_jaxpr, body_jaxpr, carry, cond_consts, body_consts, j)
                for j in range(len(carry))]
    (pred,) = _call(ctx.emit, ctx.symbols, cond_jaxpr, list(carry) + cond_consts)
    batched = bool(aval_of_type(pred.type).shape)
    state = [pred] + list(carry)
    types = [v.type for v in state]
    op = ctx.emit("stablehlo.while", state, types, regions=2)
    cond = _Region(ctx, op.regions[0], types)
    cond.finish([cond.any(cond.args[0])] if batched else [cond.args[0]])
    body = _Region(ctx, op.regions[1], types)
    entry_pred, carry = body.args[0], body.args[1:]
    if not batched:
        # the carried predicate and the carries the body never reads (only the predicate or the results do) go
        # through a barrier, which keeps their block arguments used: once canonicalization drops an unused one
        # (an unread carry, or the predicate when the step's new predicate folds to a constant), IREE's stream
        # conversion of the scf.while fails ("region branch point has 6 operands, but region successor needs 8
        # inputs") or crashes. The carries the body reads stay out: with them and the predicate in the barrier,
        # IREE left an integer carry uninitialized.
        unread = _unread_args(ctx.symbols, body_jaxpr, len(carry))
        kept = [entry_pred] + [carry[i] for i in unread]
        entry_pred, *kept = body.emit("stablehlo.optimization_barrier", kept, [v.type for v in kept])
        carry = list(carry)
        for i, v in zip(unread, kept):
            carry[i] = v
    pred = entry_pred
    for k in range(_speculative_steps(ctx, body_jaxpr, cond_jaxpr, carry)):
        outs = body.call(body_jaxpr, list(carry) + body_consts)
        # an element (or, past the first step, the whole loop) whose predicate is false keeps its carry, as JAX's
        # lowering of a batched predicate does
        carry = [body.select(pred, new, old) for new, old in zip(outs, carry)] if batched or k else outs
        (pred,) = body.call(cond_jaxpr, list(carry) + cond_consts)
    if not batched:
        # true and pred is pred, but the use keeps the predicate's barrier (above), and so the carried predicate,
        # in the loop's body
        pred = body.emit("stablehlo.and", [entry_pred, pred], [pred.type])[0]
    body.finish([pred] + list(carry))
    return list(op.results)[1:]


_SPECULATIVE_CARRY = 4096
_SPECULATIVE_STEPS = 16
_SPECULATIVE_OPS = 200


def _speculative_steps(ctx, body_jaxpr, cond_jaxpr, carry) -> int:
    """Steps per trip of a while loop. A trip costs a host round trip to read the predicate (4-7 us, where a
    step of a scalar loop is a few ns), so a loop with a small carry and body runs several steps per
    trip, each past the first kept only while the predicate holds. The extra steps compute values that are
    dropped, which is harmless for ops without side effects, unless a step itself loops: a nested while on a
    finished state might never end, so such bodies take one step per trip. The steps hold ``_SPECULATIVE_OPS`` ops
    in all: IREE compiles each anew (random.gamma's loops compile 1.7x slower with 400, and run no faster)."""
    if sum(aval_of_type(v.type).size for v in carry) > _SPECULATIVE_CARRY:
        return 1
    seen = set()
    size = _size(ctx.symbols, body_jaxpr, seen) + _size(ctx.symbols, cond_jaxpr, seen)
    if any(_has_while(ctx.symbols[name]) for name in seen if name in ctx.symbols):
        return 1
    return max(1, min(_SPECULATIVE_STEPS, _SPECULATIVE_OPS // max(size, 1)))


# Ops a loop of scalars may run inside one stablehlo.map: elementwise, in the jaxpr dialect or lowered.
_ELEMENTWISE = {f"jaxpr.{name}" for name in (
    "add", "sub", "mul", "div", "rem", "pow", "atan2", "neg", "abs", "max", "min", "sign", "exp", "exp2", "expm1",
    "log", "log1p", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "floor", "ceil", "round",
    "integer_pow", "square", "lt", "le", "gt", "ge", "eq", "ne", "eq_to", "le_to", "lt_to", "and", "or", "not",
    "select_n", "convert_element_type", "clamp", "stop_gradient", "copy", "is_finite", "pjit", "literal", "cond")}
_ELEMENTWISE |= {f"stablehlo.{name}" for name in (
    "add", "subtract", "multiply", "divide", "remainder", "atan2", "negate", "abs", "maximum", "minimum", "sign",
    "exponential", "exponential_minus_one", "log", "log_plus_one", "sqrt", "rsqrt", "cbrt", "tanh", "logistic",
    "sine", "cosine", "floor", "ceil", "round_nearest_even", "round_nearest_afz", "power", "compare", "and", "or",
    "not", "select", "convert", "clamp", "constant", "is_finite", "broadcast_in_dim", "reshape", "case", "return")}
_ELEMENTWISE |= {"func.func", "func.call", "func.return"}


def _scalar_elementwise(ctx, names, values) -> bool:
    """Whether a while loop's carry and constants are scalars of real or bool type and its bodies only
    elementwise ops (so that they run inside a ``stablehlo.map``)."""
    for v in values:
        aval = aval_of_type(v.type)
        if aval.shape or aval.dtype.kind == "c":
            return False
    seen, ok = set(), True

    def visit(op):
        nonlocal ok
        ok = ok and op.name in _ELEMENTWISE
        return ir.WalkResult.ADVANCE
    for name in names:
        _size(ctx.symbols, name, seen)
    for name in seen:
        if name in ctx.symbols:
            ctx.symbols[name].operation.walk(visit)
    return ok


def _mapped_while(ctx, cond_jaxpr, body_jaxpr, carry, cond_consts, body_consts, j):
    m = len(cond_consts)
    return _in_one_dispatch(ctx, list(carry), list(cond_consts) + list(body_consts),
                            lambda r, values, consts: r.call(cond_jaxpr, values + consts[:m])[0],
                            lambda r, values, consts: r.call(body_jaxpr, values + consts[m:]), j)


def _mapped_scan(ctx, jaxpr, length, consts, init, j):
    """A scan of scalar carries and nothing else, as ``fori_loop`` with static bounds makes: a counted loop in
    one dispatch."""
    def step(r, values, consts):
        counter = r.emit("stablehlo.add", [values[0], r.constant(1, _I32)], [values[0].type])[0]
        return [counter] + r.call(jaxpr, values[1:] + consts)  # a body takes its constants last
    return _in_one_dispatch(ctx, [ctx.constant(0, _I32)] + list(init), list(consts),
                            lambda r, values, _: r.below(values[0], length), step, j + 1)


def _in_one_dispatch(ctx, init, consts, predicate, step, j):
    """The ``j``-th final value of a loop over scalars, from a ``stablehlo.map`` that runs the whole loop: IREE
    makes it one dispatch, where a loop of its own costs a host round trip per trip to read the predicate (~4 us:
    the Newton bench ran at 1.7x JAX's time with 32 steps a trip, a 1000-step fori_loop at 33x). Unused results'
    maps are dropped as dead code. Each value travels in the loop as the first of two elements that the step
    updates in place: IREE bufferizes a loop inside a dispatch only when the values it passes on are its
    arguments updated ("Condition arg #0 is not equivalent to the corresponding iter bbArg" for plain scalars),
    and an update of a whole one-element vector folds to a plain value. ``predicate`` and ``step`` emit into a
    region, given the loop's values and the constants as scalars."""
    operands = init + consts
    n = len(init)
    op = ir.Operation.create("stablehlo.map", results=[init[j].type], operands=operands,
                             attributes={"dimensions": ir.DenseI64ArrayAttr.get([], context=ctx.loc.context)},
                             regions=1, loc=ctx.loc, ip=ctx.ip)
    region = _Region(ctx, op.regions[0], [v.type for v in operands])
    pairs = [tensor_type((2,), aval_of_type(v.type).dtype) for v in init]
    starts = [region.emit("stablehlo.broadcast_in_dim", [v], [t],
                          {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([], context=ctx.loc.context)})[0]
              for v, t in zip(region.args[:n], pairs)]
    loop = ir.Operation.create("stablehlo.while", results=pairs, operands=starts, regions=2, loc=ctx.loc,
                               ip=region.ip)
    cond = _Region(ctx, loop.regions[0], pairs)
    cond.finish([predicate(cond, [_slice_at(cond, v, cond.constant(0, _I32)) for v in cond.args],
                           region.args[n:])])
    body = _Region(ctx, loop.regions[1], pairs)
    zero = body.constant(0, _I32)
    new = step(body, [_slice_at(body, v, zero) for v in body.args], region.args[n:])
    body.finish([_update_at(body, pair, v, zero) for pair, v in zip(body.args, new)])
    region.finish([_slice_at(region, loop.results[j], region.constant(0, _I32))])
    return op.results[0]


def _has_while(func) -> bool:
    found = False

    def visit(op):
        nonlocal found
        found = found or op.name in ("jaxpr.while", "stablehlo.while")
        return ir.WalkResult.ADVANCE
    func.operation.walk(visit)
    return found


def _unread_args(symbols, name, n) -> list:
    """The first ``n`` arguments of function ``name`` that nothing in it reads but calls (which inlining may
    show to drop them too)."""
    args = list(symbols[name].regions[0].blocks[0].arguments)[:n]
    return [i for i, arg in enumerate(args) if all(u.owner.name == "func.call" for u in arg.uses)]


def _call(emit, symbols, name, operands):
    """The results of a ``func.call`` of ``name``, emitted by ``emit``."""
    results = ir.FunctionType(ir.TypeAttr(symbols[name].attributes["function_type"]).value).results
    call = emit("func.call", operands, results, {"callee": ir.FlatSymbolRefAttr.get(name)})
    return list(call.results if isinstance(call, ir.Operation) else call)


@lowering("scan")
def _scan(ctx, *operands, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, init, xs = CF.split_scan(operands, num_consts, num_carry)
    ys_types = [r.type for r in ctx.op.results[num_carry:]]
    ys = [ctx.broadcast(ctx.constant(0, aval_of_type(t).dtype), aval_of_type(t).shape) for t in ys_types]
    if length == 0:  # no step runs; a loop would still be checked, and slicing an empty xs is ill-typed
        return list(init) + ys
    if not xs and not ys and _scalar_elementwise(ctx, [jaxpr], list(consts) + list(init)):
        return [_mapped_scan(ctx, jaxpr, length, consts, init, j) for j in range(num_carry)]
    steps = _steps_per_trip(length, max(unroll, _auto_unroll(ctx, jaxpr)))
    scan = _ScanSteps(jaxpr, length, reverse, num_carry, consts, xs)
    state = list(init) + ys
    main = length - length % steps
    if main:
        state = scan.loop(ctx, main, steps, state)
    here = _Region(ctx)
    for i in range(main, length):
        carry, ys = scan.step(here, here.constant(i, _I32), state[:num_carry], state[num_carry:])
        state = list(carry) + list(ys)
    return state


_UNROLL_OPS = 400
_MAX_UNROLL = 16


def _auto_unroll(ctx, name) -> int:
    """Steps per loop trip. Each trip costs a host round trip to read the predicate, and IREE copies the whole
    carried ys buffers once per trip (it packs them with the carry into one allocation): on the RNN bench, 20
    steps per trip run the forward 3x and the gradient 5x faster than one. Bodies are inlined once per step, so
    the count is bounded by the body's size to keep compile times in check."""
    return max(1, min(_MAX_UNROLL, _UNROLL_OPS // max(_size(ctx.symbols, name, set()), 1)))


def _steps_per_trip(length, most) -> int:
    """The step count up to ``most`` that needs the fewest trips plus steps left over (run after the loop)."""
    return min(range(1, min(length, most) + 1), key=lambda k: (length // k + length % k, k))


def _size(symbols, name, seen) -> int:
    """Ops in function ``name`` and every function it reaches (once each)."""
    if name in seen or name not in symbols:
        return 0
    seen.add(name)
    count = 0

    def visit(op):
        nonlocal count
        count += 1
        for callee in CF.referenced_symbols(op):
            count += _size(symbols, callee, seen)
        return ir.WalkResult.ADVANCE
    symbols[name].operation.walk(visit)
    return count


class _ScanSteps:
    """A scan as a while loop over a counter, ``steps`` scan steps per trip."""

    def __init__(self, jaxpr, length, reverse, num_carry, consts, xs):
        self.jaxpr, self.length, self.reverse, self.num_carry = jaxpr, length, reverse, num_carry
        self.consts, self.xs = list(consts), list(xs)

    def loop(self, ctx, stop, steps, state):
        """Runs the first ``stop`` steps on ``state`` (carry then ys buffers), ``steps`` per trip."""
        state = [ctx.constant(0, _I32)] + list(state)
        types = [v.type for v in state]
        op = ctx.emit("stablehlo.while", state, types, regions=2)

        cond = _Region(ctx, op.regions[0], types)
        cond.finish([cond.below(cond.args[0], stop)])

        body = _Region(ctx, op.regions[1], types)
        i, carry, ys = body.args[0], body.args[1:1 + self.num_carry], body.args[1 + self.num_carry:]
        for k in range(steps):
            at = body.emit("stablehlo.add", [i, body.constant(k, _I32)], [i.type])[0] if k else i
            carry, ys = self.step(body, at, carry, ys)
        next_i = body.emit("stablehlo.add", [i, body.constant(steps, _I32)], [i.type])[0]
        body.finish([next_i] + list(carry) + list(ys))
        return list(op.results)[1:]

    def step(self, body, i, carry, ys):
        if self.reverse:
            i = body.emit("stablehlo.subtract", [body.constant(self.length - 1, _I32), i], [i.type])[0]
        slices = [_slice_at(body, x, i) for x in self.xs]
        outs = body.call(self.jaxpr, list(carry) + slices + self.consts)
        return outs[:self.num_carry], [_update_at(body, y, out, i) for y, out in zip(ys, outs[self.num_carry:])]


def _slice_at(region, x, i):
    aval = aval_of_type(x.type)
    zero = region.constant(0, _I32)
    window = region.emit("stablehlo.dynamic_slice", [x, i] + [zero] * (aval.ndim - 1),
                         [tensor_type((1,) + aval.shape[1:], aval.dtype)],
                         {"slice_sizes": ir.DenseI64ArrayAttr.get([1] + list(aval.shape[1:]))})[0]
    return region.emit("stablehlo.reshape", [window], [tensor_type(aval.shape[1:], aval.dtype)])[0]


def _update_at(region, ys, y, i):
    aval = aval_of_type(ys.type)
    zero = region.constant(0, _I32)
    window = region.emit("stablehlo.reshape", [y], [tensor_type((1,) + aval.shape[1:], aval.dtype)])[0]
    return region.emit("stablehlo.dynamic_update_slice", [ys, window, i] + [zero] * (aval.ndim - 1), [ys.type])[0]


@lowering("reduce")
def _reduce(ctx, *operands, computation, dimensions, jaxpr):
    """A ``stablehlo.reduce`` whose region calls the computation (IREE inlines it)."""
    n = len(operands) // 2
    scalars = [tensor_type((), aval_of_type(x.type).dtype) for x in operands[:n]]
    op = ctx.emit("stablehlo.reduce", list(operands), [r.type for r in ctx.op.results],
                  {"dimensions": ir.DenseI64ArrayAttr.get(list(dimensions))}, regions=1)
    block = ctx.region_block(op, scalars + scalars)
    ip = ir.InsertionPoint(block)

    def emit(name, args, results, attributes):
        return ir.Operation.create(name, results=list(results), operands=list(args), attributes=attributes,
                                   loc=ctx.loc, ip=ip)
    outs = _call(emit, ctx.symbols, jaxpr, list(block.arguments))
    ir.Operation.create("stablehlo.return", results=[], operands=outs, loc=ctx.loc, ip=ip)
    return list(op.results)
