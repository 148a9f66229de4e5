"""The strip shown at the bottom of a tab while its file is being saved: what, how far, and Cancel."""
from __future__ import annotations

import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QWidget,
)

from ztviewer.session.formatting import human_bytes

_STEPS = 1000


class SaveProgress(QFrame):
    cancel_requested = Signal()

    def __init__(self, path: str, target_label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("saveProgress")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.what = f"Saving {os.path.basename(path)} as {target_label}"
        self.label = QLabel(self.what + "…")
        self.label.setToolTip(path)
        self.bar = QProgressBar()
        self.bar.setRange(0, _STEPS)
        self.bar.setMinimumWidth(220)
        self.bar.setFormat("0%")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelSave")
        self.cancel_button.clicked.connect(self._cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)

    def update_progress(self, done: int, total: int) -> None:
        fraction = done / total if total else 1.0
        self.bar.setValue(int(fraction * _STEPS))
        self.bar.setFormat(f"{fraction:.0%}")
        self.label.setText(f"{self.what} · {human_bytes(done)} of {human_bytes(total)}")

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.label.setText("Cancelling — the file on disk stays as it was…")
        self.cancel_requested.emit()
