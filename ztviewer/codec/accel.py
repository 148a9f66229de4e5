"""The optional C fast path for listing large manifests (``ztviewer/codec/_accel.c``).

Built at install time when a C compiler is present. It reads the plain subset of safetensors JSON headers
and zTensor 1.x CBOR manifests straight into tensors, and otherwise takes the same plain decoded entries as
the Python fast paths in :mod:`.formats.safetensors_tensors` and :mod:`.formats.zt_fast`, building the same
tensors. Outside the plain subset it declines and the Python readers decide, so every problem is still
reported by one implementation. Without it (or with ``ZTVIEWER_PURE_PYTHON=1`` in the environment) the
Python paths run; tests hold the two to the same results.
"""
from __future__ import annotations

import os
from types import ModuleType

from .model import Tensor


def _load() -> ModuleType | None:
    if os.environ.get("ZTVIEWER_PURE_PYTHON"):
        return None
    try:
        from . import _accel
    except ImportError:
        return None
    _accel.configure(Tensor)
    return _accel


#: The C module, configured, or ``None`` when it is not built or disabled.
native: ModuleType | None = _load()
