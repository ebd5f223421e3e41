"""``irax.export``: a jitted function compiled ahead of time into one standalone ``.vmfb``, as ``jax.export``.

The artifact is a standard IREE module. Its ``main`` takes the flat array arguments in pytree order (the
function's closed-over constants are baked in) and returns the flat outputs; the calling convention (pytrees,
avals, target, versions) is JSON in ``main``'s reflection metadata (see ``irax.runtime.artifact``), so the file
alone is enough to run it: with ``irax.runtime.load``, ``Exported.call``, or IREE's ``iree-run-module``.
"""
from __future__ import annotations

import numpy as np

from irax.backends import targets
from irax.runtime import artifact

from . import dtypes, tree_util
from .api import JitWrapped
from .array import Array, to_numpy
from .config import config
from .core import Tracer

__all__ = ["Exported", "ExportedModule", "deserialize", "export", "export_module"]


def export(fun_jit, *, target="llvm-cpu", cpu=None, triple=None, arch=None, platforms=None):
    """``export(jit(f), target=...)(*args)``: ``args`` may be arrays or ``ShapeDtypeStruct``s.

    ``target`` is an IREE backend: ``llvm-cpu`` (the default: this CPU, unless ``cpu=`` names another or
    ``generic``; ``triple=`` cross-compiles), ``vmvx``, ``vulkan``, ``cuda``, ``rocm`` or ``metal`` (``arch=``
    names the GPU). ``platforms`` is accepted for JAX's signature: only ``"cpu"`` is meaningful."""
    if not isinstance(fun_jit, JitWrapped):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    if platforms is not None and tuple(platforms) != ("cpu",):
        raise ValueError(f"irax exports for the 'cpu' platform only, not {tuple(platforms)}")
    record = targets.resolve(target, cpu=cpu, triple=triple, arch=arch)

    def do_export(*args, **kwargs) -> Exported:
        traced = fun_jit.lower(*args, **kwargs)._traced
        meta = _calling_convention(traced, record, traced.in_tree, traced.out_tree, traced.in_avals,
                                   traced.out_avals)
        text, vmfb = _build([_entry("main", traced, meta)], record)
        exported = Exported(vmfb, meta, stablehlo=text)
        exported._fun = fun_jit
        return exported
    return do_export


def export_module(functions, *, state=None, updates_state=(), target="llvm-cpu", cpu=None, triple=None,
                  arch=None):
    """Several jitted functions in one artifact, sharing their constants, and optionally a state kept on the
    device between calls (as iree-jax's ``Program``): ``export_module({"init": init, "step": step, ...},
    state=params, updates_state={"step"})(step=(batch,), predict=(x,), ...)``.

    With ``state``, every function takes it as its first argument (the caller does not pass it: each call reads
    the current state); those named in ``updates_state`` return ``(new_state, outputs)``, and ``new_state``
    becomes the state. ``irax.runtime.load`` gives an object with one method per function and a ``state``
    property to read or replace it."""
    for name, fun in functions.items():
        if not isinstance(fun, JitWrapped):
            raise ValueError(f"Function to be exported must be the result of `jit` but {name!r} is: {fun}")
        if not name.isidentifier() or name.startswith("irax_"):
            raise ValueError(f"entry names must be Python identifiers not starting with 'irax_', got {name!r}")
    unknown = set(updates_state) - set(functions)
    if unknown:
        raise ValueError(f"updates_state names functions that are not exported: {sorted(unknown)}")
    if updates_state and state is None:
        raise ValueError("updates_state needs a state")
    record = targets.resolve(target, cpu=cpu, triple=triple, arch=arch)

    def do_export(**example_args) -> ExportedModule:
        if set(example_args) != set(functions):
            raise TypeError(f"give example arguments (a tuple) for each function: expected {sorted(functions)}, got "
                            f"{sorted(example_args)}")
        state_leaves, state_tree = tree_util.tree_flatten(state)
        state_meta = {"tree": _encode_tree(state_tree), "avals": [_encode_aval(_aval_of(x)) for x in state_leaves]}
        entries = []
        for name, fun in functions.items():
            args = tuple(example_args[name])
            traced = fun.lower(*((state, *args) if state is not None else args))._traced
            n_state = len(state_leaves) if state is not None else 0
            out_tree, out_avals = traced.out_tree, traced.out_avals
            if name in updates_state:
                out_tree, out_avals = _split_state_output(name, traced, state_tree, state_meta["avals"])
            meta = _calling_convention(traced, record, tree_util.tree_structure((args, {})), out_tree,
                                       traced.in_avals[n_state:], out_avals)
            if state is not None:
                meta.update(state=state_meta, updates_state=name in updates_state)
            entries.append(_entry(name, traced, meta, n_state, name in updates_state))
        text, vmfb = _build(entries, record, [to_numpy(x) for x in state_leaves] if state is not None else ())
        return ExportedModule(vmfb, {e.name: e.meta for e in entries}, stablehlo=text)
    return do_export


def _aval_of(x):
    from .api import abstractify
    return abstractify(x, "state")


def _split_state_output(name, traced, state_tree, state_avals):
    """The outputs after the new state of an entry that updates the state, checked to have the state's type."""
    children = traced.out_tree.children() if traced.out_tree.num_leaves else []
    n_state = state_tree.num_leaves
    new_avals = [_encode_aval(a) for a in traced.out_avals[:n_state]]
    if len(children) != 2 or children[0] != state_tree or new_avals != state_avals:
        raise TypeError(f"{name!r} updates the state, so it must return (new_state, outputs) with new_state of the "
                        f"state's structure and types {state_tree} {state_avals}; it returns {traced.out_tree}")
    return children[1], traced.out_avals[n_state:]


def _entry(name, traced, meta, n_state=0, updates_state=False):
    from ._linker import Entry
    from .compiled import lower_program
    if traced.float0_outputs:
        raise ValueError("irax.export cannot export a function with float0 outputs (integer-input gradients)")
    stablehlo, host_functions = lower_program(traced)
    if host_functions:
        raise NotImplementedError(f"serialization of host_callbacks is not yet implemented: {name!r} calls Python "
                                  "on the host (pure_callback, io_callback or jax.debug), which a saved artifact "
                                  "cannot hold")
    return Entry(name, stablehlo, [to_numpy(c) for c in traced.closure], meta, n_state, updates_state)


def _build(entries, record, state=()):
    from irax.backends.iree import compile_stablehlo
    from ._linker import link
    text = link(entries, state)
    name = entries[0].meta["fun_name"] if len(entries) == 1 else "+".join(e.name for e in entries)
    return text, artifact.seal(compile_stablehlo(text, record.flags(), name=name))


def _calling_convention(traced, record, in_tree, out_tree, in_avals, out_avals) -> dict:
    from .compiled import _driver
    return {"format": artifact.FORMAT, "fun_name": traced.fun_name, "in_tree": _encode_tree(in_tree),
            "out_tree": _encode_tree(out_tree), "in_avals": [_encode_aval(a) for a in in_avals],
            "out_avals": [_encode_aval(a) for a in out_avals], "target": record.describe(),
            "driver": record.driver or _driver(traced), "cpu_features": _features(record),
            "x64": bool(config.jax_enable_x64), "versions": _versions()}


class _Artifact:
    """The bytes of an exported ``.vmfb``, its calling convention, and the StableHLO it was compiled from."""

    def __init__(self, vmfb: bytes, metadata: dict, *, stablehlo: str | None = None):
        self._vmfb = vmfb
        self.metadata = metadata
        self._stablehlo = stablehlo

    def mlir_module(self) -> str:
        if self._stablehlo is None:
            raise ValueError("a deserialized Exported keeps only its compiled module; export the function again "
                             "for its StableHLO")
        return self._stablehlo

    def serialize(self) -> bytes:
        """The artifact: one ``.vmfb``."""
        return self._vmfb

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self._vmfb)


class Exported(_Artifact):
    """An exported function: its calling convention, its ``.vmfb`` bytes, and a way to call it."""

    _loaded = None
    _fun = None  # the jitted function, for an Exported made in this process

    @property
    def fun_name(self):
        return self.metadata["fun_name"]

    @property
    def in_tree(self):
        return _decode_tree(self.metadata["in_tree"])

    @property
    def out_tree(self):
        return _decode_tree(self.metadata["out_tree"])

    @property
    def in_avals(self):
        return tuple(_decode_aval(a) for a in self.metadata["in_avals"])

    @property
    def out_avals(self):
        return tuple(_decode_aval(a) for a in self.metadata["out_avals"])

    @property
    def platforms(self):
        return ("cpu",)

    @property
    def target(self):
        return targets.Target(**self.metadata["target"])

    def call(self, *args, **kwargs):
        """Runs the artifact on arrays of the exported signature; returns irax arrays. Under a transformation
        (jit, grad, vmap) an Exported made in this process calls the function it was exported from, checked
        against the exported signature."""
        leaves = tree_util.tree_leaves((args, kwargs))
        if any(isinstance(x, Tracer) for x in leaves):
            if self._fun is None:
                raise NotImplementedError(
                    f"Exported.call of {self.fun_name!r} under a transformation (jit, grad, vmap): a deserialized "
                    "irax artifact holds compiled code, not the StableHLO to inline; call it outside the "
                    "transformation, or export the function again in this process")
            given = tree_util.tree_structure((args, kwargs))
            if given != self.in_tree:
                artifact.flatten(self.metadata["in_tree"], (args, kwargs), self.fun_name)  # names the place
                raise ValueError(f"The invocation args and kwargs must have the same pytree structure as when the "
                                 f"function {self.fun_name!r} was exported: {self.in_tree} when exported, {given} "
                                 f"in the invocation")
            for i, (x, aval) in enumerate(zip(leaves, self.in_avals)):
                _check_traced_argument(self.fun_name, i, x, aval)
            return self._fun(*args, **kwargs)
        if self._loaded is None:
            self._loaded = artifact.load(self._vmfb)
        args, kwargs = tree_util.tree_map(lambda x: to_numpy(x) if isinstance(x, Array) else x, (args, kwargs))
        outs = tree_util.tree_leaves(self._loaded(*args, **kwargs))
        return tree_util.tree_unflatten(self.out_tree, [Array._from_host(x, a) for x, a in zip(outs, self.out_avals)])

    def __repr__(self):
        return f"Exported({self.fun_name}, {self.in_avals} -> {self.out_avals}, target={self.target})"


class ExportedModule(_Artifact):
    """Several exported functions in one artifact (``export_module``); ``irax.runtime.load`` runs it. Its
    ``metadata`` maps each function's name to its calling convention."""

    @property
    def entries(self):
        return tuple(self.metadata)


def _check_traced_argument(fun_name, index, x, aval):
    """JAX's errors for an argument whose shape or dtype is not the exported one."""
    shape, dtype = tuple(np.shape(x)), dtypes.dtype(x)
    if shape != aval.shape:
        raise ValueError(f"Shape mismatch for args[{index}] of {fun_name!r}: expected "
                         f"{artifact.aval_str(aval.shape, aval.dtype)} and called with "
                         f"{artifact.aval_str(shape, dtype)}")
    if dtype != aval.dtype and not (getattr(x, "weak_type", False) or type(x) in (int, float, complex)):
        raise ValueError(f"Dtype mismatch for args[{index}] of {fun_name!r}: expected {aval.dtype.name} and called "
                         f"with {np.dtype(dtype).name}")


def deserialize(blob) -> Exported:
    """The ``Exported`` of a serialized artifact (``ArtifactError`` if it is not one)."""
    vmfb = bytes(blob)
    return Exported(vmfb, artifact.read_metadata(vmfb))


def _features(record) -> list:
    return artifact.cpu_features() if record.backend == "llvm-cpu" and record.cpu == "host" else []


def _versions() -> dict:
    from iree.compiler import version
    from irax import __version__
    return {"irax": __version__, "iree": version.VERSION}


def _encode_aval(aval):
    return [list(aval.shape), aval.dtype.name, bool(aval.weak_type)]


def _decode_aval(entry):
    from irax.ir.avals import ShapedArray
    shape, dtype, weak = entry
    return ShapedArray(tuple(shape), artifact.dtype_of(dtype), weak)


def _encode_tree(treedef):
    """The JSON form of a pytree structure (``irax.runtime.artifact`` describes it); other node types than
    tuples, lists, dicts and ``None`` cannot be rebuilt without their Python classes, so they are refused."""
    if treedef._node is None:
        return "*"
    children = [_encode_tree(c) for c in treedef.children()]
    kind = treedef._node.name
    if kind == "None":
        return None
    if kind in ("tuple", "list"):
        return {kind: children}
    if kind == "dict" and all(isinstance(k, str) for k in treedef._aux):
        return {"dict": [list(treedef._aux), children]}
    raise TypeError(f"irax.export can serialize pytrees of tuples, lists, dicts with string keys and None; this "
                    f"one has a {kind} node ({treedef})")


def _decode_tree(spec):
    def example(spec):
        if spec == "*":
            return 0
        if spec is None:
            return None
        (kind, body), = spec.items()
        if kind == "dict":
            return {k: example(c) for k, c in zip(*body)}
        items = [example(c) for c in body]
        return tuple(items) if kind == "tuple" else items
    return tree_util.tree_structure(example(spec))
