"""What editing uses of the window (which builds the edit controller and never is imported by it), and what a save
uses of the edit controller (which builds the save flow lazily, and is not imported by it either)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..window_host import WindowHost

if TYPE_CHECKING:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDockWidget, QWidget

    from ..file_view import FileView
    from ..models.edit_stack import EditSession
    from ..tab_opener import TabOpener


class EditingHost(WindowHost, Protocol):
    """The window as editing uses it: its docks, its status, the opener that shows a saved file again."""

    @property
    def opener(self) -> TabOpener: ...

    def addDockWidget(self, area: Qt.DockWidgetArea, dockwidget: QDockWidget, /) -> None: ...

    def tabifyDockWidget(self, first: QDockWidget, second: QDockWidget, /) -> None: ...

    def update_status(self) -> None: ...


class SaveHost(Protocol):
    """The edit controller as a save uses it."""

    @property
    def window(self) -> EditingHost: ...

    def session_of(self, view: QWidget | None) -> EditSession | None: ...

    def is_modified(self, view: QWidget | None) -> bool: ...

    def update_actions(self) -> None: ...

    def ask_replace_unsaved(self, view: FileView) -> bool: ...
