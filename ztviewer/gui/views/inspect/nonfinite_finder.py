"""The heatmap's "Next NaN/Inf" button: finds the next non-finite element of the shown plane on a worker
(:func:`.nonfinite.next_nonfinite`), then zooms to it, outlines it and reads it out."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QRectF, QThreadPool, Signal
from PySide6.QtWidgets import QToolButton

from .export import SliceSource
from .image_plot import ImagePlot
from .nonfinite import next_nonfinite
from .runner import JobSlot

#: elements on each side of the view around a found element: small enough for exact values
SPAN = 24
SHORTCUT = "Ctrl+Shift+N"


class NonFiniteFinder(QObject):
    """Owns the button and the search job; ``went_to((row, col))`` after each find, ``message(str)`` otherwise."""

    went_to = Signal(object)
    message = Signal(str)

    def __init__(self, image: ImagePlot, source: Callable[[], SliceSource | None],
                 pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.image, self.source = image, source
        self.slot = JobSlot(pool, self)
        self.position: tuple[int, int] | None = None
        self.button = QToolButton()
        self.button.setText("Next NaN/Inf")
        self.button.setObjectName("nextNonFinite")
        self.button.setShortcut(SHORTCUT)
        self.button.setToolTip(f"Go to the next NaN or ±Inf of this plane ({SHORTCUT}), row by row, wrapping around")
        self.button.clicked.connect(self.find_next)

    def reset(self, searchable: bool) -> None:
        """A new plane (``searchable``: its values can be NaN or infinite)."""
        self.slot.cancel()
        self.position = None
        self.button.setEnabled(searchable)
        self.image.mark_element(None)

    def find_next(self) -> None:
        source = self.source()
        if source is None or not self.button.isEnabled():
            return
        after = self.position
        self.slot.start(lambda task: next_nonfinite(source, after, task.is_cancelled), self._found,
                        failed=lambda text: self.message.emit(f"Next NaN/Inf: {text}"))

    def _found(self, position: tuple[int, int] | None) -> None:
        if position is None:
            self.message.emit("No NaN or ±Inf in this plane")
            return
        self.position = position
        rows, cols = self.image.shape
        row, col = position
        height, width = min(SPAN, rows), min(SPAN, cols)
        self.image.view.setRange(QRectF(col - width / 2, row - height / 2, width, height), padding=0)
        self.image.mark_element(position)
        self.went_to.emit(position)

    def shutdown(self) -> None:
        self.slot.shutdown()
