"""``irax compile``, ``irax run``, ``irax inspect`` and ``irax cache``: ahead-of-time artifacts and the compile
cache from the command line.

``run`` and ``inspect`` use ``irax.runtime`` only, so they work where the compiler is not installed.
"""
from __future__ import annotations

import ast
import functools
import json
import os

import numpy as np

from .cli import UsageError, _arg_structs, _load_function, _parse_static


def cmd_compile(args):
    import irax
    from irax import export
    fn = _load_function(args.target)
    statics = _parse_static(args.static)
    entry = functools.wraps(fn)(functools.partial(fn, **statics)) if statics else fn
    exported = export.export(irax.jit(entry), target=args.backend, cpu=args.cpu, triple=args.triple,
                             arch=args.arch)(*_arg_structs(args.arg))
    exported.save(args.output)
    print(f"wrote {args.output}: {len(exported.serialize())} bytes, main({', '.join(_avals(exported.metadata, 'in'))})"
          f" -> ({', '.join(_avals(exported.metadata, 'out'))})")


def _avals(meta, side):
    from irax.runtime.artifact import aval_str, dtype_of
    return [aval_str(shape, dtype_of(dtype)) for shape, dtype, _ in meta[f"{side}_avals" if side else "avals"]]


def _parse_input(spec):
    """``f32[4,3]=@x.npy``, ``@x.npy``, ``f32[3]=[1,2,3]`` or ``f32[]=2.5``: one flat argument."""
    from irax.ir.avals import parse_aval
    aval_text, eq, value = spec.rpartition("=") if "=" in spec else ("", "", spec)
    if value.startswith("@"):
        path = value[1:]
        if not os.path.exists(path):
            raise UsageError(f"no such file: {path}")
        array = np.load(path)
    else:
        try:
            array = np.asarray(ast.literal_eval(value))
        except (ValueError, SyntaxError):
            raise UsageError(f"--input {spec!r}: expected @FILE.npy or a Python literal after '='") from None
    if not eq:
        return array
    try:
        aval = parse_aval(aval_text)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if array.size == int(np.prod(aval.shape)) and array.shape != aval.shape:
        array = array.reshape(aval.shape)
    if array.shape != aval.shape:
        raise UsageError(f"--input {spec!r}: the value has shape {array.shape}, not {aval.shape}")
    return array.astype(aval.dtype)


def cmd_run(args):
    from irax.runtime import artifact
    loaded = artifact.load(args.module)
    if isinstance(loaded, artifact.LoadedModule):
        if args.function not in loaded.entries:
            raise UsageError(f"{args.module} holds {', '.join(loaded.entries)}: name one with --function")
        loaded = loaded[args.function]
    inputs = [_parse_input(spec) for spec in args.input or ()]
    spec = loaded.metadata["in_tree"]
    if _count_leaves(spec) != len(inputs):
        raise UsageError(f"{loaded.fun_name} takes {_count_leaves(spec)} flat inputs "
                         f"({', '.join(_avals(loaded.metadata, 'in'))}); {len(inputs)} --input given")
    call_args, call_kwargs = artifact.unflatten(spec, inputs)
    outputs = loaded(*call_args, **call_kwargs)
    leaves = _leaves(loaded.metadata["out_tree"], outputs)
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        for i, leaf in enumerate(leaves):
            path = os.path.join(args.output_dir, f"output{i}.npy")
            np.save(path, leaf)
            print(f"wrote {path}")
        return
    for i, leaf in enumerate(leaves):
        print(f"output{i}: {artifact.aval_str(leaf.shape, leaf.dtype)} = {np.array2string(leaf, threshold=64)}")


def _count_leaves(spec):
    if spec == "*":
        return 1
    if spec is None:
        return 0
    (kind, body), = spec.items()
    return sum(_count_leaves(c) for c in (body[1] if kind == "dict" else body))


def _leaves(spec, tree):
    from irax.runtime.artifact import flatten
    return flatten(spec, tree, "outputs")


def cmd_inspect(args):
    from irax.runtime import artifact
    if not os.path.exists(args.module):
        raise UsageError(f"no such file: {args.module}")
    with open(args.module, "rb") as f:
        blob = f.read()
    entries = artifact.read_entries(blob, args.module)
    if args.json:
        print(json.dumps(entries, indent=2))
        return
    meta = next(iter(entries.values()))
    target = meta["target"]
    print(f"{args.module}: {len(blob)} bytes, exported by irax {meta['versions']['irax']} with IREE "
          f"{meta['versions']['iree']}")
    print("  target: " + " ".join([target["backend"]] + [f"{k}={target[k]}" for k in ("cpu", "triple", "arch")
                                                          if target.get(k)]))
    for name, meta in entries.items():
        print(f"  entry: {name} (from {meta['fun_name']}), flat arguments in pytree order"
              + (" (updates the state)" if meta.get("updates_state") else ""))
        print(f"    inputs:  {', '.join(_avals(meta, 'in'))}   pytree {json.dumps(meta['in_tree'])}")
        print(f"    outputs: {', '.join(_avals(meta, 'out'))}   pytree {json.dumps(meta['out_tree'])}")
    if "state" in meta:
        print(f"  state: {', '.join(_avals(meta['state'], ''))}   pytree {json.dumps(meta['state']['tree'])}")
    if meta.get("cpu_features"):
        print(f"  needs CPU features: {' '.join(meta['cpu_features'])}")


def cmd_cache(args):
    from irax.backends import compile_cache
    if args.action == "clear":
        print(f"removed {compile_cache.clear()} entries from {compile_cache.directory()}")
        return
    info = compile_cache.info()
    if info["directory"] is None:
        print("the compile cache is off (IRAX_CACHE_DIR is empty or none)")
        return
    print(f"{info['directory']}: {info['entries']} entries, {info['bytes'] / 2**20:.1f} MiB of "
          f"{info['max_bytes'] / 2**20:.0f} MiB")


def add_parsers(sub):
    p = sub.add_parser("compile", help="export FILE.py:FUNC, traced on abstract arguments, to a .vmfb")
    p.add_argument("target", help="FILE.py:FUNC")
    p.add_argument("--arg", action="append", help="an argument's type in JAX notation, e.g. 'f32[10,3]'")
    p.add_argument("--static", action="append", help="a static keyword argument NAME=VALUE")
    p.add_argument("--target", dest="backend", default="llvm-cpu",
                   help="IREE backend: llvm-cpu (default), vmvx, vulkan, cuda, rocm or metal")
    p.add_argument("--arch", help="GPU targets: the architecture, e.g. sm_80, gfx942, rdna3, llvmpipe")
    p.add_argument("--cpu", help="llvm-cpu: host (default), generic, or an LLVM CPU name")
    p.add_argument("--triple", help="llvm-cpu: a target triple to cross-compile for, e.g. aarch64-linux-gnu")
    p.add_argument("-o", "--output", required=True, help="the .vmfb to write")
    p.set_defaults(run=cmd_compile)
    p = sub.add_parser("run", help="run an exported .vmfb's main on inputs")
    p.add_argument("module", help="a .vmfb written by irax compile or irax.export")
    p.add_argument("--input", action="append", help="a flat argument: 'f32[4,3]=@x.npy', '@x.npy' or "
                   "'f32[3]=[1,2,3]'")
    p.add_argument("--function", help="the entry point of a module of several functions (export_module)")
    p.add_argument("--output-dir", help="write each flat output as outputN.npy here instead of printing it")
    p.set_defaults(run=cmd_run)
    p = sub.add_parser("inspect", help="print an exported .vmfb's entry point, pytrees, avals, target, versions")
    p.add_argument("module")
    p.add_argument("--json", action="store_true", help="print the metadata as JSON")
    p.set_defaults(run=cmd_inspect)
    p = sub.add_parser("cache", help="the persistent compile cache: its size (info) or emptying it (clear)")
    p.add_argument("action", choices=["info", "clear"])
    p.set_defaults(run=cmd_cache)
