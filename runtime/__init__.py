"""``irax.runtime``: IREE devices, loaded modules and exported artifacts; imports neither the compiler nor the
frontend, so ``load`` runs an artifact where only ``iree-base-runtime`` and NumPy are installed."""
from .artifact import ArtifactError, Loaded, LoadedModule, load

__all__ = ["ArtifactError", "Loaded", "LoadedModule", "load"]
