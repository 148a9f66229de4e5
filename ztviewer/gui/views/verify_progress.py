"""The strip shown while digests are verified or the file is checked: progress, throughput, ETA and a cancel
button."""
from __future__ import annotations

import time

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from ztviewer.session.formatting import human_bytes, plural

_STEPS = 1000


def eta_text(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class VerifyProgress(QFrame):
    """Progress of one verification; ``cancel_requested`` when the user presses Cancel."""

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verifyProgress")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, _STEPS)
        self.bar.setTextVisible(True)
        self.bar.setMinimumWidth(220)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        self._start = 0.0
        self._components = 0
        self._counting_tensors = False
        self.hide()

    def start(self, components: int, total_bytes: int) -> None:
        """Show digest verification: progress in bytes."""
        self._counting_tensors = False
        self._begin(components, total_bytes)

    def start_check(self, tensors: int) -> None:
        """Show Check File: progress in tensors decoded and verified."""
        self._counting_tensors = True
        self._begin(tensors, tensors)

    def _begin(self, count: int, total: int) -> None:
        self._start = time.monotonic()
        self._components = count
        self.cancel_button.setEnabled(True)
        self.update_progress(0, total)
        self.show()

    def update_progress(self, done: int, total: int) -> None:
        fraction = done / total if total else 1.0
        self.bar.setValue(int(fraction * _STEPS))
        self.bar.setFormat(f"{fraction:.0%}")
        elapsed = max(1e-6, time.monotonic() - self._start)
        if self._counting_tensors:
            text = f"Checking the file: decoding and verifying tensor {min(done + 1, total):,} of {total:,}"
            if done and elapsed > 0.05:
                text += f" · ETA {eta_text((total - done) * elapsed / done)}"
            self.label.setText(text)
            return
        rate = done / elapsed
        parts = [f"Verifying {plural(self._components, 'digest')}",
                 f"{human_bytes(done)} of {human_bytes(total)}"]
        if done and elapsed > 0.05:
            parts.append(f"{human_bytes(int(rate))}/s")
            parts.append(f"ETA {eta_text((total - done) / rate)}" if rate else "")
        self.label.setText(" · ".join(p for p in parts if p))

    def cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self.label.setText("Cancelling…")
