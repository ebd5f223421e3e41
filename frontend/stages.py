"""``irax.stages``: the stages of ``jit``, as ``jax.stages``. A ``Wrapped`` function is traced (``Traced``: its
jaxpr), lowered (``Lowered``: StableHLO) and compiled (``Compiled``: an IREE executable); each stage describes the
arguments and results it was made for."""
from __future__ import annotations

from typing import Any

import numpy as np

from irax.backends import targets
from irax.runtime.device import get_device

from . import tree_util
from .api import Wrapped
from .compiled import compile_traced, lower_to_stablehlo

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

CompilerOptions = dict[str, Any]


class ArgInfo:
    """One argument leaf of a stage: its abstract value and whether it was donated."""

    __slots__ = ("_aval", "donated")

    def __init__(self, aval, donated: bool):
        self._aval = aval
        self.donated = donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __eq__(self, other):
        return isinstance(other, ArgInfo) and (self._aval, self.donated) == (other._aval, other.donated)

    def __hash__(self):
        return hash((self._aval, self.donated))

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class _Stage:
    """What every stage tells of its signature, from the traced program it holds."""

    _traced: Any

    @property
    def in_tree(self):
        return self._traced.in_tree

    @property
    def out_tree(self):
        return self._traced.out_tree

    @property
    def in_avals(self):
        return tree_util.tree_unflatten(self.in_tree, self._traced.in_avals)

    @property
    def args_info(self):
        donated = set(self._traced.donated)
        return tree_util.tree_unflatten(
            self.in_tree, [ArgInfo(a, i in donated) for i, a in enumerate(self._traced.in_avals)])

    @property
    def out_info(self):
        return self._traced.out_structs()

    @property
    def donate_argnums(self) -> tuple:
        """The donated arguments' positions among the non-static ones, keyword arguments last (as JAX's)."""
        args_tree, kwargs_tree = self.in_tree.children()
        donated, start, found = set(self._traced.donated), 0, []
        for position, child in enumerate(args_tree.children() + kwargs_tree.children()):
            leaves = range(start, start + child.num_leaves)
            if leaves and all(i in donated for i in leaves):
                found.append(position)
            start += child.num_leaves
        return tuple(found)


class Traced(_Stage):
    """``jit(f).trace(*args)``: the function's jaxpr, ready to lower."""

    def __init__(self, traced):
        self._traced = traced

    @property
    def jaxpr(self):
        from .api import ClosedJaxpr
        return ClosedJaxpr(self._traced)

    @property
    def fun_name(self) -> str:
        return self._traced.fun_name

    @property
    def out_avals(self):
        return tree_util.tree_unflatten(self.out_tree, self._traced.out_avals)

    def lower(self) -> Lowered:
        return Lowered(self._traced)


class Lowered(_Stage):
    """``jit(f).lower(*args)``: the traced program, printable and compilable."""

    def __init__(self, traced):
        self._traced = traced

    def as_text(self, dialect: str = "stablehlo", *, debug_info: bool = False) -> str:
        if dialect == "jaxpr":
            return self._traced.module.operation.get_asm(enable_debug_info=debug_info)
        if dialect == "stablehlo":
            return lower_to_stablehlo(self._traced)
        raise ValueError(f"unknown dialect {dialect!r}; expected 'stablehlo' or 'jaxpr'")

    def compiler_ir(self, dialect: str | None = None):
        """The StableHLO as an MLIR module (of ``iree.compiler.ir``, in a context of its own)."""
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"unknown dialect {dialect!r}: irax lowers to 'stablehlo' only")
        from iree.compiler import ir
        return ir.Module.parse(lower_to_stablehlo(self._traced), ir.Context())

    def cost_analysis(self):
        """``None``: IREE reports no flop or byte counts."""
        return None

    def compile(self, target=None, *, cpu=None, triple=None, arch=None) -> Compiled:
        """Compiled for this CPU, or for ``target`` (a backend name or ``irax.export.Target``, with ``cpu``,
        ``triple`` and ``arch`` as ``irax.export.export`` takes them) and run on its device, which must be here."""
        if target is None and cpu is None and triple is None and arch is None:
            return Compiled(compile_traced(self._traced))
        target = targets.resolve(target or "llvm-cpu", cpu=cpu, triple=triple, arch=arch)
        device = get_device(target.driver) if target.driver else None
        return Compiled(compile_traced(self._traced, device, target))


class Compiled(_Stage):
    """``jit(f).lower(*args).compile()``: call it with arguments of the lowered signature."""

    def __init__(self, call):
        self._call = call
        self._traced = call.traced

    def __call__(self, *args, **kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self._call.traced.in_tree:
            raise TypeError(f"function compiled for {self._call.traced.in_tree}, called with {tree}")
        for i, (x, aval) in enumerate(zip(leaves, self._call.in_avals)):
            if tuple(np.shape(x)) != aval.shape:
                raise TypeError(f"argument {i} has shape {tuple(np.shape(x))}, but the function was compiled for "
                                f"{aval.str_short()}")
        return self._call(leaves)

    def as_text(self) -> str:
        return self._call.stablehlo

    def memory_analysis(self) -> MemoryAnalysis:
        return MemoryAnalysis(self._call)

    def cost_analysis(self):
        """``None``: IREE reports no flop or byte counts for a compiled module."""
        return None


class MemoryAnalysis:
    """What is known of a compiled call's memory (``Compiled.memory_analysis()``): its argument, output and
    constant bytes, and the size of the ``.vmfb`` holding its code. IREE does not report its transient (temp)
    allocations ahead of a run."""

    def __init__(self, call):
        def nbytes(avals):
            return sum(a.size * a.dtype.itemsize for a in avals)
        self.argument_size_in_bytes = nbytes(call.in_avals)
        self.output_size_in_bytes = nbytes(call.out_avals)
        self.constant_size_in_bytes = sum(np.asarray(c).nbytes for c in call.traced.closure)
        self.generated_code_size_in_bytes = len(call.vmfb)
        self.temp_size_in_bytes = None

    def __repr__(self):
        fields = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"MemoryAnalysis({fields})"
