"""Format modules. Importing :func:`load_all` registers every built-in format."""


def load_all() -> None:
    from . import blz, safetensors, zt, zt_v2  # noqa: F401  (each registers itself on import)
