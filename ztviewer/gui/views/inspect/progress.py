"""A thin progress bar that appears only when a job outlives :data:`DELAY_MS` (no flicker, and no busy
animation repainting while a quick job runs)."""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QProgressBar

DELAY_MS = 250


class DelayedProgress(QProgressBar):
    def __init__(self, width: int = 140, parent=None) -> None:
        super().__init__(parent)
        self.setMaximumSize(width, 12)
        self.setTextVisible(False)
        self.setRange(0, 1000)
        self.hide()
        self._busy = False
        self._timer = QTimer(self, singleShot=True, interval=DELAY_MS)
        self._timer.timeout.connect(self._appear)

    def set_busy(self, busy: bool) -> None:
        if busy == self._busy:
            return
        self._busy = busy
        if busy:
            self.setValue(0)
            self._timer.start()
        else:
            self._timer.stop()
            self.hide()

    def set_progress(self, done, total) -> None:
        if total:
            self.setValue(int(1000 * min(1.0, done / total)))

    def _appear(self) -> None:
        if self._busy:
            self.show()
