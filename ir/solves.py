"""``custom_linear_solve``'s bodies and parameters, as JAX's ``_LinearSolveTuple``.

The op names its bodies in one symbol tuple, ``jaxprs``: ``(matvec, solve)``, or ``(matvec, vecmat, solve,
transpose_solve)`` when a transpose solve was given (JAX's tuple holds ``None`` for the two missing ones).
``const_lengths`` counts each body's closed-over values, always four (zero for a missing body). Operands: the
four bodies' constants in that order, then ``b``. Each body takes ``x..., consts...`` (its constants last, as
every body of the dialect does, ``ir/control_flow.py``); ``solve`` returns ``x`` and then any aux values.

JAX prints both params with the namedtuple's ``str``: each body a closed jaxpr printed on its own.
"""
from __future__ import annotations

from . import control_flow as CF
from .params import IntsKind

FIELDS = ("matvec", "vecmat", "solve", "transpose_solve")


def as_tuple(jaxprs) -> tuple:
    """The four bodies (None for missing ones) from the ``jaxprs`` param."""
    if len(jaxprs) == 2:
        return (jaxprs[0], None, jaxprs[1], None)
    return tuple(jaxprs)


def from_tuple(bodies) -> tuple:
    """The ``jaxprs`` param from the four bodies."""
    return tuple(b for b in bodies if b is not None)


def transposed(values) -> tuple:
    """JAX's ``_LinearSolveTuple.transpose``: matvec and vecmat swapped, solve and transpose_solve."""
    matvec, vecmat, solve, transpose_solve = values
    return (vecmat, matvec, transpose_solve, solve)


def split_operands(operands, const_lengths):
    """The operands as each body's constants (a 4-tuple of lists) and ``b``."""
    operands, groups, start = list(operands), [], 0
    for n in const_lengths:
        groups.append(operands[start:start + n])
        start += n
    return tuple(groups), operands[start:]


def _named(values) -> str:
    return "_LinearSolveTuple(" + ", ".join(f"{f}={v}" for f, v in zip(FIELDS, values)) + ")"


class ConstLengthsKind(IntsKind):
    """Four ints, printed as JAX's namedtuple."""

    def fmt(self, value) -> str:
        return _named(value)


class LinearSolveJaxprsKind(CF.SymbolsKind):
    """The bodies; the printer gives ``fmt_bodies`` each one's text (None for a missing one)."""

    def with_missing(self, value) -> tuple:
        return as_tuple(value)

    def fmt_bodies(self, texts) -> str:
        return _named("None" if t is None else t for t in texts)


CONST_LENGTHS = ConstLengthsKind()
JAXPRS = LinearSolveJaxprsKind()


def _results(types, symbols, *, const_lengths, jaxprs):
    consts, b = split_operands(types, const_lengths)
    bodies = as_tuple(jaxprs)
    if len(const_lengths) != 4 or any(body is None and n for body, n in zip(bodies, const_lengths)):
        raise ValueError(f"const_lengths {list(const_lengths)} do not fit bodies {list(jaxprs)}")
    results = None
    for field, body, body_consts in zip(FIELDS, bodies, consts):
        if body is None:
            continue
        _, inputs, outs = CF._signature(symbols, body)
        CF._expect(body, "takes", inputs, b + body_consts)
        if field == "solve":
            results = outs
        elif field != "transpose_solve":
            CF._expect(body, "returns", outs, b)
    return results


CF.BODY_PARAMS["custom_linear_solve"] = ("jaxprs",)
CF._RESULTS["custom_linear_solve"] = _results
