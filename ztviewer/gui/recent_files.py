"""File → Open Recent, stored in QSettings."""
from __future__ import annotations

import os

from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtWidgets import QMenu

KEY = "recent/files"
LIMIT = 12


def distinguishing_labels(paths: list[str]) -> list[str]:
    """Menu labels for ``paths``: the file name, and for names that occur more than once the shortest run of
    parent folders that tells that path from the others ('model.zt — run1', 'model.zt — b/run1')."""
    split = [_components(p) for p in paths]
    labels: list[str] = []
    for index, parts in enumerate(split):
        twins = [other for i, other in enumerate(split) if i != index and other[-1:] == parts[-1:]]
        if not twins:
            labels.append(parts[-1] if parts else paths[index])
            continue
        depth = next((k for k in range(2, len(parts) + 1) if all(other[-k:] != parts[-k:] for other in twins)),
                     None)
        folder = os.path.join(*parts[-depth:-1]) if depth is not None else os.path.dirname(paths[index])
        labels.append(f"{parts[-1]} — {folder}")
    return labels


def _components(path: str) -> list[str]:
    _drive, rest = os.path.splitdrive(os.path.normpath(path))
    return [part for part in rest.replace("\\", "/").split("/") if part]


class RecentFiles(QObject):
    """Most recently opened paths, newest first; fills ``menu`` and emits ``open_requested(path)``."""

    open_requested = Signal(str)

    def __init__(self, settings: QSettings, menu: QMenu, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings, self.menu = settings, menu
        self._unsaved: list[str] | None = None    # added, written to the settings at the next event-loop turn
        self.menu.aboutToShow.connect(self._rebuild)
        self._rebuild()

    def paths(self) -> list[str]:
        if self._unsaved is not None:
            return list(self._unsaved)
        value = self.settings.value(KEY, [])
        if isinstance(value, str):   # QSettings returns a lone string for a one-element list (INI format)
            value = [value]
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def add(self, path: str) -> None:
        """Put ``path`` first. The settings file is written after the events already waiting (the window shows
        the file first: writing it syncs the file to disk), the menu when it next opens."""
        path = os.path.abspath(path)
        if self._unsaved is None:
            QTimer.singleShot(0, self, self.save)
        self._unsaved = ([path] + [p for p in self.paths() if p != path])[:LIMIT]

    def save(self) -> None:
        if self._unsaved is not None:
            self.settings.setValue(KEY, self._unsaved)
            self._unsaved = None

    def clear(self) -> None:
        self._unsaved = None
        self.settings.setValue(KEY, [])
        self._rebuild()

    def _rebuild(self) -> None:
        self.menu.clear()
        paths = self.paths()
        for number, (path, name) in enumerate(zip(paths, distinguishing_labels(paths)), 1):
            name = name.replace("&", "&&")
            label = f"&{number} {name}" if number < 10 else name
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
