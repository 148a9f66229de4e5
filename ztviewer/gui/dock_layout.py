"""Where the main window's docks sit and how big they are: the saved layout restored, default sizes for the
window's width on a first show, the file docks stepping aside while a Compare tab is current."""
from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar, QWidget

DEFAULT_SIZE = (1680, 1000)
#: a window less tall than this (logical pixels: 1080p at 150 %, 768-line laptops) keeps its whole height for the
#: tree, the hex view and the plots: Problems and the Data Inspector become tabs beside Properties
SHORT_WINDOW = 860


class DockLayout:
    """The docks of ``window`` and their saved state in ``settings``."""

    def __init__(self, window: QMainWindow, settings: QSettings) -> None:
        self.window, self.settings = window, settings
        self._aside: list[QDockWidget] | None = None
        self._default_sizes = False
        self._sized: tuple[QDockWidget, QDockWidget, QDockWidget] | None = None

    def size_by_width(self, side: QDockWidget, problems: QDockWidget, inspector: QDockWidget) -> None:
        """The docks sized by the window's width: ``side`` on the right, ``problems`` and ``inspector`` below."""
        self._sized = (side, problems, inspector)

    def add(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.window.addDockWidget(area, dock)
        return dock

    def restore(self) -> None:
        """The saved geometry and dock state, else the default size (fitted to the screen)."""
        window = self.window
        screen = window.screen().availableGeometry() if window.screen() is not None else None
        width, height = DEFAULT_SIZE
        if screen is not None and screen.width() > 100:
            width, height = min(width, screen.width() - 40), min(height, screen.height() - 40)
        window.resize(width, height)
        window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            window.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        self._default_sizes = state is None or not window.restoreState(state)

    def shown(self) -> None:
        """The window is shown: docks can only be sized once it has its real size (first show, no saved layout)."""
        if self._default_sizes:
            self._default_sizes = False
            self.apply_default_sizes()

    def apply_default_sizes(self) -> None:
        """Dock sizes for the window's current width."""
        if self._sized is None:
            return
        window = self.window
        side, problems, inspector = self._sized
        # a narrow window keeps more for the tree and the hex view (all 16 bytes and their characters)
        side_width = 320 if window.width() >= 1500 else 260 if window.width() >= 1400 else 228
        if window.height() < SHORT_WINDOW:
            for dock in (problems, inspector):
                window.tabifyDockWidget(side, dock)
            side.raise_()
            for bar in window.findChildren(QTabBar):     # the docks' tab bars: whole titles, scrolled when narrow
                if bar.parent() is window:
                    bar.setElideMode(Qt.TextElideMode.ElideNone)
                    bar.setUsesScrollButtons(True)
            window.resizeDocks([side], [side_width], Qt.Orientation.Horizontal)
            return
        window.resizeDocks([side], [side_width], Qt.Orientation.Horizontal)
        bottom = max(400, window.width() - side_width - 20)
        inspector_width = min(480, bottom // 2)
        window.resizeDocks([problems, inspector], [bottom - inspector_width, inspector_width],
                           Qt.Orientation.Horizontal)
        window.resizeDocks([problems], [200], Qt.Orientation.Vertical)

    def set_file_docks_shown(self, shown: bool) -> None:
        """A Compare tab has no use for the file docks: they step aside while it is current, and come back."""
        if not shown and self._aside is None:
            self._aside = [d for d in self.window.findChildren(QDockWidget) if d.isVisible()]
            for dock in self._aside:
                dock.hide()
        elif shown and self._aside is not None:
            for dock in self._aside:
                dock.show()
            self._aside = None

    def save(self) -> None:
        """Geometry and dock state (with the docks a Compare tab set aside back in place)."""
        self.set_file_docks_shown(True)
        self.settings.setValue("window/geometry", self.window.saveGeometry())
        self.settings.setValue("window/state", self.window.saveState())
