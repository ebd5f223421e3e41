"""``irax.tools``: the ``irax`` command."""
