"""What the window needs to know of a Compare tab without importing its plots (they load on the first compare)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget


class CompareTab(QWidget):
    """Base of :class:`~.compare_view.CompareView`: the window's tab bookkeeping checks for it."""

    status_message = Signal(str)
    ended = Signal(str)          # done / cancelled / failed

    def cancel(self) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        raise NotImplementedError
