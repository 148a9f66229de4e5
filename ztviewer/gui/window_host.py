"""What the parts of the main window (tab opener, editing, disk watcher, actions) use of the window itself.

They are built with the window but never import it (``main_window`` imports them): each is given the window typed as
the narrow protocol below, or one that extends it with what that part alone needs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QStatusBar, QTabWidget, QWidget

    from .file_view import FileView


class WindowHost(Protocol):
    """The window's tabs, thread pool, status bar and error messages."""

    @property
    def tabs(self) -> QTabWidget: ...

    @property
    def pool(self) -> QThreadPool: ...

    def window(self) -> QWidget:
        """Qt's own: the top-level widget, the parent of the dialogs and message boxes the parts open."""
        ...

    def statusBar(self) -> QStatusBar: ...

    def show_error(self, title: str, message: str) -> None: ...

    def file_views(self) -> list[FileView]: ...

    def current_view(self) -> FileView | None: ...

    def views_for(self, path: str) -> list[FileView]: ...

    def remove_tab_widget(self, widget: QWidget) -> None: ...
