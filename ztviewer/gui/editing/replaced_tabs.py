"""Save As onto a file that is open in another tab.

After any Save As the saving tab shows the saved file, so another tab showing that path would be a stale
duplicate: it is closed once the save has finished, leaving one tab with the new content. Its unsaved edits
would be lost, so the user is asked before anything is written; while the save runs it takes no edits. A tab
that is saving that file itself makes the Save As wait (two writers to one path).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from shiboken6 import Shiboken

if TYPE_CHECKING:
    from ..file_view import FileView
    from ..models.edit_stack import EditSession
    from .host import SaveHost


class ReplacedTabs:
    """The tabs other than ``view`` that show ``path``, which a save of ``view`` to ``path`` replaces."""

    def __init__(self, controller: SaveHost, view: FileView, path: str) -> None:
        self.controller, self.window = controller, controller.window
        self.view, self.path = view, path
        self.views = [v for v in self.window.views_for(path) if v is not view]

    def agreed(self) -> bool:
        """Whether the save may go ahead; says why not (a save running there, or the user kept its edits)."""
        name = os.path.basename(self.path)
        if any(session.saving for session in self._sessions()):
            self.window.show_error(f"Cannot save {self.path}",
                                   f"{name} is being saved in another tab; save again once that has finished.")
            return False
        for view in self.views:
            if self.controller.is_modified(view) and not self.controller.ask_replace_unsaved(view):
                self.window.statusBar().showMessage(f"Save As cancelled: {self.path} was not written", 10000)
                return False
        return True

    def hold(self, held: bool) -> None:
        """Refuse edits (and saves) in the replaced tabs while the save runs, or take them again."""
        for session in self._sessions():
            session.saving = held
        self.controller.update_actions()

    def close(self) -> None:
        """The save finished: close the tabs still showing the replaced file, dropping the edits agreed to."""
        for view in self.window.views_for(self.path):
            if view is self.view or (view not in self.views and self.controller.is_modified(view)):
                continue
            session = self.controller.session_of(view)
            if session is not None:
                session.stack.setClean()
            self.window.remove_tab_widget(view)

    def _sessions(self) -> Iterator[EditSession]:
        for view in self.views:
            session = self.controller.session_of(view) if Shiboken.isValid(view) else None
            if session is not None and Shiboken.isValid(session):
                yield session
