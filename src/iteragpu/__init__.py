"""IteraGPU: exact GPU memory arithmetic, a CLI and IteraGPU Lab v1."""

__version__ = "1.0.0"
