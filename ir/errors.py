"""Errors raised below the frontend: malformed IR, failed verification, compiles."""
from __future__ import annotations


class IraxError(Exception):
    """Base of irax's own (non-JAX) errors."""


class MLIRParseError(IraxError, ValueError):
    """A ``.mlir`` text that does not parse; the message carries MLIR's diagnostics."""


class VerificationError(IraxError, ValueError):
    """An op that disagrees with its declaration in the op table (``jaxpr-verify``)."""


class CompileError(IraxError, RuntimeError):
    """IREE rejected a module; the message includes IREE's diagnostic."""


class PassPipelineError(IraxError, ValueError):
    """An unknown pass, a malformed pipeline string, or a pass that failed."""


class ArtifactError(IraxError, ValueError):
    """A ``.vmfb`` that is corrupt, truncated or not an IREE module."""


def unbound_axis_name(name, api_name) -> NameError:
    """JAX's error for a collective over an axis name that no enclosing ``vmap`` binds: by evaluation or
    lowering, every bound name has become a positional axis, so any name left is unbound."""
    return NameError(f"Found an unbound axis name: {name}. To fix this, please call {api_name} under "
                     "`jax.shard_map`.")


class JaxRuntimeError(RuntimeError):
    """A failure while a program runs (JAX's name): a donated buffer used again, a host callback that raised."""
