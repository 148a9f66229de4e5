"""The page shown when no file is open, and the drag-and-drop helper."""
from __future__ import annotations

import os

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


def local_paths(mime: QMimeData) -> list[str]:
    """Local files (not folders) among dragged URLs."""
    if not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and os.path.isfile(u.toLocalFile())]


class WelcomePage(QWidget):
    def __init__(self, filters: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePage")
        title = QLabel("ztviewer")
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 2.2)
        font.setBold(True)
        title.setFont(font)
        subtitle = QLabel("Inspect tensor files: zTensor (.zt), safetensors and BLZ1 tensor trains")
        hint = QLabel("Open a file with Ctrl+O, pick one from File → Open Recent,\nor drop one or several files here.")
        hint.setEnabled(False)
        self.open_button = QPushButton("Open File…")
        self.open_button.setDefault(True)
        self.open_button.setMinimumWidth(160)
        layout = QVBoxLayout(self)
        layout.addStretch(3)
        for widget in (title, subtitle, hint):
            widget.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(widget)
        layout.addSpacing(16)
        layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(4)
