"""``irax.backends``: the NumPy reference rules (eager mode, test oracle) and IREE compilation."""
