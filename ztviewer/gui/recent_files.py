"""File → Open Recent, stored in QSettings."""
from __future__ import annotations

import os

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QMenu

KEY = "recent/files"
LIMIT = 12


class RecentFiles(QObject):
    """Most recently opened paths, newest first; fills ``menu`` and emits ``open_requested(path)``."""

    open_requested = Signal(str)

    def __init__(self, settings: QSettings, menu: QMenu, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings, self.menu = settings, menu
        self.menu.aboutToShow.connect(self._rebuild)
        self._rebuild()

    def paths(self) -> list[str]:
        value = self.settings.value(KEY, [])
        if isinstance(value, str):   # QSettings returns a lone string for a one-element list (INI format)
            value = [value]
        return [str(v) for v in value or []]

    def add(self, path: str) -> None:
        path = os.path.abspath(path)
        paths = [path] + [p for p in self.paths() if p != path]
        self.settings.setValue(KEY, paths[:LIMIT])
        self._rebuild()

    def clear(self) -> None:
        self.settings.setValue(KEY, [])
        self._rebuild()

    def _rebuild(self) -> None:
        self.menu.clear()
        paths = self.paths()
        for number, path in enumerate(paths, 1):
            label = f"&{number} {os.path.basename(path)}" if number < 10 else os.path.basename(path)
            action = self.menu.addAction(label)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.setEnabled(os.path.exists(path))
            action.triggered.connect(lambda checked=False, p=path: self.open_requested.emit(p))
        if paths:
            self.menu.addSeparator()
        clear = self.menu.addAction("Clear Recent Files")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self.clear)
