"""ztviewer: inspect and edit tensor files (.zt, .safetensors, .blz)."""
__version__ = "0.1.0"
