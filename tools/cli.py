"""The ``irax`` command: print jaxprs, run pass pipelines over ``.mlir`` files, list passes; compile, run and
inspect ahead-of-time artifacts (``artifact_commands``).

User errors (a missing file, a bad shape spec, an unknown pass, malformed IR)
print one line to stderr and exit with status 1; no traceback.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import sys


class UsageError(Exception):
    """A mistake in what the user asked for; printed as one line."""


def _load_function(target: str):
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {target!r}")
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise UsageError(f"{path} has no function {name!r}")
    return fn


def _parse_static(items):
    out = {}
    for item in items or ():
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"--static expects NAME=VALUE, got {item!r}")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


def _arg_structs(specs):
    import irax
    from irax.ir.avals import parse_aval
    structs = []
    for spec in specs or ():
        try:
            aval = parse_aval(spec)
        except ValueError as e:
            raise UsageError(str(e)) from None
        structs.append(irax.ShapeDtypeStruct(aval.shape, aval.dtype))
    return structs


def _parse_in_axes(text, n_args):
    """``--in-axes 0,none,1``: one entry per argument, or one for all."""
    try:
        axes = [None if t.strip().lower() == "none" else int(t) for t in (text or "0").split(",")]
    except ValueError:
        raise UsageError(f"--in-axes takes comma-separated integers or none, got {text!r}") from None
    if len(axes) == 1:
        axes *= n_args
    if len(axes) != n_args:
        raise UsageError(f"--in-axes names {len(axes)} axes for {n_args} arguments")
    return axes


def _transformed(fn, transform, structs, in_axes=None):
    """``(function, its abstract arguments)`` for ``--transform``: jvp takes primals and tangents of the same
    types, vjp takes the arguments and a cotangent of the output's type, vmap the batched arguments."""
    import irax
    if transform in (None, "none"):
        return fn, structs
    if transform == "vmap":
        return irax.vmap(fn, in_axes=tuple(_parse_in_axes(in_axes, len(structs)))), structs
    if transform in ("grad", "value_and_grad", "hessian"):
        return getattr(irax, transform)(fn, argnums=tuple(range(len(structs))) if len(structs) > 1 else 0), structs
    if transform == "jvp":
        n = len(structs)
        return (lambda *xs: irax.jvp(fn, xs[:n], xs[n:])), structs + structs
    out = irax.eval_shape(fn, *structs)
    n = len(structs)
    return (lambda *xs: irax.vjp(fn, *xs[:n])[1](xs[n])), structs + [out]


_TRANSFORM_PIPELINES = {
    "jvp": "jaxpr-jvp{{func=main argnums={argnums}}}",
    "grad": "jaxpr-jvp{{func=main argnums={argnums}}},jaxpr-linearize{{func=main_jvp}},"
            "jaxpr-transpose{{func=main_jvp_lin}}",
}


def _print_passes(fn, transform, structs, in_axes):
    """Runs the transform's passes over the traced function, MLIR printing the module after each (stderr)."""
    import irax
    from irax.passes import run_pipeline
    if transform in (None, "none"):
        raise UsageError("--print-ir-after-all needs --transform")
    if transform == "vmap":
        axes = _parse_in_axes(in_axes, len(structs))
        sizes = {s.shape[a] for s, a in zip(structs, axes) if a is not None}
        if len(sizes) != 1:
            raise UsageError(f"--in-axes must map axes of one size, got sizes {sorted(sizes)}")
        examples = [s if a is None else irax.ShapeDtypeStruct(s.shape[:a] + s.shape[a + 1:], s.dtype)
                    for s, a in zip(structs, axes)]
        closed = irax.make_jaxpr(fn)(*examples)
        axes_text = ",".join("none" if a is None else str(a) for a in axes)
        pipeline = f"jaxpr-batch{{func=main in_axes={axes_text} axis_size={sizes.pop()}}}"
    else:
        closed = irax.make_jaxpr(fn)(*structs)
        kind = "jvp" if transform == "jvp" else "grad"
        pipeline = _TRANSFORM_PIPELINES[kind].format(argnums=",".join(map(str, range(len(structs)))))
    run_pipeline(closed.jaxpr.module, f"builtin.module({pipeline})", print_ir_after_all=True)


def cmd_jaxpr(args):
    import irax
    fn = _load_function(args.target)
    statics = _parse_static(args.static)
    structs = _arg_structs(args.arg)
    if args.print_ir_after_all:
        _print_passes(lambda *xs: fn(*xs, **statics), args.transform, structs, args.in_axes)
    traced_fn, traced_args = _transformed(lambda *xs: fn(*xs, **statics), args.transform, structs, args.in_axes)
    closed = irax.make_jaxpr(traced_fn)(*traced_args)
    if args.mlir:
        print(closed.jaxpr.mlir)
    else:
        print(closed)


def _read_module(path):
    from irax.ir.parse import parse_module
    if path == "-":
        return parse_module(sys.stdin.read(), "<stdin>")
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    with open(path) as f:
        return parse_module(f.read(), path)


def cmd_opt(args):
    from irax.passes import run_pipeline
    module = _read_module(args.input)
    if args.pass_pipeline:
        run_pipeline(module, args.pass_pipeline, print_ir_after_all=args.print_ir_after_all, timing=args.timing)
    text = module.operation.get_asm(enable_debug_info=args.mlir_print_debuginfo)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def cmd_passes(args):
    from irax.passes import PASSES
    width = max(len(name) for name in PASSES)
    for name in sorted(PASSES):
        print(f"{name.ljust(width)}  {PASSES[name].description}")


def build_parser():
    parser = argparse.ArgumentParser(prog="irax", description="irax: JAX programs as MLIR passes, compiled by IREE")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("jaxpr", help="print the jaxpr of FILE.py:FUNC traced on abstract arguments")
    p.add_argument("target", help="FILE.py:FUNC")
    p.add_argument("--arg", action="append", help="an argument's type in JAX notation, e.g. 'f32[10,3]'")
    p.add_argument("--static", action="append", help="a static keyword argument NAME=VALUE")
    p.add_argument("--mlir", action="store_true", help="print the jaxpr dialect (MLIR) with locations")
    p.add_argument("--transform", choices=["none", "grad", "value_and_grad", "jvp", "vjp", "hessian", "vmap"],
                   help="print the jaxpr of the transformed function, as jax.make_jaxpr(jax.grad(f)) would")
    p.add_argument("--in-axes", help="with --transform vmap: the mapped axis of each argument, e.g. '0,none' "
                   "(default 0 for all)")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="with --transform: print the module after each pass (to stderr)")
    p.set_defaults(run=cmd_jaxpr)
    p = sub.add_parser("opt", help="run a pass pipeline over a .mlir file (mlir-opt style)")
    p.add_argument("input", help="a .mlir file, or - for stdin")
    p.add_argument("--pass-pipeline", help="e.g. 'builtin.module(jaxpr-dce,jaxpr-to-stablehlo)'")
    p.add_argument("--print-ir-after-all", action="store_true")
    p.add_argument("--timing", action="store_true")
    p.add_argument("--mlir-print-debuginfo", action="store_true")
    p.add_argument("-o", "--output")
    p.set_defaults(run=cmd_opt)
    p = sub.add_parser("passes", help="list irax's passes")
    p.set_defaults(run=cmd_passes)
    from .artifact_commands import add_parsers
    add_parsers(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from irax.ir.errors import IraxError
    try:
        args.run(args)
    except (UsageError, IraxError, NotImplementedError) as e:
        print(f"irax {args.command}: error: {e}", file=sys.stderr)
        return 1
    except (TypeError, ValueError) as e:
        print(f"irax {args.command}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
