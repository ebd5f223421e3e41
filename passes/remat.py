"""Remat (``jax.checkpoint``) policies: which values the linear half of a checkpoint may save.

A policy is stored on the ``jaxpr.checkpoint`` op as JAX prints it; ``policy``
reads it back as a predicate on ops. Everything else the linear half needs is
recomputed there from the checkpoint's inputs (``residuals_and_recomputed``).
"""
from __future__ import annotations

import re

from irax.ir.dialect import decode_params
from irax.ir.ops import OPS

NOTHING_SAVEABLE = "<function nothing_saveable at 0xXXXXXXXXXXXX>"
EVERYTHING_SAVEABLE = "<function everything_saveable at 0xXXXXXXXXXXXX>"


def dots_saveable(only_if_no_batch_dims: bool) -> str:
    return f"DotsSaveable(only_if_no_batch_dims={only_if_no_batch_dims})"


def save_only_these_names(names) -> str:
    return f"SaveOnlyTheseNames(saveable_names=frozenset({{{', '.join(repr(n) for n in sorted(names))}}}))"


def from_option(name: str) -> str:
    """A policy named in a pass option (``dots_saveable``, ``save_only_these_names:a:b``) as JAX prints it."""
    base, *names = name.split(":")
    printed = {"nothing_saveable": NOTHING_SAVEABLE, "everything_saveable": EVERYTHING_SAVEABLE,
               "dots_saveable": dots_saveable(False), "dots_with_no_batch_dims_saveable": dots_saveable(True)}
    if base == "save_only_these_names":
        return save_only_these_names(names)
    if base not in printed:
        raise ValueError(f"unknown checkpoint policy {name!r}; expected one of {sorted(printed)} or "
                         "save_only_these_names:NAME:...")
    return printed[base]


def policy(text: str):
    """The predicate ``saveable(op)`` of a printed policy."""
    if text in ("None", NOTHING_SAVEABLE):
        return lambda op: False
    if text == EVERYTHING_SAVEABLE:
        return lambda op: True
    dots = re.fullmatch(r"DotsSaveable\(only_if_no_batch_dims=(True|False)\)", text)
    if dots:
        no_batch = dots.group(1) == "True"
        return lambda op: op.name == "jaxpr.dot_general" and not (
            no_batch and decode_params(OPS["dot_general"], op)["dimension_numbers"][1][0])
    names = re.fullmatch(r"SaveOnlyTheseNames\(saveable_names=frozenset\(\{(.*)\}\)\)", text)
    if names:
        saved = set(re.findall(r"'([^']*)'", names.group(1)))
        return lambda op: op.name == "jaxpr.name" and decode_params(OPS["name"], op)["name"] in saved
    raise ValueError(f"unknown checkpoint policy {text!r}")


def residuals_and_recomputed(needed, unknown, literals, known_ops, saveable):
    """The known values the linear half takes as residuals (inputs and saveable results, in first-use order)
    and the known ops it recomputes to get the others."""
    residuals, recompute, seen = [], set(), set()

    def visit(v):
        if v in unknown or v in literals or v in seen:
            return
        seen.add(v)
        op = known_ops.get(v)
        if op is None or saveable(op):
            residuals.append(v)
            return
        recompute.add(op)
        for operand in op.operands:
            visit(operand)

    for v in needed:
        visit(v)
    return residuals, recompute
