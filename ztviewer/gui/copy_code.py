"""Edit ▸ Copy as Code: Python that loads the current tensor, put on the clipboard (see
:mod:`ztviewer.session.code_snippet`). The menu lists one entry per library that can load the tensor; the
shortcut copies the first (the format's own library when it can, else ztviewer.codec)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from ztviewer.codec.model import Tensor, TensorFile

if TYPE_CHECKING:   # the snippets load when the menu is first opened or used, not with the window
    from ztviewer.session.code_snippet import Snippet

#: the file and tensor to copy code for (None when there is none)
Target = Callable[[], "tuple[TensorFile, Tensor] | None"]


def copy_snippet(snippet: Snippet) -> None:
    QGuiApplication.clipboard().setText(snippet.code)


class CopyCodeMenu(QMenu):
    """Submenu filled when it opens; ``copied(str)`` says what went to the clipboard (for the status bar)."""

    def __init__(self, target: Target, report: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__("Copy as &Code", parent)
        self.setObjectName("copyCodeMenu")
        self.setToolTipsVisible(True)
        self._target = target
        self._report = report
        self.aboutToShow.connect(self._fill)

    def current_snippets(self) -> list[Snippet]:
        from ztviewer.session.code_snippet import snippets

        target = self._target()
        return [] if target is None else snippets(*target)

    def _fill(self) -> None:
        from ztviewer.session.code_snippet import dtype_note, snippets

        self.clear()
        target = self._target()
        found = [] if target is None else snippets(*target)
        if target is None or not found:
            empty = self.addAction("No tensor with decodable values selected")
            empty.setEnabled(False)
            return
        for snippet in found:
            action: QAction = self.addAction(f"Load with {snippet.title}")
            action.setToolTip(f"{dtype_note(target[1])}\n\n{snippet.code}")
            action.triggered.connect(lambda _=False, s=snippet: self.copy(s))

    def copy(self, snippet: Snippet) -> None:
        copy_snippet(snippet)
        self._report(f"Copied code that loads the tensor with {snippet.library}")

    def copy_first(self) -> None:
        found = self.current_snippets()
        if found:
            self.copy(found[0])
        else:
            self._report("Copy as code: select a tensor whose values can be decoded")
