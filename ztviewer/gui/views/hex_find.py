"""The hex view's find bar: bytes (hex), text or a typed value (u8…u64, i8…i64, f16, bf16, f32, f64, either byte
order), next / previous from the cursor (F3 / Shift+F3), searched on a worker in chunks with progress and cancel
(:mod:`ztviewer.session.find_bytes`); a hit is selected in the hex view."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QToolButton,
    QWidget,
)

from ztviewer.session.byte_window import ByteWindow
from ztviewer.session.find_bytes import HEX, KINDS, TEXT, BadPattern, find_wrapping, pattern_bytes

from .hex_view import HexView

if TYPE_CHECKING:
    from ztviewer.workers.job_slot import JobSlot
    from ztviewer.workers.tasks import AnalysisTask

KIND_LABELS = {HEX: "hex bytes", TEXT: "text (UTF-8)"}


class HexFindBar(QWidget):
    """Find controls under the hex view; ``message(str)`` for the status bar, ``finished(object)`` with the hit
    offset (or None) after each search."""

    message = Signal(str)
    finished = Signal(object)

    def __init__(self, hex_view: HexView, pool: QThreadPool | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hexFindBar")
        self.hex_view = hex_view
        self.kind = QComboBox()
        self.kind.setObjectName("findKind")
        for kind in KINDS:
            self.kind.addItem(KIND_LABELS.get(kind, kind), kind)
        self.kind.setToolTip("What the pattern is: hex bytes, UTF-8 text, or a number of the chosen type")
        self.pattern = QLineEdit()
        self.pattern.setObjectName("findPattern")
        self.pattern.setPlaceholderText("DE AD BE EF")
        self.pattern.setClearButtonEnabled(True)
        self.pattern.returnPressed.connect(self.find_next)
        self.big_endian = QCheckBox("BE")
        self.big_endian.setToolTip("Typed values in big-endian byte order")
        self.status = QLabel()
        self.status.setObjectName("findStatus")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(90)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.next_action = self._action("Find &Next", "F3", self.find_next, "Next match after the cursor (F3)")
        self.previous_action = self._action("Find &Previous", "Shift+F3", self.find_previous,
                                            "Previous match before the cursor (Shift+F3)")
        self.cancel_action = self._action("Cancel", QKeySequence(), self.cancel, "Stop searching")
        self.cancel_action.setEnabled(False)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(4)
        layout.addWidget(QLabel("Find"))
        layout.addWidget(self.kind)
        layout.addWidget(self.pattern, 1)
        layout.addWidget(self.big_endian)
        for action, text in ((self.previous_action, "▲"), (self.next_action, "▼"), (self.cancel_action, "✕")):
            button = QToolButton()
            button.setDefaultAction(action)
            button.setText(text)
            button.setAutoRaise(True)
            layout.addWidget(button)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        self._pool = pool
        self._slot: JobSlot | None = None
        self._kind_changed()

    @property
    def slot(self) -> JobSlot:  # made on first use: most windows never search
        if self._slot is None:
            from ztviewer.workers.job_slot import JobSlot

            slot = self._slot = JobSlot(self._pool, self)
            slot.progress.connect(self._progress)
        return self._slot

    def _action(self, text: str, keys: str | QKeySequence, slot: Callable[[], None], tip: str) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(keys))
        action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def _kind_changed(self, *args: object) -> None:
        kind = self.kind.currentData()
        self.big_endian.setEnabled(kind not in (HEX, TEXT) and kind != "u8" and kind != "i8")
        examples = {HEX: "DE AD BE EF", TEXT: "text to find"}
        self.pattern.setPlaceholderText(examples.get(kind, "value, e.g. 1.5 or 0x3F80"))

    def focus(self) -> None:
        self.show()
        self.pattern.setFocus()
        self.pattern.selectAll()

    # -- searching -------------------------------------------------------------------------------------------
    def find_next(self) -> None:
        self._start(backward=False)

    def find_previous(self) -> None:
        self._start(backward=True)

    def _start(self, backward: bool) -> None:
        source = self.hex_view.source
        if source is None:
            return
        try:
            pattern = pattern_bytes(self.kind.currentData(), self.pattern.text(), not self.big_endian.isChecked())
        except BadPattern as exc:
            self.status.setText(str(exc))
            self.message.emit(f"Find: {exc}")
            return
        selection = self.hex_view.selection()
        cursor = self.hex_view.cursor_offset()
        if backward:
            start = selection[0] if selection else cursor
        else:
            start = selection[0] + 1 if selection else cursor
        self.status.setText("searching…")
        self.cancel_action.setEnabled(True)
        self.progress.setValue(0)
        self.progress.setVisible(source.size > (64 << 20))
        def search(ctx: AnalysisTask) -> tuple[int | None, bool]:
            return find_wrapping(source, pattern, start, backward, cancelled=ctx.is_cancelled,
                                 progress=ctx.report_progress)

        self.slot.start(search, lambda result: self._found(result, pattern, source), failed=self._failed)

    def _found(self, result: tuple[int | None, bool], pattern: bytes, source: ByteWindow) -> None:
        self._idle()
        offset, wrapped = result
        if source is not self.hex_view.source:
            return
        if offset is None:
            self.status.setText("not found")
            self.message.emit(f"Find: {pattern.hex(' ').upper()} not found")
        else:
            self.hex_view.set_selection(offset, len(pattern))
            note = " (wrapped around)" if wrapped else ""
            self.status.setText(f"at 0x{offset:X}{note}")
            self.message.emit(f"Found {len(pattern)} bytes at 0x{offset:X} ({offset:,}){note}")
        self.finished.emit(offset)

    def _failed(self, text: str) -> None:
        self._idle()
        self.status.setText(text)
        self.finished.emit(None)

    def cancel(self) -> None:
        if self._slot is not None and self._slot.busy:
            self.slot.cancel()
            self._idle()
            self.status.setText("cancelled")
            self.finished.emit(None)

    def _idle(self) -> None:
        self.cancel_action.setEnabled(False)
        self.progress.hide()

    def _progress(self, done: int, total: int | None) -> None:
        if total:
            self.progress.setValue(int(1000 * done / total))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancel()
            self.hide()
            self.hex_view.setFocus()
            return
        super().keyPressEvent(event)

    def shutdown(self) -> None:
        if self._slot is not None:
            self._slot.shutdown()
