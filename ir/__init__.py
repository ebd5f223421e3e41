"""``irax.ir``: the ``jaxpr`` MLIR dialect: op table, parsing, verification and JAX-style printing.

It stands alone: a ``.mlir`` file of jaxpr ops parses, verifies and prints without the frontend.
"""
