"""JAX's error classes, with JAX's names and bases, and irax's own errors."""
from __future__ import annotations

from irax.ir.errors import (ArtifactError, CompileError, IraxError, JaxRuntimeError, MLIRParseError,  # noqa: F401
                            PassPipelineError, VerificationError)

_DOCS = "https://docs.jax.dev/en/latest/errors.html#jax.errors."


class _JAXErrorMixin:
    """Appends the pointer to JAX's documentation of the error, as JAX does."""

    def __init__(self, message: str):
        super().__init__(f"{message}\nSee {_DOCS}{type(self).__name__}")


class JAXTypeError(_JAXErrorMixin, TypeError):
    pass


class JAXIndexError(_JAXErrorMixin, IndexError):
    pass


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where Python needs a concrete one."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced value (e.g. Python ``if`` on an argument under jit)."""


class TracerIntegerConversionError(JAXTypeError):
    """``int()``/``__index__`` of a traced value."""


class TracerArrayConversionError(JAXTypeError):
    """``np.asarray`` of a traced value."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer used after the trace that made it has ended (it leaked)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing on a traced mask."""


class KeyReuseError(JAXTypeError):
    pass



class JaxprTypeError(TypeError):
    """A jaxpr that fails JAX's type check (irax reports ill-formed IR as ``VerificationError``)."""


class InconclusiveDimensionOperation(Exception):
    """An operation on symbolic dimensions whose result is not known (irax has no symbolic shapes)."""
