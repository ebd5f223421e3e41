"""Pass registry and pipeline runner: irax's Python passes and MLIR's in one PassManager.

A pipeline is MLIR's textual form, e.g. ``builtin.module(jaxpr-dce,jaxpr-to-stablehlo,canonicalize)``.
Elements naming an irax pass run as Python module passes; everything else goes
to MLIR's own parser (so ``canonicalize``, ``cse``, ``inline`` and StableHLO's
passes work). Python passes are module-level only: MLIR aborts on a Python pass
anchored on ``func.func``, so a nested irax pass is rejected before it reaches MLIR.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from irax.ir.errors import PassPipelineError
from irax.ir.mlir import context, ir, scope, passmanager


@dataclasses.dataclass(frozen=True)
class PassInfo:
    argument: str
    description: str
    run: Callable  # run(module, **options)


PASSES: dict[str, PassInfo] = {}


def register_pass(argument: str, description: str):
    def register(fn):
        PASSES[argument] = PassInfo(argument, description, fn)
        return fn
    return register


def split_top_level(text: str, sep: str = ","):
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PassPipelineError(f"unbalanced brackets in pass pipeline {text!r}")
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise PassPipelineError(f"unbalanced brackets in pass pipeline {text!r}")
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def parse_pipeline(pipeline: str):
    """``[(name, options_text)]`` for the elements of a module-level pipeline."""
    text = pipeline.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    elements = []
    for element in split_top_level(text):
        name, _, options = element.partition("{")
        if options and not options.endswith("}"):
            raise PassPipelineError(f"malformed pass options in {element!r}")
        elements.append((name.strip(), options[:-1] if options else "", element))
    return elements


def parse_options(text: str) -> dict:
    options = {}
    for item in text.split():
        key, eq, value = item.partition("=")
        if not eq:
            raise PassPipelineError(f"pass option {item!r} must be key=value")
        options[key] = value
    return options


def _nested_irax_pass(element: str):
    for name in PASSES:
        if f"({name}" in element or f",{name}" in element:
            return name
    return None


def run_pipeline(module, pipeline: str, *, print_ir_after_all=False, timing=False, printer=None):
    """Runs ``pipeline`` over ``module`` in place; errors become ``PassPipelineError``."""
    failures = []
    with scope():
        pm = passmanager.PassManager("builtin.module")
        for name, options, element in parse_pipeline(pipeline):
            info = PASSES.get(name)
            if info is not None:
                pm.add(_python_pass(info, parse_options(options), failures), name=name, argument=name,
                       description=info.description)
                continue
            nested = _nested_irax_pass(element)
            if nested:
                raise PassPipelineError(f"irax pass {nested!r} must run at module level, not nested in {element!r}")
            try:
                pm.add(element)
            except (ValueError, RuntimeError) as e:
                raise PassPipelineError(f"unknown pass or bad pipeline element {element!r}: {e}. "
                                        "Run `irax passes` for irax's passes.") from None
        if print_ir_after_all:
            context().enable_multithreading(False)  # MLIR aborts the process otherwise
            pm.enable_ir_printing(print_after_all=True, print_module_scope=True)
        if timing:
            pm.enable_timing()
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            if failures:
                raise failures[0]
            raise PassPipelineError(f"pass pipeline failed: {e}") from None
    if failures:
        raise failures[0]


def _python_pass(info: PassInfo, options: dict, failures: list):
    def run(op, pass_):
        try:
            info.run(op.opview if hasattr(op, "opview") else op, **options)
        except Exception as e:  # reported after the PassManager returns, never through C++
            failures.append(e)
            pass_.signal_pass_failure()
    run.__name__ = info.argument
    return run
