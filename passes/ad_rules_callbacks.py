"""JVP rules of the host callbacks, as JAX's: ``pure_callback`` and ``io_callback`` have none (their derivative
is the user's to give, with ``jax.custom_jvp``); ``jax.debug``'s run on the primals and have no outputs."""
from __future__ import annotations

from .jvp import JVP_RULES, defjvp_zero


def _pure_callback_jvp(b, primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking "
                     "gradients.")


def _io_callback_jvp(b, primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


JVP_RULES.update({"pure_callback": _pure_callback_jvp, "io_callback": _io_callback_jvp})
defjvp_zero("debug_callback", "debug_print")
