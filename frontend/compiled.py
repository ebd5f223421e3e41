"""From a traced function to a callable IREE executable: lowering, compiling, calling."""
from __future__ import annotations

import functools
import hashlib
import io
import os

import numpy as np

from irax.backends import compile_cache, iree as iree_backend, targets
from irax.ir.mlir import scope
from irax.passes import COMPILE_PIPELINE, run_pipeline
from irax.passes.donation import mark_donations
from irax.passes.protect_arguments import protect_arguments
from irax.passes.lower_callbacks import take_host_callbacks
from irax.runtime.host_callbacks import HostFunction
from irax.runtime.device import get_device
from irax.runtime.executable import Executable

from . import tree_util
from .array import Array, to_numpy
from .errors import JaxRuntimeError

# Programs touching more elements than this, or multiplying more than this many pairs in their
# dot_generals and convolutions, run on the multi-threaded driver; below, its scheduling costs more than it saves.
_TASK_DRIVER_WORK = 1 << 19
_TASK_DRIVER_MACS = 1 << 23
_WHILE_TRIPS = 16


def lower_to_stablehlo(traced) -> str:
    """The StableHLO text of ``traced`` (its module is left as it was)."""
    return lower_program(traced)[0]


def lower_program(traced) -> tuple[str, list]:
    """The StableHLO text of ``traced`` and the host functions it imports, in import order; read from the
    persistent cache when this program was lowered before (a program calling the host is lowered each time: its
    host functions are this process's Python objects)."""
    key = _lowering_key(traced)
    cached = compile_cache.get(key, compile_cache.STABLEHLO) if key is not None else None
    if cached is not None:
        return cached.decode(), []
    with scope():
        module = traced.module.operation.clone()
        run_pipeline(module.opview, COMPILE_PIPELINE)
        mark_donations(module.opview, traced.func_name, donation_pairs(traced))
        protect_arguments(module.opview)
        host_functions = [HostFunction(fn, [(a.shape, a.dtype) for a in ins], [(a.shape, a.dtype) for a in outs])
                          for fn, ins, outs in take_host_callbacks(module.opview)]
        text = module.get_asm(enable_debug_info=True)
    if key is not None and not host_functions:
        compile_cache.put(key, text.encode(), compile_cache.STABLEHLO)
    return text, host_functions


def _lowering_key(traced):
    """The cache key of what ``traced`` lowers to: its module as bytecode (locations included, so the text's are
    its own), its donations, and irax's sources; ``None`` with the cache off."""
    if compile_cache.directory() is None:
        return None
    bytecode = io.BytesIO()
    with scope():
        traced.module.operation.write_bytecode(bytecode)
    parts = [bytecode.getvalue(), traced.func_name.encode(), repr(sorted(donation_pairs(traced).items())).encode(),
             _sources_fingerprint().encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


@functools.lru_cache(maxsize=None)
def _sources_fingerprint() -> str:
    """irax's version and each lowering source file's size and modification time: an edited checkout must not
    reuse what its older code lowered."""
    import irax
    from irax import backends, ir, passes, runtime
    files = [entry for package in (irax, ir, passes, backends, runtime) for root in package.__path__
             for entry in os.scandir(root) if entry.name.endswith(".py")]
    stats = sorted((entry.path, entry.stat().st_size, entry.stat().st_mtime_ns) for entry in files)
    return f"{irax.__version__}|{iree_backend.versions()}|{stats}"


def donation_pairs(traced) -> dict:
    """Donated argument leaf -> the output it pairs with: the first output not yet taken with its shape and dtype,
    as XLA pairs them. Donated leaves without one are not usable (JAX warns and keeps them)."""
    pairs, taken = {}, set()
    for i in traced.donated:
        aval = traced.in_avals[i]
        k = next((k for k, out in enumerate(traced.out_avals)
                  if k not in taken and out.shape == aval.shape and out.dtype == aval.dtype), None)
        if k is not None:
            pairs[i] = k
            taken.add(k)
    return pairs


def _driver(traced) -> str:
    elements = max([a.size for a in traced.in_avals] + [a.size for a in traced.out_avals], default=0)
    big = elements >= _TASK_DRIVER_WORK or _dot_macs(traced.module, traced.func_name) >= _TASK_DRIVER_MACS
    return "local-task" if big else "local-sync"


def _dot_macs(module, func_name) -> int:
    """Multiply-adds of the dot_generals and convolutions ``func_name`` runs (result size times contracted or
    window size), a scan body's counted once per step and a while body's as if it ran ``_WHILE_TRIPS`` times."""
    from irax.ir.control_flow import referenced_symbols
    from irax.ir.dialect import aval_of_type, decode_params
    from irax.ir.jaxpr_view import body_ops
    from irax.ir.ops import OPS
    from irax.passes.funcs import symbols
    table, memo = symbols(module), {}

    def macs(name):
        if name not in memo:
            memo[name] = 0  # a function reached again while being counted adds nothing, a deferred rule none
            if name in table:
                memo[name] = sum(_op_macs(op, macs) for op in body_ops(table[name]))
        return memo[name]

    def _op_macs(op, macs):
        if op.name == "jaxpr.dot_general":
            (contracting, _), _ = decode_params(OPS["dot_general"], op)["dimension_numbers"]
            lhs = aval_of_type(op.operands[0].type)
            return aval_of_type(op.results[0].type).size * int(np.prod([lhs.shape[d] for d in contracting]))
        if op.name == "jaxpr.conv_general_dilated":
            out_features = decode_params(OPS["conv_general_dilated"], op)["dimension_numbers"].rhs_spec[0]
            rhs = aval_of_type(op.operands[1].type)
            return aval_of_type(op.results[0].type).size * (rhs.size // max(rhs.shape[out_features], 1))
        trips = {"jaxpr.scan": lambda: decode_params(OPS["scan"], op)["length"],
                 "jaxpr.while": lambda: _WHILE_TRIPS}.get(op.name, lambda: 1)()
        return trips * sum(macs(name) for name in referenced_symbols(op))

    with scope():
        return macs(func_name)


class CompiledCall:
    """Calls one compiled executable on flat argument leaves and rebuilds the output pytree. ``device`` is the one
    the arguments are committed to (``None``: uncommitted, on the CPU); results are committed where it is."""

    def __init__(self, traced, stablehlo: str, device=None, target=None, host_functions=()):
        self.traced = traced
        self.stablehlo = stablehlo
        target = target or (targets.for_device(device) if device is not None else targets.Target())
        self.vmfb = iree_backend.compile_stablehlo(stablehlo, target.flags(), name=traced.fun_name)
        self.device = device if device is not None and device.is_gpu else get_device(_driver(traced))
        self.result_device = device
        self._gpu = self.device.is_gpu
        self.executable = Executable(self.vmfb, self.device, name=traced.fun_name, host_functions=host_functions)
        self.function = self.executable.function("main")
        self.in_avals = traced.in_avals
        self.out_avals = traced.out_avals
        self.out_tree = traced.out_tree
        self.const_buffers = [self.device.put(to_numpy(c)) for c in traced.closure]
        self.n_out = len(traced.out_avals)
        self._n_args = len(traced.in_avals) + len(self.const_buffers)
        self._single_output = self.out_tree == tree_util.tree_structure(0) and not traced.float0_outputs
        self.aliased = donation_pairs(traced)
        # IREE returns an argument's buffer for an output that is the argument or a reshape of it: such arrays
        # share a buffer and must not be donated. A straight-line program is checked on its first call. In one with
        # control flow an output may be an argument on some paths only, so each call marks as shared the outputs
        # and arguments of sizes that could alias (a few attribute writes, where comparing buffers cost 4 us).
        control_flow = "stablehlo.while" in stablehlo or "stablehlo.case" in stablehlo
        self._check_aliases = not control_flow
        self._shared_inputs, self._shared_outputs = self._same_sized() if control_flow else ((), ())
        from irax.runtime._native import rt
        self._variant_list = rt.VmVariantList
        self._buffer_view = rt.HalBufferView
        self._invoke = self.executable.invoke if host_functions else self.executable.invoke_context

    def _buffer(self, x, aval):
        if isinstance(x, Array):
            return x._device_buffer(self.device)
        return self.device.put(np.asarray(x, dtype=aval.dtype))

    def _donated_buffer(self, leaves, i):
        """A buffer for donated leaf ``i`` that the call may overwrite: the array's own when no other array shares
        it, else a fresh copy."""
        x = leaves[i]
        if not isinstance(x, Array):
            return self.device.put(np.asarray(x, dtype=self.in_avals[i].dtype))
        for j, other in enumerate(leaves):
            if other is x and j != i:
                raise JaxRuntimeError(
                    f"INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in the same call "
                    f"(flattened argument {max(i, j)}, first use: {min(i, j)}). Toy example for this bug: "
                    f"`f(donate(a), a)`.")
        buf = x._device_buffer(self.device)
        return buf if x._owned else self.device.put(x._value)

    def __call__(self, leaves):
        buffers = [self._buffer(x, a) for x, a in zip(leaves, self.in_avals)]
        for i in self.aliased:
            buffers[i] = self._donated_buffer(leaves, i)
        buffers += self.const_buffers
        outs = self.executable.call(self.function, buffers, self.n_out)
        device = self.result_device
        arrays = [Array._from_device(b, a, device) for b, a in zip(outs, self.out_avals)]
        if self._check_aliases:
            self._note_aliases(leaves, buffers, arrays)
        elif self._shared_outputs:
            self._mark_shared(leaves, arrays)
        return self.traced.unflatten(arrays)

    def _same_sized(self):
        """Arguments as large as an output, and outputs as large as an argument, a constant or another output."""
        def nbytes(aval):
            return aval.size * aval.dtype.itemsize
        outs = [nbytes(a) for a in self.out_avals]
        ins = {nbytes(a) for i, a in enumerate(self.in_avals) if i not in self.aliased}
        ins |= {np.asarray(c).nbytes for c in self.traced.closure}
        inputs = tuple(i for i, a in enumerate(self.in_avals) if i not in self.aliased and nbytes(a) in outs)
        outputs = tuple(k for k, size in enumerate(outs) if size in ins or outs.count(size) > 1)
        return inputs, outputs

    def _mark_shared(self, leaves, arrays):
        for i in self._shared_inputs:
            if isinstance(leaves[i], Array):
                leaves[i]._owned = False
        for k in self._shared_outputs:
            arrays[k]._owned = False

    def _note_aliases(self, leaves, buffers, arrays):
        """Marks the outputs that share a buffer with an argument, a constant or another output, and those
        arguments, as not owned."""
        inputs = [(j, b.get_buffer()) for j, b in enumerate(buffers) if j not in self.aliased]
        seen, found = [], False
        for out in arrays:
            buffer = out._buf.get_buffer()
            for j, b in inputs:
                if buffer == b:
                    found, out._owned = True, False
                    if j < len(leaves) and isinstance(leaves[j], Array):
                        leaves[j]._owned = False
            for other, b in seen:
                if buffer == b:
                    found, out._owned, other._owned = True, False, False
            seen.append((out, buffer))
        self._check_aliases = found

    def call_arrays(self, arrays):
        """The dispatch fast path: positional arguments (``Array``s, NumPy arrays or scalars) that are the trace's
        leaves, with its signature."""
        if self._check_aliases:
            return self(arrays)
        args = self._variant_list(self._n_args)
        device, gpu = self.device, self._gpu
        for a, aval in zip(arrays, self.in_avals):
            if isinstance(a, Array):
                buf = a._buf
                args.push_ref(buf if buf is not None and not gpu else a._device_buffer(device))
            else:
                args.push_ref(device.put(np.asarray(a, dtype=aval.dtype)))
        for buf in self.const_buffers:
            args.push_ref(buf)
        results = self._variant_list(self.n_out)
        self._invoke(self.function, args, results)
        view, device = self._buffer_view, self.result_device
        if self._single_output and not self._shared_outputs:
            return Array._from_device(results.get_as_object(0, view), self.out_avals[0], device)
        outs = [Array._from_device(results.get_as_object(i, view), a, device) for i, a in enumerate(self.out_avals)]
        if self._shared_outputs:
            self._mark_shared(arrays, outs)
        return self.traced.unflatten(outs)


def compile_traced(traced, device=None, target=None) -> CompiledCall:
    stablehlo, host_functions = lower_program(traced)
    return CompiledCall(traced, stablehlo, device, target, host_functions)
