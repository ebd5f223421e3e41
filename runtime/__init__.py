"""``irax.runtime``: IREE devices and loaded modules; imports neither the compiler nor the frontend."""
