"""Work-arounds for defects of the installed Qt binding.

PySide6 6.12 on CPython < 3.12 returns the ``None`` / ``True`` singletons without a new reference from void
methods (``QPainter.setPen``, ``QLabel.setText``, ``QWidget.update`` …) and from ``SignalInstance.emit``.
Every such call drops one reference; after some tens of thousands the interpreter aborts with
"none_dealloc: deallocating None" (or "bool_dealloc"). CPython 3.12 made these singletons immortal;
:func:`pin_singletons` does the same on older interpreters, once per process, only when the leak is seen.
"""
from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

_PIN = 1 << 40
_applied = False


class _Probe(QObject):
    fired = Signal()


def binding_leaks_singletons() -> bool:
    """Whether void calls or signal emits drop references to ``None`` / ``True``."""
    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(16):
        probe.setObjectName("probe")
        probe.fired.emit()
    return sys.getrefcount(None) < none_before - 8 or sys.getrefcount(True) < true_before - 8


def pin_singletons() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal when the binding leaks references to them."""
    global _applied
    if _applied or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _applied
    if binding_leaks_singletons():
        for singleton in (None, True, False):
            ctypes.c_ssize_t.from_address(id(singleton)).value += _PIN
        _applied = True
    return _applied


pin_singletons()
