"""``einsum_path``: the contraction order ``opt_einsum`` picks, as JAX's ``jnp.einsum_path`` returns it.

The path depends only on the shapes, so this runs on the host; ``opt_einsum`` (a dependency of JAX, not of irax)
is imported when asked for."""
from __future__ import annotations

__all__ = ["einsum_path"]


def _unoptimized(opt_einsum):
    """JAX's ``Unoptimized`` path: contract the first two operands, again and again (left to right)."""
    class Unoptimized(opt_einsum.paths.PathOptimizer):
        """Unoptimized path for einsum."""
        def __call__(self, inputs, *args, **kwargs):
            return [(0, 1)] * (len(inputs) - 1)
    return Unoptimized()


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The pairwise contraction path for ``einsum(subscripts, *operands)`` and a printable description of it.

    Args:
      optimize: True ('optimal'), False (left to right), or any strategy name ``opt_einsum`` knows.

    Raises:
      ImportError: when ``opt_einsum`` is not installed.
    """
    try:
        import opt_einsum
    except ImportError as error:
        raise ImportError("jnp.einsum_path needs the opt_einsum package (pip install opt_einsum)") from error
    if isinstance(optimize, bool):
        optimize = "optimal" if optimize else _unoptimized(opt_einsum)
    return opt_einsum.contract_path(subscripts, *operands, optimize=optimize)
