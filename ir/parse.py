"""Parsing ``.mlir`` text into a module, with MLIR's diagnostics as an irax error."""
from __future__ import annotations

from .errors import MLIRParseError
from .mlir import ir, scope


def parse_module(text: str, filename: str = "<string>"):
    """Parses ``text``; raises ``MLIRParseError`` naming the file, line and problem."""
    try:
        with scope():
            return ir.Module.parse(text)
    except ir.MLIRError as e:
        details = "; ".join(_diagnostic(d, filename) for d in e.error_diagnostics) or str(e)
        raise MLIRParseError(f"cannot parse {filename}: {details}") from None


def _diagnostic(diag, filename):
    loc = str(diag.location)
    if loc.startswith('loc("-":'):
        loc = filename + ":" + loc[len('loc("-":'):-1]
    return f"{loc}: {diag.message}"
